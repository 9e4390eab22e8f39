package linux

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

func TestSortRoutes(t *testing.T) {
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name string
		in   []Route
		want []string
	}{
		{"the default route comes first", []Route{{Dst: p("10.0.0.0/8")}, {Dst: p("0.0.0.0/0")}}, []string{"0.0.0.0/0", "10.0.0.0/8"}},
		{"routes are ordered by destination address as a number, not as text",
			[]Route{{Dst: p("172.21.172.0/26")}, {Dst: p("172.21.70.192/26")}, {Dst: p("172.21.41.0/26")}},
			[]string{"172.21.41.0/26", "172.21.70.192/26", "172.21.172.0/26"}},
		{"a longer prefix precedes a shorter one at the same address",
			[]Route{{Dst: p("172.21.211.0/26")}, {Dst: p("172.21.211.0/32")}},
			[]string{"172.21.211.0/32", "172.21.211.0/26"}},
		{"a workload /32 follows the block that holds it", []Route{{Dst: p("172.21.172.2/32")}, {Dst: p("172.21.172.0/26")}},
			[]string{"172.21.172.0/26", "172.21.172.2/32"}},
		{"the lower metric comes first on the same prefix",
			[]Route{{Dst: p("10.1.1.1/32"), Metric: 1024}, {Dst: p("10.1.1.1/32"), Metric: 512}},
			[]string{"10.1.1.1/32 512", "10.1.1.1/32 1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := append([]Route(nil), tc.in...)
			sortRoutes(rs)
			var got []string
			for _, r := range rs {
				s := r.Dst.String()
				if strings.Contains(tc.want[0], " ") {
					s += " " + strconv.Itoa(r.Metric)
				}
				got = append(got, s)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRouteLine(t *testing.T) {
	a := netip.MustParseAddr
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name string
		r    Route
		want string
	}{
		{"a default route prints as default", Route{Dst: p("0.0.0.0/0"), Via: a("192.168.10.1"), Dev: "ens18", Proto: "static"},
			"default via 192.168.10.1 dev ens18 proto static"},
		{"a VXLAN route shows onlink before the mtu metric", Route{Dst: p("172.21.70.192/26"), Via: a("172.21.70.192"), Dev: "vxlan.calico", OnLink: true, MTU: 1450},
			"172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1450"},
		{"a blackhole has no device", Route{Type: RouteBlackhole, Dst: p("172.21.172.0/26"), Proto: "80"}, "blackhole 172.21.172.0/26 proto 80"},
		{"a host route prints without /32", Route{Dst: p("172.21.172.2/32"), Dev: "calid60012519f0", Scope: "link", Metric: 1024},
			"172.21.172.2 dev calid60012519f0 scope link metric 1024"},
		{"a connected route shows proto, scope and src", Route{Dst: p("192.168.10.0/24"), Dev: "ens18", Proto: "kernel", Scope: "link", Src: a("192.168.10.26")},
			"192.168.10.0/24 dev ens18 proto kernel scope link src 192.168.10.26"},
		{"a same-subnet route shows proto 80 before onlink", Route{Dst: p("172.20.70.192/26"), Via: a("192.168.10.17"), Dev: "ens18", Proto: "80", OnLink: true},
			"172.20.70.192/26 via 192.168.10.17 dev ens18 proto 80 onlink"},
		{"a route with a metric and an MTU shows the metric first", Route{Dst: p("10.0.0.0/8"), Via: a("192.168.0.1"), Dev: "eth0", Metric: 100, MTU: 1450},
			"10.0.0.0/8 via 192.168.0.1 dev eth0 metric 100 mtu 1450"},
		{"an IPv6 route prints its prefix and gateway", Route{Dst: p("fd00::/64"), Via: a("fd00::1"), Dev: "eth0"}, "fd00::/64 via fd00::1 dev eth0"},
		{"a route without a destination says so", Route{Dev: "eth0"}, "invalid Prefix dev eth0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// The sandbox adds the route from its fields (ip route add).
			if got := strings.Join(tc.r.Fields(), " "); got != tc.want {
				t.Errorf("Fields() joined = %q, want %q", got, tc.want)
			}
		})
	}
}

// threeNodes is a fixture with a, b in 10.0.0.0/24 and c in another subnet.
func threeNodes(vxlanMode, ipipMode string, bgp bool) *fixture {
	f := newFixture()
	f.pool.Spec.VXLANMode, f.pool.Spec.IPIPMode = vxlanMode, ipipMode
	if bgp {
		en := "Enabled"
		f.c.Installation.Spec.CalicoNetwork.BGP = &en
	}
	f.node("a", "10.0.0.11", 0, 0)
	f.node("b", "10.0.0.12", 1, 0)
	c := f.node("c", "10.0.5.13", 2, 0)
	c.Annotations[calico.AnnotationIPv4Address] = "10.0.5.13/24"
	if ipipMode != calico.ModeNever {
		// calico-node allocates each node an IPIP tunnel address; here
		// the first of its block, as the VXLAN one.
		for _, n := range f.c.Nodes {
			n.Annotations[calico.AnnotationIPv4IPIPTunnelAddr] = n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]
		}
	}
	return f
}

func routeFor(n *Node, dst string) (Route, bool) {
	for _, r := range n.Routes() {
		if r.Dst.String() == dst {
			return r, true
		}
	}
	return Route{}, false
}

func TestRemoteBlockRoutes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		vxlan, ipip      string
		bgp, felixRoutes bool
		toB, toC         string // expected route lines to b's and c's blocks, "" for none
		noteContainsAny  string
	}{
		{name: "VXLAN Always tunnels to every node, in the same subnet too", vxlan: calico.ModeAlways, ipip: calico.ModeNever,
			toB: "10.244.0.64/26 via 10.244.0.64 dev vxlan.calico onlink mtu 1450",
			toC: "10.244.0.128/26 via 10.244.0.128 dev vxlan.calico onlink mtu 1450"},
		{name: "VXLAN CrossSubnet routes directly in the subnet and tunnels across it", vxlan: calico.ModeCrossSubnet, ipip: calico.ModeNever, bgp: true,
			toB: "10.244.0.64/26 via 10.0.0.12 dev eth0 proto 80 onlink",
			toC: "10.244.0.128/26 via 10.244.0.128 dev vxlan.calico onlink mtu 1450"},
		{name: "an unencapsulated pool with BGP gets BIRD's routes in the subnet", vxlan: calico.ModeNever, ipip: calico.ModeNever, bgp: true,
			toB: "10.244.0.64/26 via 10.0.0.12 dev eth0 proto bird", noteContainsAny: "unencapsulated pool across subnets"},
		{name: "an unencapsulated pool without BGP gets Felix's same-subnet routes only", vxlan: calico.ModeNever, ipip: calico.ModeNever,
			toB: "10.244.0.64/26 via 10.0.0.12 dev eth0 proto 80 onlink", noteContainsAny: "unencapsulated pool across subnets"},
		{name: "IPIP Always gets BIRD's routes through tunl0 to every node, in the same subnet too", vxlan: calico.ModeNever, ipip: calico.ModeAlways, bgp: true,
			toB: "10.244.0.64/26 via 10.0.0.12 dev tunl0 proto bird onlink",
			toC: "10.244.0.128/26 via 10.0.5.13 dev tunl0 proto bird onlink"},
		{name: "IPIP CrossSubnet gets BIRD's direct routes in the subnet and tunl0 across it", vxlan: calico.ModeNever, ipip: calico.ModeCrossSubnet, bgp: true,
			toB: "10.244.0.64/26 via 10.0.0.12 dev eth0 proto bird",
			toC: "10.244.0.128/26 via 10.0.5.13 dev tunl0 proto bird onlink"},
		{name: "an IPIP pool without BGP gets no routes and says why", vxlan: calico.ModeNever, ipip: calico.ModeAlways,
			noteContainsAny: "IP pool 10.244.0.0/16 uses IPIP but BGP is off"},
		{name: "an IPIP pool whose routes Felix programs is left out and said so", vxlan: calico.ModeNever, ipip: calico.ModeAlways, bgp: true, felixRoutes: true,
			noteContainsAny: "programClusterRoutes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := threeNodes(tc.vxlan, tc.ipip, tc.bgp)
			if tc.felixRoutes {
				v := "Enabled"
				f.c.FelixConfigs = append(f.c.FelixConfigs, &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calico.FelixConfigurationSpec{ProgramClusterRoutes: &v}})
				if got := FelixRoutedIPIPPools(f.c); len(got) != 1 {
					t.Errorf("FelixRoutedIPIPPools = %q, want the pool", got)
				}
			} else if got := FelixRoutedIPIPPools(f.c); len(got) != 0 {
				t.Errorf("FelixRoutedIPIPPools = %q without programClusterRoutes", got)
			}
			n := f.compile(t)["a"]
			for _, x := range []struct{ dst, want string }{{"10.244.0.64/26", tc.toB}, {"10.244.0.128/26", tc.toC}} {
				r, ok := routeFor(n, x.dst)
				if x.want == "" {
					if ok {
						t.Errorf("unexpected route %q", r)
					}
					continue
				}
				if !ok || r.String() != x.want {
					t.Errorf("route to %s = %q, want %q", x.dst, r, x.want)
				}
			}
			if tc.noteContainsAny != "" && !strings.Contains(strings.Join(n.Notes(), "\n"), tc.noteContainsAny) {
				t.Errorf("notes %q lack %q", n.Notes(), tc.noteContainsAny)
			}
		})
	}
}

