package linux

import (
	"bytes"
	"sort"
	"time"
)

// l2 derives the static neighbour and FDB entries Felix programs on
// vxlan.calico: for every other node with a VTEP, an ARP entry tunnel
// address -> VTEP MAC and an FDB entry VTEP MAC -> node address
// (felix/dataplane/linux/vxlan_mgr.go updateNeighborsAndAllowedSources,
// felix/vxlanfdb/vxlan_fdb.go SetVTEPs: NUD_PERMANENT, NTF_SELF for FDB).
//
// Listing order is the documented stand-in (see the package doc): batches
// by the time Felix on this node learned the peer, oldest first; inside a
// batch ARP entries by IP and FDB entries by MAC.
func (cc *clusterCtx) l2(ni *nodeInfo, n *Node) ([]Neighbor, []FDBEntry) {
	type peer struct {
		v       *vtep
		learned time.Time
	}
	var peers []peer
	for _, o := range cc.nodes {
		if o.name == ni.name || o.vtep == nil {
			continue
		}
		if o.vtep.macDerived && o.windows {
			n.note(areaL2, "%s records no projectcalico.org/VXLANTunnelMACAddr: Felix falls back to the MAC derived from its name (%s), which is not the DrPort's", o.name, o.vtep.mac)
		}
		learned := o.created
		if ni.created.After(learned) {
			learned = ni.created
		}
		peers = append(peers, peer{v: o.vtep, learned: learned})
	}
	ps := append([]peer(nil), peers...)
	sort.SliceStable(ps, func(i, j int) bool {
		if !ps[i].learned.Equal(ps[j].learned) {
			return ps[i].learned.Before(ps[j].learned)
		}
		return ps[i].v.tunnel.Less(ps[j].v.tunnel)
	})
	neigh := make([]Neighbor, 0, len(ps))
	for _, p := range ps {
		neigh = append(neigh, Neighbor{IP: p.v.tunnel, MAC: p.v.mac, Dev: vxlanDevice, State: "PERMANENT", Node: p.v.node})
	}
	fs := append([]peer(nil), peers...)
	sort.SliceStable(fs, func(i, j int) bool {
		if !fs[i].learned.Equal(fs[j].learned) {
			return fs[i].learned.Before(fs[j].learned)
		}
		return bytes.Compare(fs[i].v.mac, fs[j].v.mac) < 0
	})
	fdb := make([]FDBEntry, 0, len(fs))
	for _, p := range fs {
		fdb = append(fdb, FDBEntry{MAC: p.v.mac, Dst: p.v.host, Dev: vxlanDevice, Node: p.v.node})
	}
	return neigh, fdb
}
