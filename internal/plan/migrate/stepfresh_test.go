package migrate

import (
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
)

// A plan compares each step's twin with the previous one through twins it
// keeps (each digest reusing the previous one's hashes of the objects both
// twins share, each node part read once): every step's changes must equal
// a comparison of the same two clusters through fresh twins made after
// the whole plan. It also checks the assumption reuse rests on, that no
// later step changes an earlier step's twin, wherever such a change would
// alter what the earlier comparison reported (an object two twins share,
// changed in place after it was hashed).
func TestEachStepsChangesEqualAFreshComparisonAfterThePlan(t *testing.T) {
	for _, name := range []string{"main-cluster", "generated"} {
		t.Run(name, func(t *testing.T) {
			prev, m := migrationOf(t, name)
			compared := 0
			for _, st := range m.Steps {
				if st.Cluster == nil || st.Changes == nil {
					continue
				}
				fresh, err := diff.Compare(prev, st.Cluster, diff.Options{NoReach: true})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(fresh, st.Changes) {
					t.Errorf("step %s: the plan's changes %+v\na fresh comparison's %+v", st.ID, st.Changes, fresh)
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
