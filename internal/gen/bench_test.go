package gen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// The benchmark ladder. HYBRID_BENCH_NODES lists the rungs by node count
// ("100,1000,5000"; default 100); each rung scales the rest with the nodes
// the way Kubernetes' limits relate (5,000 nodes: 150,000 pods, 10,000
// Services), with 10% Windows nodes, 2,000 policies at the top and one
// namespace per 10 nodes.
//
// Each rung comes in up to three inputs:
//   - dump: Node objects and every workload pod with its node and address
//     (--plain-nodes --observed-ips), what `kubectl get -o yaml` of a live
//     cluster gives; measured at every rung, and decoded from JSON too
//     (dump-json: one v1 List, as `-o json` writes it);
//   - hosts: the Cluster kind with observed pods (--observed-ips), where
//     the twin derives the nodes and each node's Calico tunnel address;
//   - scheduled: the Cluster kind with controllers only, where the twin
//     schedules every pod and runs IPAM for it.
//
// hosts and scheduled grew quadratically in the twin (IPAM per node and the
// scheduler per pod scanned the whole cluster); they are near-linear now and
// measured up to HYBRID_BENCH_QUADRATIC_MAX nodes (default 5000, every rung
// of the documented ladder).
//
// Metrics besides ns/op, B/op and allocs/op:
//   - cpu-ms/op: user and system CPU time of the process per op (getrusage),
//     which other processes on a shared machine do not inflate;
//   - peak-heap-MB: the largest HeapAlloc sampled (runtime.ReadMemStats
//     every 10 ms) while the stage ran, its live input included;
//   - x-decode: the stage's CPU time over the CPU time load.Load takes to
//     decode the same input (BenchmarkLoad's result; it runs first), or wall
//     times when CPU time is not available;
//   - nodes, pods, services, policies: the rung's size, for the table.
//
// scripts/bench.sh runs the ladder and writes the table.

func ladder() []int {
	spec := os.Getenv("HYBRID_BENCH_NODES")
	if spec == "" {
		spec = "100"
	}
	var out []int
	for _, f := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' }) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func quadraticMax() int {
	if n, err := strconv.Atoi(os.Getenv("HYBRID_BENCH_QUADRATIC_MAX")); err == nil {
		return n
	}
	return 5000
}

// Input modes of a rung.
const (
	modeDump      = "dump"
	modeDumpJSON  = "dump-json" // the dump as one JSON List (-o json)
	modeHosts     = "hosts"
	modeScheduled = "scheduled"
)

// rungOptions sizes a rung from its node count.
func rungOptions(nodes int, mode string) Options {
	return Options{
		Nodes:        nodes,
		WindowsNodes: nodes / 10,
		Namespaces:   max(1, nodes/10),
		Pods:         30 * nodes,
		Services:     2 * nodes,
		Policies:     2 * nodes / 5,
		Seed:         1,
		ObservedIPs:  mode != modeScheduled,
		PlainNodes:   mode == modeDump || mode == modeDumpJSON,
		Format:       map[bool]Format{true: FormatJSON, false: FormatYAML}[mode == modeDumpJSON],
	}
}

// rung is one prepared input: generated once per process.
type rung struct {
	o      Options
	dir    string
	bytes  int64
	genDur time.Duration
	// loadDur and loadCPU are the wall and CPU time to decode the input,
	// the x-decode denominator: BenchmarkLoad's per op once it ran, else
	// one timed load (wall only).
	loadDur, loadCPU time.Duration
	snap             *model.Snapshot
	// cluster is the built twin, for the stages after Build; kept once
	// built (the snapshot is then dropped).
	cluster *model.Cluster
	err     error
}

var (
	benchMu    sync.Mutex
	benchRungs = map[string]*rung{}
	benchRoot  string
)

func rungName(o Options) string {
	mode := modeScheduled
	switch {
	case o.PlainNodes && o.ObservedIPs && o.Format == FormatJSON:
		mode = modeDumpJSON
	case o.PlainNodes && o.ObservedIPs:
		mode = modeDump
	case o.ObservedIPs:
		mode = modeHosts
	}
	return fmt.Sprintf("nodes=%d/pods=%d/%s", o.Nodes, o.Pods, mode)
}

