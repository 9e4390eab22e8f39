package diff

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// A twin's plane shares the Felix calculation of the twin compared before
// it only when Felix reads the same objects of both (felix.SameInputs),
// and the reach difference is the one fresh twins give: a policy, a pod's
// labels or ports, read by Felix, give the twin a calculation of its own.
func TestATwinSharesTheFelixCalculationOfTheOneBeforeOnlyWhenFelixReadsTheSameObjects(t *testing.T) {
	shared, own := 0, 0
	for _, windows := range []int{0, 1} {
		base := generated(t, windows)
		for _, tc := range reachCases(t, base) {
			if tc.reaches == fails || tc.onWindows && windows == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s, %d Windows nodes", tc.name, windows), func(t *testing.T) {
				before, after := tc.clusters(base)
				tb, ta := NewTwin(before), NewTwin(after)
				// The before twin's plane is made first, as a plan's
				// previous step has made it.
				pb, err := tb.plane()
				if err != nil {
					t.Fatal(err)
				}
				r, err := CompareTwins(tb, ta, Options{NoDataplane: true})
				if err != nil {
					t.Fatal(err)
				}
				pa, err := ta.plane()
				if err != nil {
					t.Fatal(err)
				}
				same := felix.SameInputs(before, after)
				if got := pa.Felix() == pb.Felix(); got != same {
					t.Errorf("the after twin shares the calculation: %v, want %v", got, same)
				}
				if same {
					shared++
				} else {
					own++
				}
				want := forcedReach(t, before, after)
				if r.Reach == nil {
					t.Fatal("no reach difference")
				}
				if !reflect.DeepEqual(r.Reach.Changes, want.Changes) || !reflect.DeepEqual(r.Reach.Notes, want.Notes) {
					t.Errorf("reach difference:\n%+v\nfrom fresh twins:\n%+v", r.Reach, want)
				}
			})
		}
	}
	if shared == 0 || own == 0 {
		t.Errorf("%d cases share the calculation, %d do not: the test must hold both", shared, own)
	}
}
