package linux

import "fmt"

// A node's routes to other nodes' IPAM blocks, and its VXLAN neighbour and
// FDB entries, read of the node itself only a few settings: the route to
// a remote block depends on the block, its owner and the node's NIC,
// subnet (CrossSubnet), vxlan.calico and VXLAN MTU, tunl0 (remoteRoute); the L2
// entries are one per other node's VTEP (l2). Every node with the same
// settings therefore programs the same lines for every block it does not
// own. A comparison of many nodes reads those lines once per class of
// nodes (SharedRoutes, SharedL2) and each node's own routes apart
// (OwnRoutes), rather than every node's whole table.

// RouteClass names the settings of the node that its routes to remote
// blocks read; nodes of one class in one twin program the same route to a
// block. "" for a node built by hand (tests), which has no shared part.
func (n *Node) RouteClass() string {
	if n.cc == nil {
		return ""
	}
	return fmt.Sprintf("%s|%s|%t|%d|%t", n.nic, n.ni.subnet.Masked(), n.hasVXLAN, n.fc.mtu, n.fc.ipip)
}

// OwnRoutes are the node's routes but those to other nodes' IPAM blocks:
// Routes is OwnRoutes with, of SharedRoutes, the routes whose Node is not
// this node. Without a shared part (RouteClass "") it is Routes. The
// order is not the kernel's.
func (n *Node) OwnRoutes() []Route {
	if n.cc == nil {
		return n.Routes()
	}
	cc, ni := n.cc, n.ni
	scratch := &Node{}
	var rs []Route
	if r, ok := cc.defaultRoute(ni, n.nic); ok {
		rs = append(rs, r)
	}
	if r, ok := cc.prefixRoute(ni, n.nic); ok {
		rs = append(rs, r)
	}
	for _, b := range cc.blocks {
		if b.node == ni.name {
			rs = append(rs, cc.blackholeRoute(ni, b))
		}
	}
	for _, p := range ni.pods {
		if r, ok := workloadRoute(ni, p); ok {
			rs = append(rs, r)
		}
	}
	for _, p := range cc.borrowed {
		if r, ok := cc.borrowedRoute(ni, scratch, p, n.nic, n.hasVXLAN, n.fc); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// SharedRoutes are the routes a node of n's class programs to every
// affine IPAM block, its own blocks included (the node itself leaves out
// those whose Node is its name), as routes() derives them. Nil without a
// shared part.
func (n *Node) SharedRoutes() []Route {
	if n.cc == nil {
		return nil
	}
	cc, ni := n.cc, n.ni
	scratch := &Node{} // the notes are the node's own (Notes), not these
	var rs []Route
	for _, b := range cc.blocks {
		if b.node == "" {
			continue
		}
		if r, ok := cc.remoteRoute(ni, scratch, b.cidr, b.node, n.nic, n.hasVXLAN, n.fc, "remote IPAM block"); ok {
			r.Node = b.node
			rs = append(rs, r)
		}
	}
	return rs
}

// SharedL2 are the VXLAN neighbour and FDB entries for every node's VTEP,
// with the node each belongs to: a node with vxlan.calico programs those
// of every other node (Neighbors, FDB, in their listing order), a node
// without it none. Nil without a shared part.
func (n *Node) SharedL2() (neigh []Neighbor, fdb []FDBEntry, owners []string) {
	if n.cc == nil {
		return nil, nil, nil
	}
	for _, o := range n.cc.nodes {
		if o.vtep == nil {
			continue
		}
		v := o.vtep
		neigh = append(neigh, Neighbor{IP: v.tunnel, MAC: v.mac, Dev: vxlanDevice, State: "PERMANENT", Node: v.node})
		fdb = append(fdb, FDBEntry{MAC: v.mac, Dst: v.host, Dev: vxlanDevice, Node: v.node})
		owners = append(owners, o.name)
	}
	return neigh, fdb, owners
}

// HasVXLAN reports whether the node has vxlan.calico, on which Felix
// programs the L2 entries.
func (n *Node) HasVXLAN() bool { return n.hasVXLAN }