func TestLocalRoutes(t *testing.T) {
	f := threeNodes(calico.ModeAlways, calico.ModeNever, false)
	f.pod("ns", "p", "a", "10.244.0.5", nil)
	n := f.compile(t)["a"]
	for _, tc := range []struct{ name, dst, want string }{
		{"the node's own block is a Felix blackhole", "10.244.0.0/26", "blackhole 10.244.0.0/26 proto 80"},
		{"a local pod is a /32 on its cali interface with metric 1024", "10.244.0.5/32", "10.244.0.5 dev " + VethName("ns", "p") + " scope link metric 1024"},
		{"the node network is the kernel's prefix route", "10.0.0.0/24", "10.0.0.0/24 dev eth0 proto kernel scope link src 10.0.0.11"},
		{"the default route goes to the gateway", "0.0.0.0/0", "default via 10.0.0.1 dev eth0 proto static"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, ok := routeFor(n, tc.dst); !ok || r.String() != tc.want {
				t.Errorf("got %q (%v), want %q", r, ok, tc.want)
			}
		})
	}
	t.Run("the tunnel address lives on vxlan.calico as a /32 with no main-table route", func(t *testing.T) {
		l, ok := n.Link("vxlan.calico")
		if !ok || len(l.Addrs) != 1 || l.Addrs[0].String() != "10.244.0.0/32" {
			t.Fatalf("vxlan.calico = %+v", l)
		}
		if r, ok := routeFor(n, "10.244.0.0/32"); ok {
			t.Errorf("unexpected main-table route %q", r)
		}
	})
}

