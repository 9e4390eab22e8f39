package ipam

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// WindowsReservedHandle holds the addresses a Windows node keeps out of
// IPAM in every block it creates (libcalico-go lib/ipam/ipam_block.go).
const WindowsReservedHandle = "windows-reserved-ipam-handle"

// HostReservedAttr reserves ordinals at the start and end of each block the
// host creates (libcalico-go lib/ipam/ipam_types.go).
type HostReservedAttr struct {
	StartOfBlock int
	EndOfBlock   int
	Handle       string
	Note         string
}

// WindowsReserved is what the Calico CNI plugin and calico-node on Windows
// pass: x.0, x.1 (HNS gateway / VXLAN tunnel address), x.2 (Calico_ep) and
// the last address (cni-plugin/pkg/ipamplugin/ipam_plugin.go,
// node/pkg/lifecycle/startup/startup_windows.go).
func WindowsReserved() *HostReservedAttr {
	return &HostReservedAttr{StartOfBlock: 3, EndOfBlock: 1, Handle: WindowsReservedHandle, Note: "windows host rsvd"}
}

// attribute is one entry of a block's Attributes.
type attribute struct {
	handle     *string
	active     map[string]string
	alternate  map[string]string
	releasedAt *time.Time
}

// block mirrors libcalico-go's model.AllocationBlock.
type block struct {
	cidr     netip.Prefix
	affinity *string // "host:<node>"
	// claimTime is nil when unknown (a loaded block without
	// affinityClaimTime); upstream then treats the claim as infinitely old.
	claimTime   *time.Time
	allocations []*int
	unallocated []int
	attrs       []attribute
	seq         uint64
	// seqFor is spec.sequenceNumberForAllocation, sorted by key: a list
	// copies in a fraction of a map's bytes when a derivation's copy of
	// the block first writes to it (ownSeqFor).
	seqFor []seqEntry
	// seqShared: seqFor is shared with a copy (block.copy), so it is
	// replaced before it changes.
	seqShared bool
	strict    bool // deprecated spec.strictAffinity, kept as loaded
}

// seqEntry is one entry of sequenceNumberForAllocation: the ordinal as
// upstream keys it (its decimal string) and the block's sequence number
// when it was allocated.
type seqEntry struct {
	ord string
	seq uint64
}

func bySeqOrd(e seqEntry, ord string) int { return strings.Compare(e.ord, ord) }

// seqEntries is m as a sorted list.
func seqEntries(m map[string]uint64) []seqEntry {
	out := make([]seqEntry, 0, len(m))
	for k, v := range m {
		out = append(out, seqEntry{k, v})
	}
	slices.SortFunc(out, func(a, b seqEntry) int { return strings.Compare(a.ord, b.ord) })
	return out
}

// seqMap is the block's sequenceNumberForAllocation as the object holds
// it (never nil).
func (b *block) seqMap() map[string]uint64 {
	m := make(map[string]uint64, len(b.seqFor))
	for _, e := range b.seqFor {
		m[e.ord] = e.seq
	}
	return m
}

func affinityOf(host string) string { return "host:" + host }

// host is the node the block is affine to, or "".
func (b *block) host() string {
	if b.affinity == nil {
		return ""
	}
	h, _ := strings.CutPrefix(*b.affinity, "host:")
	return h
}

func (b *block) numAddresses() int { return len(b.allocations) }

// newBlock creates an empty block with the host reservations pre-allocated
// (ipam_block.go newBlock). Upstream seeds SequenceNumber from the wall
// clock; here it comes from the model's logical clock (0 when unset).
func newBlock(cidr netip.Prefix, rsvd *HostReservedAttr, now time.Time) *block {
	n := 1 << (cidr.Addr().BitLen() - cidr.Bits())
	b := &block{
		cidr:        cidr,
		allocations: make([]*int, n),
		unallocated: make([]int, n),
	}
	if !now.IsZero() {
		b.seq = uint64(now.UnixNano())
	}
	for i := range b.unallocated {
		b.unallocated[i] = i
	}
	if rsvd != nil {
		b.unallocated = b.unallocated[rsvd.StartOfBlock : n-rsvd.EndOfBlock]
		idx := len(b.attrs)
		for i := 0; i < rsvd.StartOfBlock; i++ {
			b.allocations[i] = &idx
		}
		for i := 1; i <= rsvd.EndOfBlock; i++ {
			b.allocations[n-i] = &idx
		}
		h := rsvd.Handle
		b.attrs = append(b.attrs, attribute{handle: &h, active: map[string]string{"note": rsvd.Note}})
	}
	return b
}

