package linux

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

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
		name            string
		vxlan, ipip     string
		bgp             bool
		toB, toC        string // expected route lines to b's and c's blocks, "" for none
		noteContainsAny string
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
		{name: "an IPIP pool is not routed by the twin and says so", vxlan: calico.ModeNever, ipip: calico.ModeAlways, bgp: true,
			noteContainsAny: "IPIP pool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := threeNodes(tc.vxlan, tc.ipip, tc.bgp).compile(t)["a"]
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

// The routes to an IPIP pool on other nodes are BIRD's, via tunl0, which
// the twin does not model: a node's table leaves them out and says so
// once per pool, among the notes that explain ip route (not ip link), and
// a lookup of such an address says it cannot tell the route.
func TestIPIPDestinationsOnOtherNodesAreSaidNotModelled(t *testing.T) {
	f := threeNodes(calico.ModeNever, calico.ModeAlways, true)
	f.pod("ns", "here", "a", "10.244.0.5", nil)
	f.pod("ns", "there", "b", "10.244.0.70", nil)
	n := f.compile(t)["a"]
	want := "2 blocks of other nodes in IPIP pool 10.244.0.0/16 have no route here: the twin does not model IPIP, whose routes BIRD programs via tunl0"
	if got := n.RouteNotes(); !slices.Contains(got, want) {
		t.Errorf("ip route's notes are %q, want them to hold %q", got, want)
	}
	if got := n.LinkNotes(""); slices.Contains(got, want) {
		t.Errorf("ip link's notes %q hold the routes' note", got)
	}
	for _, tc := range []struct {
		name, dst string
		unknown   bool
	}{
		{"a pod on another node", "10.244.0.70", true},
		{"a free address of another node's block", "10.244.0.130", true},
		{"a pod on this node", "10.244.0.5", false},
		{"a free address of this node's block", "10.244.0.6", false},
		{"an address outside the pools", "10.0.0.12", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, unknown := n.UnmodelledRoute(netip.MustParseAddr(tc.dst))
			if unknown != tc.unknown || (unknown && !strings.Contains(why, tc.dst+" is in IPIP pool 10.244.0.0/16")) {
				t.Errorf("UnmodelledRoute(%s) = %q, %t, want %t", tc.dst, why, unknown, tc.unknown)
			}
		})
	}
	vx := threeNodes(calico.ModeAlways, calico.ModeNever, false).compile(t)["a"]
	if why, unknown := vx.UnmodelledRoute(netip.MustParseAddr("10.244.0.70")); unknown {
		t.Errorf("a VXLAN pool's address is said not modelled: %q", why)
	}
}