func TestBorrowedAddressGetsAHostRouteToItsNode(t *testing.T) {
	f := threeNodes(calico.ModeAlways, calico.ModeNever, false)
	// b's pod holds an address from a's block (no strict affinity).
	f.pod("ns", "borrower", "b", "10.244.0.9", nil)
	n := f.compile(t)["c"]
	r, ok := routeFor(n, "10.244.0.9/32")
	if want := "10.244.0.9 via 10.244.0.64 dev vxlan.calico onlink mtu 1450"; !ok || r.String() != want {
		t.Errorf("got %q, want %q", r, want)
	}
	if got, _ := n.RouteTo(netip.MustParseAddr("10.244.0.9")); got.Node != "b" {
		t.Errorf("RouteTo picks %q (node %s), want the /32 to b", got, got.Node)
	}
}

func TestRouteToPicksTheLongestPrefix(t *testing.T) {
	n := labNode(t, "k8s-lab-node-2")
	for _, tc := range []struct{ dst, want string }{
		{"172.21.172.4", "172.21.172.4 dev cali40d2dea1e7a scope link metric 1024"},
		{"172.21.172.50", "blackhole 172.21.172.0/26 proto 80"},
		{"172.21.41.6", "172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450"},
		{"192.168.10.25", "192.168.10.0/24 dev ens18 proto kernel scope link src 192.168.10.26"},
		{"1.1.1.1", "default via 192.168.10.1 dev ens18 proto static"},
	} {
		if r, _ := n.RouteTo(netip.MustParseAddr(tc.dst)); r.String() != tc.want {
			t.Errorf("RouteTo(%s) = %q, want %q", tc.dst, r, tc.want)
		}
	}
}