// clone deep-copies the block, so that an operation can run on the copy
// and be committed only when upstream would write the block back.
func (b *block) clone() *block {
	c := *b
	c.allocations = make([]*int, len(b.allocations))
	for i, a := range b.allocations {
		if a != nil {
			v := *a
			c.allocations[i] = &v
		}
	}
	c.unallocated = slices.Clone(b.unallocated)
	c.attrs = make([]attribute, len(b.attrs))
	for i, a := range b.attrs {
		c.attrs[i] = attribute{handle: a.handle, active: maps.Clone(a.active), alternate: maps.Clone(a.alternate), releasedAt: a.releasedAt}
	}
	c.seqFor, c.seqShared = slices.Clone(b.seqFor), false
	return &c
}

func (b *block) setSeqFor(ord int) { b.setSeq(strconv.Itoa(ord), b.seq) }

// setSeq sets ord's entry of seqFor to seq.
func (b *block) setSeq(ord string, seq uint64) {
	b.ownSeqFor()
	i, ok := slices.BinarySearchFunc(b.seqFor, ord, bySeqOrd)
	if ok {
		b.seqFor[i].seq = seq
		return
	}
	b.seqFor = slices.Insert(b.seqFor, i, seqEntry{ord, seq})
}

// deleteSeq removes ord's entry of seqFor.
func (b *block) deleteSeq(ord string) {
	i, ok := slices.BinarySearchFunc(b.seqFor, ord, bySeqOrd)
	if !ok {
		return
	}
	b.ownSeqFor()
	b.seqFor = slices.Delete(b.seqFor, i, i+1)
}

// ownSeqFor gives the block its own seqFor before it changes, with room
// for the entries a derivation's copy mostly gets (its node's tunnel
// address and DaemonSet pod).
func (b *block) ownSeqFor() {
	if b.seqShared {
		b.seqFor, b.seqShared = append(make([]seqEntry, 0, len(b.seqFor)+2), b.seqFor...), false
	}
}

// write is the datastore update of a block: every write bumps the sequence
// number (ipam_block_reader_writer.go updateBlock).
func (b *block) write() { b.seq++ }

// findOrAddAttribute reuses an identical attribute entry or appends one
// (ipam_block.go findOrAddAttribute).
func (b *block) findOrAddAttribute(handle *string, attrs map[string]string) int {
	for i := range b.attrs {
		if b.attrs[i].equals(handle, attrs) {
			return i
		}
	}
	b.attrs = append(b.attrs, attribute{handle: handle, active: attrs})
	return len(b.attrs) - 1
}