// prepare generates the rung's input once per process. With snap the
// decoded snapshot is kept live for the caller; without, it is dropped so
// that the stage's peak heap is its own.
func prepare(b *testing.B, o Options, snap bool) *rung {
	b.Helper()
	r := prepareLocked(b, o, snap)
	if !snap {
		r.snap = nil
		runtime.GC()
	}
	return r
}

func prepareLocked(b *testing.B, o Options, snap bool) *rung {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	key := rungName(o)
	// Only the current rung's snapshot stays live, so that peak heaps are
	// the rung's own.
	for k, r := range benchRungs {
		if k != key {
			r.snap, r.cluster = nil, nil
		}
	}
	if r, ok := benchRungs[key]; ok {
		if r.err != nil {
			b.Fatal(r.err)
		}
		if r.snap == nil && snap {
			var err error
			if r.snap, err = load.Load(loadOptions(r.dir)); err != nil {
				b.Fatal(err)
			}
		}
		return r
	}
	r := &rung{o: o}
	benchRungs[key] = r
	if benchRoot == "" {
		var err error
		if benchRoot, err = os.MkdirTemp("", "kubectl-hybrid-bench-"); err != nil {
			r.err = err
			b.Fatal(err)
		}
	}
	r.dir = filepath.Join(benchRoot, strings.ReplaceAll(key, "/", "_"))
	start := time.Now()
	if _, r.err = WriteDir(r.dir, o); r.err != nil {
		b.Fatal(r.err)
	}
	r.genDur = time.Since(start)
	entries, _ := os.ReadDir(r.dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			r.bytes += fi.Size()
		}
	}
	runtime.GC()
	start = time.Now()
	r.snap, r.err = load.Load(loadOptions(r.dir))
	r.loadDur = time.Since(start)
	if r.err != nil {
		b.Fatal(r.err)
	}
	return r
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// peakHeap samples HeapAlloc until stopped.
type peakHeap struct {
	stop, done chan struct{}
	max        uint64
	cpu0       time.Duration // CPU time when the stage started
}

