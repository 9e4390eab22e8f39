package reach

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// nodeInfo is one node as the analysis sees it.
type nodeInfo struct {
	idx     int
	name    string
	ip      netip.Addr
	windows bool
	lx      *linux.Node
	// agents are the DaemonSets with a running host-network pod on the
	// node (kube-proxy, the Calico node agent).
	agents []string
	// group is the node group: nodes whose dataplanes treat pod traffic
	// alike (see groupNodes).
	group int
	fp    string
	// build is a Windows node's OS build (26100: Windows Server 2025).
	build int
}

func (n *nodeInfo) os() string {
	if n.windows {
		return hybrid.OSWindows
	}
	return hybrid.OSLinux
}

// winNode is a Windows node's HNS state, compiled on first use.
func (an *analyzer) winNode(n *nodeInfo) *windows.Node {
	if !n.windows {
		return nil
	}
	return an.e.WindowsNode(n.name)
}

// block is a Calico IPAM block with the node it is affine to.
type block struct {
	cidr netip.Prefix
	node string
}

// loadNodes reads the nodes and IPAM blocks.
func (an *analyzer) loadNodes() {
	for _, n := range an.c.Nodes {
		ni := &nodeInfo{idx: len(an.nodes), name: n.Name, windows: n.Labels[corev1.LabelOSStable] == hybrid.OSWindows}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !ni.ip.IsValid() {
				ni.ip, _ = netip.ParseAddr(a.Address)
			}
		}
		ni.lx = an.e.LinuxNode(n.Name)
		if f := strings.Split(n.Status.NodeInfo.KernelVersion, "."); ni.windows && len(f) >= 3 {
			ni.build, _ = strconv.Atoi(f[2])
		}
		an.nodes = append(an.nodes, ni)
		an.nodeByName[n.Name] = ni
		if ni.ip.IsValid() {
			an.nodeByIP[ni.ip] = ni
		}
	}
	for _, b := range an.c.IPAMBlocks {
		p, err := netip.ParsePrefix(b.Spec.CIDR)
		if err != nil || b.Spec.Deleted {
			continue
		}
		node := ""
		if b.Spec.Affinity != nil {
			node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
		}
		an.blocks = append(an.blocks, block{cidr: p.Masked(), node: node})
		an.blockBits[p.Bits()] = true
	}
	for _, p := range an.c.Pods {
		if !p.Spec.HostNetwork || p.Status.Phase != corev1.PodRunning {
			continue
		}
		n := an.nodeByName[p.Spec.NodeName]
		if n == nil {
			continue
		}
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "DaemonSet" && !contains(n.agents, ref.Name) {
				n.agents = append(n.agents, ref.Name)
			}
		}
	}
	for _, n := range an.nodes {
		sort.Strings(n.agents)
	}
	an.blockByPrefix = map[netip.Prefix]block{}
	for _, b := range an.blocks {
		an.blockByPrefix[b.cidr] = b
	}
}

// blockOf is the IPAM block holding a, if any.
func (an *analyzer) blockOf(a netip.Addr) (block, bool) {
	for bits := range an.blockBits {
		p, err := a.Prefix(bits)
		if err != nil {
			continue
		}
		if b, ok := an.blockByPrefix[p]; ok {
			return b, true
		}
	}
	return block{}, false
}

