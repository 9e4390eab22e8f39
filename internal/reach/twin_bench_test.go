package reach

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// BenchmarkReachTwin is one twin's reachability matrix as `plan migrate`
// and `diff` make it: a plane over the built cluster, the trace engine
// over it (trace.FromPlane: nodes compile as walks cross them), and the
// matrix. The cluster has BenchmarkMigratePlan's shape (Linux only, 30
// pods per node, 2 Services per node, 0.4 policies per node) with
// HYBRID_REACH_TWIN_NODES nodes (default 300). CPU per op from getrusage,
// the garbage collector's included.
func BenchmarkReachTwin(b *testing.B) {
	nodes := 300
	if s := os.Getenv("HYBRID_REACH_TWIN_NODES"); s != "" {
		if _, err := fmt.Sscan(s, &nodes); err != nil {
			b.Fatal(err)
		}
	}
	c, err := engine.Build(gentest.Snapshot(b, gentest.Shape(nodes), load.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := cputime.Now()
	var m *Matrix
	for i := 0; i < b.N; i++ {
		p, err := plane.New(c)
		if err != nil {
			b.Fatal(err)
		}
		e, err := trace.FromPlane(p)
		if err != nil {
			b.Fatal(err)
		}
		if m, err = Compute(e, Options{AllNamespaces: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cputime.Now()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
	b.StopTimer()
	report(b, m)
}
