package diff

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A twin whose Linux nodes compile from the inputs of the twin compared
// before it is compared through that twin's plane, and its next
// comparison gives the node differences a comparison of fresh twins
// gives; with a Windows node, or a change the Linux nodes read, it keeps
// its own.
func TestATwinWithTheLinuxInputsOfTheOneBeforeIsComparedThroughItsPlane(t *testing.T) {
	configMap := func(c *model.Cluster) {
		c.ConfigMaps = append(slices.Clone(c.ConfigMaps), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plane-test"}})
	}
	serviceCIDRs := func(c *model.Cluster) {
		withInstallation(c, func(in *operator.Installation) { in.Spec.ServiceCIDRs = append(in.Spec.ServiceCIDRs, "10.200.0.0/16") })
	}
	changed := 0
	for _, tc := range []struct {
		name    string
		windows int
		// step is b → c; shares says whether c is compared through b's plane.
		step   func(*model.Cluster)
		shares bool
	}{
		{"a ConfigMap added on a Linux cluster", 0, configMap, true},
		{"a ConfigMap added on a cluster with a Windows node", 1, configMap, false},
		{"the Installation's serviceCIDRs on a cluster with a Windows node", 1, serviceCIDRs, false},
		{"a Service's port on a Linux cluster", 0, nil, false},
		{"a node's address on a Linux cluster", 0, nil, false},
	} {
		base := generated(t, tc.windows)
		cases := reachCases(t, base)
		if tc.step == nil {
			i := slices.IndexFunc(cases, func(c reachCase) bool { return c.name+" on a Linux cluster" == tc.name })
			tc.step = cases[i].change
		}
		for _, last := range cases {
			if last.reaches == fails || last.base != nil || last.onWindows {
				continue
			}
			t.Run(fmt.Sprintf("%s, then %s", tc.name, last.name), func(t *testing.T) {
				// a → b changes a policy, b → c the step, c → d the case.
				b := *base
				np := denyIngress("default")
				np.Name = "plane-test"
				b.NetworkPolicies = append(slices.Clone(b.NetworkPolicies), np)
				c := b
				tc.step(&c)
				d := c
				last.change(&d)
				chain := []*model.Cluster{base, &b, &c, &d}
				twins := make([]*Twin, len(chain))
				for i, cl := range chain {
					twins[i] = NewTwin(cl)
				}
				var got *Result
				for i := 1; i < len(twins); i++ {
					r, err := CompareTwins(twins[i-1], twins[i], Options{NoReach: true})
					if err != nil {
						t.Fatal(err)
					}
					got = r
				}
				if shared := twins[2].linuxFrom == twins[1]; shared != tc.shares {
					t.Errorf("c compared through b's plane: %v, want %v", shared, tc.shares)
				}
				if tc.shares && twins[2].pl != nil {
					t.Errorf("c made a plane of its own")
				}
				want, err := CompareTwins(NewTwin(&c), NewTwin(&d), Options{NoReach: true})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Nodes, want.Nodes) {
					t.Errorf("nodes:\n%+v\nfrom fresh twins:\n%+v", got.Nodes, want.Nodes)
				}
				changed += len(want.Nodes)
			})
		}
	}
	if changed == 0 {
		t.Error("no node changes: the test compares nothing the shared plane compiles")
	}
}
