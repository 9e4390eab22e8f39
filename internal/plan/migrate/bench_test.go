package migrate

import (
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// beforeMigration is a generated Linux-only cluster with the Calico
// settings a migration starts from (gen's BeforeMigration: VXLANCrossSubnet,
// BGP on, strictAffinity off, no Windows dataplane, no services endpoint),
// loaded as check and plan migrate load their input: the modeled kinds as
// typed objects only (load.Options.DropRaw).
func beforeMigration(b testing.TB, nodes int) *model.Snapshot {
	b.Helper()
	return gentest.Snapshot(b, beforeMigrationOptions(nodes), load.Options{DropRaw: true})
}

// benchSnapshot is beforeMigration of HYBRID_BENCH_MIGRATE_NODES nodes,
// else of the benchmark's default size.
func benchSnapshot(b *testing.B, nodes int) *model.Snapshot {
	b.Helper()
	if s := os.Getenv("HYBRID_BENCH_MIGRATE_NODES"); s != "" {
		if _, err := fmt.Sscan(s, &nodes); err != nil {
			b.Fatal(err)
		}
	}
	return beforeMigration(b, nodes)
}

// beforeMigrationOptions size the generated cluster for N nodes: 30 pods
// with observed addresses, 2 Services and 0.4 policies per node.
func beforeMigrationOptions(nodes int) gen.Options {
	o := gentest.Shape(nodes)
	o.BeforeMigration = true
	return o
}

// BenchmarkMigratePlan: a five-step migration of a 1,000-node cluster
// (30,000 pods) against one `check` of it, both from the loaded input:
// check builds the twin and runs the rules; the plan builds the base twin,
// then each step's twin, compares consecutive twins and runs check on the
// last. HYBRID_BENCH_MIGRATE_NODES overrides the size.
func BenchmarkMigratePlan(b *testing.B) {
	snap := benchSnapshot(b, 1000)
	b.Run("check", func(b *testing.B) {
		defer cpuMetric(b)()
		for b.Loop() {
			c, err := engine.Build(snap)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := check.Run(c, check.Options{ExpectWindows: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name string
		opts diff.Options
	}{{"plan-no-reach", diff.Options{NoReach: true}}, {"plan", diff.Options{}}} {
		b.Run(tc.name, func(b *testing.B) {
			defer cpuMetric(b)()
			for b.Loop() {
				c, err := engine.Build(snap)
				if err != nil {
					b.Fatal(err)
				}
				m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{Diff: tc.opts})
				if err != nil {
					b.Fatal(err)
				}
				if len(m.Steps) != 5 {
					b.Fatalf("%d steps, want 5", len(m.Steps))
				}
			}
		})
	}
}

// BenchmarkMigrateStepTwin: one step's twin (the first, strictAffinity)
// built from scratch against derived from the base twin (engine.Derive),
// and the twin with one observed pod changed derived from the base twin;
// HYBRID_BENCH_MIGRATE_NODES sets the size (1,000 by default).
func BenchmarkMigrateStepTwin(b *testing.B) {
	snap := benchSnapshot(b, 1000)
	base, err := engine.Build(snap)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compute(plan.Input{Cluster: base, Snapshot: snap}, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		b.Fatal(err)
	}
	objs, err := plan.Decode(m.Steps[0].File, m.Steps[0].Body)
	if err != nil {
		b.Fatal(err)
	}
	next := plan.Layer(snap, objs...)
	// One observed pod changed (a label), as serve sees a watched pod.
	var onePod *model.Snapshot
	for _, o := range snap.Objects {
		if p, ok := o.Typed.(*corev1.Pod); ok {
			cp := *o
			q := p.DeepCopy()
			q.Labels = map[string]string{"changed": "yes"}
			cp.Typed, cp.Raw = q, nil
			onePod = plan.Layer(snap, &cp)
			break
		}
	}
	for _, tc := range []struct {
		name string
		twin func() (*model.Cluster, error)
	}{
		{"build", func() (*model.Cluster, error) { return engine.Build(next) }},
		{"derive", func() (*model.Cluster, error) { return engine.Derive(base, snap, next) }},
		{"derive-one-pod-changed", func() (*model.Cluster, error) { return engine.Derive(base, snap, onePod) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer cpuMetric(b)()
			for b.Loop() {
				if _, err := tc.twin(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuMetric reports cpu-ms/op, the process's user and system time per op
// (getrusage), which other work on a shared machine does not inflate.
func cpuMetric(b *testing.B) func() {
	start := cputime.Now()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cputime.Now()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
	}
}
