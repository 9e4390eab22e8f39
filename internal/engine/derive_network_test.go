package engine

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// genSnapshot is a small generated Linux cluster whose workload pods are
// observed with their node and address (strictAffinity on, VXLAN).
func genSnapshot(t *testing.T) *model.Snapshot {
	t.Helper()
	o := gen.Options{Nodes: 8, Namespaces: 2, Pods: 120, Services: 10, Policies: 2, Seed: 1, ObservedIPs: true}
	return gentest.Snapshot(t, o, load.Options{})
}

// smallGenSnapshot is a generated cluster of 4 nodes and 40 pods with
// observed addresses, for the derivation's guard tests.
func smallGenSnapshot(t *testing.T) *model.Snapshot {
	t.Helper()
	o := gen.Options{Nodes: 4, Namespaces: 1, Pods: 40, Services: 4, Seed: 1, ObservedIPs: true}
	return gentest.Snapshot(t, o, load.Options{})
}

// builtGen is genSnapshot and its full build.
func builtGen(t *testing.T) (*model.Snapshot, *model.Cluster) {
	t.Helper()
	base := genSnapshot(t)
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	return base, prev
}

// editFirst is s with a copy of its first object of kind changed by f.
func editFirst[T any](t *testing.T, s *model.Snapshot, kind string, f func(T)) *model.Snapshot {
	t.Helper()
	for _, o := range s.Objects {
		if o.Key.Kind != kind {
			continue
		}
		raw, err := json.Marshal(o.Typed)
		if err != nil {
			t.Fatal(err)
		}
		v := reflect.New(reflect.TypeOf(o.Typed).Elem())
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			t.Fatal(err)
		}
		typed := v.Interface().(T)
		f(typed)
		cp := *o
		cp.Typed, cp.Raw = v.Interface(), nil
		return layer(s, &cp)
	}
	t.Fatalf("no %s in the snapshot", kind)
	return nil
}

// beforeMigration is genSnapshot with the Calico settings a migration to
// Windows starts from: VXLANCrossSubnet, BGP on, no Windows dataplane.
func beforeMigration(t *testing.T) *model.Snapshot {
	return editFirst(t, genSnapshot(t), "Installation", func(in *operator.Installation) {
		cn := in.Spec.CalicoNetwork
		bgp := "Enabled"
		cn.BGP, cn.WindowsDataplane = &bgp, nil
		for i := range cn.IPPools {
			cn.IPPools[i].Encapsulation = "VXLANCrossSubnet"
		}
		in.Spec.ServiceCIDRs = nil
	})
}

func withStrictAffinity(on bool) func(t *testing.T, s *model.Snapshot) *model.Snapshot {
	return func(t *testing.T, s *model.Snapshot) *model.Snapshot {
		return editFirst(t, s, "IPAMConfiguration", func(c *calico.IPAMConfiguration) { c.Spec.StrictAffinity = on })
	}
}

func withPool(f func(p *operator.IPPool)) func(t *testing.T, s *model.Snapshot) *model.Snapshot {
	return func(t *testing.T, s *model.Snapshot) *model.Snapshot {
		return editFirst(t, s, "Installation", func(in *operator.Installation) { f(&in.Spec.CalicoNetwork.IPPools[0]) })
	}
}

// movePod is s with its first pod moved to a free address of a block that
// holds an observed address of a pod on node (its own node when node
// gives it back) in the twin of s.
func movePod(t *testing.T, s *model.Snapshot, node func(own string, c *model.Cluster) string) (*model.Snapshot, netip.Addr, netip.Addr) {
	t.Helper()
	c, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	var from, to netip.Addr
	next := editFirst(t, s, "Pod", func(p *corev1.Pod) {
		from = netip.MustParseAddr(p.Status.PodIP)
		host := node(p.Spec.NodeName, c)
		for _, q := range c.Pods {
			if q.Spec.NodeName != host || q.Spec.HostNetwork || !c.Observed(keyOf(q)) || q.Name == p.Name {
				continue
			}
			a := netip.MustParseAddr(q.Status.PodIP)
			for _, b := range c.IPAMBlocks {
				cidr := netip.MustParsePrefix(b.Spec.CIDR)
				if !cidr.Contains(a) || len(b.Spec.Unallocated) == 0 {
					continue
				}
				to = cidr.Addr()
				for range b.Spec.Unallocated[len(b.Spec.Unallocated)-1] {
					to = to.Next()
				}
				p.Status.PodIP = to.String()
				p.Status.PodIPs = []corev1.PodIP{{IP: to.String()}}
				return
			}
		}
		t.Fatalf("no block with a pod of %s has a free address", host)
	})
	return next, from, to
}

