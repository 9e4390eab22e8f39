# sandbox plan, prefix kh-: 17 namespaces, 225 commands
#   kh-node-network                                  node network 
#   kh-k8s-lab-master-1                              linux node k8s-lab-master-1 192.168.10.23
#   kh-pod.calico-system.calico-webhooks-648955b74-zqrkl pod calico-system/calico-webhooks-648955b74-zqrkl 172.21.70.194
#   kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 pod calico-system/calico-webhooks-648955b74-2m5p7 172.21.70.195
#   kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 pod calico-system/calico-kube-controllers-7cbbcdd58d-2h4x8 172.21.70.196
#   kh-pod.calico-system.csi-node-driver-gjfgd       pod calico-system/csi-node-driver-gjfgd 172.21.70.197
#   kh-pod.kube-system.coredns-8f97fdbd9-vr6vv       pod kube-system/coredns-8f97fdbd9-vr6vv 172.21.70.199
#   kh-k8s-lab-node-1                                linux node k8s-lab-node-1 192.168.10.24
#   kh-pod.calico-system.csi-node-driver-f56hv       pod calico-system/csi-node-driver-f56hv 172.21.211.1
#   kh-pod.demo.hello-55fb8f8684-69mvv               pod demo/hello-55fb8f8684-69mvv 172.21.211.25
#   kh-k8s-lab-node-2                                linux node k8s-lab-node-2 192.168.10.26
#   kh-pod.calico-system.csi-node-driver-w49wd       pod calico-system/csi-node-driver-w49wd 172.21.172.2
#   kh-pod.kube-system.coredns-8f97fdbd9-9gc9h       pod kube-system/coredns-8f97fdbd9-9gc9h 172.21.172.3
#   kh-pod.demo.hello-55fb8f8684-nztv2               pod demo/hello-55fb8f8684-nztv2 172.21.172.4
#   kh-k8s-lab-win-1                                 STAND-IN windows node stand-in k8s-lab-win-1 192.168.10.25
#   kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z       STAND-IN pod behind a windows stand-in win-demo/aspnetapp-769559d8ff-dkp9z 172.21.41.6
#   kh-pod.win-demo.aspnetapp-769559d8ff-vk445       STAND-IN pod behind a windows stand-in win-demo/aspnetapp-769559d8ff-vk445 172.21.41.5

# add the network namespace of the node network
ip netns add kh-node-network
ip -n kh-node-network link set lo up

# the bridge that plays the node network
ip -n kh-node-network link add br-nodes type bridge
ip -n kh-node-network link set br-nodes up

# the nodes' default gateway answers on the node network (nothing lies beyond it)
ip -n kh-node-network addr add 192.168.10.1/24 dev br-nodes

# add the network namespace of the linux node k8s-lab-master-1
ip netns add kh-k8s-lab-master-1
ip -n kh-k8s-lab-master-1 link set lo up

# the node forwards (kubelet and Felix require it)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.ip_forward=1

# the node's NIC on the node network
ip -n kh-node-network link add n0 type veth peer name ens18 index 2 netns kh-k8s-lab-master-1
ip -n kh-node-network link set n0 master br-nodes up
ip -n kh-k8s-lab-master-1 link set ens18 address 02:70:b4:f8:3e:20 mtu 1500 up
ip -n kh-k8s-lab-master-1 addr add 192.168.10.23/24 dev ens18

# Felix's VXLAN device (felix/dataplane/linux/vxlan_mgr.go)
ip -n kh-k8s-lab-master-1 link add vxlan.calico index 5 address 66:79:81:e0:1a:7d mtu 1450 type vxlan id 4096 local 192.168.10.23 dev ens18 dstport 4789 nolearning
ip -n kh-k8s-lab-master-1 link set vxlan.calico up
ip -n kh-k8s-lab-master-1 addr add 172.21.70.192/32 dev vxlan.calico

# add the network namespace of the pod calico-system/calico-webhooks-648955b74-zqrkl
ip netns add kh-pod.calico-system.calico-webhooks-648955b74-zqrkl
ip -n kh-pod.calico-system.calico-webhooks-648955b74-zqrkl link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-master-1 link add cali34e42304e3e index 6 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.calico-webhooks-648955b74-zqrkl
ip -n kh-k8s-lab-master-1 link set cali34e42304e3e up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.conf.cali34e42304e3e.proxy_arp=1
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.neigh.cali34e42304e3e.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.calico-webhooks-648955b74-zqrkl link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.calico-webhooks-648955b74-zqrkl addr add 172.21.70.194/32 dev eth0
ip -n kh-pod.calico-system.calico-webhooks-648955b74-zqrkl route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.calico-webhooks-648955b74-zqrkl route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod calico-system/calico-webhooks-648955b74-2m5p7
ip netns add kh-pod.calico-system.calico-webhooks-648955b74-2m5p7
ip -n kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-master-1 link add cali78ca3039baa index 7 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.calico-webhooks-648955b74-2m5p7
ip -n kh-k8s-lab-master-1 link set cali78ca3039baa up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.conf.cali78ca3039baa.proxy_arp=1
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.neigh.cali78ca3039baa.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 addr add 172.21.70.195/32 dev eth0
ip -n kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod calico-system/calico-kube-controllers-7cbbcdd58d-2h4x8
ip netns add kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8
ip -n kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-master-1 link add cali6ea9edfba51 index 8 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8
ip -n kh-k8s-lab-master-1 link set cali6ea9edfba51 up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.conf.cali6ea9edfba51.proxy_arp=1
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.neigh.cali6ea9edfba51.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 addr add 172.21.70.196/32 dev eth0
ip -n kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.calico-kube-controllers-7cbbcdd58d-2h4x8 route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod calico-system/csi-node-driver-gjfgd
ip netns add kh-pod.calico-system.csi-node-driver-gjfgd
ip -n kh-pod.calico-system.csi-node-driver-gjfgd link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-master-1 link add cali540cca3c5fa index 9 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.csi-node-driver-gjfgd
ip -n kh-k8s-lab-master-1 link set cali540cca3c5fa up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.conf.cali540cca3c5fa.proxy_arp=1
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.neigh.cali540cca3c5fa.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.csi-node-driver-gjfgd link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.csi-node-driver-gjfgd addr add 172.21.70.197/32 dev eth0
ip -n kh-pod.calico-system.csi-node-driver-gjfgd route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.csi-node-driver-gjfgd route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod kube-system/coredns-8f97fdbd9-vr6vv
ip netns add kh-pod.kube-system.coredns-8f97fdbd9-vr6vv
ip -n kh-pod.kube-system.coredns-8f97fdbd9-vr6vv link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-master-1 link add calibc3aabafbc1 index 10 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.kube-system.coredns-8f97fdbd9-vr6vv
ip -n kh-k8s-lab-master-1 link set calibc3aabafbc1 up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.conf.calibc3aabafbc1.proxy_arp=1
ip netns exec kh-k8s-lab-master-1 sysctl -qw net.ipv4.neigh.calibc3aabafbc1.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.kube-system.coredns-8f97fdbd9-vr6vv link set eth0 mtu 1450 up
ip -n kh-pod.kube-system.coredns-8f97fdbd9-vr6vv addr add 172.21.70.199/32 dev eth0
ip -n kh-pod.kube-system.coredns-8f97fdbd9-vr6vv route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.kube-system.coredns-8f97fdbd9-vr6vv route add default via 169.254.1.1 dev eth0