// equals is reflect.DeepEqual(a, attribute{handle: handle, active: attrs})
// spelled out: DeepEqual per attribute per assignment dominated IPAM at
// scale. As DeepEqual: handles compare by value, a nil map differs from an
// empty one, and alternate and releasedAt must be nil.
func (a *attribute) equals(handle *string, attrs map[string]string) bool {
	if a.releasedAt != nil || a.alternate != nil {
		return false
	}
	if (a.handle == nil) != (handle == nil) || (handle != nil && *a.handle != *handle) {
		return false
	}
	if (a.active == nil) != (attrs == nil) || len(a.active) != len(attrs) {
		return false
	}
	for k, v := range attrs {
		if w, ok := a.active[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// autoAssign hands out up to num ordinals from the front of Unallocated
// (ipam_block.go autoAssign; IPReservations are not modelled).
func (b *block) autoAssign(num int, handle *string, host string, attrs map[string]string, affinityCheck bool) ([]netip.Addr, error) {
	if affinityCheck && b.affinity != nil && *b.affinity != affinityOf(host) {
		return nil, fmt.Errorf("Block affinity (%s) does not match provided (%s:host)", *b.affinity, host)
	} else if b.affinity == nil && affinityCheck {
		return nil, fmt.Errorf("Attempt to assign from block %v with no affinity", b.cidr)
	}
	take := min(num, len(b.unallocated))
	if take == 0 {
		return nil, nil
	}
	idx := b.findOrAddAttribute(handle, attrs)
	var ips []netip.Addr
	for _, ord := range b.unallocated[:take] {
		b.allocations[ord] = &idx
		b.setSeqFor(ord)
		ips = append(ips, nthAddr(b.cidr, ord))
	}
	b.unallocated = slices.Clone(b.unallocated[take:])
	return ips, nil
}

// errAlreadyAssigned is libcalico-go's ErrorResourceAlreadyExists for an
// address that is taken.
type errAlreadyAssigned struct{ addr netip.Addr }

func (e errAlreadyAssigned) Error() string {
	return fmt.Sprintf("resource already exists: %s with error: Address already assigned in block", e.addr)
}

// assign takes one specific address (ipam_block.go assign).
func (b *block) assign(affinityCheck bool, addr netip.Addr, handle *string, attrs map[string]string, host string) error {
	if affinityCheck && b.affinity != nil && *b.affinity != affinityOf(host) {
		return errors.New("Block host affinity does not match")
	} else if b.affinity == nil && affinityCheck {
		return fmt.Errorf("Attempt to assign from block %v with no affinity", b.cidr)
	}
	ord, ok := ordinalOf(b.cidr, addr)
	if !ok {
		return fmt.Errorf("IP %s not in block %s", addr, b.cidr)
	}
	// Upstream records the sequence number before the "already allocated"
	// check, but a failed attempt is never written back (AssignIP drops the
	// block it read), so the check comes first here: a failure leaves the
	// block untouched, which lets IPAM.view hand out the block itself.
	if b.allocations[ord] != nil {
		return errAlreadyAssigned{addr}
	}
	b.setSeqFor(ord)
	idx := b.findOrAddAttribute(handle, attrs)
	b.allocations[ord] = &idx
	if i := slices.Index(b.unallocated, ord); i >= 0 {
		b.unallocated = slices.Delete(b.unallocated, i, i+1)
	}
	return nil
}

// isReserved reports whether attribute i belongs to the Windows reservation
// (upstream lowercases the handle).
func (b *block) isReserved(i int) bool {
	h := b.attrs[i].handle
	return h != nil && isReservedHandle(*h)
}

// isReservedHandle is strings.ToLower(h) == WindowsReservedHandle without
// the lowered copy for an ASCII handle (every pod's handle is read per
// ordinal): ASCII lowers byte by byte, so only a handle of the same length
// can match; any other goes through strings.ToLower.
func isReservedHandle(h string) bool {
	if len(h) == 0 || (h[0] < utf8.RuneSelf && h[0]|0x20 != WindowsReservedHandle[0]) {
		return false // an ASCII first byte lowers only to itself or its lower case
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf {
			return strings.ToLower(h) == WindowsReservedHandle
		}
	}
	if len(h) != len(WindowsReservedHandle) {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != WindowsReservedHandle[i] {
			return false
		}
	}
	return true
}

// empty is true when nothing but the Windows reservation is allocated;
// addresses in cooldown still count as used (ipam_block.go empty).
func (b *block) empty() bool {
	for _, a := range b.allocations {
		if a != nil && !b.isReserved(*a) {
			return false
		}
	}
	return true
}

func (b *block) numFree() int { return len(b.unallocated) }

// needsGC reports whether garbageCollect would change the block: an
// allocation whose cooldown is over, or an attribute no allocation uses.
func (b *block) needsGC(now time.Time, cooldown int) bool {
	threshold := now.Add(-time.Duration(cooldown) * time.Second)
	var buf [128]bool
	used := buf[:0]
	if len(b.attrs) <= len(buf) {
		used = buf[:len(b.attrs)]
	} else {
		used = make([]bool, len(b.attrs))
	}
	n := 0
	for _, a := range b.allocations {
		if a == nil {
			continue
		}
		if at := b.attrs[*a].releasedAt; at != nil && (cooldown < 0 || !at.After(threshold)) {
			return true
		}
		if !used[*a] {
			used[*a] = true
			n++
		}
	}
	return n != len(b.attrs)
}

// sanitizeHandle drops everything from the first carriage return
// (ipam_block.go sanitizeHandle).
func sanitizeHandle(h string) string {
	// strings.Cut, not Split: no slice per call (it ran per ordinal).
	before, _, _ := strings.Cut(h, "\r")
	return before
}

// release frees the given addresses: each goes into cooldown and the
// garbage collector immediately moves those whose cooldown is over to the
// END of Unallocated, so a released ordinal is reused last
// (ipam_block.go release, garbageCollect). It returns the addresses that
// were not allocated.
func (b *block) release(addrs []netip.Addr, now time.Time, cooldown int) []netip.Addr {
	var skipped []netip.Addr
	var ords []int
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		if seen[a] {
			continue
		}
		seen[a] = true
		ord, ok := ordinalOf(b.cidr, a)
		if !ok {
			skipped = append(skipped, a)
			continue
		}
		idx := b.allocations[ord]
		if idx == nil || b.attrs[*idx].releasedAt != nil {
			skipped = append(skipped, a)
			continue
		}
		ords = append(ords, ord)
	}
	if len(ords) == 0 {
		return skipped
	}
	ri := b.addCooldownAttribute(now)
	for _, o := range ords {
		b.allocations[o] = &ri
		b.setSeqFor(o)
	}
	b.garbageCollect(now, cooldown)
	return skipped
}

// deferGaps moves the free ordinals below the highest allocated one (the
// Windows reservation aside) behind the others, keeping each group's order.
func (b *block) deferGaps() {
	hi := -1
	for o, a := range b.allocations {
		if a != nil && !b.isReserved(*a) {
			hi = o
		}
	}
	var gaps, rest []int
	for _, o := range b.unallocated {
		if o < hi {
			gaps = append(gaps, o)
		} else {
			rest = append(rest, o)
		}
	}
	b.unallocated = append(rest, gaps...)
}

// releaseByHandle frees every ordinal held by the handle
// (ipam_block.go releaseByHandle).
func (b *block) releaseByHandle(handle string, now time.Time, cooldown int) int {
	var idxs []int
	for i, a := range b.attrs {
		if a.handle != nil && sanitizeHandle(*a.handle) == handle {
			idxs = append(idxs, i)
		}
	}
	if len(idxs) == 0 {
		return 0
	}
	var ri *int
	n := 0
	for o, a := range b.allocations {
		if a == nil || !slices.Contains(idxs, *a) {
			continue
		}
		if ri == nil {
			i := b.addCooldownAttribute(now)
			ri = &i
		}
		b.allocations[o] = ri
		n++
	}
	b.garbageCollect(now, cooldown)
	return n
}

func (b *block) addCooldownAttribute(now time.Time) int {
	t := now
	b.attrs = append(b.attrs, attribute{releasedAt: &t})
	return len(b.attrs) - 1
}

// garbageCollect frees ordinals whose cooldown has passed, appending them
// to Unallocated in ordinal order, then drops unreferenced attributes and
// renumbers the rest (ipam_block.go garbageCollect). With a cooldown of 0
// a release is freed at once.
func (b *block) garbageCollect(now time.Time, cooldown int) bool {
	changed := false
	threshold := now.Add(-time.Duration(cooldown) * time.Second)
	used := map[int]bool{}
	for o, a := range b.allocations {
		if a == nil {
			continue
		}
		at := b.attrs[*a]
		free := at.releasedAt != nil
		if free && cooldown >= 0 {
			free = !at.releasedAt.After(threshold)
		}
		if free {
			b.allocations[o] = nil
			b.unallocated = append(b.unallocated, o)
			b.deleteSeq(strconv.Itoa(o))
			changed = true
		} else {
			used[*a] = true
		}
	}
	if len(used) != len(b.attrs) {
		remap := make([]int, len(b.attrs))
		var kept []attribute
		for i, a := range b.attrs {
			if used[i] {
				remap[i] = len(kept)
				kept = append(kept, a)
			}
		}
		b.attrs = kept
		for o, a := range b.allocations {
			if a != nil {
				v := remap[*a]
				b.allocations[o] = &v
			}
		}
		changed = true
	}
	return changed
}

// handleOf returns the handle holding ordinal o, if any.
func (b *block) handleOf(o int) string {
	a := b.allocations[o]
	if a == nil || b.attrs[*a].handle == nil {
		return ""
	}
	return sanitizeHandle(*b.attrs[*a].handle)
}
