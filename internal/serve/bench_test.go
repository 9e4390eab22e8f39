package serve

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// BenchmarkWarmTrace answers GET /api/v1/trace from a warm twin of a
// generated cluster (1,000 nodes, 30,000 workload pods; KH_BENCH_NODES=N
// for another size), over the handler without the network: ns/op is one
// answer, JSON included, over pairs whose nodes are compiled already.
// cold-trace-ms is what a `trace` process spends on the same input before
// and for its answer, in process (load, BuildOwned, trace.New, the trace),
// measured once; ratio is cold over warm (wall clock). cpu-ms/op and
// cold-cpu-ms are the same in CPU time.
func BenchmarkWarmTrace(b *testing.B) {
	nodes := 1000
	if v, err := strconv.Atoi(os.Getenv("KH_BENCH_NODES")); err == nil && v > 10 {
		nodes = v
	}
	dir := b.TempDir()
	if _, err := gen.WriteDir(dir, gen.Options{Nodes: nodes, WindowsNodes: nodes / 10, Namespaces: max(1, nodes/10),
		Pods: 30 * nodes, Services: 2 * nodes, Policies: 2 * nodes / 5, Seed: 1, ObservedIPs: true}); err != nil {
		b.Fatal(err)
	}
	in := load.Options{Filenames: []string{dir}, DropRaw: true}
	s := New(Options{Read: func(context.Context) (*model.Snapshot, error) { return load.Load(in) }})
	if err := s.Rebuild(context.Background()); err != nil {
		b.Fatal(err)
	}
	pairs := benchPairs(b, s.cur.Load().c)

	// The cold path of one `trace` process, for the first pair.
	start, startCPU := time.Now(), cpuTime()
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
	cold, coldCPU := time.Since(start), cpuTime()-startCPU
	snap, c, e = nil, nil, nil

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
	b.ResetTimer()
	warmCPU := cpuTime()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", targets[i%len(targets)], nil))
		if rec.Code != 200 {
			b.Fatalf("%d", rec.Code)
		}
	}
	b.StopTimer()
	warm := b.Elapsed() / time.Duration(b.N)
	// CPU time, unlike the wall clock, leaves out the other processes of a
	// shared machine.
	if perOp := (cpuTime() - warmCPU) / time.Duration(b.N); perOp > 0 {
		b.ReportMetric(float64(perOp.Microseconds())/1000, "cpu-ms/op")
		b.ReportMetric(float64(coldCPU.Milliseconds()), "cold-cpu-ms")
	}
	b.ReportMetric(float64(cold.Milliseconds()), "cold-trace-ms")
	b.ReportMetric(float64(cold)/float64(warm), "ratio")
	b.ReportMetric(float64(nodes), "nodes")
}

// benchPairs are pod-to-Service, pod-to-pod and pod-to-name pairs spread
// over the cluster.
func benchPairs(b testing.TB, c *model.Cluster) [][2]string {
	var pods []*corev1.Pod
	for _, p := range c.Pods {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && !p.Spec.HostNetwork && workloadNS(p.Namespace) {
			pods = append(pods, p)
		}
	}
	var svcs []*corev1.Service
	for _, s := range c.Services {
		if len(s.Spec.Selector) > 0 && workloadNS(s.Namespace) {
			svcs = append(svcs, s)
		}
	}
	if len(pods) < 2 || len(svcs) == 0 {
		b.Fatalf("%d workload pods and %d Services: nothing to trace", len(pods), len(svcs))
	}
	var out [][2]string
	for i := range 51 {
		src := pods[(i*7919)%len(pods)]
		from := "pod/" + src.Namespace + "/" + src.Name
		switch i % 3 {
		case 0:
			s := svcs[(i*104729)%len(svcs)]
			out = append(out, [2]string{from, "svc/" + s.Namespace + "/" + s.Name})
		case 1:
			p := pods[(i*15485863)%len(pods)]
			out = append(out, [2]string{from, "pod/" + p.Namespace + "/" + p.Name})
		default:
			s := svcs[(i*32452843)%len(svcs)]
			out = append(out, [2]string{from, s.Name + "." + s.Namespace + ".svc.cluster.local"})
		}
	}
	return out
}

func workloadNS(ns string) bool {
	return ns != "kube-system" && !strings.HasPrefix(ns, "calico") && !strings.HasPrefix(ns, "tigera")
}
