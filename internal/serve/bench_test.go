package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// benchNodes is the size of the serve benchmarks' cluster:
// HYBRID_BENCH_SERVE_NODES (KH_BENCH_NODES before it), default 1,000.
func benchNodes() int {
	for _, v := range []string{"HYBRID_BENCH_SERVE_NODES", "KH_BENCH_NODES"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 10 {
			return n
		}
	}
	return 1000
}

// benchInput writes internal/gen's shape at nodes nodes (a tenth
// Windows, 30 workload pods a node, 2 Services a node, observed pod
// addresses) as a live cluster holds it: Node objects, one JSON file.
func benchInput(b *testing.B, nodes int) load.Options {
	b.Helper()
	dir := b.TempDir()
	o := gentest.Shape(nodes)
	o.WindowsNodes, o.PlainNodes, o.Format = nodes/10, true, gen.FormatJSON
	if _, err := gen.WriteDir(dir, o); err != nil {
		b.Fatal(err)
	}
	return load.Options{Filenames: []string{dir}, DropRaw: true}
}

// BenchmarkWarmTrace answers GET /api/v1/trace from a warm twin of a
// generated cluster (benchInput; HYBRID_BENCH_SERVE_NODES=N for another
// size), over the handler without the network: ns/op is one answer, JSON
// included, over pairs whose nodes are compiled already; median-ms is the
// median answer. cold-trace-ms is what a `trace` process spends on the
// same input before and for its answer, in process (load, BuildOwned,
// trace.New, the trace; the process's start and exit come on top),
// measured once; ratio is cold over the median warm answer (wall clock).
// cpu-ms/op and cold-cpu-ms are the same in CPU time.
func BenchmarkWarmTrace(b *testing.B) {
	nodes := benchNodes()
	in := benchInput(b, nodes)
	s := New(Options{Read: func(context.Context) (*model.Snapshot, error) { return load.Load(in) }})
	if err := s.Rebuild(context.Background()); err != nil {
		b.Fatal(err)
	}
	pairs := benchPairs(b, s.cur.Load().c)

	// The cold path of one `trace` process, for the first pair.
	start, startCPU := time.Now(), cputime.Now()
	snap, err := load.Load(in)
	if err != nil {
		b.Fatal(err)
	}
	c, err := engine.BuildOwned(snap)
	if err != nil {
		b.Fatal(err)
	}
	e, err := trace.New(c)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := query.RunTrace(e, query.Trace{Src: pairs[0][0], Dst: pairs[0][1], Proto: trace.TCP}); err != nil {
		b.Fatal(err)
	}
	cold, coldCPU := time.Since(start), cputime.Now()-startCPU
	snap, c, e = nil, nil, nil
	runtime.GC()

	h := s.Handler()
	targets := make([]string, len(pairs))
	for i, p := range pairs {
		targets[i] = "/api/v1/trace?src=" + url.QueryEscape(p[0]) + "&dst=" + url.QueryEscape(p[1])
		// Warm: the nodes the walk crosses are compiled on first use.
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", targets[i], nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d %s", targets[i], rec.Code, rec.Body.String())
		}
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	warmCPU := cputime.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", targets[i%len(targets)], nil))
		if rec.Code != 200 {
			b.Fatalf("%d", rec.Code)
		}
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	median := medianOf(took)
	// CPU time, unlike the wall clock, leaves out the other processes of a
	// shared machine.
	if perOp := (cputime.Now() - warmCPU) / time.Duration(b.N); perOp > 0 {
		b.ReportMetric(float64(perOp.Microseconds())/1000, "cpu-ms/op")
		b.ReportMetric(float64(coldCPU.Milliseconds()), "cold-cpu-ms")
	}
	b.ReportMetric(float64(median.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(cold.Milliseconds()), "cold-trace-ms")
	b.ReportMetric(float64(cold)/float64(median), "ratio")
	b.ReportMetric(float64(nodes), "nodes")
}

func medianOf(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// podUpdates makes changes of the input's workload pods as the watch
// delivers them: each pod's unit is its document, and each change is the
// pod as the API server would send it with status.podIP moved (to an
// address outside every pool on odd turns, where check's HYB074 reports
// it; back on even turns), decoded by the watch's code.
type podUpdates struct {
	pods  []*corev1.Pod
	units []string
	ips   []string
}

func newPodUpdates(b *testing.B, snap *model.Snapshot, n int) *podUpdates {
	b.Helper()
	u := &podUpdates{}
	for _, o := range snap.Objects {
		p, ok := o.Typed.(*corev1.Pod)
		if !ok || p.Status.PodIP == "" || p.Spec.HostNetwork || !gen.IsWorkloadNamespace(p.Namespace) {
			continue
		}
		id, _ := unitOf(o)
		u.pods, u.units, u.ips = append(u.pods, p), append(u.units, id), append(u.ips, p.Status.PodIP)
		if len(u.pods) == n {
			break
		}
	}
	if len(u.pods) == 0 {
		b.Fatal("no observed workload pod to update")
	}
	return u
}

// change is the i-th update: of pod i%len, the turn i/len.
func (u *podUpdates) change(b *testing.B, i int) (Change, *corev1.Pod) {
	k := i % len(u.pods)
	p := u.pods[k].DeepCopy()
	p.Status.PodIP = u.ips[k]
	if (i/len(u.pods))%2 == 0 {
		p.Status.PodIP = fmt.Sprintf("192.0.2.%d", 1+k%250)
	}
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	obj, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		b.Fatal(err)
	}
	un := &unstructured.Unstructured{Object: obj}
	un.SetAPIVersion("v1")
	un.SetKind("Pod")
	up := live.DecodeUpdate(un, corev1.SchemeGroupVersion.WithResource("pods"), "Pod")
	if up.Err != nil {
		b.Fatal(up.Err)
	}
	return Change{Unit: u.units[k], Objects: up.Objects}, p
}

