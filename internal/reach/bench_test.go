package reach

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// genEngine builds a cluster of internal/gen's shape (apps of 1-8
// replicas, 30 pods per node, 10% Windows nodes, the generator's policy
// mix) with the given number of workload pods.
func genEngine(tb testing.TB, pods int) *trace.Engine {
	tb.Helper()
	dir := genDir(tb, pods, 1)
	t0 := time.Now()
	snap, err := load.Load(load.Options{Filenames: []string{filepath.Join(dir)}})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		tb.Fatal(err)
	}
	t1 := time.Now()
	e, err := trace.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("gen %d pods: load+build %v, trace.New %v", pods, t1.Sub(t0), time.Since(t1))
	return e
}

// genDir writes a cluster of genEngine's shape, drawn with seed, into a
// temporary directory.
func genDir(tb testing.TB, pods int, seed uint64) string {
	tb.Helper()
	nodes := max(4, pods/30)
	dir := tb.TempDir()
	o := gen.Options{Nodes: nodes, WindowsNodes: nodes / 10, Namespaces: max(1, nodes/10), Pods: pods,
		Services: 2 * nodes, Policies: 2 * nodes / 5, Seed: seed, ObservedIPs: true, PlainNodes: true}
	if _, err := gen.WriteDir(dir, o); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BenchmarkReachSynthetic10k is `reach -A` over the 10,000-pod synthetic
// cluster (synthEngine): 200 namespaces of 45 Linux pods behind Services
// with ingress and egress policies, 50 Windows Deployments, on 126 nodes.
func BenchmarkReachSynthetic10k(b *testing.B) {
	e := synthEngine(b)
	b.ResetTimer()
	var m *Matrix
	for i := 0; i < b.N; i++ {
		var err error
		if m, err = Compute(e, Options{AllNamespaces: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	report(b, m)
}

// BenchmarkReachSyntheticLarge is `reach -A` over the synthetic cluster
// scaled by HYBRID_REACH_APPS namespaces of 90 Linux pods (and a Windows
// Deployment of 20 in every fourth) on HYBRID_REACH_APPS Linux and a tenth
// as many Windows workers: 1600 gives about 150,000 pods in 2,000 classes.
// Skipped unless HYBRID_REACH_APPS is set (building takes a while).
func BenchmarkReachSyntheticLarge(b *testing.B) {
	apps, _ := strconv.Atoi(os.Getenv("HYBRID_REACH_APPS"))
	if apps <= 0 {
		b.Skip("set HYBRID_REACH_APPS (1600: about 150,000 pods)")
	}
	t0 := time.Now()
	e, err := buildEngine(synthetic(apps, apps/10, apps, 90, 20), widePool)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d pods in %v", len(e.Cluster().Pods), time.Since(t0))
	b.ResetTimer()
	var m *Matrix
	for i := 0; i < b.N; i++ {
		if m, err = Compute(e, Options{AllNamespaces: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	report(b, m)
}

func report(b *testing.B, m *Matrix) {
	b.ReportMetric(float64(m.Stats.Pods), "pods")
	b.ReportMetric(float64(m.Stats.Classes), "classes")
	b.ReportMetric(float64(m.NumCells()), "cells")
	b.ReportMetric(float64(m.Stats.Stored), "held-cells")
	b.ReportMetric(float64(m.Stats.Traces), "traces")
	b.Logf("%d pods, %d classes, %d node groups, %d×%d cells, %d traces, %d mismatches",
		m.Stats.Pods, m.Stats.Classes, m.Stats.NodeGroups, len(m.Sources), len(m.Destinations), m.Stats.Traces, len(m.Stats.Mismatches))
}

// BenchmarkReachGen is `reach -A` over a cluster of internal/gen's shape
// with HYBRID_REACH_PODS workload pods (default 10,000): apps of 1-8
// replicas, so about one class per 4 pods; HYBRID_REACH_FROM (a --from
// filter, e.g. ns/messaging-27) limits the rows. At 150,000 pods the
// shape has some 35,000 classes: the whole matrix would be over a billion
// cells, so filter the rows.
func BenchmarkReachGen(b *testing.B) {
	pods := 10000
	if s := os.Getenv("HYBRID_REACH_PODS"); s != "" {
		pods, _ = strconv.Atoi(s)
	}
	e := genEngine(b, pods)
	opt := Options{AllNamespaces: true, Workers: runtime.GOMAXPROCS(0)}
	if s := os.Getenv("HYBRID_REACH_FROM"); s != "" {
		f, err := classes.ParseFilter(s, "default")
		if err != nil {
			b.Fatal(err)
		}
		opt.From = []classes.Filter{f}
	}
	b.ResetTimer()
	var m *Matrix
	for i := 0; i < b.N; i++ {
		var err error
		m, err = Compute(e, opt)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	report(b, m)
}
