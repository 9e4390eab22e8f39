package diff_test

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan/migrate"
)

// A migration's steps that change only what the reach matrix does not
// read (the IPAM configuration; the Installation's bgp once every pool has
// VXLAN, with calico-node's pods rolled out in place; the Windows
// dataplane on a cluster without Windows nodes) compute no matrix, and the
// matrices computed anyway do not differ.
func TestAMigrationsStepsComputeTheReachMatricesOnlyWhereTheirInputsDiffer(t *testing.T) {
	snap, err := load.Load(load.Options{Filenames: []string{"../../examples/main-cluster"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.Compute(plan.Input{Cluster: c, Snapshot: snap}, migrate.Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		t.Fatal(err)
	}
	computed := map[string]bool{
		migrate.StepStrictAffinity:   false,
		migrate.StepEncapsulation:    true,
		migrate.StepBGP:              false,
		migrate.StepServicesEndpoint: true,
		migrate.StepWindowsDataplane: false,
	}
	prev := diff.NewTwin(c)
	seen := 0
	for _, st := range m.Steps {
		if st.Cluster == nil {
			continue
		}
		seen++
		next := diff.NewTwin(st.Cluster)
		// The comparison makes the after twin's digest from the before one's.
		if _, err := diff.CompareTwins(prev, next, diff.Options{NoReach: true, NoDataplane: true}); err != nil {
			t.Fatal(err)
		}
		want, ok := computed[st.ID]
		if !ok {
			t.Fatalf("step %s is not in the table", st.ID)
		}
		if got := !diff.SameReachInputs(prev, next); got != want {
			t.Errorf("step %s: the reach matrices computed %v, want %v", st.ID, got, want)
		}
		if !want {
			rd, err := diff.ForcedReach(prev, next)
			if err != nil {
				t.Fatal(err)
			}
			if len(rd.Changes) != 0 || len(rd.Notes) != 0 {
				t.Errorf("step %s: the matrices computed anyway differ: %+v", st.ID, rd)
			}
		}
		prev = next
	}
	if seen != len(computed) {
		t.Errorf("%d steps with a twin, want %d", seen, len(computed))
	}
}
