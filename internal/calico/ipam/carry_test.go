package ipam

import (
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// A clone and the model it came from go their own ways: calls on one
// leave the other's state as it was, and a clone (or a model restored
// from one) answers every later call exactly as the original does.
func TestACloneAnswersAsTheOriginalAndNeitherChangesTheOther(t *testing.T) {
	for seed := int64(1); seed <= 25; seed++ {
		o := newRandomRun(t, seed)
		o.run(0, 150, 1000)
		before := o.render()
		c1, c2 := o.m.Clone(), o.m.Clone()
		restored, err := New(nil, o.m.cfg)
		if err != nil {
			t.Fatal(err)
		}
		restored.pools = o.m.pools
		restored.Restore(c2)

		c1Handles, c2Handles := handleIndex(c1), handleIndex(c2)
		orig := o.on(o.m, seed+1000)
		orig.run(150, 150, 10)
		if !maps.Equal(handleIndex(c1), c1Handles) {
			t.Fatalf("seed %d: calls on the original changed its clone's handle index", seed)
		}
		if got := o.on(c1, 0).render(); !slices.Equal(got, before) {
			t.Fatalf("seed %d: calls on the original changed its clone", seed)
		}
		if got := o.on(c2, 0).render(); !slices.Equal(got, before) {
			t.Fatalf("seed %d: calls on the original changed a clone", seed)
		}
		for name, m := range map[string]*IPAM{"the clone": c1, "the restored model": restored} {
			run := o.on(m, seed+1000)
			run.run(150, 150, 10)
			if !slices.Equal(run.log, orig.log) {
				for i := range min(len(run.log), len(orig.log)) {
					if run.log[i] != orig.log[i] {
						t.Fatalf("seed %d: %s answers line %d differently:\n got: %s\nwant: %s", seed, name, i, run.log[i], orig.log[i])
					}
				}
				t.Fatalf("seed %d: %s logs %d lines, the original %d", seed, name, len(run.log), len(orig.log))
			}
		}
		if got := o.on(c2, 0).render(); !slices.Equal(got, before) || !maps.Equal(handleIndex(c2), c2Handles) {
			t.Fatalf("seed %d: the restored model's calls changed the clone it was restored from", seed)
		}
		// What the restored model reads in place of copying (its
		// handles) was left as it was too: the source still answers as
		// the original did.
		again := o.on(c2, seed+1000)
		again.run(150, 150, 10)
		if !slices.Equal(again.log, orig.log) {
			t.Fatalf("seed %d: the restored model's calls changed how the clone it was restored from answers", seed)
		}
	}
}

// StrictAffinityRead says whether a specific address's assignment depended
// on strictAffinity.
func TestStrictAffinityReadIsSetByWhatReadsIt(t *testing.T) {
	tests := []struct {
		name string
		do   func(m *IPAM) error
		want bool
	}{
		{"an observed address in a new block", func(m *IPAM) error {
			return m.AssignObserved("a", mustAddr("172.21.0.5"), "h1", PodAttrs("a", "ns", "p"))
		}, false},
		{"an observed address in the node's own block", func(m *IPAM) error {
			if err := m.AssignObserved("a", mustAddr("172.21.0.5"), "h1", PodAttrs("a", "ns", "p")); err != nil {
				return err
			}
			return m.AssignObserved("a", mustAddr("172.21.0.6"), "h2", PodAttrs("a", "ns", "q"))
		}, false},
		{"an observed address in another node's block", func(m *IPAM) error {
			if err := m.AssignObserved("a", mustAddr("172.21.0.5"), "h1", PodAttrs("a", "ns", "p")); err != nil {
				return err
			}
			return m.AssignObserved("b", mustAddr("172.21.0.6"), "h2", PodAttrs("b", "ns", "q"))
		}, true},
		{"an observed address on a Windows node", func(m *IPAM) error {
			return m.AssignObserved("w", mustAddr("172.21.0.70"), "h1", PodAttrs("w", "ns", "p"))
		}, true},
		{"a pod's automatic assignment", func(m *IPAM) error {
			_, err := m.AssignPod("a", "h1", PodAttrs("a", "ns", "p"))
			return err
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(t, strict(), labPool())
			m.SetNode("a", linux)
			m.SetNode("b", linux)
			m.SetNode("w", windows)
			if err := tt.do(m); err != nil && !tt.want {
				t.Fatal(err)
			}
			if got := m.StrictAffinityRead(); got != tt.want {
				t.Errorf("StrictAffinityRead: %v, want %v", got, tt.want)
			}
		})
	}
}

// BlocksReusing and AffinitiesReusing render what Blocks and Affinities
// render, taking the other state's objects only for blocks and affinities
// that render alike; block.equal is DeepEqual of the two renderings.
func TestReusingRendersAsBlocksAndAffinitiesDoAndSharesOnlyWhatIsEqual(t *testing.T) {
	sharedSome, freshSome := false, false
	for seed := int64(1); seed <= 25; seed++ {
		o := newRandomRun(t, seed)
		o.run(0, 120, 1000)
		prev := o.m.Clone()
		prevBlocks, prevAffs := prev.Blocks(), prev.Affinities()
		// One affinity rendered in another state: it must not be taken.
		if len(prevAffs) > 0 {
			cp := *prevAffs[0]
			cp.Spec.State = StatePending
			prevAffs[0] = &cp
		}
		o.on(o.m, seed+1000).run(120, 40, 1000)
		m := o.m

		got, want := m.BlocksReusing(prev, prevBlocks), m.Blocks()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: BlocksReusing renders differently from Blocks", seed)
		}
		was := map[*calico.IPAMBlock]bool{}
		for _, b := range prevBlocks {
			was[b] = true
		}
		for _, b := range got {
			if was[b] {
				sharedSome = true
			} else {
				freshSome = true
			}
		}
		gotAffs, wantAffs := m.AffinitiesReusing(prevAffs), m.Affinities()
		if !reflect.DeepEqual(gotAffs, wantAffs) {
			t.Fatalf("seed %d: AffinitiesReusing renders differently from Affinities", seed)
		}
		if len(prevAffs) > 0 {
			for _, a := range gotAffs {
				if a == prevAffs[0] {
					t.Fatalf("seed %d: an affinity in another state was taken", seed)
				}
			}
		}
		for cidr, b := range m.blocks {
			p := prev.blocks[cidr]
			if p == nil {
				continue
			}
			if eq, deep := b.equal(p), reflect.DeepEqual(renderBlock(cidr, b), renderBlock(cidr, p)); eq != deep {
				t.Fatalf("seed %d, block %s: equal %v, DeepEqual of the renderings %v", seed, cidr, eq, deep)
			}
		}
	}
	if !sharedSome || !freshSome {
		t.Errorf("shared blocks: %v, fresh blocks: %v; the runs should give both", sharedSome, freshSome)
	}
}

