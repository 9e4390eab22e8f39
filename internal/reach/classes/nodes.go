package classes

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// NodeInfo is one node as the analysis sees it.
type NodeInfo struct {
	Idx     int
	Name    string
	IP      netip.Addr
	Windows bool
	// linux says Linux compiles the node (it is not a Windows node).
	linux bool
	e     *trace.Engine
	// Agents are the DaemonSets with a running host-network pod on the
	// node (kube-proxy, the Calico node agent).
	Agents []string
	// Group is the node group: nodes whose dataplanes treat pod traffic
	// alike (see groupNodes).
	Group int
	FP    string
	// Build is a Windows node's OS build (26100: Windows Server 2025).
	Build int
}

func (n *NodeInfo) OS() string {
	if n.Windows {
		return hybrid.OSWindows
	}
	return hybrid.OSLinux
}

// LX is a Linux node's compiled dataplane, compiled on first use: most
// nodes are told apart without it (StaticFingerprint). Nil for a Windows
// node.
func (n *NodeInfo) LX() *linux.Node {
	if !n.linux {
		return nil
	}
	return n.e.LinuxNode(n.Name)
}

// WinNode is a Windows node's HNS state, compiled on first use.
func (an *Prep) WinNode(n *NodeInfo) *windows.Node {
	if !n.Windows {
		return nil
	}
	return an.E.WindowsNode(n.Name)
}

// Block is a Calico IPAM block with the node it is affine to.
type Block struct {
	Cidr netip.Prefix
	Node string
}

// LoadNodes reads the nodes and IPAM blocks.
func (an *Prep) LoadNodes() {
	for _, n := range an.C.Nodes {
		ni := &NodeInfo{Idx: len(an.Nodes), Name: n.Name, Windows: n.Labels[corev1.LabelOSStable] == hybrid.OSWindows}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !ni.IP.IsValid() {
				ni.IP, _ = netip.ParseAddr(a.Address)
			}
		}
		ni.e = an.E
		ni.linux = !ni.Windows && an.E.Plane().HasLinux(n.Name)
		if ni.Windows {
			ni.Build = hybrid.ParseWindowsKernel(n.Status.NodeInfo.KernelVersion).Number
		}
		an.Nodes = append(an.Nodes, ni)
		an.NodeByName[n.Name] = ni
		if ni.IP.IsValid() {
			an.NodeByIP[ni.IP] = ni
		}
	}
	for _, b := range an.C.IPAMBlocks {
		p, err := netip.ParsePrefix(b.Spec.CIDR)
		if err != nil || b.Spec.Deleted {
			continue
		}
		node := ""
		if b.Spec.Affinity != nil {
			node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
		}
		an.Blocks = append(an.Blocks, Block{Cidr: p.Masked(), Node: node})
		an.BlockBits[p.Bits()] = true
	}
	for _, p := range an.C.Pods {
		if !p.Spec.HostNetwork || p.Status.Phase != corev1.PodRunning {
			continue
		}
		n := an.NodeByName[p.Spec.NodeName]
		if n == nil {
			continue
		}
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "DaemonSet" && !Contains(n.Agents, ref.Name) {
				n.Agents = append(n.Agents, ref.Name)
			}
		}
	}
	for _, n := range an.Nodes {
		sort.Strings(n.Agents)
	}
	an.BlockByPrefix = map[netip.Prefix]Block{}
	for _, b := range an.Blocks {
		an.BlockByPrefix[b.Cidr] = b
	}
}

// BlockOf is the IPAM block holding a, if any.
func (an *Prep) BlockOf(a netip.Addr) (Block, bool) {
	for bits := range an.BlockBits {
		p, err := a.Prefix(bits)
		if err != nil {
			continue
		}
		if b, ok := an.BlockByPrefix[p]; ok {
			return b, true
		}
	}
	return Block{}, false
}

