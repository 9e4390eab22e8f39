package ipam

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"
)

// randomOps runs a random sequence of IPAM calls and logs every result and,
// every few steps, the rendered blocks and affinities.
func randomOps(t *testing.T, seed int64) []string {
	t.Helper()
	o := newRandomRun(t, seed)
	o.run(0, 400, 25)
	o.snapshot()
	return o.log
}

// randomRun is a model over random pools, configuration and nodes, and
// the random calls made on it so far.
type randomRun struct {
	m       *IPAM
	r       *rand.Rand
	hosts   []string
	handles []string
	addrs   []netip.Addr
	log     []string
}

func newRandomRun(t *testing.T, seed int64) *randomRun {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	cfg := DefaultConfig()
	cfg.StrictAffinity = r.Intn(3) > 0
	cfg.IPCooldownSeconds = []int{0, 0, 30, 120}[r.Intn(4)]
	cfg.MaxBlocksPerHost = []int{0, 0, 2, 3}[r.Intn(4)]
	cfg.Now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pools := []Pool{
		{Name: "a", CIDR: netip.MustParsePrefix("10.0.0.0/22"), BlockSize: 27, VXLANMode: "Always"},
		{Name: "b", CIDR: netip.MustParsePrefix("10.1.0.0/23"), BlockSize: 28, VXLANMode: "CrossSubnet", NodeSelector: "zone == 'b'"},
	}
	m, err := New(pools, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := &randomRun{m: m, r: r}
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("node-%d", i)
		l := map[string]string{"kubernetes.io/os": "linux"}
		if i%4 == 3 {
			l["kubernetes.io/os"] = "windows"
		}
		if i%3 == 0 {
			l["zone"] = "b"
		}
		m.SetNode(name, l)
		o.hosts = append(o.hosts, name)
	}
	return o
}

// on is the run continued on another model (a copy of this one's state)
// with its own random source.
func (o *randomRun) on(m *IPAM, seed int64) *randomRun {
	return &randomRun{m: m, r: rand.New(rand.NewSource(seed)), hosts: o.hosts,
		handles: slices.Clone(o.handles), addrs: slices.Clone(o.addrs)}
}

func (o *randomRun) snapshot() {
	o.log = append(o.log, o.render()...)
}

// render is the model's state as its readers see it.
func (o *randomRun) render() []string {
	b, _ := json.Marshal(o.m.Blocks())
	a, _ := json.Marshal(o.m.Affinities())
	out := []string{string(b), string(a), fmt.Sprint(o.m.Usage())}
	for _, h := range o.hosts {
		out = append(out, fmt.Sprint(h, o.m.BlockOf(h)))
	}
	return out
}

