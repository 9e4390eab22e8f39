package diff

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A twin compared through the plane of the twin before it (a ConfigMap
// added: takeLinuxPlane) takes that twin's reach matrix, made on that
// plane, and makes no plane of its own; a twin whose reach inputs differ
// makes its own matrix. Either way both reach differences are the ones
// fresh twins give.
func TestATwinComparedThroughThePlaneBeforeItTakesThatTwinsMatrix(t *testing.T) {
	base := generated(t, 0)
	cases := reachCases(t, base)
	last := cases[slices.IndexFunc(cases, func(c reachCase) bool { return c.name == "a NetworkPolicy" })]
	steps := []reachCase{{name: "a ConfigMap added", change: func(c *model.Cluster) {
		c.ConfigMaps = append(slices.Clone(c.ConfigMaps), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plane-test"}})
	}}}
	for _, tc := range cases {
		if tc.reaches != fails && tc.base == nil && !tc.onWindows && tc.name != last.name {
			steps = append(steps, tc)
		}
	}
	taken := 0
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			a := base
			b := *a
			step.change(&b)
			c := b
			last.change(&c)
			ta, tb, tc := NewTwin(a), NewTwin(&b), NewTwin(&c)
			for _, pair := range []struct {
				before, after *Twin
			}{{ta, tb}, {tb, tc}} {
				r, err := CompareTwins(pair.before, pair.after, Options{NoDataplane: true})
				if err != nil {
					t.Fatal(err)
				}
				want := forcedReach(t, pair.before.c, pair.after.c)
				if !reflect.DeepEqual(r.Reach.Changes, want.Changes) || !reflect.DeepEqual(r.Reach.Notes, want.Notes) {
					t.Errorf("reach difference:\n%+v\nfrom fresh twins:\n%+v", r.Reach, want)
				}
			}
			through := tb.linuxFrom == ta
			if through != (step.name == "a ConfigMap added") {
				t.Errorf("b compared through a's plane: %v", through)
			}
			if tb.matrix == nil {
				t.Fatal("b has no matrix")
			}
			if got := tb.matrix == ta.matrix; got != through {
				t.Errorf("b took a's matrix: %v, want %v", got, through)
			}
			if through {
				taken++
				if tb.pl != nil {
					t.Error("b made a plane of its own")
				}
			}
		})
	}
	if taken == 0 || len(steps) < 2 {
		t.Errorf("%d of %d steps take the matrix: the test must hold both kinds", taken, len(steps))
	}
}