# route (netplan)
ip -n kh-k8s-lab-master-1 route add default via 192.168.10.1 dev ens18 proto static

# route (felix, to k8s-lab-win-1)
ip -n kh-k8s-lab-master-1 route add 172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-master-1)
ip -n kh-k8s-lab-master-1 route add blackhole 172.21.70.192/26 proto 80

# route (felix, to k8s-lab-master-1, pod calico-system/calico-webhooks-648955b74-zqrkl)
ip -n kh-k8s-lab-master-1 route add 172.21.70.194 dev cali34e42304e3e scope link metric 1024

# route (felix, to k8s-lab-master-1, pod calico-system/calico-webhooks-648955b74-2m5p7)
ip -n kh-k8s-lab-master-1 route add 172.21.70.195 dev cali78ca3039baa scope link metric 1024

# route (felix, to k8s-lab-master-1, pod calico-system/calico-kube-controllers-7cbbcdd58d-2h4x8)
ip -n kh-k8s-lab-master-1 route add 172.21.70.196 dev cali6ea9edfba51 scope link metric 1024

# route (felix, to k8s-lab-master-1, pod calico-system/csi-node-driver-gjfgd)
ip -n kh-k8s-lab-master-1 route add 172.21.70.197 dev cali540cca3c5fa scope link metric 1024

# route (felix, to k8s-lab-master-1, pod kube-system/coredns-8f97fdbd9-vr6vv)
ip -n kh-k8s-lab-master-1 route add 172.21.70.199 dev calibc3aabafbc1 scope link metric 1024

# route (felix, to k8s-lab-node-2)
ip -n kh-k8s-lab-master-1 route add 172.21.172.0/26 via 172.21.172.0 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-node-1)
ip -n kh-k8s-lab-master-1 route add 172.21.211.0/26 via 172.21.211.0 dev vxlan.calico onlink mtu 1450

# Felix's static ARP entry for k8s-lab-node-2's VTEP
ip -n kh-k8s-lab-master-1 neigh replace 172.21.172.0 lladdr 66:05:38:46:ab:ea dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-node-1's VTEP
ip -n kh-k8s-lab-master-1 neigh replace 172.21.211.0 lladdr 66:ee:f4:61:98:50 dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-win-1's VTEP
ip -n kh-k8s-lab-master-1 neigh replace 172.21.41.1 lladdr 00:15:5d:eb:90:ae dev vxlan.calico nud permanent

# Felix's FDB entry for k8s-lab-node-2's VTEP
bridge -n kh-k8s-lab-master-1 fdb append 66:05:38:46:ab:ea dev vxlan.calico dst 192.168.10.26 self permanent

# Felix's FDB entry for k8s-lab-node-1's VTEP
bridge -n kh-k8s-lab-master-1 fdb append 66:ee:f4:61:98:50 dev vxlan.calico dst 192.168.10.24 self permanent

# Felix's FDB entry for k8s-lab-win-1's VTEP
bridge -n kh-k8s-lab-master-1 fdb append 00:15:5d:eb:90:ae dev vxlan.calico dst 192.168.10.25 self permanent

