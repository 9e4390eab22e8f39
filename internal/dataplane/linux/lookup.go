package linux

import (
	"net"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Lookups that answer one question about a node without building its
// per-node tables (routes, neighbours, FDB: an entry per other node) or
// every service port's view. A trace asks a handful of them per hop; at
// 5,000 nodes building the tables it touches cost milliseconds per trace.
// Each lookup gives exactly what the corresponding scan of the full table
// gives (lookup_test.go compares them on every node of the fixtures).

// lookupIdx holds the cluster-wide indexes the lookups share.
type lookupIdx struct {
	// blocksAt lists, per block CIDR, its positions in clusterCtx.blocks.
	blocksAt map[netip.Prefix][]int
	// borrowedAt lists, per address, the positions in clusterCtx.borrowed
	// of the pods with it.
	borrowedAt map[netip.Addr][]int
	// vteps lists the nodes with a VTEP by tunnel address and by MAC, in
	// clusterCtx.nodes order.
	byTunnel map[netip.Addr][]*nodeInfo
	byMAC    map[string][]*nodeInfo
}

func (cc *clusterCtx) lookups() *lookupIdx {
	cc.idxOnce.Do(func() {
		x := &lookupIdx{blocksAt: map[netip.Prefix][]int{}, borrowedAt: map[netip.Addr][]int{},
			byTunnel: map[netip.Addr][]*nodeInfo{}, byMAC: map[string][]*nodeInfo{}}
		for i, b := range cc.blocks {
			x.blocksAt[b.cidr] = append(x.blocksAt[b.cidr], i)
		}
		for i, p := range cc.borrowed {
			if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil {
				x.borrowedAt[ip] = append(x.borrowedAt[ip], i)
			}
		}
		for _, o := range cc.nodes {
			if o.vtep != nil {
				x.byTunnel[o.vtep.tunnel] = append(x.byTunnel[o.vtep.tunnel], o)
				x.byMAC[string(o.vtep.mac)] = append(x.byMAC[string(o.vtep.mac)], o)
			}
		}
		cc.idx = x
	})
	return cc.idx
}

// routeTo is RouteTo without the table: the routes routes() would make
// whose destination can contain dst, in routes()'s order, of which the
// longest prefix, then the lowest metric, then the first wins — the table's
// pick, since routes with one prefix length containing dst share their
// destination and sortRoutes keeps their order by metric, then as made.
func (n *Node) routeTo(dst netip.Addr) (Route, bool) {
	cc, ni := n.cc, n.ni
	x := cc.lookups()
	scratch := &Node{} // remoteRoute's notes; the table's own come from derive
	var cands []Route
	if r, ok := cc.defaultRoute(ni, n.nic); ok {
		cands = append(cands, r)
	}
	if r, ok := cc.prefixRoute(ni, n.nic); ok {
		cands = append(cands, r)
	}
	// Blocks containing dst, in clusterCtx.blocks order.
	var at []int
	for _, bits := range cc.blockBits {
		if p, err := dst.Prefix(bits); err == nil {
			at = append(at, x.blocksAt[p]...)
		}
	}
	sort.Ints(at)
	for _, i := range at {
		if b := cc.blocks[i]; b.node == ni.name {
			cands = append(cands, cc.blackholeRoute(ni, b))
		}
	}
	for _, p := range n.podsWithIP(dst) {
		if r, ok := workloadRoute(ni, p); ok {
			cands = append(cands, r)
		}
	}
	for _, i := range at {
		b := cc.blocks[i]
		if b.node == "" || b.node == ni.name {
			continue
		}
		if r, ok := cc.remoteRoute(ni, scratch, b.cidr, b.node, n.nic, n.hasVXLAN, n.fc, "remote IPAM block"); ok {
			cands = append(cands, r)
		}
	}
	for _, i := range x.borrowedAt[dst] {
		if r, ok := cc.borrowedRoute(ni, scratch, cc.borrowed[i], n.nic, n.hasVXLAN, n.fc); ok {
			cands = append(cands, r)
		}
	}
	best := -1
	for i, r := range cands {
		if !r.Dst.Contains(dst) {
			continue
		}
		if best < 0 || r.Dst.Bits() > cands[best].Dst.Bits() ||
			(r.Dst.Bits() == cands[best].Dst.Bits() && r.Metric < cands[best].Metric) {
			best = i
		}
	}
	if best < 0 {
		return Route{}, false
	}
	return cands[best], true
}

// podsWithIP are the node's pods with address a, in ni.pods order.
func (n *Node) podsWithIP(a netip.Addr) []*corev1.Pod {
	n.podIdx.Do(func() {
		n.podByIP = map[netip.Addr][]*corev1.Pod{}
		for _, p := range n.ni.pods {
			if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil {
				n.podByIP[ip] = append(n.podByIP[ip], p)
			}
		}
	})
	return n.podByIP[a]
}

// peersOf are the VTEP peers l2 lists for the node among cands, in the
// order l2 sorts them before the address or MAC: by the time this node
// learned them, then as cc.nodes lists them.
func (n *Node) peersOf(cands []*nodeInfo) []*nodeInfo {
	var out []*nodeInfo
	for _, o := range cands {
		if o.name != n.ni.name {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := out[i].created, out[j].created
		if n.ni.created.After(ti) {
			ti = n.ni.created
		}
		if n.ni.created.After(tj) {
			tj = n.ni.created
		}
		return ti.Before(tj)
	})
	return out
}

// NeighborFor is the last entry of Neighbors() with address ip (the one a
// scan keeping the last match finds), without building the list.
func (n *Node) NeighborFor(ip netip.Addr) (Neighbor, bool) {
	if n.cc == nil {
		var out Neighbor
		found := false
		for _, e := range n.Neighbors() {
			if e.IP == ip {
				out, found = e, true
			}
		}
		return out, found
	}
	if !n.hasVXLAN {
		return Neighbor{}, false
	}
	peers := n.peersOf(n.cc.lookups().byTunnel[ip])
	if len(peers) == 0 {
		return Neighbor{}, false
	}
	v := peers[len(peers)-1].vtep
	return Neighbor{IP: v.tunnel, MAC: v.mac, Dev: vxlanDevice, State: "PERMANENT", Node: v.node}, true
}

// FDBFor is the last entry of FDB() with MAC mac, without building the list.
func (n *Node) FDBFor(mac net.HardwareAddr) (FDBEntry, bool) {
	if n.cc == nil {
		var out FDBEntry
		found := false
		for _, e := range n.FDB() {
			if string(e.MAC) == string(mac) {
				out, found = e, true
			}
		}
		return out, found
	}
	if !n.hasVXLAN {
		return FDBEntry{}, false
	}
	peers := n.peersOf(n.cc.lookups().byMAC[string(mac)])
	if len(peers) == 0 {
		return FDBEntry{}, false
	}
	v := peers[len(peers)-1].vtep
	return FDBEntry{MAC: v.mac, Dst: v.host, Dev: vxlanDevice, Node: v.node}, true
}