// sharedAddress is s with its first pod given the observed address of
// another pod on the same node, which Calico IPAM refuses for it.
func sharedAddress(t *testing.T, s *model.Snapshot) *model.Snapshot {
	t.Helper()
	c, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return editFirst(t, s, "Pod", func(p *corev1.Pod) {
		for _, q := range c.Pods {
			if q.Spec.NodeName == p.Spec.NodeName && q.Name != p.Name && !q.Spec.HostNetwork && c.Observed(keyOf(q)) {
				p.Status.PodIP = q.Status.PodIP
				p.Status.PodIPs = []corev1.PodIP{{IP: q.Status.PodIP}}
				return
			}
		}
		t.Fatal("no other observed pod on the node")
	})
}

func ownNode(own string, _ *model.Cluster) string { return own }

// otherNode is the first node but own with an observed pod.
func otherNode(own string, c *model.Cluster) string {
	for _, p := range c.Pods {
		if p.Spec.NodeName != own && !p.Spec.HostNetwork && c.Observed(keyOf(p)) {
			return p.Spec.NodeName
		}
	}
	return ""
}

// The network stage of a derivation restores IPAM's state after the
// observed history from the previous twin's only when that history reads
// the same, and shares the IPAMBlock and BlockAffinity objects that render
// alike; the derived twin always equals the full build.
func TestADerivationRestoresIPAMOnlyWhenTheObservedHistoryReadsTheSame(t *testing.T) {
	tests := []struct {
		name string
		base func(t *testing.T) *model.Snapshot
		next func(t *testing.T, s *model.Snapshot) *model.Snapshot
		// restored: the replay is restored; fresh: blocks (by CIDR) that
		// must not be the previous twin's objects.
		restored bool
		fresh    func(t *testing.T, s *model.Snapshot) []netip.Prefix
		// noneShared: every block changed.
		noneShared bool
	}{
		{
			name:     "strictAffinity turned off with no observed address in another node's block is restored",
			base:     genSnapshot,
			next:     withStrictAffinity(false),
			restored: true,
		},
		{
			name:     "the pool's encapsulation changed (only tunnel addresses read it) is restored",
			base:     beforeMigration,
			next:     withPool(func(p *operator.IPPool) { p.Encapsulation = "VXLAN" }),
			restored: true,
		},
		{
			name: "a Calico change after an observed address that did not fit (the replay noted it) is replayed",
			base: func(t *testing.T) *model.Snapshot { return sharedAddress(t, beforeMigration(t)) },
			next: withPool(func(p *operator.IPPool) { p.Encapsulation = "VXLAN" }),
		},
		{
			name:       "the pool's block size changed is replayed",
			base:       genSnapshot,
			next:       withPool(func(p *operator.IPPool) { bs := int32(27); p.BlockSize = &bs }),
			noneShared: true,
		},
		{
			name: "the pool's CIDR changed is replayed",
			base: genSnapshot,
			next: withPool(func(p *operator.IPPool) {
				// The first half of the pool.
				pfx := netip.MustParsePrefix(p.CIDR)
				p.CIDR = netip.PrefixFrom(pfx.Addr(), pfx.Bits()+1).String()
			}),
		},
		{
			name: "an observed pod's address moved inside its node's block is replayed, and that block rendered anew",
			base: genSnapshot,
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				next, _, _ := movePod(t, s, ownNode)
				return next
			},
			fresh: func(t *testing.T, s *model.Snapshot) []netip.Prefix {
				_, from, to := movePod(t, s, ownNode)
				return []netip.Prefix{netip.PrefixFrom(from, 26).Masked(), netip.PrefixFrom(to, 26).Masked()}
			},
		},
		{
			name: "strictAffinity turned on after an observed address was borrowed from another node's block is replayed",
			base: func(t *testing.T) *model.Snapshot {
				s, _, _ := movePod(t, withStrictAffinity(false)(t, genSnapshot(t)), otherNode)
				return s
			},
			next: withStrictAffinity(true),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base(t)
			prev, err := Build(base)
			if err != nil {
				t.Fatal(err)
			}
			next := tt.next(t, base)
			got := derivedAsBuilt(t, prev, base, next)
			if !sharesAPod(prev, got) {
				t.Fatal("the derivation reused no pod: a full build, which tests nothing here")
			}
			memo := networkMemo(got)
			if memo == nil {
				t.Fatal("the derived twin keeps no network memo")
			}
			if memo.restored != tt.restored {
				t.Errorf("replay restored: %v, want %v", memo.restored, tt.restored)
			}
			prevBlocks := map[*calico.IPAMBlock]bool{}
			for _, b := range prev.IPAMBlocks {
				prevBlocks[b] = true
			}
			shared := 0
			for _, b := range got.IPAMBlocks {
				if prevBlocks[b] {
					shared++
				}
			}
			if (shared == 0) != tt.noneShared {
				t.Errorf("%d of %d IPAMBlocks shared with the previous twin", shared, len(got.IPAMBlocks))
			}
			if tt.fresh != nil {
				for _, cidr := range tt.fresh(t, base) {
					for _, b := range got.IPAMBlocks {
						if b.Spec.CIDR == cidr.String() && prevBlocks[b] {
							t.Errorf("block %s changed but is the previous twin's object", cidr)
						}
					}
				}
			}
			if again, err := Build(base); err != nil || !reflect.DeepEqual(again, prev) {
				t.Errorf("Derive changed the previous twin (%v) in %s", err, differingField(again, prev))
			}
		})
	}
}

