package linux

import (
	"net/netip"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Seed 000 is the lab article: transcripts of the real nodes. These tests
// hold the twin to them line for line (modulo the trailing blank iproute2
// prints and pasting drops).

// The seed prints node-2's table before k8s-lab-win-1 and hello existed;
// the final lab adds the Windows block's route and hello's /32, in the
// kernel's order (by destination address).
func TestSeedIPRouteOnNode2IsTheSeedTablePlusTheWindowsBlockAndHello(t *testing.T) {
	n := labNode(t, "k8s-lab-node-2")
	assertLines(t, "ip route on k8s-lab-node-2", run(t, n, "ip route"),
		"default via 192.168.10.1 dev ens18 proto static",
		"172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450",
		"172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1450",
		"blackhole 172.21.172.0/26 proto 80",
		"172.21.172.2 dev calid60012519f0 scope link metric 1024",
		"172.21.172.3 dev caliad8a24266f7 scope link metric 1024",
		"172.21.172.4 dev cali40d2dea1e7a scope link metric 1024",
		"172.21.211.0/26 via 172.21.211.0 dev vxlan.calico onlink mtu 1450",
		"192.168.10.0/24 dev ens18 proto kernel scope link src 192.168.10.26",
	)
}

func TestSeedIPRouteEndsEveryLineWithIproute2sTrailingBlank(t *testing.T) {
	out := run(t, labNode(t, "k8s-lab-node-2"), "ip route")
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasSuffix(l, " ") || strings.HasSuffix(l, "  ") {
			t.Errorf("line %q should end in exactly one blank, as ip/iproute.c prints it", l)
		}
	}
}

func TestSeedNode1ReachesTheWindowsBlockThroughTheDrPortGateway(t *testing.T) {
	var got []string
	for _, l := range trimLines(run(t, labNode(t, "k8s-lab-node-1"), "ip route")) {
		if strings.Contains(l, "172.21.41") {
			got = append(got, l)
		}
	}
	want := []string{"172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ip route | grep 172.21.41 = %q, want %q", got, want)
	}
}

func TestSeedNeighboursOfNode1AreTheSeedsThreeLines(t *testing.T) {
	assertLines(t, "ip neigh show dev vxlan.calico on k8s-lab-node-1", run(t, labNode(t, "k8s-lab-node-1"), "ip neigh show dev vxlan.calico"),
		"172.21.70.192 lladdr 66:79:81:e0:1a:7d PERMANENT",
		"172.21.172.0 lladdr 66:05:38:46:ab:ea PERMANENT",
		"172.21.41.1 lladdr 00:15:5d:eb:90:ae PERMANENT",
	)
}

func TestSeedFDBOfNode1IsTheSeedsThreeLines(t *testing.T) {
	assertLines(t, "bridge fdb show dev vxlan.calico on k8s-lab-node-1", run(t, labNode(t, "k8s-lab-node-1"), "bridge fdb show dev vxlan.calico"),
		"66:05:38:46:ab:ea dst 192.168.10.26 self permanent",
		"66:79:81:e0:1a:7d dst 192.168.10.23 self permanent",
		"00:15:5d:eb:90:ae dst 192.168.10.25 self permanent",
	)
}

func TestSeedVXLANDeviceOfNode2CarriesTheSeedsParameters(t *testing.T) {
	out := run(t, labNode(t, "k8s-lab-node-2"), "ip -d link show vxlan.calico")
	// The seed's grep -o 'vxlan id [0-9]* .*dstport [0-9]*'.
	m := regexp.MustCompile(`vxlan id [0-9]* .*dstport [0-9]*`).FindString(out)
	if m != "vxlan id 4096 local 192.168.10.26 dev ens18 srcport 0 0 dstport 4789" {
		t.Errorf("grep -o of ip -d link show vxlan.calico = %q", m)
	}
}

func TestSeedVXLANDeviceOfNode1HeadsAsInTheSeed(t *testing.T) {
	out := run(t, labNode(t, "k8s-lab-node-1"), "ip -d link show vxlan.calico")
	assertLines(t, "ip -d link show vxlan.calico | head -2 on k8s-lab-node-1", strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n"),
		"5: vxlan.calico: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000",
		"    link/ether 66:ee:f4:61:98:50 brd ff:ff:ff:ff:ff:ff promiscuity 0 allmulti 0 minmtu 68 maxmtu 65535",
	)
}

// The seed's hello Service (10.97.141.163:80, targetPort http=8080) has
// pods on both Linux workers; every Linux node's kube-proxy DNATs to both.
func TestSeedKubeProxyDNATsHelloToBothPodsOnEveryLinuxNode(t *testing.T) {
	_, nodes := lab(t)
	want := []netip.AddrPort{netip.MustParseAddrPort("172.21.172.4:8080"), netip.MustParseAddrPort("172.21.211.25:8080")}
	for name, n := range nodes {
		eps, verdict, ok := n.ServiceDNAT(netip.MustParseAddrPort("10.97.141.163:80"), "TCP")
		if !ok || verdict != "dnat" || !reflect.DeepEqual(eps, want) {
			t.Errorf("%s: ServiceDNAT(10.97.141.163:80/TCP) = %v %q %v, want %v dnat", name, eps, verdict, ok, want)
		}
		// And the printed ruleset says the same: the service-ips element
		// leads to a chain whose rule DNATs to both endpoints.
		out := run(t, n, "nft list table ip kube-proxy")
		elem := regexp.MustCompile(`10\.97\.141\.163 \. tcp \. 80 : goto (\S+?)[,\s]`).FindStringSubmatch(out)
		if elem == nil {
			t.Fatalf("%s: no service-ips element for 10.97.141.163 . tcp . 80", name)
		}
		chain := regexp.MustCompile(`(?s)\tchain ` + regexp.QuoteMeta(elem[1]) + ` \{\n(.*?)\n\t\}`).FindStringSubmatch(out)
		if chain == nil {
			t.Fatalf("%s: chain %s not listed", name, elem[1])
		}
		if !strings.Contains(chain[1], "meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }") {
			t.Errorf("%s: chain %s does not DNAT to both hello pods:\n%s", name, elem[1], chain[1])
		}
	}
}