// BenchmarkPodUpdateToCheck times, for one pod update at a time, the
// wait from the watch delivering it (Server.Follow) until
// GET /api/v1/check answers with it (the pod's address outside the pools
// named by HYB074, or no longer), polling every millisecond; debounce
// 1ms. rebuild-ms is the patched build and swap (Server.Update's log),
// check-ms the first check of the new twin. HYBRID_BENCH_SERVE_NODES
// picks the size.
func BenchmarkPodUpdateToCheck(b *testing.B) {
	nodes := benchNodes()
	in := benchInput(b, nodes)
	s := New(Options{Read: func(context.Context) (*model.Snapshot, error) { return load.Load(in) }, Debounce: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ups := newPodUpdates(b, s.cur.Load().snap, 1)
	h := s.Handler()
	check := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/check", nil))
		if rec.Code != 200 {
			b.Fatalf("check: %d %s", rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	check()
	var rebuilds, checks []time.Duration
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	startCPU := cputime.Now()
	for i := 0; i < b.N; i++ {
		ch, p := ups.change(b, i)
		outside := strings.HasPrefix(p.Status.PodIP, "192.0.2.")
		before := s.cur.Load()
		t0 := time.Now()
		s.Follow(ch)
		for {
			if cur := s.cur.Load(); cur != before {
				c0 := time.Now()
				body := check()
				checks = append(checks, time.Since(c0))
				rebuilds = append(rebuilds, cur.took)
				if strings.Contains(body, p.Name) != outside {
					b.Fatalf("update %d: the new twin's check does not say %s is at %s", i, p.Name, p.Status.PodIP)
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(medianOf(took).Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(medianOf(rebuilds).Microseconds())/1000, "rebuild-ms")
	b.ReportMetric(float64(medianOf(checks).Microseconds())/1000, "check-ms")
	b.ReportMetric(float64((cputime.Now()-startCPU).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(nodes), "nodes")
}

// BenchmarkHeapOverUpdates feeds HYBRID_BENCH_SERVE_UPDATES pod updates
// (default 10,000) in HYBRID_BENCH_SERVE_BATCHES batches (default 100):
// the first of 100 updates, the rest shared by the others; one patched
// rebuild per batch (Server.Update), each followed by a check and a trace
// as a client would ask. heap-100-MB is the live heap (after a GC) after
// the first batch, heap-end-MB after the last, growth their ratio. The
// updates cycle through 1,000 pods.
func BenchmarkHeapOverUpdates(b *testing.B) {
	nodes := benchNodes()
	updates, batches := 10000, 100
	if n, err := strconv.Atoi(os.Getenv("HYBRID_BENCH_SERVE_UPDATES")); err == nil && n > 0 {
		updates = n
	}
	if n, err := strconv.Atoi(os.Getenv("HYBRID_BENCH_SERVE_BATCHES")); err == nil && n > 0 {
		batches = n
	}
	in := benchInput(b, nodes)
	s := New(Options{Read: func(context.Context) (*model.Snapshot, error) { return load.Load(in) }})
	ctx := context.Background()
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	ups := newPodUpdates(b, s.cur.Load().snap, 1000)
	pairs := benchPairs(b, s.cur.Load().c)
	h := s.Handler()
	ask := func() {
		for _, target := range []string{"/api/v1/check", "/api/v1/trace?src=" + url.QueryEscape(pairs[0][0]) + "&dst=" + url.QueryEscape(pairs[0][1])} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			if rec.Code != 200 {
				b.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
			}
		}
	}
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	b.ResetTimer()
	for range b.N {
		var first, end float64
		per := (updates - 100) / max(1, batches-1)
		for batch := range batches {
			from, to := 0, 100
			if batch > 0 {
				from, to = 100+(batch-1)*per, 100+batch*per
				if batch == batches-1 {
					to = updates
				}
			}
			for i := from; i < to; i++ {
				ch, _ := ups.change(b, i)
				s.Follow(ch)
			}
			if err := s.Update(ctx); err != nil {
				b.Fatal(err)
			}
			ask()
			if batch == 0 {
				first = heap()
			}
		}
		end = heap()
		b.ReportMetric(first, "heap-100-MB")
		b.ReportMetric(end, "heap-end-MB")
		b.ReportMetric(end/first, "growth")
	}
	b.ReportMetric(float64(updates), "updates")
	b.ReportMetric(float64(nodes), "nodes")
}

// benchPairs are pod-to-Service, pod-to-pod and pod-to-name pairs spread
// over the cluster.
func benchPairs(tb testing.TB, c *model.Cluster) [][2]string {
	tb.Helper()
	pairs, err := gen.TracePairs(c, 51)
	if err != nil {
		tb.Fatal(err)
	}
	return pairs
}