// run makes steps random calls (numbered from first), rendering the state
// every every steps.
func (o *randomRun) run(first, steps, every int) {
	m, r := o.m, o.r
	pick := func() string { return o.hosts[r.Intn(len(o.hosts))] }
	for step := first; step < first+steps; step++ {
		var res string
		switch op := r.Intn(10); op {
		case 0, 1, 2:
			h := fmt.Sprintf("k8s-pod-network.%d", step)
			if r.Intn(8) == 0 {
				h += "\rjunk"
			}
			n := pick()
			a, err := m.AssignPod(n, h, PodAttrs(n, "ns", fmt.Sprint("p", step)))
			o.handles = append(o.handles, h)
			if err == nil {
				o.addrs = append(o.addrs, a)
			}
			res = fmt.Sprint("AssignPod ", n, a, err)
		case 3:
			n := pick()
			a := netip.AddrFrom4([4]byte{10, byte(r.Intn(2)), byte(r.Intn(4)), byte(r.Intn(256))})
			h := fmt.Sprintf("k8s-pod-network.o%d", step)
			err := m.AssignObserved(n, a, h, PodAttrs(n, "ns", fmt.Sprint("o", step)))
			o.handles = append(o.handles, h)
			if err == nil {
				o.addrs = append(o.addrs, a)
			}
			res = fmt.Sprint("AssignObserved ", n, a, err)
		case 4:
			n := pick()
			a, err := m.VXLANTunnelAddress(n)
			o.handles = append(o.handles, VXLANTunnelHandle(n))
			res = fmt.Sprint("VXLANTunnelAddress ", n, a, err)
		case 5:
			if len(o.addrs) == 0 {
				continue
			}
			var rel []netip.Addr
			for k := r.Intn(3) + 1; k > 0; k-- {
				rel = append(rel, o.addrs[r.Intn(len(o.addrs))])
			}
			res = fmt.Sprint("ReleaseIPs ", rel, m.ReleaseIPs(rel...))
		case 6:
			if len(o.handles) == 0 {
				continue
			}
			h := o.handles[r.Intn(len(o.handles))]
			res = fmt.Sprint("ReleaseByHandle ", h, m.ReleaseByHandle(h))
		case 7:
			d := time.Duration(r.Intn(90)) * time.Second
			m.Advance(d)
			res = fmt.Sprint("Advance ", d)
		case 8:
			if len(o.handles) == 0 {
				continue
			}
			h := o.handles[r.Intn(len(o.handles))]
			res = fmt.Sprint("IPsByHandle ", h, m.IPsByHandle(h))
		case 9:
			n := pick()
			if r.Intn(2) == 0 {
				c, err := m.EnsureWindowsBlock(n)
				res = fmt.Sprint("EnsureWindowsBlock ", n, c, err)
			} else {
				// Relabel: pools stop or start selecting the node.
				l := map[string]string{"kubernetes.io/os": m.nodes[n].OS()}
				if r.Intn(2) == 0 {
					l["zone"] = "b"
				}
				m.SetNode(n, l)
				res = fmt.Sprint("SetNode ", n, l)
			}
		}
		o.log = append(o.log, res)
		if step%every == 0 {
			o.snapshot()
		}
	}
}

// TestIndexesMatchTheScans runs random call sequences with the indexes and
// in-place reads (the default) and with the scans and copies they replace
// (referenceMode): every result and every rendered state must agree.
func TestIndexesMatchTheScans(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		got := randomOps(t, seed)
		referenceMode = true
		want := randomOps(t, seed)
		referenceMode = false
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d log lines, reference %d", seed, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("seed %d, line %d:\n got: %s\nwant: %s", seed, i, got[i], want[i])
			}
		}
	}
}

func TestAttributeEqualsIsDeepEqual(t *testing.T) {
	h1, h2, h3 := "a", "a", "b"
	now := time.Unix(0, 0)
	attrs := []attribute{
		{},
		{handle: &h1},
		{handle: &h3},
		{handle: &h1, active: map[string]string{}},
		{handle: &h1, active: map[string]string{"node": "x"}},
		{handle: &h1, active: map[string]string{"node": "y"}},
		{handle: &h1, active: map[string]string{"node": "x", "pod": "p"}},
		{handle: &h1, active: map[string]string{"node": "x"}, alternate: map[string]string{}},
		{handle: &h1, active: map[string]string{"node": "x"}, releasedAt: &now},
		{active: map[string]string{"node": "x"}},
	}
	queries := []struct {
		h *string
		a map[string]string
	}{
		{nil, nil}, {&h2, nil}, {&h3, nil}, {&h2, map[string]string{}}, {&h2, map[string]string{"node": "x"}},
		{&h2, map[string]string{"node": "y"}}, {&h2, map[string]string{"node": "x", "pod": "p"}}, {nil, map[string]string{"node": "x"}},
		{&h2, map[string]string{"pod": "x"}},
	}
	for i, a := range attrs {
		for j, q := range queries {
			want := reflect.DeepEqual(a, attribute{handle: q.h, active: q.a})
			if got := a.equals(q.h, q.a); got != want {
				t.Errorf("attribute %d, query %d: equals %v, DeepEqual %v", i, j, got, want)
			}
		}
	}
}
