package check

import (
	"fmt"
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// TestCountSelectedIsTheScan compares countSelected (by namespace, labels
// made once, results remembered) with the scan of every pod it replaces.
func TestCountSelectedIsTheScan(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	c := &model.Cluster{}
	nss := []string{"a", "b", "c"}
	for _, ns := range nss {
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": []string{"x", "y"}[r.Intn(2)]}}})
	}
	for i := 0; i < 300; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b", "c", "gone"}[r.Intn(4)], Name: fmt.Sprint("p", i),
			Labels: map[string]string{"app": fmt.Sprint(r.Intn(4))}}}
		p.Spec.HostNetwork = r.Intn(8) == 0
		if r.Intn(8) > 0 {
			p.Status.PodIP = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		}
		if r.Intn(3) == 0 {
			p.Spec.ServiceAccountName = "robot"
		}
		c.Pods = append(c.Pods, p)
	}
	x := NewContext(c, false, nil)
	for k := 0; k < 400; k++ {
		e := calico.EntityRule{Selector: []string{"all()", "app == '1'", "projectcalico.org/serviceaccount == 'robot'", "has(app) && app != '2'"}[r.Intn(4)]}
		if r.Intn(2) == 0 {
			e.NamespaceSelector = []string{"all()", "team == 'x'", "projectcalico.org/name == 'b'"}[r.Intn(3)]
		}
		policyNS := []string{"", "a", "b", "gone"}[r.Intn(4)]
		sel, _ := selector.Parse(e.Selector)
		scope, err := ruleScope(policyNS, e)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, p := range c.Pods {
			if !p.Spec.HostNetwork && p.Status.PodIP != "" && x.inScope(scope, p) && sel.Evaluate(calicoPodLabels(p)) {
				want++
			}
		}
		if got := x.countSelected(sel, scope, scopeKey(policyNS, e)); got != want {
			t.Fatalf("%q in %q (policy namespace %q): %d, want %d", e.Selector, e.NamespaceSelector, policyNS, got, want)
		}
	}
}