# kube-proxy's and Felix's nftables tables as the twin compiled them
ip netns exec kh-k8s-lab-master-1 nft -f - <<'EOF'
table ip kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv4_addr . ipv4_addr . inet_proto . inet_service
		comment "service hairpin connections"
		elements = { 172.21.70.194 . 172.21.70.194 . tcp . 6443,
			     172.21.70.195 . 172.21.70.195 . tcp . 6443,
			     172.21.70.199 . 172.21.70.199 . tcp . 53,
			     172.21.70.199 . 172.21.70.199 . tcp . 9153,
			     172.21.70.199 . 172.21.70.199 . udp . 53,
			     192.168.10.23 . 192.168.10.23 . tcp . 5473 }
	}

	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
		elements = { 10.96.0.1, 10.96.0.10,
			     10.97.141.163, 10.99.144.34,
			     10.102.98.171, 10.106.7.248 }
	}

	set nodeport-ips {
		type ipv4_addr
		comment "IPs that accept NodePort traffic"
		elements = { 192.168.10.23 }
	}

	map no-endpoint-services {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,
			     10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
			     10.96.0.10 . tcp . 9153 : goto service-AS2KJYAD-kube-system/kube-dns/tcp/metrics,
			     10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,
			     10.97.141.163 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/http,
			     10.99.144.34 . tcp . 443 : goto service-VJG6Y737-calico-system/calico-webhooks/tcp/,
			     10.102.98.171 . tcp . 80 : goto service-KZM6J6QQ-win-demo/aspnetapp/tcp/http,
			     10.106.7.248 . tcp . 5473 : goto service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha }
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip daddr @cluster-ips ip saddr != 172.21.0.0/16 meta mark set meta mark | 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
		ip daddr 10.96.0.0/12 drop comment "Drop traffic to unallocated ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}

	chain service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 192.168.10.23 . 5473, 1 : 192.168.10.24 . 5473 }
	}

	chain service-VJG6Y737-calico-system/calico-webhooks/tcp/ {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.70.194 . 6443, 1 : 172.21.70.195 . 6443 }
	}

	chain service-2QRHZV4L-default/kubernetes/tcp/https {
		meta l4proto tcp dnat to 192.168.10.23:6443
	}

	chain service-VSI2YVQZ-demo/hello/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }
	}

	chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {
		meta l4proto udp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-AS2KJYAD-kube-system/kube-dns/tcp/metrics {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 9153, 1 : 172.21.70.199 . 9153 }
	}

	chain service-KZM6J6QQ-win-demo/aspnetapp/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.41.5 . 8080, 1 : 172.21.41.6 . 8080 }
	}
}
table ip6 kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv6_addr . ipv6_addr . inet_proto . inet_service
		comment "service hairpin connections"
	}

	set cluster-ips {
		type ipv6_addr
		comment "Active ClusterIPs"
	}

	set nodeport-ips {
		type ipv6_addr
		comment "IPs that accept NodePort traffic"
	}

	map no-endpoint-services {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip6 daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip6 daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip6 daddr . meta l4proto . th dport vmap @service-ips
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip6 daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}
}
table ip calico {
	comment "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"
	set cali40all-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	set cali40masq-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	chain filter-FORWARD {
		type filter hook forward priority 0; policy accept;
		jump filter-cali-FORWARD
	}

	chain filter-cali-FORWARD {
		iifname "cali*" jump filter-cali-from-wl-dispatch
		oifname "cali*" jump filter-cali-to-wl-dispatch
		meta mark & 0x00010000 == 0x00010000 accept comment "Policy explicitly accepted packet."
	}

	chain filter-INPUT {
		type filter hook input priority 0; policy accept;
		jump filter-cali-INPUT
	}

	chain filter-cali-INPUT {
		iifname "cali*" goto filter-cali-wl-to-host
	}

	chain filter-cali-wl-to-host {
		jump filter-cali-from-wl-dispatch
		accept comment "Configured DefaultEndpointToHostAction"
	}

	chain filter-cali-from-wl-dispatch {
		iifname vmap { "cali34e42304e3e" : goto filter-cali-fw-cali34e42304e3e, "cali540cca3c5fa" : goto filter-cali-fw-cali540cca3c5fa, "cali6ea9edfba51" : goto filter-cali-fw-cali6ea9edfba51, "cali78ca3039baa" : goto filter-cali-fw-cali78ca3039baa, "calibc3aabafbc1" : goto filter-cali-fw-calibc3aabafbc1 }
	}

	chain filter-cali-to-wl-dispatch {
		oifname vmap { "cali34e42304e3e" : goto filter-cali-tw-cali34e42304e3e, "cali540cca3c5fa" : goto filter-cali-tw-cali540cca3c5fa, "cali6ea9edfba51" : goto filter-cali-tw-cali6ea9edfba51, "cali78ca3039baa" : goto filter-cali-tw-cali78ca3039baa, "calibc3aabafbc1" : goto filter-cali-tw-calibc3aabafbc1 }
	}

	chain filter-cali-tw-cali34e42304e3e {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-cali34e42304e3e {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-cali78ca3039baa {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-cali78ca3039baa {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-cali6ea9edfba51 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-cali6ea9edfba51 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-cali540cca3c5fa {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-cali540cca3c5fa {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-calibc3aabafbc1 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.kube-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-calibc3aabafbc1 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.kube-system: no NetworkPolicy selects the pod"
	}

	chain nat-POSTROUTING {
		type nat hook postrouting priority 100; policy accept;
		jump nat-cali-nat-outgoing
	}

	chain nat-cali-nat-outgoing {
		ip saddr @cali40masq-ipam-pools ip daddr != @cali40all-ipam-pools masquerade fully-random
	}
}
EOF

# add the network namespace of the linux node k8s-lab-node-1
ip netns add kh-k8s-lab-node-1
ip -n kh-k8s-lab-node-1 link set lo up

# the node forwards (kubelet and Felix require it)
ip netns exec kh-k8s-lab-node-1 sysctl -qw net.ipv4.ip_forward=1

# the node's NIC on the node network
ip -n kh-node-network link add n1 type veth peer name ens18 index 2 netns kh-k8s-lab-node-1
ip -n kh-node-network link set n1 master br-nodes up
ip -n kh-k8s-lab-node-1 link set ens18 address 02:aa:61:93:11:dc mtu 1500 up
ip -n kh-k8s-lab-node-1 addr add 192.168.10.24/24 dev ens18

# Felix's VXLAN device (felix/dataplane/linux/vxlan_mgr.go)
ip -n kh-k8s-lab-node-1 link add vxlan.calico index 5 address 66:ee:f4:61:98:50 mtu 1450 type vxlan id 4096 local 192.168.10.24 dev ens18 dstport 4789 nolearning
ip -n kh-k8s-lab-node-1 link set vxlan.calico up
ip -n kh-k8s-lab-node-1 addr add 172.21.211.0/32 dev vxlan.calico

# add the network namespace of the pod calico-system/csi-node-driver-f56hv
ip netns add kh-pod.calico-system.csi-node-driver-f56hv
ip -n kh-pod.calico-system.csi-node-driver-f56hv link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-node-1 link add calie2f4813f52e index 6 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.csi-node-driver-f56hv
ip -n kh-k8s-lab-node-1 link set calie2f4813f52e up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-node-1 sysctl -qw net.ipv4.conf.calie2f4813f52e.proxy_arp=1
ip netns exec kh-k8s-lab-node-1 sysctl -qw net.ipv4.neigh.calie2f4813f52e.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.csi-node-driver-f56hv link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.csi-node-driver-f56hv addr add 172.21.211.1/32 dev eth0
ip -n kh-pod.calico-system.csi-node-driver-f56hv route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.csi-node-driver-f56hv route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod demo/hello-55fb8f8684-69mvv
ip netns add kh-pod.demo.hello-55fb8f8684-69mvv
ip -n kh-pod.demo.hello-55fb8f8684-69mvv link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-node-1 link add calidcd0d5a21a1 index 7 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.demo.hello-55fb8f8684-69mvv
ip -n kh-k8s-lab-node-1 link set calidcd0d5a21a1 up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-node-1 sysctl -qw net.ipv4.conf.calidcd0d5a21a1.proxy_arp=1
ip netns exec kh-k8s-lab-node-1 sysctl -qw net.ipv4.neigh.calidcd0d5a21a1.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.demo.hello-55fb8f8684-69mvv link set eth0 mtu 1450 up
ip -n kh-pod.demo.hello-55fb8f8684-69mvv addr add 172.21.211.25/32 dev eth0
ip -n kh-pod.demo.hello-55fb8f8684-69mvv route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.demo.hello-55fb8f8684-69mvv route add default via 169.254.1.1 dev eth0

# route (netplan)
ip -n kh-k8s-lab-node-1 route add default via 192.168.10.1 dev ens18 proto static

# route (felix, to k8s-lab-win-1)
ip -n kh-k8s-lab-node-1 route add 172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-master-1)
ip -n kh-k8s-lab-node-1 route add 172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-node-2)
ip -n kh-k8s-lab-node-1 route add 172.21.172.0/26 via 172.21.172.0 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-node-1)
ip -n kh-k8s-lab-node-1 route add blackhole 172.21.211.0/26 proto 80

# route (felix, to k8s-lab-node-1, pod calico-system/csi-node-driver-f56hv)
ip -n kh-k8s-lab-node-1 route add 172.21.211.1 dev calie2f4813f52e scope link metric 1024

# route (felix, to k8s-lab-node-1, pod demo/hello-55fb8f8684-69mvv)
ip -n kh-k8s-lab-node-1 route add 172.21.211.25 dev calidcd0d5a21a1 scope link metric 1024

# Felix's static ARP entry for k8s-lab-master-1's VTEP
ip -n kh-k8s-lab-node-1 neigh replace 172.21.70.192 lladdr 66:79:81:e0:1a:7d dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-node-2's VTEP
ip -n kh-k8s-lab-node-1 neigh replace 172.21.172.0 lladdr 66:05:38:46:ab:ea dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-win-1's VTEP
ip -n kh-k8s-lab-node-1 neigh replace 172.21.41.1 lladdr 00:15:5d:eb:90:ae dev vxlan.calico nud permanent

# Felix's FDB entry for k8s-lab-node-2's VTEP
bridge -n kh-k8s-lab-node-1 fdb append 66:05:38:46:ab:ea dev vxlan.calico dst 192.168.10.26 self permanent

# Felix's FDB entry for k8s-lab-master-1's VTEP
bridge -n kh-k8s-lab-node-1 fdb append 66:79:81:e0:1a:7d dev vxlan.calico dst 192.168.10.23 self permanent

# Felix's FDB entry for k8s-lab-win-1's VTEP
bridge -n kh-k8s-lab-node-1 fdb append 00:15:5d:eb:90:ae dev vxlan.calico dst 192.168.10.25 self permanent

# kube-proxy's and Felix's nftables tables as the twin compiled them
ip netns exec kh-k8s-lab-node-1 nft -f - <<'EOF'
table ip kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv4_addr . ipv4_addr . inet_proto . inet_service
		comment "service hairpin connections"
		elements = { 172.21.211.25 . 172.21.211.25 . tcp . 8080,
			     192.168.10.24 . 192.168.10.24 . tcp . 5473 }
	}

	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
		elements = { 10.96.0.1, 10.96.0.10,
			     10.97.141.163, 10.99.144.34,
			     10.102.98.171, 10.106.7.248 }
	}

	set nodeport-ips {
		type ipv4_addr
		comment "IPs that accept NodePort traffic"
		elements = { 192.168.10.24 }
	}

	map no-endpoint-services {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,
			     10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
			     10.96.0.10 . tcp . 9153 : goto service-AS2KJYAD-kube-system/kube-dns/tcp/metrics,
			     10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,
			     10.97.141.163 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/http,
			     10.99.144.34 . tcp . 443 : goto service-VJG6Y737-calico-system/calico-webhooks/tcp/,
			     10.102.98.171 . tcp . 80 : goto service-KZM6J6QQ-win-demo/aspnetapp/tcp/http,
			     10.106.7.248 . tcp . 5473 : goto service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha }
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip daddr @cluster-ips ip saddr != 172.21.0.0/16 meta mark set meta mark | 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
		ip daddr 10.96.0.0/12 drop comment "Drop traffic to unallocated ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}

	chain service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 192.168.10.23 . 5473, 1 : 192.168.10.24 . 5473 }
	}

	chain service-VJG6Y737-calico-system/calico-webhooks/tcp/ {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.70.194 . 6443, 1 : 172.21.70.195 . 6443 }
	}

	chain service-2QRHZV4L-default/kubernetes/tcp/https {
		meta l4proto tcp dnat to 192.168.10.23:6443
	}

	chain service-VSI2YVQZ-demo/hello/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }
	}

	chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {
		meta l4proto udp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-AS2KJYAD-kube-system/kube-dns/tcp/metrics {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 9153, 1 : 172.21.70.199 . 9153 }
	}

	chain service-KZM6J6QQ-win-demo/aspnetapp/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.41.5 . 8080, 1 : 172.21.41.6 . 8080 }
	}
}
table ip6 kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv6_addr . ipv6_addr . inet_proto . inet_service
		comment "service hairpin connections"
	}

	set cluster-ips {
		type ipv6_addr
		comment "Active ClusterIPs"
	}

	set nodeport-ips {
		type ipv6_addr
		comment "IPs that accept NodePort traffic"
	}

	map no-endpoint-services {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip6 daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip6 daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip6 daddr . meta l4proto . th dport vmap @service-ips
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip6 daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}
}
table ip calico {
	comment "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"
	set cali40all-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	set cali40masq-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	chain filter-FORWARD {
		type filter hook forward priority 0; policy accept;
		jump filter-cali-FORWARD
	}

	chain filter-cali-FORWARD {
		iifname "cali*" jump filter-cali-from-wl-dispatch
		oifname "cali*" jump filter-cali-to-wl-dispatch
		meta mark & 0x00010000 == 0x00010000 accept comment "Policy explicitly accepted packet."
	}

	chain filter-INPUT {
		type filter hook input priority 0; policy accept;
		jump filter-cali-INPUT
	}

	chain filter-cali-INPUT {
		iifname "cali*" goto filter-cali-wl-to-host
	}

	chain filter-cali-wl-to-host {
		jump filter-cali-from-wl-dispatch
		accept comment "Configured DefaultEndpointToHostAction"
	}

	chain filter-cali-from-wl-dispatch {
		iifname vmap { "calidcd0d5a21a1" : goto filter-cali-fw-calidcd0d5a21a1, "calie2f4813f52e" : goto filter-cali-fw-calie2f4813f52e }
	}

	chain filter-cali-to-wl-dispatch {
		oifname vmap { "calidcd0d5a21a1" : goto filter-cali-tw-calidcd0d5a21a1, "calie2f4813f52e" : goto filter-cali-tw-calie2f4813f52e }
	}

	chain filter-cali-tw-calie2f4813f52e {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-calie2f4813f52e {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-calidcd0d5a21a1 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.demo: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-calidcd0d5a21a1 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.demo: no NetworkPolicy selects the pod"
	}

	chain nat-POSTROUTING {
		type nat hook postrouting priority 100; policy accept;
		jump nat-cali-nat-outgoing
	}

	chain nat-cali-nat-outgoing {
		ip saddr @cali40masq-ipam-pools ip daddr != @cali40all-ipam-pools masquerade fully-random
	}
}
EOF

# add the network namespace of the linux node k8s-lab-node-2
ip netns add kh-k8s-lab-node-2
ip -n kh-k8s-lab-node-2 link set lo up

# the node forwards (kubelet and Felix require it)
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.ip_forward=1

# the node's NIC on the node network
ip -n kh-node-network link add n2 type veth peer name ens18 index 2 netns kh-k8s-lab-node-2
ip -n kh-node-network link set n2 master br-nodes up
ip -n kh-k8s-lab-node-2 link set ens18 address 02:43:a4:4b:09:cc mtu 1500 up
ip -n kh-k8s-lab-node-2 addr add 192.168.10.26/24 dev ens18

# Felix's VXLAN device (felix/dataplane/linux/vxlan_mgr.go)
ip -n kh-k8s-lab-node-2 link add vxlan.calico index 5 address 66:05:38:46:ab:ea mtu 1450 type vxlan id 4096 local 192.168.10.26 dev ens18 dstport 4789 nolearning
ip -n kh-k8s-lab-node-2 link set vxlan.calico up
ip -n kh-k8s-lab-node-2 addr add 172.21.172.0/32 dev vxlan.calico

# add the network namespace of the pod calico-system/csi-node-driver-w49wd
ip netns add kh-pod.calico-system.csi-node-driver-w49wd
ip -n kh-pod.calico-system.csi-node-driver-w49wd link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-node-2 link add calid60012519f0 index 6 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.calico-system.csi-node-driver-w49wd
ip -n kh-k8s-lab-node-2 link set calid60012519f0 up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.conf.calid60012519f0.proxy_arp=1
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.neigh.calid60012519f0.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.calico-system.csi-node-driver-w49wd link set eth0 mtu 1450 up
ip -n kh-pod.calico-system.csi-node-driver-w49wd addr add 172.21.172.2/32 dev eth0
ip -n kh-pod.calico-system.csi-node-driver-w49wd route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.calico-system.csi-node-driver-w49wd route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod kube-system/coredns-8f97fdbd9-9gc9h
ip netns add kh-pod.kube-system.coredns-8f97fdbd9-9gc9h
ip -n kh-pod.kube-system.coredns-8f97fdbd9-9gc9h link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-node-2 link add caliad8a24266f7 index 7 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.kube-system.coredns-8f97fdbd9-9gc9h
ip -n kh-k8s-lab-node-2 link set caliad8a24266f7 up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.conf.caliad8a24266f7.proxy_arp=1
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.neigh.caliad8a24266f7.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.kube-system.coredns-8f97fdbd9-9gc9h link set eth0 mtu 1450 up
ip -n kh-pod.kube-system.coredns-8f97fdbd9-9gc9h addr add 172.21.172.3/32 dev eth0
ip -n kh-pod.kube-system.coredns-8f97fdbd9-9gc9h route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.kube-system.coredns-8f97fdbd9-9gc9h route add default via 169.254.1.1 dev eth0

# add the network namespace of the pod demo/hello-55fb8f8684-nztv2
ip netns add kh-pod.demo.hello-55fb8f8684-nztv2
ip -n kh-pod.demo.hello-55fb8f8684-nztv2 link set lo up

# the pod's veth, named as Calico names it
ip -n kh-k8s-lab-node-2 link add cali40d2dea1e7a index 8 address ee:ee:ee:ee:ee:ee mtu 1450 type veth peer name eth0 index 2 netns kh-pod.demo.hello-55fb8f8684-nztv2
ip -n kh-k8s-lab-node-2 link set cali40d2dea1e7a up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.conf.cali40d2dea1e7a.proxy_arp=1
ip netns exec kh-k8s-lab-node-2 sysctl -qw net.ipv4.neigh.cali40d2dea1e7a.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.demo.hello-55fb8f8684-nztv2 link set eth0 mtu 1450 up
ip -n kh-pod.demo.hello-55fb8f8684-nztv2 addr add 172.21.172.4/32 dev eth0
ip -n kh-pod.demo.hello-55fb8f8684-nztv2 route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.demo.hello-55fb8f8684-nztv2 route add default via 169.254.1.1 dev eth0

# route (netplan)
ip -n kh-k8s-lab-node-2 route add default via 192.168.10.1 dev ens18 proto static

# route (felix, to k8s-lab-win-1)
ip -n kh-k8s-lab-node-2 route add 172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-master-1)
ip -n kh-k8s-lab-node-2 route add 172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1450