// groupNodes partitions the nodes into groups whose dataplanes treat pod
// traffic alike: same OS and Windows build line, the same Cluster-kind
// firewall rules applying to them and matching their address, the same
// VXLAN device or HNS network and kube-proxy mode, and the same
// reachability of the other nodes' IPAM blocks (a route, neighbour and FDB
// entry on Linux, a RemoteSubnetRoute on Windows, each leading to the
// block's node). Felix programs every node's routes from the same blocks,
// affinities and VTEPs, so reachability is checked from one node per
// otherwise-alike set; a node some set cannot reach that way is a group of
// its own, and so is every node in an.isolate (of a group whose same-node
// and cross-node paths turned out to differ).
func (an *analyzer) groupNodes() {
	static := map[string][]*nodeInfo{}
	var order []string
	for _, n := range an.nodes {
		fp := an.staticFingerprint(n)
		if _, ok := static[fp]; !ok {
			order = append(order, fp)
		}
		static[fp] = append(static[fp], n)
	}
	cannot := map[string]string{} // static fingerprint → nodes it cannot reach
	target := map[string]bool{}
	for _, fp := range order {
		u := an.unreachable(static[fp][0])
		sort.Strings(u)
		cannot[fp] = strings.Join(u, ",")
		for _, m := range u {
			target[m] = true
		}
	}
	byFP := map[string]int{}
	an.groups = an.groups[:0]
	for _, fp := range order {
		for _, n := range static[fp] {
			n.fp = fp
			if c := cannot[fp]; c != "" {
				n.fp += "|cannot-reach:" + c
			}
			if target[n.name] || an.isolate[n.name] {
				n.fp += "|node:" + n.name
			}
		}
	}
	for _, n := range an.nodes {
		g, ok := byFP[n.fp]
		if !ok {
			g = len(an.groups)
			byFP[n.fp] = g
			an.groups = append(an.groups, nil)
		}
		n.group = g
		an.groups[g] = append(an.groups[g], n)
	}
}

// staticFingerprint is what of a node's own configuration decides how it
// treats pod traffic.
func (an *analyzer) staticFingerprint(n *nodeInfo) string {
	var b strings.Builder
	b.WriteString(n.os())
	b.WriteString("|agents:" + strings.Join(n.agents, ","))
	if n.windows {
		// What HNS holds is compiled on demand, node by node (it is the
		// costly part): Windows nodes with the same agents, build and
		// firewall are taken to compile alike, and one of each is looked
		// at (unreachable, and the views of Services).
		fmt.Fprintf(&b, "|ws2025:%t", n.build == 0 || n.build >= 26100)
	} else if n.lx != nil {
		if l, ok := n.lx.Link("vxlan.calico"); ok && l.VXLAN != nil {
			fmt.Fprintf(&b, "|vxlan:%d/%d", l.VXLAN.VNI, l.VXLAN.DstPort)
		}
	} else {
		b.WriteString("|no-dataplane")
	}
	for i, r := range an.c.Network.Firewall {
		fmt.Fprintf(&b, "|fw%d:%t/%t", i, r.AppliesToHost(n.name), r.MatchesSource(n.ip))
	}
	return b.String()
}

// unreachable lists the nodes whose IPAM blocks n's dataplane does not
// lead to.
func (an *analyzer) unreachable(n *nodeInfo) []string {
	seen := map[string]bool{}
	var out []string
	bad := func(m string) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	switch {
	case n.windows && an.winNode(n) != nil:
		win := an.winNode(n)
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
		for _, b := range an.blocks {
			m := an.nodeByName[b.node]
			if m == nil || m == n {
				continue
			}
			if pa, ok := rsr[b.cidr.String()]; !ok || pa != m.ip.String() {
				bad(m.name)
			}
		}
	case !n.windows && n.lx != nil:
		routes := map[netip.Prefix]linux.Route{}
		for _, r := range n.lx.Routes() {
			if r.Pod == "" {
				if _, dup := routes[r.Dst]; !dup {
					routes[r.Dst] = r
				}
			}
		}
		neigh := map[netip.Addr]string{}
		for _, x := range n.lx.Neighbors() {
			neigh[x.IP] = x.MAC.String()
		}
		fdb := map[string]netip.Addr{}
		for _, f := range n.lx.FDB() {
			fdb[f.MAC.String()] = f.Dst
		}
		for _, b := range an.blocks {
			m := an.nodeByName[b.node]
			if m == nil || m == n {
				continue
			}
			r, ok := routes[b.cidr]
			if !ok || r.Node != m.name || r.Type == linux.RouteBlackhole {
				bad(m.name)
				continue
			}
			if r.Dev == "vxlan.calico" {
				mac, ok := neigh[r.Via]
				if !ok || fdb[mac] != m.ip {
					bad(m.name)
				}
			}
		}
	}
	return out
}