// GroupNodes partitions the nodes into groups whose dataplanes treat pod
// traffic alike: same OS and Windows build line, the same Cluster-kind
// firewall rules applying to them and matching their address, the same
// VXLAN or IPIP device or HNS network and kube-proxy mode, and the same
// reachability of the other nodes' IPAM blocks (a route, with a neighbour
// and FDB entry through vxlan.calico, on Linux, a RemoteSubnetRoute on
// Windows, each leading to the block's node). Felix and BIRD program
// every node's routes from the same blocks, affinities, addresses and
// VTEPs, so reachability is checked from one node per
// otherwise-alike set; a node some set cannot reach that way is a group of
// its own, and so is every node in an.isolate (of a group whose same-node
// and cross-node paths turned out to differ).
func (an *Prep) GroupNodes() {
	static := map[string][]*NodeInfo{}
	var order []string
	for _, n := range an.Nodes {
		fp := an.StaticFingerprint(n)
		if _, ok := static[fp]; !ok {
			order = append(order, fp)
		}
		static[fp] = append(static[fp], n)
	}
	cannot := map[string]string{} // static fingerprint → nodes it cannot reach
	target := map[string]bool{}
	for _, fp := range order {
		u := an.Unreachable(static[fp][0])
		sort.Strings(u)
		cannot[fp] = strings.Join(u, ",")
		for _, m := range u {
			target[m] = true
		}
	}
	byFP := map[string]int{}
	an.Groups = an.Groups[:0]
	for _, fp := range order {
		for _, n := range static[fp] {
			n.FP = fp
			if c := cannot[fp]; c != "" {
				n.FP += "|cannot-reach:" + c
			}
			if target[n.Name] || an.Isolate[n.Name] {
				n.FP += "|node:" + n.Name
			}
		}
	}
	for _, n := range an.Nodes {
		g, ok := byFP[n.FP]
		if !ok {
			g = len(an.Groups)
			byFP[n.FP] = g
			an.Groups = append(an.Groups, nil)
		}
		n.Group = g
		an.Groups[g] = append(an.Groups[g], n)
	}
}

// StaticFingerprint is what of a node's own configuration decides how it
// treats pod traffic.
func (an *Prep) StaticFingerprint(n *NodeInfo) string {
	var b strings.Builder
	b.WriteString(n.OS())
	b.WriteString("|agents:" + strings.Join(n.Agents, ","))
	if n.Windows {
		// What HNS holds is compiled on demand, node by node (it is the
		// costly part): Windows nodes with the same agents, build and
		// firewall are taken to compile alike, and one of each is looked
		// at (unreachable, and the views of Services).
		fmt.Fprintf(&b, "|ws2025:%t", n.Build == 0 || n.Build >= 26100)
	} else if n.linux {
		// The compiled node's vxlan.calico, read without compiling it.
		if vni, port, ok := an.E.Plane().LinuxVXLAN(n.Name); ok {
			fmt.Fprintf(&b, "|vxlan:%d/%d", vni, port)
		}
		// And its tunl0, which takes IP in IP.
		if _, ok := an.E.Plane().LinuxIPIP(n.Name); ok {
			b.WriteString("|ipip")
		}
	} else {
		b.WriteString("|no-dataplane")
	}
	for i, r := range an.C.Network.Firewall {
		fmt.Fprintf(&b, "|fw%d:%t/%t", i, r.AppliesToHost(n.Name), r.MatchesSource(n.IP))
	}
	return b.String()
}

// Unreachable lists the nodes whose IPAM blocks n's dataplane does not
// lead to.
func (an *Prep) Unreachable(n *NodeInfo) []string {
	seen := map[string]bool{}
	var out []string
	bad := func(m string) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	switch {
	case n.Windows && an.WinNode(n) != nil:
		win := an.WinNode(n)
		rsr := map[string]string{}
		if len(win.Networks()) == 0 {
			bad("(no HNS network)")
		}
		for _, nw := range win.Networks() {
			for _, p := range nw.Policies {
				if p.Type == windows.PolicyRemoteSubnetRoute {
					rsr[p.DestinationPrefix] = p.ProviderAddress
				}
			}
		}
		for _, b := range an.Blocks {
			m := an.NodeByName[b.Node]
			if m == nil || m == n {
				continue
			}
			if pa, ok := rsr[b.Cidr.String()]; !ok || pa != m.IP.String() {
				bad(m.Name)
			}
		}
	case !n.Windows && n.LX() != nil:
		lx := n.LX()
		routes := map[netip.Prefix]linux.Route{}
		for _, r := range lx.Routes() {
			if r.Pod == "" {
				if _, dup := routes[r.Dst]; !dup {
					routes[r.Dst] = r
				}
			}
		}
		neigh := map[netip.Addr]string{}
		for _, x := range lx.Neighbors() {
			neigh[x.IP] = x.MAC.String()
		}
		fdb := map[string]netip.Addr{}
		for _, f := range lx.FDB() {
			fdb[f.MAC.String()] = f.Dst
		}
		for _, b := range an.Blocks {
			m := an.NodeByName[b.Node]
			if m == nil || m == n {
				continue
			}
			r, ok := routes[b.Cidr]
			if !ok || r.Node != m.Name || r.Type == linux.RouteBlackhole {
				bad(m.Name)
				continue
			}
			switch r.Dev {
			case "vxlan.calico":
				mac, ok := neigh[r.Via]
				if !ok || fdb[mac] != m.IP {
					bad(m.Name)
				}
			case "tunl0":
				// IP in IP goes to the route's gateway: the block's node.
				if r.Via != m.IP {
					bad(m.Name)
				}
			}
		}
	}
	return out
}