// A node with an IPIP pool has tunl0 with its tunnel address, and the
// kernel picks BIRD's route through it for a pod across subnets, the
// direct one for a pod in the subnet.
func TestANodeOnAnIPIPPoolRoutesThroughTunl0(t *testing.T) {
	f := threeNodes(calico.ModeNever, calico.ModeCrossSubnet, true)
	f.pod("ns", "here", "a", "10.244.0.5", nil)
	f.pod("ns", "there", "b", "10.244.0.70", nil)
	f.pod("ns", "far", "c", "10.244.0.140", nil)
	n := f.compile(t)["a"]
	if l, ok := n.Link("tunl0"); !ok || l.Index != 5 || l.MTU != 1480 || len(l.Addrs) != 1 || l.Addrs[0].String() != "10.244.0.0/32" {
		t.Errorf("tunl0 = %+v, %t, want index 5, MTU 1480 (the NIC's less 20), address 10.244.0.0/32", l, ok)
	}
	for _, tc := range []struct{ name, dst, want string }{
		{"a pod on a node across subnets goes through tunl0", "10.244.0.140", "10.244.0.128/26 via 10.0.5.13 dev tunl0 proto bird onlink"},
		{"a free address of a block across subnets goes through tunl0", "10.244.0.150", "10.244.0.128/26 via 10.0.5.13 dev tunl0 proto bird onlink"},
		{"a pod on a node in the subnet goes directly", "10.244.0.70", "10.244.0.64/26 via 10.0.0.12 dev eth0 proto bird"},
		{"a free address of this node's block is BIRD's blackhole", "10.244.0.6", "blackhole 10.244.0.0/26 proto bird"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r, ok := n.RouteTo(netip.MustParseAddr(tc.dst)); !ok || r.String() != tc.want {
				t.Errorf("RouteTo(%s) = %q, %t, want %q", tc.dst, r, ok, tc.want)
			}
		})
	}
	want := "5: tunl0@NONE: <NOARP,UP,LOWER_UP> mtu 1480 qdisc noqueue state UNKNOWN group default qlen 1000\n    link/ipip 0.0.0.0 brd 0.0.0.0\n    inet 10.244.0.0/32 scope global tunl0\n       valid_lft forever preferred_lft forever\n"
	if got := n.IPAddr("tunl0"); got != want {
		t.Errorf("ip addr show tunl0:\n%s\nwant:\n%s", got, want)
	}
	vx := threeNodes(calico.ModeAlways, calico.ModeNever, false).compile(t)["a"]
	if _, ok := vx.Link("tunl0"); ok {
		t.Errorf("a node without an IPIP pool has tunl0")
	}
}

// Without its IPIP tunnel address a node has no tunl0, so no routes
// through it, and ip route and ip link say why.
func TestANodeWithoutAnIPIPTunnelAddressHasNoTunl0(t *testing.T) {
	f := threeNodes(calico.ModeNever, calico.ModeAlways, true)
	delete(f.c.Nodes[0].Annotations, calico.AnnotationIPv4IPIPTunnelAddr)
	n := f.compile(t)["a"]
	if _, ok := n.Link("tunl0"); ok {
		t.Errorf("tunl0 made without a tunnel address")
	}
	if r, ok := routeFor(n, "10.244.0.64/26"); ok {
		t.Errorf("route %q through a tunl0 the node lacks", r)
	}
	want := "no IPIP tunnel address recorded for a"
	for name, notes := range map[string][]string{"ip route": n.RouteNotes(), "ip link": n.LinkNotes(""), "ip link show tunl0": n.LinkNotes("tunl0")} {
		if !strings.Contains(strings.Join(notes, "\n"), want) {
			t.Errorf("%s's notes %q lack %q", name, notes, want)
		}
	}
	if b := f.compile(t)["b"]; !strings.Contains(b.IPAddr("tunl0"), "inet 10.244.0.64/32 scope global tunl0") {
		t.Errorf("b's tunl0:\n%s", b.IPAddr("tunl0"))
	}
	if _, ok := f.compile(t)["b"].Link("tunl0"); !ok {
		t.Errorf("b, with its tunnel address, has no tunl0")
	}
}