func sharesAPod(a, b *model.Cluster) bool {
	in := map[*corev1.Pod]bool{}
	for _, p := range a.Pods {
		in[p] = true
	}
	for _, p := range b.Pods {
		if in[p] {
			return true
		}
	}
	return false
}

// differingField names the first field of two clusters that differs.
func differingField(a, b *model.Cluster) string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			x, _ := json.Marshal(va.Field(i).Interface())
			y, _ := json.Marshal(vb.Field(i).Interface())
			n := min(len(x), len(y))
			at := n
			for j := 0; j < n; j++ {
				if x[j] != y[j] {
					at = j
					break
				}
			}
			lo := max(0, at-200)
			return va.Type().Field(i).Name + ":\n" + string(x[lo:min(len(x), at+200)]) + "\n" + string(y[lo:min(len(y), at+200)])
		}
	}
	return "(no field)"
}

// Each input the replay of the observed history reads, changed, stops the
// restore; strictAffinity only when the replay read it.
func TestEachInputTheReplayReadsStopsTheRestoreWhenItDiffers(t *testing.T) {
	pod := &corev1.Pod{}
	base := func() ipamHistory {
		return ipamHistory{
			pools:  []ipam.Pool{{Name: "p", CIDR: netip.MustParsePrefix("10.0.0.0/16"), BlockSize: 26, AllowedUses: []string{ipam.UseWorkload}}},
			cfg:    ipam.Config{AutoAllocateBlocks: true, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
			nodes:  []nodeJoin{{name: "a", os: "linux", joined: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), known: true}},
			blocks: []*calico.IPAMBlock{{Spec: calico.IPAMBlockSpec{CIDR: "10.0.0.0/26"}}},
			affs:   []*calico.BlockAffinity{{Spec: calico.BlockAffinitySpec{CIDR: "10.0.0.0/26", Node: "a"}}},
			pods:   []observedAddr{{pod: pod, node: "a", namespace: "ns", name: "p", uid: "u", addr: netip.MustParseAddr("10.0.0.5")}},
			quiet:  true,
		}
	}
	tests := []struct {
		name       string
		change     func(h *ipamHistory)
		strictRead bool
		want       bool
	}{
		{"nothing changed restores", func(*ipamHistory) {}, false, true},
		{"strictAffinity changed restores when the replay did not read it", func(h *ipamHistory) { h.strict = true }, false, true},
		{"strictAffinity changed replays when the replay read it", func(h *ipamHistory) { h.strict = true }, true, false},
		{"a pool's block size", func(h *ipamHistory) { h.pools[0].BlockSize = 27 }, false, false},
		{"a pool's allowed uses", func(h *ipamHistory) { h.pools[0].AllowedUses = []string{ipam.UseTunnel} }, false, false},
		{"a pool marked unallocatable", func(h *ipamHistory) { h.pools[0].Unallocatable = true }, false, false},
		{"the IP cooldown", func(h *ipamHistory) { h.cfg.IPCooldownSeconds = 5 }, false, false},
		{"the reference time", func(h *ipamHistory) { h.cfg.Now = h.cfg.Now.Add(time.Second) }, false, false},
		{"a node's OS", func(h *ipamHistory) { h.nodes[0].os = "windows" }, false, false},
		{"a node's join time", func(h *ipamHistory) { h.nodes[0].joined = h.nodes[0].joined.Add(time.Minute) }, false, false},
		{"a node more", func(h *ipamHistory) { h.nodes = append(h.nodes, nodeJoin{name: "b"}) }, false, false},
		{"an input IPAMBlock", func(h *ipamHistory) {
			h.blocks = []*calico.IPAMBlock{{Spec: calico.IPAMBlockSpec{CIDR: "10.0.0.64/26"}}}
		}, false, false},
		{"an input BlockAffinity", func(h *ipamHistory) {
			h.affs = []*calico.BlockAffinity{{Spec: calico.BlockAffinitySpec{CIDR: "10.0.0.0/26", Node: "b"}}}
		}, false, false},
		{"a pod's address", func(h *ipamHistory) { h.pods[0].addr = netip.MustParseAddr("10.0.0.6") }, false, false},
		{"a pod's node", func(h *ipamHistory) { h.pods[0].node = "b" }, false, false},
		{"a pod's namespace", func(h *ipamHistory) { h.pods[0].namespace = "other" }, false, false},
		{"a pod's name", func(h *ipamHistory) { h.pods[0].name = "q" }, false, false},
		{"a pod's UID (its handle)", func(h *ipamHistory) { h.pods[0].uid = "v" }, false, false},
		{"a pod more", func(h *ipamHistory) { h.pods = append(h.pods, h.pods[0]) }, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			was, now := base(), base()
			tt.change(&now)
			if got := was.replays(&now, tt.strictRead); got != tt.want {
				t.Errorf("replays: %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("a replay that said something is never restored", func(t *testing.T) {
		was, now := base(), base()
		was.quiet = false
		if was.replays(&now, false) {
			t.Error("a replay that noted something was restored")
		}
	})
}

// A derived twin shares with the previous one every object it built again
// unchanged (Nodes, Services, the rendered DaemonSets' pods), and none it
// changed.
func TestADerivedTwinSharesTheObjectsItBuiltAgainUnchanged(t *testing.T) {
	base, prev := builtGen(t)
	next := withStrictAffinity(false)(t, base)
	got := derivedAsBuilt(t, prev, base, next)
	if !sharesAPod(prev, got) {
		t.Fatal("the derivation reused no pod: a full build, which tests nothing here")
	}
	count := func(prev, got []any) (shared int) {
		was := map[any]bool{}
		for _, o := range prev {
			was[o] = true
		}
		for _, o := range got {
			if was[o] {
				shared++
			}
		}
		return shared
	}
	anys := func(s any) []any {
		v := reflect.ValueOf(s)
		out := make([]any, v.Len())
		for i := range out {
			out[i] = v.Index(i).Interface()
		}
		return out
	}
	for _, tt := range []struct {
		kind      string
		prev, got any
	}{
		{"Node", prev.Nodes, got.Nodes},
		{"Service", prev.Services, got.Services},
		{"Pod", prev.Pods, got.Pods},
		{"DaemonSet", prev.DaemonSets, got.DaemonSets},
	} {
		if n, all := count(anys(tt.prev), anys(tt.got)), reflect.ValueOf(tt.got).Len(); n != all {
			t.Errorf("%d of %d %ss shared", n, all, tt.kind)
		}
	}
	if got.IPAMConfig == prev.IPAMConfig {
		t.Error("the changed IPAMConfiguration is the previous twin's")
	}
	// The operator reports calico-windows Degraded without strict
	// affinity: that TigeraStatus changed, the others did not.
	if n := count(anys(prev.TigeraStatuses), anys(got.TigeraStatuses)); n == 0 || n == len(got.TigeraStatuses) {
		t.Errorf("%d of %d TigeraStatuses shared; the changed one must not be", n, len(got.TigeraStatuses))
	}
}

// Derivations from one twin may run at once (serve derives from the twin
// it holds): restoring IPAM's state and comparing blocks only read the
// previous twin's memo. Run with -race to see a write.
func TestTwoDerivationsFromOneTwinMayRunAtOnce(t *testing.T) {
	base, prev := builtGen(t)
	nexts := []*model.Snapshot{withStrictAffinity(false)(t, base), withStrictAffinity(false)(t, base)}
	got := make([]*model.Cluster, len(nexts))
	errs := make([]error, len(nexts))
	done := make(chan int)
	for i := range nexts {
		go func() {
			got[i], errs[i] = Derive(prev, base, nexts[i])
			done <- i
		}()
	}
	for range nexts {
		<-done
	}
	want, err := Build(nexts[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range nexts {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if m := networkMemo(got[i]); m == nil || !m.restored {
			t.Errorf("derivation %d did not restore IPAM's state", i)
		}
		if !reflect.DeepEqual(want, got[i]) {
			t.Errorf("derivation %d differs from Build in %s", i, differingField(want, got[i]))
		}
	}
}

// networkMemo is the network memo the build of c kept, nil if none.
func networkMemo(c *model.Cluster) *netMemo {
	if k := recall(c); k != nil {
		return k.net
	}
	return nil
}

// derivedAsBuilt is Derive(prev, base, next), held equal to Build(next).
func derivedAsBuilt(t *testing.T, prev *model.Cluster, base, next *model.Snapshot) *model.Cluster {
	t.Helper()
	want, err := Build(next)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Derive(prev, base, next)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("Derive differs from Build in %s", differingField(want, got))
	}
	return got
}

// A derivation whose observed pod addresses are the previous build's, the
// same pods in the same order, shares the previous build's list of them;
// one whose pod moved makes its own, which holds the move.
func TestADerivationSharesTheObservedAddressesOnlyWhileTheyAreThePreviousBuilds(t *testing.T) {
	tests := []struct {
		name   string
		next   func(t *testing.T, s *model.Snapshot) *model.Snapshot
		shared bool
	}{
		{name: "strictAffinity turned off shares them", next: withStrictAffinity(false), shared: true},
		{name: "an observed pod moved in its block does not", next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
			next, _, _ := movePod(t, s, ownNode)
			return next
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, prev := builtGen(t)
			next := tt.next(t, base)
			got := derivedAsBuilt(t, prev, base, next)
			was, now := networkMemo(prev).in.pods, networkMemo(got).in.pods
			if len(was) == 0 || len(now) == 0 {
				t.Fatal("no observed address in the history: the case tests nothing")
			}
			if shared := &was[0] == &now[0]; shared != tt.shared {
				t.Errorf("the observed addresses shared: %v, want %v", shared, tt.shared)
			}
			want, err := Build(next)
			if err != nil {
				t.Fatal(err)
			}
			if wanted := networkMemo(want).in.pods; !slices.Equal(addrsOf(wanted), addrsOf(now)) {
				t.Error("the derivation's observed addresses differ from the full build's")
			}
		})
	}
}

func addrsOf(h []observedAddr) []netip.Addr {
	out := make([]netip.Addr, len(h))
	for i, o := range h {
		out[i] = o.addr
	}
	return out
}
