package migrate

import (
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// migrationOf plans the migration of the main cluster or of a generated
// Linux-only cluster turned back to before one.
func migrationOf(t *testing.T, name string) (*model.Cluster, *Plan) {
	t.Helper()
	var in plan.Input
	switch name {
	case "main-cluster":
		in = input(t, false, mainCluster)
	default:
		snap := beforeMigration(t, 12)
		c, err := engine.Build(snap)
		if err != nil {
			t.Fatal(err)
		}
		in = plan.Input{Cluster: c, Snapshot: snap}
	}
	m, err := Compute(in, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		t.Fatal(err)
	}
	return in.Cluster, m
}

// A step's node differences are found by comparing the inputs of each
// node's parts and rendering only the nodes whose inputs differ; they must
// be exactly those found by rendering every part of every node.
func TestEachStepsNodeDifferencesEqualThoseFromRenderingEveryNode(t *testing.T) {
	for _, name := range []string{"main-cluster", "generated"} {
		t.Run(name, func(t *testing.T) {
			prev, m := migrationOf(t, name)
			compared := 0
			for _, st := range m.Steps {
				if st.Cluster == nil || st.Changes == nil {
					continue
				}
				full, err := diff.Compare(prev, st.Cluster, diff.Options{NoReach: true, EveryPart: true})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(full.Nodes, st.Changes.Nodes) {
					t.Errorf("step %s: nodes by inputs %+v\nby rendering every node %+v", st.ID, st.Changes.Nodes, full.Nodes)
				}
				prev = st.Cluster
				compared++
			}
			if compared < 3 {
				t.Fatalf("%d steps compared, want at least 3", compared)
			}
		})
	}
}
