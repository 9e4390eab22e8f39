package linux

import (
	"net"
	"net/netip"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/kubeproxy"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// LinkKind is what a link is.
type LinkKind string

// Link kinds the twin models.
const (
	KindLoopback LinkKind = "loopback"
	KindEthernet LinkKind = "ether" // the node's NIC
	KindVXLAN    LinkKind = "vxlan" // vxlan.calico
	KindIPIP     LinkKind = "ipip"  // tunl0
	KindVeth     LinkKind = "veth"  // host end of a pod's veth pair
)

// Link is one network device of the node's root namespace.
type Link struct {
	Index int
	Name  string
	Kind  LinkKind
	MTU   int
	MAC   net.HardwareAddr
	// Qdisc is the root qdisc ip link prints: noqueue for virtual devices,
	// fq_codel for the NIC (systemd's default_qdisc on Ubuntu).
	Qdisc string
	// State is the operational state: UNKNOWN for lo and vxlan.calico
	// (no carrier notion), UP otherwise.
	State string
	// Addrs are the IPv4 addresses in the order they were added.
	Addrs []netip.Prefix
	// LinkLocal is the kernel's EUI-64 IPv6 link-local address (addrgenmode
	// eui64); the zero value for lo.
	LinkLocal netip.Prefix
	VXLAN     *VXLANConfig
	Peer      *VethPeer
}

// VXLANConfig is how Felix creates vxlan.calico
// (felix/dataplane/linux/vxlan_mgr.go device()).
type VXLANConfig struct {
	VNI      int
	Local    netip.Addr // the node address (VtepDevIndex's address)
	Parent   string     // the NIC (VtepDevIndex)
	DstPort  int
	Learning bool
}

// VethPeer is the pod side of a veth pair.
type VethPeer struct {
	// Index is the pod-side ifindex ("@ifN"): eth0 is the first device
	// created in a fresh namespace after lo.
	Index int
	// NetNS is the name containerd gives the pod's network namespace
	// (cni-<uuid>); the uuid is a deterministic stand-in.
	NetNS string
	// Pod is namespace/name.
	Pod string
}

// RouteType is the kernel route type.
type RouteType string

// Route types the twin programs.
const (
	RouteUnicast   RouteType = "unicast"
	RouteBlackhole RouteType = "blackhole"
)

// Route is one route of the main table.
type Route struct {
	Type RouteType
	// Dst is the destination; 0.0.0.0/0 prints as "default".
	Dst netip.Prefix
	Via netip.Addr
	Dev string
	// Proto is the routing protocol as ip route names it ("static",
	// "kernel", "80", "bird"); empty means boot, which ip route hides.
	Proto  string
	Scope  string // "link", or empty for universe (hidden)
	Src    netip.Addr
	Metric int
	OnLink bool
	MTU    int
	// Owner is who programs the route: netplan, kernel, felix or bird.
	Owner string
	// Why is the derivation, with the upstream source it follows.
	Why string
	// Node is the node the route leads to (remote blocks) or the node of
	// the pod (workload routes).
	Node string
	// Pod is namespace/name for a workload route.
	Pod string
}

// Destination is the destination as ip route prints it: "default", an
// address for a host route, else the prefix.
func (r Route) Destination() string {
	switch {
	case r.Dst.Bits() == 0:
		return "default"
	case r.Dst.IsSingleIP():
		return r.Dst.Addr().String()
	}
	return r.Dst.String()
}

// Neighbor is a static ARP entry Felix programs on vxlan.calico.
type Neighbor struct {
	IP    netip.Addr
	MAC   net.HardwareAddr
	Dev   string
	State string // PERMANENT
	Node  string
}

// FDBEntry is a static forwarding entry Felix programs on vxlan.calico.
type FDBEntry struct {
	MAC  net.HardwareAddr
	Dst  netip.Addr
	Dev  string
	Node string
}

// Node is the compiled dataplane of one Linux node.
type Node struct {
	Name string
	// IP is the node's InternalIP.
	IP netip.Addr

	links []Link
	// routes, neigh and fdb, and the notes deriving them gives (which go
	// at notesAt in notes), are built on first use by derive.
	derived sync.Once
	routes  []Route
	neigh   []Neighbor
	fdb     []FDBEntry
	notes   []nodeNote
	notesAt int
	// What derive needs.
	cc       *clusterCtx
	ni       *nodeInfo
	nic      string
	hasVXLAN bool
	fc       felixCfg
	// podByIP indexes ni.pods by address for RouteTo, built on first use.
	podIdx  sync.Once
	podByIP map[netip.Addr][]*corev1.Pod

	kp      *kubeproxy.Node
	kpNotes []string
	cal     *calicoNode
	calc    func() *felix.Calc // made on first use
}

// derive builds the routing table and the VXLAN neighbour and FDB entries,
// once; their notes go where an eager compile would have put them.
func (n *Node) derive() {
	n.derived.Do(func() {
		if n.cc == nil {
			return // built by hand (tests): the tables are as given
		}
		pre, post := n.notes[:n.notesAt:n.notesAt], n.notes[n.notesAt:]
		n.notes = pre
		n.routes = n.cc.routes(n.ni, n, n.nic, n.hasVXLAN, n.fc)
		if n.hasVXLAN {
			n.neigh, n.fdb = n.cc.l2(n.ni, n)
		}
		n.notes = append(n.notes, post...)
	})
}

// Links returns the node's links in ifindex order.
func (n *Node) Links() []Link { return append([]Link(nil), n.links...) }

// Link returns the link with the given name.
func (n *Node) Link(name string) (Link, bool) {
	for _, l := range n.links {
		if l.Name == name {
			return l, true
		}
	}
	return Link{}, false
}

// Routes returns the main routing table in the kernel's dump order.
func (n *Node) Routes() []Route {
	n.derive()
	return append([]Route(nil), n.routes...)
}

// Neighbors returns the static neighbours of vxlan.calico in listing order.
func (n *Node) Neighbors() []Neighbor {
	n.derive()
	return append([]Neighbor(nil), n.neigh...)
}

// FDB returns the static FDB entries of vxlan.calico in listing order.
func (n *Node) FDB() []FDBEntry {
	n.derive()
	return append([]FDBEntry(nil), n.fdb...)
}

// Notes are what the compiler could not model for this node, or had to
// assume: its own notes, kube-proxy's and those of the Calico view.
func (n *Node) Notes() []string {
	return n.notesIn(areaHost, areaNIC, areaVXLAN, areaIPIP, areaRoutes, areaL2, areaCalico, areaKubeProxy)
}

// RouteNotes are the notes that explain ip route's output: the NIC, the
// tunnel devices and the routes.
func (n *Node) RouteNotes() []string { return n.notesIn(areaHost, areaVXLAN, areaIPIP, areaRoutes) }

// LinkNotes are the notes that explain ip link's and ip addr's output for
// dev, or for every device when dev is "": the NIC's for the NIC,
// vxlan.calico's and tunl0's for them, and for a device the node lacks
// those that may say why (the NIC's name assumed, no tunnel address).
func (n *Node) LinkNotes(dev string) []string {
	switch dev {
	case "":
		return n.notesIn(areaHost, areaNIC, areaVXLAN, areaIPIP)
	case vxlanDevice:
		return n.notesIn(areaVXLAN)
	case ipipDevice:
		return n.notesIn(areaIPIP)
	case n.nic:
		return n.notesIn(areaHost, areaNIC)
	}
	if _, ok := n.Link(dev); !ok {
		return n.notesIn(areaHost)
	}
	return nil
}

// L2Notes are the notes that explain the VXLAN neighbours and FDB
// entries (ip neigh, bridge fdb).
func (n *Node) L2Notes() []string { return n.notesIn(areaVXLAN, areaL2) }

// NFTNotes are the notes that explain nft's output: of table ip calico,
// of table ip kube-proxy, or of both (the ruleset) when table is "".
func (n *Node) NFTNotes(table string) []string {
	switch table {
	case "calico":
		return n.notesIn(areaCalico)
	case "kube-proxy":
		return n.notesIn(areaKubeProxy)
	}
	return n.notesIn(areaCalico, areaKubeProxy)
}

// notesIn are the node's notes of the given areas, in the order they
// were made (kube-proxy's and the Calico view's last).
func (n *Node) notesIn(areas ...noteArea) []string {
	n.derive()
	var out []string
	for _, x := range n.notes {
		if slices.Contains(areas, x.area) {
			out = append(out, x.text)
		}
	}
	if slices.Contains(areas, areaKubeProxy) {
		out = append(out, n.kpNotes...)
	}
	if n.cal != nil && slices.Contains(areas, areaCalico) {
		_, cn := n.cal.table(n.calc)
		out = append(out, cn...)
	}
	return out
}

// RouteTo returns the route the kernel would pick for dst: the longest
// matching prefix, then the lowest metric (fib_table_lookup). It is
// answered from the routes that can contain dst (routeTo), which gives the
// table's route without building the table.
func (n *Node) RouteTo(dst netip.Addr) (Route, bool) {
	if n.cc != nil {
		return n.routeTo(dst)
	}
	return n.tableRouteTo(dst)
}

// tableRouteTo is RouteTo over the built table.
func (n *Node) tableRouteTo(dst netip.Addr) (Route, bool) {
	best := -1
	for i, r := range n.routes {
		if !r.Dst.Contains(dst) {
			continue
		}
		if best < 0 || r.Dst.Bits() > n.routes[best].Dst.Bits() ||
			(r.Dst.Bits() == n.routes[best].Dst.Bits() && r.Metric < n.routes[best].Metric) {
			best = i
		}
	}
	if best < 0 {
		return Route{}, false
	}
	return n.routes[best], true
}

// sortRoutes puts routes in the order the kernel dumps the main table:
// fib_table_dump walks the LC-trie leaves in ascending key (destination
// address) order; a leaf keeps its aliases sorted by suffix length, so a
// longer prefix comes first (net/ipv4/fib_trie.c fib_insert_alias), and
// aliases of one prefix by ascending priority (fib_find_alias).
func sortRoutes(rs []Route) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].Dst, rs[j].Dst
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c < 0
		}
		if a.Bits() != b.Bits() {
			return a.Bits() > b.Bits()
		}
		return rs[i].Metric < rs[j].Metric
	})
}
