package verify

import (
	"strings"
	"testing"
)

// render lists items one per line for comparison in tests.
func render(items []Item) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.Kind + " | " + it.Key + " | " + it.Value + "\n")
	}
	return b.String()
}

func TestParsersReadRealShapedOutputs(t *testing.T) {
	cases := []struct {
		name  string
		parse func(string) ([]Item, error)
		in    string
		want  string
	}{
		{"ip route of a Linux worker with a Windows peer", ParseIPRoute,
			"default via 192.168.10.1 dev ens18 proto static \n" +
				"172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450 \n" +
				"blackhole 172.21.172.0/26 proto 80 \n" +
				"172.21.172.2 dev calid60012519f0 scope link \n" +
				"192.168.10.0/24 dev ens18 proto kernel scope link src 192.168.10.26\n",
			"route | unicast default | dev=ens18 proto=static via=192.168.10.1\n" +
				"route | unicast 172.21.41.0/26 | dev=vxlan.calico mtu=1450 onlink=yes via=172.21.41.1\n" +
				"route | blackhole 172.21.172.0/26 | proto=80\n" +
				"route | unicast 172.21.172.2/32 | dev=calid60012519f0 scope=link\n" +
				"route | unicast 192.168.10.0/24 | dev=ens18 proto=kernel scope=link src=192.168.10.26\n"},
		{"ip route with numeric protocols, linkdown, expiry and a multipath route", ParseIPRoute,
			"default proto 4 metric 100 \n\tnexthop via 10.0.0.1 dev eth0 weight 1 \n\tnexthop via 10.0.1.1 dev eth1 weight 1 linkdown\n" +
				"10.9.0.0/16 via 10.0.0.1 dev eth0 proto 2 expires 297sec linkdown table 100\n",
			"route | unicast default | metric=100 proto=static nexthop(dev=eth0 via=10.0.0.1 weight=1) nexthop(dev=eth1 via=10.0.1.1 weight=1)\n" +
				"route | unicast 10.9.0.0/16 table 100 | dev=eth0 proto=kernel via=10.0.0.1\n"},
		{"ip -d link show vxlan.calico with every detail a current iproute2 prints", ParseLinkVXLAN,
			"5: vxlan.calico: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\n" +
				"    link/ether 66:ee:f4:61:98:50 brd ff:ff:ff:ff:ff:ff promiscuity 0 allmulti 0 minmtu 68 maxmtu 65535\n" +
				"    vxlan id 4096 local 192.168.10.24 dev ens18 srcport 0 0 dstport 4789 nolearning ttl auto ageing 300 udpcsum noudp6zerocsumtx noudp6zerocsumrx addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535\n",
			"vxlan device | vxlan.calico mtu | 1450\n" +
				"vxlan device | vxlan.calico address | 66:ee:f4:61:98:50\n" +
				"vxlan device | vxlan.calico vxlan id | 4096\n" +
				"vxlan device | vxlan.calico vxlan local | 192.168.10.24\n" +
				"vxlan device | vxlan.calico vxlan dev | ens18\n" +
				"vxlan device | vxlan.calico vxlan dstport | 4789\n" +
				"vxlan device | vxlan.calico vxlan learning | nolearning\n"},
		{"ip neigh with permanent VTEPs and a learned entry", ParseIPNeigh,
			"172.21.70.192 lladdr 66:79:81:e0:1a:7d PERMANENT\n172.21.41.1 lladdr 00:15:5D:EB:90:AE PERMANENT\n10.0.0.7 dev vxlan.calico lladdr 66:00:00:00:00:01 STALE\n10.0.0.8 dev vxlan.calico FAILED\n",
			"neighbour | 172.21.70.192 | lladdr=66:79:81:e0:1a:7d state=PERMANENT\n" +
				"neighbour | 172.21.41.1 | lladdr=00:15:5d:eb:90:ae state=PERMANENT\n" +
				"neighbour | 10.0.0.7 dev vxlan.calico | lladdr=66:00:00:00:00:01 state=dynamic\n" +
				"neighbour | 10.0.0.8 dev vxlan.calico | state=FAILED\n"},
		{"bridge fdb with the flood entry and statistics", ParseBridgeFDB,
			"66:05:38:46:ab:ea dst 192.168.10.26 self permanent\n00:00:00:00:00:00 dev vxlan.calico dst 192.168.10.9 self permanent used 12/3\n",
			"fdb entry | 66:05:38:46:ab:ea | dst=192.168.10.26 flags=self,permanent\n" +
				"fdb entry | 00:00:00:00:00:00 dst 192.168.10.9 | dst=192.168.10.9 flags=self,permanent\n"},
		{"nft list ruleset -a with handles, counters and an anonymous map", ParseNft,
			"table ip kube-proxy { # handle 3\n\tcomment \"rules for kube-proxy\"\n" +
				"\tset cluster-ips { # handle 5\n\t\ttype ipv4_addr\n\t\tcomment \"Active ClusterIPs\"\n\t\telements = { 10.96.0.10, 10.96.0.1,\n\t\t\t     10.97.141.163 }\n\t}\n\n" +
				"\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\telements = { 10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https }\n\t}\n\n" +
				"\tchain services { # handle 9\n\t\tip daddr . meta l4proto . th dport vmap @service-ips counter packets 12 bytes 720 # handle 20\n\t}\n" +
				"\tchain svc {\n\t\tmeta l4proto tcp dnat ip to numgen random mod 2 map { 1 : 10.0.0.2 . 80, 0 : 10.0.0.1 . 80 }\n\t}\n}\n",
			"nft table | ip kube-proxy | \n" +
				"nft element | ip kube-proxy set cluster-ips 10.96.0.10 | \n" +
				"nft element | ip kube-proxy set cluster-ips 10.96.0.1 | \n" +
				"nft element | ip kube-proxy set cluster-ips 10.97.141.163 | \n" +
				"nft set | ip kube-proxy set cluster-ips | type ipv4_addr\n" +
				"nft element | ip kube-proxy map service-ips 10.96.0.1 . tcp . 443 | goto service-2QRHZV4L-default/kubernetes/tcp/https\n" +
				"nft map | ip kube-proxy map service-ips | type ipv4_addr . inet_proto . inet_service : verdict\n" +
				"nft rule | ip kube-proxy chain services: ip daddr . meta l4proto . th dport vmap @service-ips counter | \n" +
				"nft chain | ip kube-proxy chain services | \n" +
				"nft rule | ip kube-proxy chain svc: meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 } | \n" +
				"nft chain | ip kube-proxy chain svc | \n"},
		{"Get-HnsNetwork as one object, with the fields of a real HNS", ParseHnsNetworkJSON,
			`{"ActivityId":"B9B9E1B4-2E0F-4E8C-A2B3-94B0E4F6C1F5","AdditionalParams":{},"CurrentEndpointCount":3,"DrMacAddress":"00-15-5D-EB-90-AE","Extensions":[{"Id":"E7C3B2F0-F3C5-48DF-AF2B-10FED6D72E7A","IsEnabled":false,"Name":"Microsoft Windows Filtering Platform"}],"Flags":8,"ID":"09C41C51-563A-57EC-8C90-2ABAAF9453AF","ManagementIP":"192.168.10.25","Name":"Calico","NetworkAdapterName":"Ethernet","Policies":[{"DestinationPrefix":"172.21.211.0/26","DistributedRouterMacAddress":"66-EE-F4-61-98-50","IsolationId":4096,"ProviderAddress":"192.168.10.24","Type":"RemoteSubnetRoute"}],"State":1,"Subnets":[{"AdditionalParams":{},"AddressPrefix":"172.21.41.0/26","GatewayAddress":"172.21.41.1","Health":{"LastErrorCode":0},"ID":"1B1D0D2C-0F1B-4C4E-9C43-3D8D8A1F2C11","Policies":[{"Type":"VSID","VSID":4096}],"State":0}],"TotalEndpoints":3,"Type":"Overlay","Version":64424509440}`,
			"hns network | Calico | adapter=Ethernet drMAC=00:15:5d:eb:90:ae managementIP=192.168.10.25 subnets=[172.21.41.0/26 gateway 172.21.41.1 vsid 4096] type=Overlay\n" +
				"hns network policy | Calico RemoteSubnetRoute 172.21.211.0/26 | drMAC=66:ee:f4:61:98:50 isolationId=4096 providerAddress=192.168.10.24\n"},
		{"Get-HnsEndpoint of a pod, its sandbox ID and GUIDs folded", ParseHnsEndpointJSON,
			`[{"ID":"255F0366-0AA8-58E7-A773-C6E583953A61","Name":"25455c8b5092cd0eb33c0816ebfeb82f9ad98c60080b0494138c5f85d3943b4e_Calico","VirtualNetwork":"09C41C51-563A-57EC-8C90-2ABAAF9453AF","VirtualNetworkName":"Calico","Policies":[{"PA":"192.168.10.25","Type":"PA"}],"MacAddress":"0E-2A-AC-15-29-05","IPAddress":"172.21.41.5","PrefixLength":26,"GatewayAddress":"172.21.41.1","State":3,"Namespace":{"ID":"146E7DC8-8F21-53FD-A0DC-7CFF313A3DB8"}}]`,
			"hns endpoint | Calico 172.21.41.5 | gateway=172.21.41.1 mac=0e:2a:ac:15:29:05 name=<sandbox>_Calico prefix=26 remote=false\n" +
				"hns endpoint policy | Calico 172.21.41.5 PA {\"PA\":\"192.168.10.25\"} | \n"},
		{"hnsdiag list all with the load balancer's endpoints resolved to addresses", ParseHnsdiag,
			"Network          : 09c41c51-563a-57ec-8c90-2abaaf9453af\n    Name             : Calico\n    Type             : Overlay\n" +
				"Endpoint         : 2B87A046-19B9-458C-A681-5FF88360106D\n    Name             :\n    IP Address       : 172.21.172.3\n" +
				"Endpoint         : 0f8dc4db-f502-48d3-8845-29772ed1ea03\n    Name             :\n    IP Address       : 172.21.70.199\n" +
				"Load Balancer    : 996c2141-38f4-4d34-b971-781a68c61678\n    Virtual IPs      : 10.96.0.10\n    Direct IP IDs    : 2b87a046-19b9-458c-a681-5ff88360106d\n                       0f8dc4db-f502-48d3-8845-29772ed1ea03\n",
			"hns network | Calico | type=Overlay\n" +
				"hns endpoint | 172.21.172.3 | \n" +
				"hns endpoint | 172.21.70.199 | \n" +
				"hns load balancer | vips 10.96.0.10 backends 172.21.172.3,172.21.70.199 | \n"},
		{"Get-HnsPolicyList with a wrapped value", ParseHnsPolicyList,
			"\nActivityId       : e143c146-53b1-53e5-aba8-b03d304c0f42\nID               : 08f43132-5d6a-55d6-a191-dd0fce53a1b6\n" +
				"Policies         : {@{ExternalPort=5473; InternalPort=5473; IsDSR=True; Protocol=6; SourceVIP=192.168.10.25;\n                   Type=ELB; VIPs=System.Object[]}}\n" +
				"References       : {/endpoints/b3d160a1-eb4d-59c6-be1d-ba97be04cef1, /endpoints/20843f05-8167-5ba2-828f-b56c7ff98e38}\nState            : 2\n\n",
			"hns load balancer | ExternalPort=5473 InternalPort=5473 IsDSR=True Protocol=6 SourceVIP=192.168.10.25 Type=ELB | endpoints=2\n"},
		{"Get-NetAdapter with ifIndex and LinkSpeed, as Windows Server prints it", ParseNetAdapter,
			"\nName                      InterfaceDescription                    ifIndex Status       MacAddress             LinkSpeed\n" +
				"----                      --------------------                    ------- ------       ----------             ---------\n" +
				"vEthernet (Ethernet)      Hyper-V Virtual Ethernet Adapter             14 Up           00-15-5D-0A-00-05        10 Gbps\n" +
				"vEthernet (DrPort 1803... Hyper-V Virtual Ethernet Container A...       9 Up           00-15-5D-EB-90-AE        10 Gbps\n" +
				"vEthernet (df1924ad959... Hyper-V Virtual Ethernet Container A...      21 Up           0E-2A-AC-15-29-06        10 Gbps\n" +
				"Ethernet                  Microsoft Hyper-V Network Adapter             6 Up           00-15-5D-0A-00-05        10 Gbps\n",
			"net adapter | vEthernet (Ethernet) | description=Hyper-V Virtual Ethernet Adapt mac=00:15:5d:0a:00:05 status=Up\n" +
				"net adapter | vEthernet (DrPort <id>) | description=Hyper-V Virtual Ethernet Conta mac=00:15:5d:eb:90:ae status=Up\n" +
				"net adapter | vEthernet (<sandbox>_…) 0e:2a:ac:15:29:06 | description=Hyper-V Virtual Ethernet Conta mac=0e:2a:ac:15:29:06 status=Up\n" +
				"net adapter | Ethernet | description=Microsoft Hyper-V Network Adap mac=00:15:5d:0a:00:05 status=Up\n"},
		{"ipconfig /all of a Windows node", ParseIpconfig,
			"\r\nWindows IP Configuration\r\n\r\n   Host Name . . . . . . . . . . . . : k8s-lab-win-1\r\n   Primary Dns Suffix  . . . . . . . : \r\n\r\n" +
				"Ethernet adapter vEthernet (Ethernet):\r\n\r\n   Connection-specific DNS Suffix  . : \r\n   Description . . . . . . . . . . . : Hyper-V Virtual Ethernet Adapter\r\n" +
				"   Physical Address. . . . . . . . . : 00-15-5D-0A-00-05\r\n   DHCP Enabled. . . . . . . . . . . : No\r\n   Autoconfiguration Enabled . . . . : Yes\r\n" +
				"   Link-local IPv6 Address . . . . . : fe80::2d4c:1e2b:8a0e:3c11%14(Preferred) \r\n   IPv4 Address. . . . . . . . . . . : 192.168.10.25(Preferred) \r\n" +
				"   Subnet Mask . . . . . . . . . . . : 255.255.255.0\r\n   Default Gateway . . . . . . . . . : 192.168.10.1\r\n   DHCPv6 IAID . . . . . . . . . . . : 100668765\r\n" +
				"   DNS Servers . . . . . . . . . . . : 192.168.10.1\r\n                                       8.8.8.8\r\n   NetBIOS over Tcpip. . . . . . . . : Enabled\r\n",
			"ip configuration | vEthernet (Ethernet) | dhcp=No dns=192.168.10.1,8.8.8.8 gateway=192.168.10.1 ipv4=192.168.10.25 mac=00:15:5d:0a:00:05 mask=255.255.255.0\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, err := tc.parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(items); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