# route (felix, to k8s-lab-node-2)
ip -n kh-k8s-lab-node-2 route add blackhole 172.21.172.0/26 proto 80

# route (felix, to k8s-lab-node-2, pod calico-system/csi-node-driver-w49wd)
ip -n kh-k8s-lab-node-2 route add 172.21.172.2 dev calid60012519f0 scope link metric 1024

# route (felix, to k8s-lab-node-2, pod kube-system/coredns-8f97fdbd9-9gc9h)
ip -n kh-k8s-lab-node-2 route add 172.21.172.3 dev caliad8a24266f7 scope link metric 1024

# route (felix, to k8s-lab-node-2, pod demo/hello-55fb8f8684-nztv2)
ip -n kh-k8s-lab-node-2 route add 172.21.172.4 dev cali40d2dea1e7a scope link metric 1024

# route (felix, to k8s-lab-node-1)
ip -n kh-k8s-lab-node-2 route add 172.21.211.0/26 via 172.21.211.0 dev vxlan.calico onlink mtu 1450

# Felix's static ARP entry for k8s-lab-master-1's VTEP
ip -n kh-k8s-lab-node-2 neigh replace 172.21.70.192 lladdr 66:79:81:e0:1a:7d dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-node-1's VTEP
ip -n kh-k8s-lab-node-2 neigh replace 172.21.211.0 lladdr 66:ee:f4:61:98:50 dev vxlan.calico nud permanent