// isReservedHandle is strings.ToLower(h) == WindowsReservedHandle.
func TestTheReservedHandleIsMatchedAsLoweredHandles(t *testing.T) {
	for _, h := range []string{
		"", WindowsReservedHandle, "WINDOWS-RESERVED-IPAM-HANDLE", "Windows-Reserved-Ipam-Handle",
		"windows-reserved-ipam-handl", "windows-reserved-ipam-handlee", "wİndows-reserved-ipam-handle",
		"windows-reserved-ipam-handle\r", "k8s-pod-network.0123", "vxlan-tunnel-addr-node-1", "wındows-reserved-ipam-handle",
	} {
		if got, want := isReservedHandle(h), strings.ToLower(h) == WindowsReservedHandle; got != want {
			t.Errorf("isReservedHandle(%q) = %v, strings.ToLower says %v", h, got, want)
		}
	}
}

func FuzzIsReservedHandle(f *testing.F) {
	f.Add(WindowsReservedHandle)
	f.Add("WİNDOWS-reserved-ipam-handle")
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := isReservedHandle(h), strings.ToLower(h) == WindowsReservedHandle; got != want {
			t.Errorf("isReservedHandle(%q) = %v, strings.ToLower says %v", h, got, want)
		}
	})
}

// block.equal tells apart two blocks that differ in any one field, as
// DeepEqual of their renderings does.
func TestBlockEqualTellsApartBlocksThatDifferInAnyField(t *testing.T) {
	cidr := netip.MustParsePrefix("10.0.0.0/28")
	base := func() *block {
		b := newBlock(cidr, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		host := affinityOf("a")
		b.affinity = &host
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		b.claimTime = &at
		for i, h := range []string{"h1", "h2"} {
			if _, err := b.autoAssign(1, &h, "a", PodAttrs("a", "ns", fmt.Sprint("p", i)), true); err != nil {
				t.Fatal(err)
			}
		}
		return b
	}
	other := "x"
	later := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		change func(b *block)
	}{
		{"nothing", func(*block) {}},
		{"the sequence number", func(b *block) { b.seq++ }},
		{"the deprecated strictAffinity", func(b *block) { b.strict = true }},
		{"the affinity", func(b *block) { h := affinityOf("b"); b.affinity = &h }},
		{"no affinity", func(b *block) { b.affinity = nil }},
		{"the claim time", func(b *block) { b.claimTime = &later }},
		{"an allocation's attribute", func(b *block) { v := 1 - *b.allocations[0]; b.allocations[0] = &v }},
		{"an allocation more", func(b *block) { v := 0; b.allocations[5] = &v }},
		{"the free list's order", func(b *block) { b.unallocated[0], b.unallocated[1] = b.unallocated[1], b.unallocated[0] }},
		{"an ordinal's sequence number", func(b *block) { b.setSeq(b.seqFor[0].ord, b.seqFor[0].seq+1) }},
		{"an ordinal's sequence number more", func(b *block) { b.setSeq("9", 1) }},
		{"a handle", func(b *block) { b.attrs[0].handle = &other }},
		{"no handle", func(b *block) { b.attrs[0].handle = nil }},
		{"an attribute's value", func(b *block) { b.attrs[0].active = PodAttrs("a", "ns", "other") }},
		{"an empty attribute map for none", func(b *block) { b.attrs[0].alternate = map[string]string{} }},
		{"a release time", func(b *block) { b.attrs[0].releasedAt = &later }},
		{"an attribute more", func(b *block) { b.attrs = append(b.attrs, attribute{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base()
			b := a.copy(true)
			tt.change(b)
			deep := reflect.DeepEqual(renderBlock(cidr, a), renderBlock(cidr, b))
			if deep != (tt.name == "nothing") {
				t.Fatalf("the renderings are equal: %v", deep)
			}
			if got := a.equal(b); got != deep {
				t.Errorf("equal: %v, DeepEqual of the renderings: %v", got, deep)
			}
		})
	}
}

// handleIndex is m's index of the first block of each handle, what it
// holds itself and what it reads of the state it was restored from.
func handleIndex(m *IPAM) map[string]netip.Prefix {
	out := maps.Clone(m.handlesBase)
	if out == nil {
		out = map[string]netip.Prefix{}
	}
	maps.Copy(out, m.byHandle)
	return out
}
