package migrate

import (
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// BenchmarkMigrateReachComparisons: the comparisons of a five-step
// migration of a 1,000-node cluster with the reach difference, as the plan
// makes them (each step's twin derived from the one before, fresh twins
// per op), without the builds, the derivations and the final check. CPU
// per op from getrusage, the garbage collector's included, and each
// step's as <step>-cpu-ms/op. HYBRID_BENCH_MIGRATE_NODES overrides the
// size.
func BenchmarkMigrateReachComparisons(b *testing.B) {
	snap := benchSnapshot(b, 1000)
	c, err := engine.Build(snap)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		b.Fatal(err)
	}
	chain, ids := []*model.Cluster{c}, []string{}
	for _, st := range m.Steps {
		if st.Cluster != nil {
			chain = append(chain, st.Cluster)
			ids = append(ids, st.ID)
		}
	}
	b.ResetTimer()
	defer cpuMetric(b)()
	steps := make([]time.Duration, len(ids))
	for b.Loop() {
		prev := diff.NewTwin(chain[0])
		for i, next := range chain[1:] {
			t := diff.NewTwin(next)
			start := cputime.Now()
			if _, err := diff.CompareTwins(prev, t, diff.Options{}); err != nil {
				b.Fatal(err)
			}
			steps[i] += cputime.Now() - start
			prev = t
		}
	}
	for i, d := range steps {
		b.ReportMetric(float64(d.Milliseconds())/float64(b.N), ids[i]+"-cpu-ms/op")
	}
}
