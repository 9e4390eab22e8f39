package ipam

import (
	"crypto/sha3"
	"encoding/base32"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// Labels Calico puts on BlockAffinity objects
// (api/pkg/apis/projectcalico/v3/constants.go).
const (
	LabelHostnameHash = "projectcalico.org/hostname-hash"
	LabelAffinityType = "projectcalico.org/affinity-type"
	LabelIPVersion    = "projectcalico.org/ip-version"
)

// ObjectError is an IPAMBlock or BlockAffinity that Load cannot read, so
// that the caller can name where the object came from.
type ObjectError struct {
	Kind, Name string
	Err        error
}

func (e *ObjectError) Error() string { return e.Err.Error() }
func (e *ObjectError) Unwrap() error { return e.Err }

// Load adds observed IPAMBlock and BlockAffinity objects. Objects marked
// deleted are skipped, as the Kubernetes backend hides them. A loaded block
// keeps its allocation order, attributes and sequence numbers exactly; its
// claim time, when absent, counts as long ago.
func (m *IPAM) Load(blocks []*calico.IPAMBlock, affinities []*calico.BlockAffinity) error {
	for _, o := range blocks {
		if o.Spec.Deleted {
			continue
		}
		b, err := blockFromResource(o)
		if err != nil {
			return &ObjectError{Kind: "IPAMBlock", Name: o.Name, Err: err}
		}
		m.blocks[b.cidr] = b
		m.loaded[b.cidr] = true
		for _, a := range b.attrs {
			m.noteHandle(a.handle, b.cidr)
		}
	}
	for _, o := range affinities {
		if o.Spec.Deleted == "true" {
			continue
		}
		cidr, err := netip.ParsePrefix(o.Spec.CIDR)
		if err != nil {
			return &ObjectError{Kind: "BlockAffinity", Name: o.Name, Err: fmt.Errorf("BlockAffinity %s: %w", o.Name, err)}
		}
		if o.Spec.Type != "" && o.Spec.Type != "host" {
			continue // LoadBalancer ("virtual") affinities are not modelled
		}
		m.putAff(affKey{o.Spec.Node, cidr.Masked()}, &affinity{state: o.Spec.State})
	}
	return nil
}

func blockFromResource(o *calico.IPAMBlock) (*block, error) {
	cidr, err := netip.ParsePrefix(o.Spec.CIDR)
	if err != nil {
		return nil, fmt.Errorf("IPAMBlock %s: %w", o.Name, err)
	}
	cidr = cidr.Masked()
	n := 1 << (cidr.Addr().BitLen() - cidr.Bits())
	if cidr.Addr().BitLen()-cidr.Bits() > 20 || len(o.Spec.Allocations) != n {
		return nil, fmt.Errorf("IPAMBlock %s: %d allocations for a block of %d addresses", o.Name, len(o.Spec.Allocations), n)
	}
	b := &block{
		cidr:        cidr,
		allocations: make([]*int, n),
		unallocated: slices.Clone(o.Spec.Unallocated),
		seq:         o.Spec.SequenceNumber,
		seqFor:      seqEntries(o.Spec.SequenceNumberForAllocation),
		strict:      o.Spec.StrictAffinity,
	}
	if o.Spec.Affinity != nil {
		s := *o.Spec.Affinity
		b.affinity = &s
	}
	if o.Spec.AffinityClaimTime != nil {
		t := o.Spec.AffinityClaimTime.Time
		b.claimTime = &t
	}
	for _, a := range o.Spec.Attributes {
		at := attribute{active: maps.Clone(a.ActiveOwnerAttrs), alternate: maps.Clone(a.AlternateOwnerAttrs)}
		if a.HandleID != nil {
			h := *a.HandleID
			at.handle = &h
		}
		if a.ReleasedAt != nil {
			t := a.ReleasedAt.Time
			at.releasedAt = &t
		}
		b.attrs = append(b.attrs, at)
	}
	for i, a := range o.Spec.Allocations {
		if a == nil {
			continue
		}
		if *a < 0 || *a >= len(b.attrs) {
			return nil, fmt.Errorf("IPAMBlock %s: allocation %d points at attribute %d of %d", o.Name, i, *a, len(b.attrs))
		}
		v := *a
		b.allocations[i] = &v
	}
	for _, u := range b.unallocated {
		if u < 0 || u >= n || b.allocations[u] != nil {
			return nil, fmt.Errorf("IPAMBlock %s: unallocated ordinal %d is invalid or allocated", o.Name, u)
		}
	}
	return b, nil
}

// Blocks renders the blocks as projectcalico.org/v3 IPAMBlock resources,
// sorted by name as kubectl lists them.
func (m *IPAM) Blocks() []*calico.IPAMBlock {
	var out []*calico.IPAMBlock
	for _, cidr := range m.sortedBlocks() {
		out = append(out, renderBlock(cidr, m.blocks[cidr]))
	}
	sortBlocks(out)
	return out
}

func sortBlocks(out []*calico.IPAMBlock) {
	slices.SortFunc(out, func(a, b *calico.IPAMBlock) int { return strings.Compare(a.Name, b.Name) })
}

// renderBlock is one block as an IPAMBlock resource.
func renderBlock(cidr netip.Prefix, b *block) *calico.IPAMBlock {
	o := &calico.IPAMBlock{
		TypeMeta:   metav1.TypeMeta{APIVersion: calico.Group + "/v3", Kind: "IPAMBlock"},
		ObjectMeta: metav1.ObjectMeta{Name: BlockName(cidr)},
		Spec: calico.IPAMBlockSpec{
			CIDR:                        cidr.String(),
			StrictAffinity:              b.strict,
			Allocations:                 make([]*int, len(b.allocations)),
			Unallocated:                 slices.Clone(b.unallocated),
			Attributes:                  []calico.AllocationAttribute{},
			SequenceNumber:              b.seq,
			SequenceNumberForAllocation: b.seqMap(),
		},
	}
	if o.Spec.Unallocated == nil {
		o.Spec.Unallocated = []int{}
	}
	if b.affinity != nil {
		s := *b.affinity
		o.Spec.Affinity = &s
	}
	if b.claimTime != nil && !b.claimTime.IsZero() {
		t := metav1.NewTime(*b.claimTime)
		o.Spec.AffinityClaimTime = &t
	}
	for i, a := range b.allocations {
		if a != nil {
			v := *a
			o.Spec.Allocations[i] = &v
		}
	}
	for _, a := range b.attrs {
		ra := calico.AllocationAttribute{ActiveOwnerAttrs: maps.Clone(a.active), AlternateOwnerAttrs: maps.Clone(a.alternate)}
		if a.handle != nil {
			h := *a.handle
			ra.HandleID = &h
		}
		if a.releasedAt != nil {
			t := metav1.NewTime(*a.releasedAt)
			ra.ReleasedAt = &t
		}
		o.Spec.Attributes = append(o.Spec.Attributes, ra)
	}
	return o
}

var base32NoPad = base32.StdEncoding.WithPadding(base32.NoPadding)

// hostnameHash is the label value Calico uses to find a node's affinities:
// base32 (no padding) of SHA3-256 of the node name
// (libcalico-go lib/backend/model/block_affinity.go hashHostnameForLabel).
func hostnameHash(node string) string {
	h := sha3.Sum256([]byte(node))
	return base32NoPad.EncodeToString(h[:])
}

// Affinities renders the BlockAffinity resources, sorted by name.
func (m *IPAM) Affinities() []*calico.BlockAffinity {
	var out []*calico.BlockAffinity
	for k, a := range m.affs {
		out = append(out, renderAffinity(k, a))
	}
	sortAffinities(out)
	return out
}

func sortAffinities(out []*calico.BlockAffinity) {
	slices.SortFunc(out, func(a, b *calico.BlockAffinity) int { return strings.Compare(a.Name, b.Name) })
}

// renderAffinity is one affinity as a BlockAffinity resource.
func renderAffinity(k affKey, a *affinity) *calico.BlockAffinity {
	ver := "4"
	if k.cidr.Addr().Is6() {
		ver = "6"
	}
	return &calico.BlockAffinity{
		TypeMeta: metav1.TypeMeta{APIVersion: calico.Group + "/v3", Kind: "BlockAffinity"},
		ObjectMeta: metav1.ObjectMeta{
			Name: AffinityName(k.host, k.cidr),
			Labels: map[string]string{
				LabelHostnameHash: hostnameHash(k.host),
				LabelAffinityType: "host",
				LabelIPVersion:    ver,
			},
		},
		Spec: calico.BlockAffinitySpec{State: a.state, Node: k.host, Type: "host", CIDR: k.cidr.String()},
	}
}

// BlockUsage counts one block's ordinals. Capacity = Allocated + Reserved +
// Cooldown + Free; calicoctl's "in use" is Capacity - Free.
type BlockUsage struct {
	Name string
	CIDR netip.Prefix
	Node string // affinity, "" when none
	// Allocated addresses held by workloads and tunnels (not the Windows
	// reservation); Borrowed is the part of them whose allocation names
	// another node.
	Allocated, Borrowed int
	Reserved            int // held by windows-reserved-ipam-handle
	Cooldown            int // released, waiting for IPCooldownSeconds
	Free                int // len(unallocated)
	Capacity            int
}

// Usage reports per-block counts in block order.
func (m *IPAM) Usage() []BlockUsage {
	var out []BlockUsage
	for _, cidr := range m.sortedBlocks() {
		b := m.blocks[cidr]
		u := BlockUsage{Name: BlockName(cidr), CIDR: cidr, Node: b.host(), Free: len(b.unallocated), Capacity: b.numAddresses()}
		for _, a := range b.allocations {
			switch {
			case a == nil:
			case b.isReserved(*a):
				u.Reserved++
			case b.attrs[*a].releasedAt != nil:
				u.Cooldown++
			default:
				u.Allocated++
				if n := b.attrs[*a].active[AttrNode]; n != "" && n != u.Node {
					u.Borrowed++
				}
			}
		}
		out = append(out, u)
	}
	return out
}

// BlockOf returns the node's affine blocks (name order).
func (m *IPAM) BlockOf(node string) []netip.Prefix { return m.affineBlocks(node, 4) }
