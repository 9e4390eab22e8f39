package workloadrules

import (
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
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
	x := rule.NewContext(c, false, nil)
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
			if !p.Spec.HostNetwork && p.Status.PodIP != "" && inScope(x, scope, p) && sel.Evaluate(calicoPodLabels(p)) {
				want++
			}
		}
		if got := countSelected(x, sel, scope, scopeKey(policyNS, e)); got != want {
			t.Fatalf("%q in %q (policy namespace %q): %d, want %d", e.Selector, e.NamespaceSelector, policyNS, got, want)
		}
	}
}

// TestPolicySrcDstEndpointsAreTheScan compares the Windows endpoints
// HYB055 counts per policy (by namespace, scopes read once per namespace)
// with a scan of every Windows pod against the policy's scope.
func TestPolicySrcDstEndpointsAreTheScan(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	c := &model.Cluster{}
	for _, ns := range []string{"a", "b", "c"} {
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": []string{"x", "y"}[r.Intn(2)]}}})
	}
	for i, os := range []string{"windows", "windows", "linux"} {
		c.Nodes = append(c.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i), Labels: map[string]string{"kubernetes.io/os": os}}})
	}
	for i := 0; i < 300; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: []string{"a", "b", "c", "gone"}[r.Intn(4)], Name: fmt.Sprint("p", i),
			Labels: map[string]string{"app": fmt.Sprint(r.Intn(4))}}}
		p.Spec.NodeName = fmt.Sprint("n", r.Intn(3))
		p.Spec.HostNetwork = r.Intn(8) == 0
		if r.Intn(8) > 0 {
			p.Status.PodIP = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		}
		c.Pods = append(c.Pods, p)
	}
	sels := []string{"all()", "app == '1'", "has(app) && app != '2'"}
	nsSels := []string{"", "all()", "team == 'x'", "projectcalico.org/name == 'b'"}
	allow := calico.Rule{Action: "Allow", Source: calico.EntityRule{Selector: "app == '0'"}, Destination: calico.EntityRule{Selector: "app == '3'"}}
	type want struct {
		key   model.Key
		scope policyScope
		sel   string
	}
	var wants []want
	for i := 0; i < 60; i++ {
		spec := calico.PolicySpec{Selector: sels[r.Intn(len(sels))], Ingress: []calico.Rule{allow}}
		if i%2 == 0 {
			ns := []string{"a", "b", "c", "gone"}[r.Intn(4)]
			c.CalicoPolicies = append(c.CalicoPolicies, &calico.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("np", i)}, Spec: spec})
			wants = append(wants, want{model.Key{Group: calico.Group, Kind: "NetworkPolicy", Namespace: ns, Name: fmt.Sprint("np", i)}, policyScope{namespace: ns}, spec.Selector})
			continue
		}
		spec.NamespaceSelector = nsSels[r.Intn(len(nsSels))]
		scope := policyScope{}
		if spec.NamespaceSelector != "" {
			s, err := selector.Parse(spec.NamespaceSelector)
			if err != nil {
				t.Fatal(err)
			}
			scope.nsSel, scope.nsText = s, spec.NamespaceSelector
		}
		c.GlobalNetworkPolicies = append(c.GlobalNetworkPolicies, &calico.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("gnp", i)}, Spec: spec})
		wants = append(wants, want{model.Key{Group: calico.Group, Kind: "GlobalNetworkPolicy", Name: fmt.Sprint("gnp", i)}, scope, spec.Selector})
	}
	x := rule.NewContext(c, false, nil)
	got := map[model.Key]int{}
	re := regexp.MustCompile(`applies to (\d+) Windows endpoint`)
	for _, f := range rulePolicySelectors.Check(x) {
		m := re.FindStringSubmatch(f.Message)
		if m == nil {
			t.Fatalf("finding without a count: %s", f.Message)
		}
		got[f.Object], _ = strconv.Atoi(m[1])
	}
	found := 0
	for _, w := range wants {
		sel, _ := selector.Parse(w.sel)
		n := 0
		for _, p := range c.Pods {
			if p.Spec.NodeName != "n2" && !p.Spec.HostNetwork && p.Status.PodIP != "" && inScope(x, w.scope, p) && sel.Evaluate(calicoPodLabels(p)) {
				n++
			}
		}
		if got[w.key] != n {
			t.Errorf("%s %s (selector %q): %d endpoints, the scan finds %d", w.key.Kind, w.key.Name, w.sel, got[w.key], n)
		}
		if n > 0 {
			found++
		}
	}
	if found == 0 {
		t.Fatal("no policy applies to a Windows endpoint: the test checks nothing")
	}
}

// inScope is the per-pod reading of a policy scope the tests hold the
// rules' per-namespace reading (Context.holds) to: the namespace
// selector evaluated on the pod's namespace each time.
func inScope(x *rule.Context, s policyScope, p *corev1.Pod) bool {
	if s.nsSel != nil {
		ns := x.Namespace(p.Namespace)
		return ns != nil && s.nsSel.Evaluate(calicoNamespaceLabels(ns))
	}
	return s.namespace == "" || s.namespace == p.Namespace
}
