package ipam

import (
	"maps"
	"net/netip"
	"reflect"
	"slices"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// Clone is a deep copy of the model: using either afterwards leaves the
// other as it was. The attribute maps, handles and times the blocks point
// at are shared: nothing changes them in place (an update replaces them).
func (m *IPAM) Clone() *IPAM {
	c := &IPAM{cfg: m.cfg, pools: m.pools}
	c.copyState(m, true)
	return c
}

// Restore replaces m's state (nodes, blocks, affinities, the clock, which
// blocks were loaded or inferred) with a deep copy of from's, as Clone
// copies it; m keeps its own pools and configuration. A caller that knows
// the calls made on from would have given the same state under m's pools
// and configuration starts from there instead of making them again.
func (m *IPAM) Restore(from *IPAM) { m.copyState(from, false) }

// copyState copies from's state into m; live says from is still in use
// (Clone), so its blocks learn that they share their seqFor.
func (m *IPAM) copyState(from *IPAM, live bool) {
	m.now = from.now
	m.nodes = maps.Clone(from.nodes)
	m.blocks = make(map[netip.Prefix]*block, len(from.blocks))
	for k, b := range from.blocks {
		m.blocks[k] = b.copy(live)
	}
	m.affs = make(map[affKey]*affinity, len(from.affs))
	for k, a := range from.affs {
		v := *a
		m.affs[k] = &v
	}
	m.affsByHost = make(map[string]map[netip.Prefix]struct{}, len(from.affsByHost))
	for h, set := range from.affsByHost {
		m.affsByHost[h] = maps.Clone(set)
	}
	// Restore's source never changes: its handles are read where they
	// are, not copied (one per pod).
	switch {
	case !live && from.handlesBase == nil:
		m.handlesBase, m.byHandle = from.byHandle, map[string]netip.Prefix{}
	default:
		m.handlesBase, m.byHandle = from.handlesBase, maps.Clone(from.byHandle)
	}
	m.moreHandles = make(map[string][]netip.Prefix, len(from.moreHandles))
	for h, more := range from.moreHandles {
		m.moreHandles[h] = slices.Clone(more)
	}
	m.loaded, m.inferred = maps.Clone(from.loaded), maps.Clone(from.inferred)
	m.strictRead = from.strictRead
}

// copy is clone for a copy that is not garbage collected: one array holds
// the allocations' attribute indexes, and the attributes' maps are shared,
// seqFor until one of the two blocks changes it (ownSeqFor). live marks
// b's seqFor shared too; a block of a state that never changes (Restore's
// source) is not written, so that derivations from it may run at once.
func (b *block) copy(live bool) *block {
	c := *b
	idx := make([]int, len(b.allocations))
	c.allocations = make([]*int, len(b.allocations))
	for i, a := range b.allocations {
		if a != nil {
			idx[i] = *a
			c.allocations[i] = &idx[i]
		}
	}
	c.unallocated = slices.Clone(b.unallocated)
	// Room for two more attributes: a derivation's copy of a node's
	// block mostly gets two (the node's tunnel address and its DaemonSet
	// pod's address, asked for again), which would otherwise copy them all
	// again.
	c.attrs = append(make([]attribute, 0, len(b.attrs)+2), b.attrs...)
	c.seqShared = true
	if live {
		b.seqShared = true
	}
	return &c
}

// StrictAffinityRead reports whether the outcome of an AssignIP so far
// depended on strictAffinity: one made for a Windows node (GetIPAMConfig
// refuses it without strict affinity) or one whose block was not affine to
// the host (refused with strict affinity, borrowed without). Otherwise the
// same calls give the same state whatever strictAffinity is.
func (m *IPAM) StrictAffinityRead() bool { return m.strictRead }

// equal reports whether Blocks renders a and b alike (reflect.DeepEqual
// of the two objects, nil and empty maps told apart as DeepEqual does).
func (a *block) equal(b *block) bool {
	if a.cidr != b.cidr || a.seq != b.seq || a.strict != b.strict ||
		!equalPtr(a.affinity, b.affinity) || !equalPtr(a.claimTime, b.claimTime) ||
		len(a.allocations) != len(b.allocations) || !slices.Equal(a.unallocated, b.unallocated) ||
		!slices.Equal(a.seqFor, b.seqFor) || len(a.attrs) != len(b.attrs) {
		return false
	}
	for i, x := range a.allocations {
		if !equalPtr(x, b.allocations[i]) {
			return false
		}
	}
	for i := range a.attrs {
		x, y := &a.attrs[i], &b.attrs[i]
		if !equalPtr(x.handle, y.handle) || !equalPtr(x.releasedAt, y.releasedAt) ||
			!equalMap(x.active, y.active) || !equalMap(x.alternate, y.alternate) {
			return false
		}
	}
	return true
}

// equalPtr: both nil, or both set to equal values (times by ==, which is
// stricter than DeepEqual: a false "differs" only costs a rendering).
func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// equalMap is DeepEqual of two maps, first by identity: copies share
// their attributes' maps.
func equalMap[K, V comparable](a, b map[K]V) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	if reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() {
		return true
	}
	return maps.Equal(a, b)
}

// BlocksReusing is Blocks, except that a block equal to prev's block of
// that CIDR is prevObjs' object of its name (prevObjs being what Blocks
// rendered for prev), not a new one: two twins share the object, and
// whoever compares them skips it. Neither twin may change it.
func (m *IPAM) BlocksReusing(prev *IPAM, prevObjs []*calico.IPAMBlock) []*calico.IPAMBlock {
	byName := make(map[string]*calico.IPAMBlock, len(prevObjs))
	for _, o := range prevObjs {
		byName[o.Name] = o
	}
	out := make([]*calico.IPAMBlock, 0, len(m.blocks))
	for _, cidr := range m.sortedBlocks() {
		b := m.blocks[cidr]
		if was := prev.blocks[cidr]; was != nil && b.equal(was) {
			if o := byName[BlockName(cidr)]; o != nil && o.Spec.CIDR == cidr.String() {
				out = append(out, o)
				continue
			}
		}
		out = append(out, renderBlock(cidr, b))
	}
	sortBlocks(out)
	return out
}

// AffinitiesReusing is Affinities, except that an affinity prevObjs (what
// Affinities rendered for another state) holds in the same state is that
// object, shared as BlocksReusing shares blocks.
func (m *IPAM) AffinitiesReusing(prevObjs []*calico.BlockAffinity) []*calico.BlockAffinity {
	byName := make(map[string]*calico.BlockAffinity, len(prevObjs))
	for _, o := range prevObjs {
		byName[o.Name] = o
	}
	out := make([]*calico.BlockAffinity, 0, len(m.affs))
	for k, a := range m.affs {
		if o := byName[AffinityName(k.host, k.cidr)]; o != nil && o.Spec.State == a.state && o.Spec.Node == k.host &&
			o.Spec.CIDR == k.cidr.String() && o.Spec.Type == "host" {
			out = append(out, o)
			continue
		}
		out = append(out, renderAffinity(k, a))
	}
	sortAffinities(out)
	return out
}
