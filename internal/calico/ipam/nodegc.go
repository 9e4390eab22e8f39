package ipam

import (
	"errors"
	"net/netip"
	"slices"
)

// tunnelTypes are the allocation types calico-node gives a node's tunnel
// addresses (kube-controllers node/allocation.go isTunnelAddress: IPIP,
// VXLAN, VXLAN IPv6, WireGuard, WireGuard IPv6).
var tunnelTypes = []string{AttrTypeIPIP, AttrTypeVXLAN, "vxlanV6TunnelAddress", "wireguardTunnelAddress", "wireguardV6TunnelAddress"}

// Cleanup is what calico-kube-controllers did to IPAM for one node that is
// gone from the Kubernetes API.
type Cleanup struct {
	Node string
	// Released are the addresses freed: pod addresses whose pod no longer
	// exists, then (when the node could be cleaned up) its tunnel addresses.
	Released []netip.Addr
	// Affinities are the blocks whose affinity to the node was released;
	// DeletedBlocks those of them that were empty and so were deleted.
	Affinities, DeletedBlocks []netip.Prefix
	// Kept are addresses of pods that still exist with them; Unknown those
	// of allocations that name no pod or tunnel. Either keeps the node's
	// tunnel addresses and blocks.
	Kept, Unknown []netip.Addr
	// NotEmpty are the node's blocks kept (with their affinity) because
	// something still holds an address in them.
	NotEmpty []netip.Prefix
}

// Hosts lists, sorted, every node IPAM names: by a block affinity, a
// block's affinity or an allocation's node attribute.
func (m *IPAM) Hosts() []string {
	seen := map[string]bool{}
	for k := range m.affs {
		seen[k.host] = true
	}
	for _, b := range m.blocks {
		if h := b.host(); h != "" {
			seen[h] = true
		}
		for _, a := range b.attrs {
			if h := a.active[AttrNode]; h != "" {
				seen[h] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// CleanupDeletedNode does what calico-kube-controllers does once a node IPAM
// names is gone from the Kubernetes API
// (kube-controllers/pkg/controllers/node/ipam.go checkAllocations,
// garbageCollectIPs, cleanupNode). Each pod allocation whose pod no longer
// exists (podValid false) is a confirmed leak at once, without the leak
// grace period, because the node is gone, and is released. When no pod
// address on the node is still valid and no allocation is of unknown
// source, the tunnel addresses are released too and then the node's block
// affinities, requiring each block to be empty (ReleaseHostAffinities with
// mustBeEmpty): an empty block is deleted, a non-empty one keeps its
// affinity. Windows-reserved addresses are skipped: they go with the block.
func (m *IPAM) CleanupDeletedNode(host string, podValid func(namespace, pod string, addr netip.Addr) bool) Cleanup {
	out := Cleanup{Node: host}
	var leaks, tunnels []netip.Addr
	canDelete := true
	for _, cidr := range m.sortedBlocks() {
		b := m.blocks[cidr]
		for ord, idx := range b.allocations {
			if idx == nil || b.isReserved(*idx) {
				continue
			}
			at := b.attrs[*idx]
			if at.releasedAt != nil {
				continue
			}
			node := at.active[AttrNode]
			if node == "" {
				node = b.host()
			}
			if node != host {
				continue
			}
			addr := nthAddr(cidr, ord)
			ns, pod := at.active[AttrNamespace], at.active[AttrPod]
			switch {
			case slices.Contains(tunnelTypes, at.active[AttrType]):
				tunnels = append(tunnels, addr)
			case ns == "" || pod == "":
				// allocationIsValid: no pod metadata, assumed valid; or not
				// a pod or tunnel address at all: the node is not cleaned.
				canDelete = false
				out.Unknown = append(out.Unknown, addr)
			case podValid(ns, pod, addr):
				canDelete = false
				out.Kept = append(out.Kept, addr)
			default:
				leaks = append(leaks, addr)
			}
		}
	}
	release := func(addrs []netip.Addr) {
		skipped := m.ReleaseIPs(addrs...)
		for _, a := range addrs {
			if !slices.Contains(skipped, a) {
				out.Released = append(out.Released, a)
			}
		}
	}
	release(leaks)
	if !canDelete {
		return out
	}
	release(tunnels)
	for _, cidr := range m.affineBlocks(host, 4) {
		m.cleanupAffinity(host, cidr, &out)
	}
	for _, cidr := range m.affineBlocks(host, 6) {
		m.cleanupAffinity(host, cidr, &out)
	}
	return out
}

func (m *IPAM) cleanupAffinity(host string, cidr netip.Prefix, out *Cleanup) {
	_, existed := m.blocks[cidr]
	err := m.releaseBlockAffinity(host, cidr, true, nil)
	switch {
	case err == nil:
		out.Affinities = append(out.Affinities, cidr)
		if _, still := m.blocks[cidr]; existed && !still {
			out.DeletedBlocks = append(out.DeletedBlocks, cidr)
		}
	case errors.As(err, new(blockNotEmpty)):
		out.NotEmpty = append(out.NotEmpty, cidr)
	default:
		// An affinity without its block (or one another node's block
		// claim contradicts) is deleted by releaseBlockAffinity or stale:
		// either way the node no longer holds it.
		if _, ok := m.affs[affKey{host, cidr}]; ok {
			m.dropAff(affKey{host, cidr})
		}
		out.Affinities = append(out.Affinities, cidr)
	}
}