func startPeak() *peakHeap {
	runtime.GC()
	p := &peakHeap{stop: make(chan struct{}), done: make(chan struct{})}
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p.max = max(p.max, ms.HeapAlloc)
	}
	sample()
	p.cpu0 = cputime.Now()
	go func() {
		defer close(p.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return p
}

func (p *peakHeap) mb() float64 {
	close(p.stop)
	<-p.done
	return float64(p.max) / (1 << 20)
}

// reportStage adds the rung's metrics to a finished stage.
func reportStage(b *testing.B, r *rung, peak *peakHeap, elapsed time.Duration) {
	if b.N == 0 {
		return
	}
	var cpu time.Duration
	if peak.cpu0 > 0 {
		cpu = (cputime.Now() - peak.cpu0) / time.Duration(b.N)
		b.ReportMetric(float64(cpu)/1e6, "cpu-ms/op")
	}
	b.ReportMetric(peak.mb(), "peak-heap-MB")
	if strings.HasPrefix(b.Name(), "BenchmarkLoad/") {
		r.loadDur, r.loadCPU = elapsed/time.Duration(b.N), cpu
	}
	switch {
	case cpu > 0 && r.loadCPU > 0:
		b.ReportMetric(float64(cpu)/float64(r.loadCPU), "x-decode")
	case r.loadDur > 0:
		b.ReportMetric(float64(elapsed)/float64(b.N)/float64(r.loadDur), "x-decode")
	}
	b.ReportMetric(float64(r.o.Nodes), "nodes")
	b.ReportMetric(float64(r.o.Pods), "pods")
	b.ReportMetric(float64(r.o.Services), "services")
	b.ReportMetric(float64(r.o.Policies), "policies")
}

// measure runs body b.N times as one stage of rung r and reports it
// (reportStage): allocations, peak heap, CPU and x-decode.
func measure(b *testing.B, r *rung, body func()) {
	b.ReportAllocs()
	peak := startPeak()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		body()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportStage(b, r, peak, elapsed)
}

// forEachRung runs f on every rung, for the input modes given; hosts and
// scheduled only up to quadraticMax nodes.
func forEachRung(b *testing.B, modes []string, f func(b *testing.B, o Options)) {
	for _, n := range ladder() {
		for _, mode := range modes {
			if (mode == modeHosts || mode == modeScheduled) && n > quadraticMax() {
				continue
			}
			o := rungOptions(n, mode)
			b.Run(rungName(o), func(b *testing.B) { f(b, o) })
		}
	}
}

// loadOptions load a rung as the commands' -f DIR does: without the
// generic Raw maps of modeled kinds, which only dump needs.
func loadOptions(dir string) load.Options {
	return load.Options{Filenames: []string{dir}, DropRaw: true}
}

// BenchmarkLoad decodes the rung with load.Load, as -f DIR does. It runs
// first: its time per op becomes the rung's x-decode denominator.
func BenchmarkLoad(b *testing.B) {
	forEachRung(b, []string{modeDump, modeDumpJSON, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := prepare(b, o, false)
		b.SetBytes(r.bytes)
		measure(b, r, func() {
			if _, err := load.Load(loadOptions(r.dir)); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkDecodePlain decodes the JSON dump with encoding/json into
// generic values and nothing else: the floor any tool reading the same
// file pays. Its x-decode is against the typed load of the same file.
func BenchmarkDecodePlain(b *testing.B) {
	forEachRung(b, []string{modeDumpJSON}, func(b *testing.B, o Options) {
		r := prepare(b, o, false)
		entries, err := os.ReadDir(r.dir)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(r.bytes)
		measure(b, r, func() {
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), ".json") {
					continue
				}
				data, err := os.ReadFile(filepath.Join(r.dir, e.Name()))
				if err != nil {
					b.Fatal(err)
				}
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatalf("%s: %v", e.Name(), err)
				}
			}
		})
	})
}

// BenchmarkGenerate writes the rung's directory (cluster.yaml and the
// kubelet patch).
func BenchmarkGenerate(b *testing.B) {
	forEachRung(b, []string{modeDump, modeDumpJSON}, func(b *testing.B, o Options) {
		r := prepare(b, o, false)
		dir := b.TempDir()
		b.SetBytes(r.bytes)
		measure(b, r, func() {
			if _, err := WriteDir(dir, o); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkBuild runs engine.BuildOwned on the decoded snapshot, as the
// commands do.
func BenchmarkBuild(b *testing.B) {
	forEachRung(b, []string{modeDump, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := prepare(b, o, true)
		// engine.BuildOwned takes the snapshot, as the commands do: each
		// iteration needs its own, loaded before the stage is measured
		// (with -benchtime Nx all N are held while it runs).
		snaps := []*model.Snapshot{r.snap}
		r.snap = nil
		for len(snaps) < b.N {
			s, err := load.Load(loadOptions(r.dir))
			if err != nil {
				b.Fatal(err)
			}
			snaps = append(snaps, s)
		}
		i := 0
		measure(b, r, func() {
			c, err := engine.BuildOwned(snaps[i])
			snaps[i] = nil
			i++
			if err != nil {
				b.Fatal(err)
			}
			if len(c.Rejected) > 0 {
				b.Fatalf("%d objects rejected, the first: %s", len(c.Rejected), c.Rejected[0].Message)
			}
		})
	})
}

// BenchmarkGetPods prints every pod as `get pods -A -o wide` does, on a
// built cluster.
func BenchmarkGetPods(b *testing.B) {
	forEachRung(b, []string{modeDump}, func(b *testing.B, o Options) {
		r := built(b, o)
		c := r.cluster
		req := report.Request{Args: []string{"pods"}, Options: report.Options{AllNamespaces: true, Output: report.OutputWide, Now: epoch.Add(48 * time.Hour)}}
		measure(b, r, func() {
			if _, err := report.Get(io.Discard, c, req); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// built returns the rung's built twin, building it once per process; the
// decoded snapshot is dropped once the twin exists, so that the later
// stages' peak heaps hold the twin (their live input) and not the snapshot.
func built(b *testing.B, o Options) *rung {
	b.Helper()
	r := prepare(b, o, false)
	if r.cluster != nil {
		return r
	}
	r = prepare(b, o, true)
	c, err := engine.BuildOwned(r.snap)
	if err != nil {
		b.Fatal(err)
	}
	r.cluster, r.snap = c, nil
	runtime.GC()
	return r
}

// BenchmarkCompile compiles both dataplanes for every node of the built
// twin, internal/dataplane/linux and windows Compile, holding every node's
// result: each Windows node holds its plan, and kube-proxy's model is held
// once (windows.Node renders its objects when read; RenderEach measures
// that).
func BenchmarkCompile(b *testing.B) {
	forEachRung(b, []string{modeDump, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := built(b, o)
		measure(b, r, func() {
			lx, err := linux.Compile(r.cluster)
			if err != nil {
				b.Fatal(err)
			}
			win, err := windows.Compile(r.cluster)
			if err != nil {
				b.Fatal(err)
			}
			if len(lx)+len(win) < o.Nodes {
				b.Fatalf("compiled %d Linux and %d Windows nodes of %d", len(lx), len(win), o.Nodes)
			}
		})
	})
}

// BenchmarkCompileEach compiles the same as BenchmarkCompile — every Linux
// node (linux.Compile), then every Windows node — but Windows nodes one at
// a time through windows.Compiler, dropping each result: the time of
// compiling every node with the memory of one, as trace compiles the
// Windows nodes it crosses.
func BenchmarkCompileEach(b *testing.B) {
	forEachRung(b, []string{modeDump, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := built(b, o)
		measure(b, r, func() {
			lx, err := linux.Compile(r.cluster)
			if err != nil {
				b.Fatal(err)
			}
			if n := eachWindowsNode(b, r.cluster, nil); len(lx)+n < o.Nodes {
				b.Fatalf("compiled %d Linux and %d Windows nodes of %d", len(lx), n, o.Nodes)
			}
		})
	})
}

// BenchmarkRenderEach compiles every Windows node one at a time and makes
// all its HNS objects and VFP ports, as `get loadbalancers` of every node
// would: each node's kube-proxy state is a load balancer per service port
// and an endpoint per backend of the whole cluster, so this stage is
// Windows nodes × (Services + endpoints), the size of what every Windows
// node's HNS holds.
func BenchmarkRenderEach(b *testing.B) {
	forEachRung(b, []string{modeDump}, func(b *testing.B, o Options) {
		r := built(b, o)
		measure(b, r, func() {
			objects := 0
			eachWindowsNode(b, r.cluster, func(n *windows.Node) {
				objects += len(n.Endpoints()) + len(n.LoadBalancers()) + len(n.Ports())
			})
			if objects == 0 {
				b.Fatal("no HNS objects made")
			}
		})
	})
}

// eachWindowsNode compiles every Windows node through one windows.Compiler,
// hands it to f (if any) and drops it; it returns how many it compiled.
func eachWindowsNode(b *testing.B, c *model.Cluster, f func(*windows.Node)) int {
	wc, err := windows.NewCompiler(c)
	if err != nil {
		b.Fatal(err)
	}
	win := 0
	for _, n := range c.Nodes {
		if n.Labels["kubernetes.io/os"] != "windows" {
			continue
		}
		wn, err := wc.Node(n)
		if err != nil || wn == nil {
			b.Fatalf("node %s: %v", n.Name, err)
		}
		if f != nil {
			f(wn)
		}
		wc.Drop(n)
		win++
	}
	return win
}

// BenchmarkCheck runs every rule of internal/check on the built twin, as
// `check -f DIR` does after building.
func BenchmarkCheck(b *testing.B) {
	forEachRung(b, []string{modeDump, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := built(b, o)
		measure(b, r, func() {
			rep, err := check.Run(r.cluster, check.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if len(rep.Rules) == 0 {
				b.Fatal("no rules ran")
			}
		})
	})
}

// traceBatch is how many traces one op of BenchmarkTrace walks.
const traceBatch = 101

// BenchmarkTrace walks single connections through the compiled dataplanes,
// as `trace SRC DST` does once its engine exists (trace.New, which
// compiles the dataplanes, runs once outside the timer; BenchmarkCompile
// measures that). One op walks traceBatch different pairs — parse the
// source and target, then Trace — timing each; ns/op, B/op, allocs/op and
// cpu-ms/op are then per trace, ns/op the median, max-trace-ms the slowest.
func BenchmarkTrace(b *testing.B) {
	forEachRung(b, []string{modeDump, modeHosts, modeScheduled}, func(b *testing.B, o Options) {
		r := built(b, o)
		e, err := trace.New(r.cluster)
		if err != nil {
			b.Fatal(err)
		}
		pairs, err := TracePairs(r.cluster, traceBatch)
		if err != nil {
			b.Fatal(err)
		}
		durs := make([]time.Duration, 0, traceBatch*b.N)
		b.ReportAllocs()
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		peak := startPeak()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			for _, pr := range pairs {
				t0 := time.Now()
				src, err := e.ParseSource(pr[0], "default")
				if err != nil {
					b.Fatalf("source %s: %v", pr[0], err)
				}
				dst, err := e.ParseTarget(pr[1], "default")
				if err != nil {
					b.Fatalf("target %s: %v", pr[1], err)
				}
				res := e.Trace(src, dst, trace.TCP, e.DefaultPort(dst, trace.TCP))
				durs = append(durs, time.Since(t0))
				if res.Outcome == "" {
					b.Fatalf("%s -> %s: no outcome", pr[0], pr[1])
				}
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		n := b.N * traceBatch
		slices.Sort(durs)
		reportStage(b, r, peak, elapsed)
		// Per trace, overriding the per-batch figures.
		if cpu := cputime.Now() - peak.cpu0; peak.cpu0 > 0 {
			b.ReportMetric(float64(cpu)/1e6/float64(n), "cpu-ms/op")
			if r.loadCPU > 0 {
				b.ReportMetric(float64(cpu)/float64(n)/float64(r.loadCPU), "x-decode")
			}
		}
		b.ReportMetric(float64(durs[len(durs)/2]), "ns/op")
		b.ReportMetric(float64(durs[len(durs)-1])/1e6, "max-trace-ms")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(n), "B/op")
		b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n), "allocs/op")
	})
}

// BenchmarkReach computes `reach -A` over the whole rung, as the command
// does once its engine exists (trace.New runs outside the timer;
// BenchmarkCompile measures that): every class of pods to every class at
// each port it serves and to every Service port. Dump input only: hosts
// and scheduled give the same classes on other addresses.
func BenchmarkReach(b *testing.B) {
	forEachRung(b, []string{modeDump}, func(b *testing.B, o Options) {
		r := built(b, o)
		e, err := trace.New(r.cluster)
		if err != nil {
			b.Fatal(err)
		}
		var m *reach.Matrix
		measure(b, r, func() {
			if m, err = reach.Compute(e, reach.Options{AllNamespaces: true}); err != nil {
				b.Fatal(err)
			}
		})
		if m.NumCells() == 0 || len(m.Stats.Mismatches) > 0 {
			b.Fatalf("%d cells, mismatches %q", m.NumCells(), m.Stats.Mismatches)
		}
		b.ReportMetric(float64(m.Stats.Classes), "classes")
		b.ReportMetric(float64(m.NumCells()), "cells")
		b.ReportMetric(float64(m.Stats.Stored), "held-cells")
		b.ReportMetric(float64(m.Stats.Templates), "templates")
		b.ReportMetric(float64(m.Stats.Traces), "traces")
	})
}