# Felix's static ARP entry for k8s-lab-win-1's VTEP
ip -n kh-k8s-lab-node-2 neigh replace 172.21.41.1 lladdr 00:15:5d:eb:90:ae dev vxlan.calico nud permanent

# Felix's FDB entry for k8s-lab-master-1's VTEP
bridge -n kh-k8s-lab-node-2 fdb append 66:79:81:e0:1a:7d dev vxlan.calico dst 192.168.10.23 self permanent

# Felix's FDB entry for k8s-lab-node-1's VTEP
bridge -n kh-k8s-lab-node-2 fdb append 66:ee:f4:61:98:50 dev vxlan.calico dst 192.168.10.24 self permanent

# Felix's FDB entry for k8s-lab-win-1's VTEP
bridge -n kh-k8s-lab-node-2 fdb append 00:15:5d:eb:90:ae dev vxlan.calico dst 192.168.10.25 self permanent

# kube-proxy's and Felix's nftables tables as the twin compiled them
ip netns exec kh-k8s-lab-node-2 nft -f - <<'EOF'
table ip kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv4_addr . ipv4_addr . inet_proto . inet_service
		comment "service hairpin connections"
		elements = { 172.21.172.3 . 172.21.172.3 . tcp . 53,
			     172.21.172.3 . 172.21.172.3 . tcp . 9153,
			     172.21.172.3 . 172.21.172.3 . udp . 53,
			     172.21.172.4 . 172.21.172.4 . tcp . 8080 }
	}

	set cluster-ips {
		type ipv4_addr
		comment "Active ClusterIPs"
		elements = { 10.96.0.1, 10.96.0.10,
			     10.97.141.163, 10.99.144.34,
			     10.102.98.171, 10.106.7.248 }
	}

	set nodeport-ips {
		type ipv4_addr
		comment "IPs that accept NodePort traffic"
		elements = { 192.168.10.26 }
	}

	map no-endpoint-services {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,
			     10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
			     10.96.0.10 . tcp . 9153 : goto service-AS2KJYAD-kube-system/kube-dns/tcp/metrics,
			     10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,
			     10.97.141.163 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/http,
			     10.99.144.34 . tcp . 443 : goto service-VJG6Y737-calico-system/calico-webhooks/tcp/,
			     10.102.98.171 . tcp . 80 : goto service-KZM6J6QQ-win-demo/aspnetapp/tcp/http,
			     10.106.7.248 . tcp . 5473 : goto service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha }
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip daddr @cluster-ips ip saddr != 172.21.0.0/16 meta mark set meta mark | 0x00004000 comment "masquerade clusterIP traffic from outside cluster"
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
		ip daddr 10.96.0.0/12 drop comment "Drop traffic to unallocated ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}

	chain service-EZ4UY2LR-calico-system/calico-typha/tcp/calico-typha {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 192.168.10.23 . 5473, 1 : 192.168.10.24 . 5473 }
	}

	chain service-VJG6Y737-calico-system/calico-webhooks/tcp/ {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.70.194 . 6443, 1 : 172.21.70.195 . 6443 }
	}

	chain service-2QRHZV4L-default/kubernetes/tcp/https {
		meta l4proto tcp dnat to 192.168.10.23:6443
	}

	chain service-VSI2YVQZ-demo/hello/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }
	}

	chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {
		meta l4proto udp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 53, 1 : 172.21.70.199 . 53 }
	}

	chain service-AS2KJYAD-kube-system/kube-dns/tcp/metrics {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.3 . 9153, 1 : 172.21.70.199 . 9153 }
	}

	chain service-KZM6J6QQ-win-demo/aspnetapp/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.41.5 . 8080, 1 : 172.21.41.6 . 8080 }
	}
}
table ip6 kube-proxy {
	comment "rules for kube-proxy"
	set hairpin-connections {
		type ipv6_addr . ipv6_addr . inet_proto . inet_service
		comment "service hairpin connections"
	}

	set cluster-ips {
		type ipv6_addr
		comment "Active ClusterIPs"
	}

	set nodeport-ips {
		type ipv6_addr
		comment "IPs that accept NodePort traffic"
	}

	map no-endpoint-services {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
	}

	map no-endpoint-nodeports {
		type inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to service nodeports with no endpoints"
	}

	map firewall-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "destinations that are subject to LoadBalancerSourceRanges"
	}

	map service-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
	}

	map service-nodeports {
		type inet_proto . inet_service : verdict
		comment "NodePort traffic"
	}

	chain filter-prerouting-pre-dnat {
		type filter hook prerouting priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-output-pre-dnat {
		type filter hook output priority -110; policy accept;
		ct state new jump firewall-check
	}

	chain filter-input {
		type filter hook input priority 0; policy accept;
		ct state new jump nodeport-endpoints-check
		ct state new jump service-endpoints-check
	}

	chain filter-forward {
		type filter hook forward priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain filter-output {
		type filter hook output priority 0; policy accept;
		ct state new jump service-endpoints-check
		ct state new jump cluster-ips-check
	}

	chain nat-prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump masquerading
	}

	chain nodeport-endpoints-check {
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
	}

	chain service-endpoints-check {
		ip6 daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain firewall-check {
		ip6 daddr . meta l4proto . th dport vmap @firewall-ips
	}

	chain services {
		ip6 daddr . meta l4proto . th dport vmap @service-ips
		ip6 daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
	}

	chain masquerading {
		meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random
		ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
	}

	chain cluster-ips-check {
		ip6 daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
	}

	chain reject-chain {
		comment "helper for @no-endpoint-services / @no-endpoint-nodeports"
		reject
	}
}
table ip calico {
	comment "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"
	set cali40all-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	set cali40masq-ipam-pools {
		type ipv4_addr
		flags interval
		elements = { 172.21.0.0/16 }
	}

	chain filter-FORWARD {
		type filter hook forward priority 0; policy accept;
		jump filter-cali-FORWARD
	}

	chain filter-cali-FORWARD {
		iifname "cali*" jump filter-cali-from-wl-dispatch
		oifname "cali*" jump filter-cali-to-wl-dispatch
		meta mark & 0x00010000 == 0x00010000 accept comment "Policy explicitly accepted packet."
	}

	chain filter-INPUT {
		type filter hook input priority 0; policy accept;
		jump filter-cali-INPUT
	}

	chain filter-cali-INPUT {
		iifname "cali*" goto filter-cali-wl-to-host
	}

	chain filter-cali-wl-to-host {
		jump filter-cali-from-wl-dispatch
		accept comment "Configured DefaultEndpointToHostAction"
	}

	chain filter-cali-from-wl-dispatch {
		iifname vmap { "cali40d2dea1e7a" : goto filter-cali-fw-cali40d2dea1e7a, "caliad8a24266f7" : goto filter-cali-fw-caliad8a24266f7, "calid60012519f0" : goto filter-cali-fw-calid60012519f0 }
	}

	chain filter-cali-to-wl-dispatch {
		oifname vmap { "cali40d2dea1e7a" : goto filter-cali-tw-cali40d2dea1e7a, "caliad8a24266f7" : goto filter-cali-tw-caliad8a24266f7, "calid60012519f0" : goto filter-cali-tw-calid60012519f0 }
	}

	chain filter-cali-tw-calid60012519f0 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-calid60012519f0 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.calico-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-caliad8a24266f7 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.kube-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-caliad8a24266f7 {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.kube-system: no NetworkPolicy selects the pod"
	}

	chain filter-cali-tw-cali40d2dea1e7a {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.demo: no NetworkPolicy selects the pod"
	}

	chain filter-cali-fw-cali40d2dea1e7a {
		ct state established,related accept
		ct state invalid drop
		meta mark set meta mark & 0xfffeffff
		meta mark set meta mark | 0x00010000 return comment "profile kns.demo: no NetworkPolicy selects the pod"
	}

	chain nat-POSTROUTING {
		type nat hook postrouting priority 100; policy accept;
		jump nat-cali-nat-outgoing
	}

	chain nat-cali-nat-outgoing {
		ip saddr @cali40masq-ipam-pools ip daddr != @cali40all-ipam-pools masquerade fully-random
	}
}
EOF

# add the network namespace of the windows node stand-in k8s-lab-win-1
ip netns add kh-k8s-lab-win-1
ip -n kh-k8s-lab-win-1 link set lo up

# STAND-IN for Windows node k8s-lab-win-1: it forwards
ip netns exec kh-k8s-lab-win-1 sysctl -qw net.ipv4.ip_forward=1

# STAND-IN: the Windows node's address on the node network
ip -n kh-node-network link add n3 type veth peer name eth0 netns kh-k8s-lab-win-1
ip -n kh-node-network link set n3 master br-nodes up
ip -n kh-k8s-lab-win-1 link set eth0 up
ip -n kh-k8s-lab-win-1 addr add 192.168.10.25/24 dev eth0

# STAND-IN: VXLAN with the VTEP the Linux nodes know for k8s-lab-win-1
ip -n kh-k8s-lab-win-1 link add vxlan.standin address 00:15:5d:eb:90:ae mtu 1450 type vxlan id 4096 local 192.168.10.25 dev eth0 dstport 4789 nolearning
ip -n kh-k8s-lab-win-1 link set vxlan.standin up
ip -n kh-k8s-lab-win-1 addr add 172.21.41.1/32 dev vxlan.standin

# STAND-IN: k8s-lab-master-1's VTEP
ip -n kh-k8s-lab-win-1 neigh replace 172.21.70.192 lladdr 66:79:81:e0:1a:7d dev vxlan.standin nud permanent
bridge -n kh-k8s-lab-win-1 fdb append 66:79:81:e0:1a:7d dev vxlan.standin dst 192.168.10.23 self permanent
ip -n kh-k8s-lab-win-1 route add 172.21.70.192/26 via 172.21.70.192 dev vxlan.standin onlink

# STAND-IN: k8s-lab-node-1's VTEP
ip -n kh-k8s-lab-win-1 neigh replace 172.21.211.0 lladdr 66:ee:f4:61:98:50 dev vxlan.standin nud permanent
bridge -n kh-k8s-lab-win-1 fdb append 66:ee:f4:61:98:50 dev vxlan.standin dst 192.168.10.24 self permanent
ip -n kh-k8s-lab-win-1 route add 172.21.211.0/26 via 172.21.211.0 dev vxlan.standin onlink

# STAND-IN: k8s-lab-node-2's VTEP
ip -n kh-k8s-lab-win-1 neigh replace 172.21.172.0 lladdr 66:05:38:46:ab:ea dev vxlan.standin nud permanent
bridge -n kh-k8s-lab-win-1 fdb append 66:05:38:46:ab:ea dev vxlan.standin dst 192.168.10.26 self permanent
ip -n kh-k8s-lab-win-1 route add 172.21.172.0/26 via 172.21.172.0 dev vxlan.standin onlink
ip -n kh-k8s-lab-win-1 route add default via 192.168.10.1 dev eth0

# add the network namespace of the pod behind a windows stand-in win-demo/aspnetapp-769559d8ff-dkp9z
ip netns add kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z link set lo up

# STAND-IN: the Windows pod, joined to its stand-in node by a veth
ip -n kh-k8s-lab-win-1 link add hns24273c04afb mtu 1450 type veth peer name eth0 netns kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z
ip -n kh-k8s-lab-win-1 link set hns24273c04afb up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-win-1 sysctl -qw net.ipv4.conf.hns24273c04afb.proxy_arp=1
ip netns exec kh-k8s-lab-win-1 sysctl -qw net.ipv4.neigh.hns24273c04afb.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z link set eth0 mtu 1450 up
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z addr add 172.21.41.6/32 dev eth0
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z route add default via 169.254.1.1 dev eth0

# a Windows pod answers with Windows' default TTL
ip netns exec kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z sysctl -qw net.ipv4.ip_default_ttl=128
ip -n kh-k8s-lab-win-1 route add 172.21.41.6 dev hns24273c04afb scope link

# add the network namespace of the pod behind a windows stand-in win-demo/aspnetapp-769559d8ff-vk445
ip netns add kh-pod.win-demo.aspnetapp-769559d8ff-vk445
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-vk445 link set lo up

# STAND-IN: the Windows pod, joined to its stand-in node by a veth
ip -n kh-k8s-lab-win-1 link add hns89c824578cc mtu 1450 type veth peer name eth0 netns kh-pod.win-demo.aspnetapp-769559d8ff-vk445
ip -n kh-k8s-lab-win-1 link set hns89c824578cc up

# proxy ARP answers the pod's ARP for 169.254.1.1 (felix/dataplane/linux/endpoint_mgr.go)
ip netns exec kh-k8s-lab-win-1 sysctl -qw net.ipv4.conf.hns89c824578cc.proxy_arp=1
ip netns exec kh-k8s-lab-win-1 sysctl -qw net.ipv4.neigh.hns89c824578cc.proxy_delay=0

# the pod's eth0 as the Calico CNI plugin configures it
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-vk445 link set eth0 mtu 1450 up
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-vk445 addr add 172.21.41.5/32 dev eth0
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-vk445 route add 169.254.1.1 dev eth0 scope link
ip -n kh-pod.win-demo.aspnetapp-769559d8ff-vk445 route add default via 169.254.1.1 dev eth0

# a Windows pod answers with Windows' default TTL
ip netns exec kh-pod.win-demo.aspnetapp-769559d8ff-vk445 sysctl -qw net.ipv4.ip_default_ttl=128
ip -n kh-k8s-lab-win-1 route add 172.21.41.5 dev hns89c824578cc scope link

# servers (kubectl-hybrid sandbox serve, one per namespace)
#   kh-pod.calico-system.calico-webhooks-648955b74-zqrkl (pod calico-system/calico-webhooks-648955b74-zqrkl): tcp [6443] udp [] dns false
#   kh-pod.calico-system.calico-webhooks-648955b74-2m5p7 (pod calico-system/calico-webhooks-648955b74-2m5p7): tcp [6443] udp [] dns false
#   kh-pod.kube-system.coredns-8f97fdbd9-vr6vv (pod kube-system/coredns-8f97fdbd9-vr6vv): tcp [9153] udp [] dns true
#   kh-pod.demo.hello-55fb8f8684-69mvv (pod demo/hello-55fb8f8684-69mvv): tcp [8080] udp [] dns false
#   kh-pod.kube-system.coredns-8f97fdbd9-9gc9h (pod kube-system/coredns-8f97fdbd9-9gc9h): tcp [9153] udp [] dns true
#   kh-pod.demo.hello-55fb8f8684-nztv2 (pod demo/hello-55fb8f8684-nztv2): tcp [8080] udp [] dns false
#   kh-pod.win-demo.aspnetapp-769559d8ff-dkp9z (pod win-demo/aspnetapp-769559d8ff-dkp9z): tcp [8080] udp [] dns false
#   kh-pod.win-demo.aspnetapp-769559d8ff-vk445 (pod win-demo/aspnetapp-769559d8ff-vk445): tcp [8080] udp [] dns false
#   kh-k8s-lab-master-1 (node k8s-lab-master-1): tcp [5473 6443] udp [] dns false
#   kh-k8s-lab-node-1 (node k8s-lab-node-1): tcp [5473] udp [] dns false
# zone the CoreDNS pods answer from: 6 names
#   aspnetapp.win-demo.svc.cluster.local rcode 0 10.102.98.171
#   calico-typha.calico-system.svc.cluster.local rcode 0 10.106.7.248
#   calico-webhooks.calico-system.svc.cluster.local rcode 0 10.99.144.34
#   hello.demo.svc.cluster.local rcode 0 10.97.141.163
#   kube-dns.kube-system.svc.cluster.local rcode 0 10.96.0.10
#   kubernetes.default.svc.cluster.local rcode 0 10.96.0.1
# note: kh-k8s-lab-win-1 is a stand-in for the Windows node k8s-lab-win-1: a Linux namespace terminating VXLAN for 172.21.41.0/26; HNS, VFP and the Windows host are not played
