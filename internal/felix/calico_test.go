package felix

import (
	"fmt"
	"math/rand"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// calicoWorld is policyWorld with Calico policies given as YAML specs:
// "global name: spec" or "ns/name: spec".
func calicoWorld(t *testing.T, w *policyWorld, specs map[string]string) *Calc {
	t.Helper()
	c := &model.Cluster{NetworkPolicies: w.policies, Namespaces: w.ns}
	for _, p := range w.pods {
		c.Pods = append(c.Pods, p)
	}
	c.ServiceAccounts = []*corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "robot", Labels: map[string]string{"role": "ci"}}}}
	for key, spec := range specs {
		var s calicoapi.PolicySpec
		if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if ns, name, ok := strings.Cut(key, "/"); ok {
			c.CalicoPolicies = append(c.CalicoPolicies, &calicoapi.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: s})
		} else {
			c.GlobalNetworkPolicies = append(c.GlobalNetworkPolicies, &calicoapi.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: key}, Spec: s})
		}
	}
	return New(c)
}

// Calico policy on a workload endpoint as Felix's Linux chains decide it
// (felix/rules/endpoints.go, policy.go).
func TestCalicoPoliciesDecideAsFelixsChains(t *testing.T) {
	type flow struct {
		pod, peer string
		dir       Direction
		proto     string
		port      int32
		allow     bool
	}
	for _, tc := range []struct {
		name   string
		specs  map[string]string
		flows  []flow
		reason string // of the first flow
	}{
		{name: "a GlobalNetworkPolicy's Deny before its Allow keeps one namespace out",
			specs: map[string]string{"deny-dev": `{selector: "app == 'web'", types: [Ingress], ingress: [{action: Deny, source: {namespaceSelector: "env == 'dev'"}}, {action: Allow}]}`},
			flows: []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, false}, {"prod/web", "10.244.0.11", Ingress, "TCP", 8080, true},
				{"prod/db", "10.244.0.10", Ingress, "TCP", 5432, true}},
			reason: "denied by GlobalNetworkPolicy deny-dev ingress rule 0 (tier default)"},
		{name: "a lower order decides first",
			specs: map[string]string{
				"deny-dev":       `{order: 200, selector: "app == 'web'", ingress: [{action: Deny, source: {namespaceSelector: "env == 'dev'"}}]}`,
				"prod/allow-dev": `{order: 100, selector: "app == 'web'", ingress: [{action: Allow, source: {namespaceSelector: "env == 'dev'"}}]}`},
			flows:  []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, true}},
			reason: "allowed by projectcalico.org NetworkPolicy prod/allow-dev ingress rule 0"},
		{name: "a namespaced policy selects only its namespace's endpoints",
			specs: map[string]string{"dev/deny-all": `{selector: "all()", types: [Ingress]}`},
			flows: []flow{{"dev/web", "10.244.0.10", Ingress, "TCP", 80, false}, {"prod/web", "10.244.1.10", Ingress, "TCP", 8080, true}}},
		{name: "a Pass goes to the next tier, and past the last one to the profile",
			specs:  map[string]string{"sec.pass": `{tier: sec, order: 1, selector: "all()", types: [Ingress], ingress: [{action: Pass, source: {nets: [10.244.1.0/24]}}]}`},
			flows:  []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, true}, {"prod/web", "10.244.0.11", Ingress, "TCP", 8080, false}},
			reason: "passed it to the next tier; no tier decided: profile kns.prod allows it"},
		{name: "a Pass reaches the Kubernetes policies in the default tier",
			specs:  map[string]string{"sec.pass": `{tier: sec, selector: "all()", types: [Ingress], ingress: [{action: Pass}]}`},
			flows:  []flow{{"prod/db", "10.244.1.11", Ingress, "TCP", 5432, false}, {"prod/db", "10.244.0.10", Ingress, "TCP", 5432, true}},
			reason: "passed it to the next tier; denied at the end of tier default: prod/db is selected for ingress by NetworkPolicy prod/db-from-web"},
		{name: "a tier's end drops what its policies neither allow nor pass",
			specs:  map[string]string{"sec.web": `{tier: sec, selector: "app == 'web'", types: [Ingress], ingress: [{action: Allow, protocol: UDP}]}`},
			flows:  []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, false}, {"prod/web", "10.244.1.11", Ingress, "UDP", 53, true}},
			reason: "denied at the end of tier sec"},
		{name: "a Log rule logs and goes on",
			specs:  map[string]string{"log": `{selector: "all()", types: [Ingress], ingress: [{action: Log}, {action: Allow}]}`},
			flows:  []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, true}},
			reason: "logged by GlobalNetworkPolicy log ingress rule 0"},
		{name: "notNets and notPorts match what they leave out",
			specs: map[string]string{"not": `{selector: "app == 'web'", types: [Ingress], ingress: [{action: Allow, protocol: TCP, source: {notNets: [10.244.1.0/24]}, destination: {notPorts: [9090]}}]}`},
			flows: []flow{{"prod/web", "10.244.0.11", Ingress, "TCP", 8080, true}, {"prod/web", "10.244.1.11", Ingress, "TCP", 8080, false},
				{"prod/web", "10.244.0.11", Ingress, "TCP", 9090, false}}},
		{name: "notSelector leaves out the endpoints it selects",
			specs: map[string]string{"not-tool": `{selector: "app == 'web'", types: [Ingress], ingress: [{action: Allow, source: {notSelector: "app == 'tool'"}}]}`},
			flows: []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, false}, {"prod/web", "10.244.1.10", Ingress, "TCP", 8080, true}}},
		{name: "service account names and selectors match the source's account",
			specs:  map[string]string{"sa": `{selector: "app == 'web'", types: [Ingress], ingress: [{action: Deny, source: {serviceAccounts: {selector: "role == 'ci'"}}}, {action: Allow, source: {serviceAccounts: {names: [default]}}}]}`},
			flows:  []flow{{"prod/web", "10.244.1.11", Ingress, "TCP", 8080, false}, {"prod/web", "10.244.1.10", Ingress, "TCP", 8080, true}},
			reason: "denied by GlobalNetworkPolicy sa ingress rule 0"},
		{name: "a policy's serviceAccountSelector selects the endpoints running as a matching account",
			specs: map[string]string{"ci-egress": `{serviceAccountSelector: "role == 'ci'", types: [Egress], egress: [{action: Deny}]}`},
			flows: []flow{{"dev/tool", "10.244.0.10", Egress, "TCP", 8080, false}, {"dev/web", "10.244.0.10", Egress, "TCP", 8080, true}}},
		{name: "an egress rule with a named port resolves it on the destination",
			specs: map[string]string{"dev/to-http": `{selector: "all()", types: [Egress], egress: [{action: Allow, protocol: TCP, destination: {ports: [http]}}]}`},
			flows: []flow{{"dev/tool", "10.244.0.10", Egress, "TCP", 8080, true}, {"dev/tool", "10.244.0.11", Egress, "TCP", 8080, false}}},
		{name: "ICMP type and protocol matches",
			specs: map[string]string{"icmp": `{selector: "all()", types: [Ingress], ingress: [{action: Allow, protocol: ICMP, icmp: {type: 8}}, {action: Allow, notProtocol: ICMP}]}`},
			flows: []flow{{"prod/web", "10.244.1.11", Ingress, "ICMP", 0, true}, {"prod/web", "10.244.1.11", Ingress, "UDP", 53, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPolicyWorld()
			w.pods["dev/tool"].Spec.ServiceAccountName = "robot"
			w.policies = append(w.policies, np("prod", "db-from-web", sel("app", "db"), nil,
				[]networkingIngress{{From: peers(sel("app", "web"))}}, nil))
			x := calicoWorld(t, w, tc.specs)
			for i, f := range tc.flows {
				got, why := x.allows(w.pods[f.pod], f.dir, netip.MustParseAddr(f.peer), f.proto, f.port)
				if got != f.allow {
					t.Errorf("%s %s %s %s/%d: allowed=%v (%s), want %v", f.pod, f.dir, f.peer, f.proto, f.port, got, why, f.allow)
				}
				if i == 0 && tc.reason != "" && !strings.Contains(why, tc.reason) {
					t.Errorf("reason %q lacks %q", why, tc.reason)
				}
			}
		})
	}
}

// Calico's conversion puts projectcalico.org/namespace, /orchestrator and
// /serviceaccount over a pod's own labels, and projectcalico.org/name over
// a namespace's.
func TestCalicosLabelsWinOverThePodsOwn(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "x", Labels: map[string]string{
		LabelNamespace: "kube-system", LabelOrchestrator: "none", LabelServiceAccount: "admin", "app": "x"}}}
	l := PodLabels(p)
	if l[LabelNamespace] != "prod" || l[LabelOrchestrator] != "k8s" || l[LabelServiceAccount] != "default" || l["app"] != "x" {
		t.Errorf("pod labels %v", l)
	}
	n := NamespaceLabels(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{LabelName: "other"}}})
	if n[LabelName] != "prod" || n[corev1.LabelMetadataName] != "prod" {
		t.Errorf("namespace labels %v", n)
	}
}

// TestMembersAreTheScan compares the indexed, cached IP set members with
// the scan over every workload they replace.
func TestMembersAreTheScan(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	c := &model.Cluster{}
	nss := []string{"a", "b", "c", "d"}
	for _, ns := range nss {
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"team": []string{"x", "y"}[r.Intn(2)]}}})
	}
	for i := 0; i < 400; i++ {
		ns := nss[r.Intn(len(nss))]
		c.Pods = append(c.Pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprint("p", i),
			Labels: map[string]string{"app": fmt.Sprint(r.Intn(5)), "tier": []string{"web", "api"}[r.Intn(2)]}},
			Spec:   corev1.PodSpec{NodeName: "n", ServiceAccountName: []string{"default", "robot"}[r.Intn(2)]},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.%d.%d", i/256, i%256)}})
	}
	x := New(c)
	sels := []string{"", "all()", "app == '1'", "tier == 'web' && app in { '2', '3' }", "has(app)"}
	nsSels := []string{"", "all()", "team == 'x'", "projectcalico.org/name == 'c'"}
	for k := 0; k < 500; k++ {
		p := &Policy{Namespace: []string{"", "a", "b"}[r.Intn(3)]}
		e := Entity{Selector: sels[r.Intn(len(sels))], NamespaceSelector: nsSels[r.Intn(len(nsSels))]}
		if r.Intn(3) == 0 {
			e.SANames = []string{"robot"}
		}
		sel, _ := parse(e.Selector)
		nsSel, _ := parse(e.NamespaceSelector)
		var want []int
		for i, ep := range x.Endpoints {
			switch {
			case e.NamespaceSelector != "":
				if !nsSel.Evaluate(x.NamespaceLabelsOf(ep.Namespace)) {
					continue
				}
			case p.Namespace != "":
				if ep.Namespace != p.Namespace {
					continue
				}
			}
			if !sel.Evaluate(ep.Labels) || len(e.SANames) > 0 && !slices.Contains(e.SANames, ep.ServiceAccount) {
				continue
			}
			want = append(want, i)
		}
		got, ok := x.Members(p, e)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("policy ns %q, %+v: %v, want %v", p.Namespace, e, got, want)
		}
		for i := range x.Endpoints {
			in, _ := x.InSet(p, e, &x.Endpoints[i])
			if in != slices.Contains(want, i) {
				t.Fatalf("InSet of %s for %+v is %t", x.Endpoints[i].Addr, e, in)
			}
		}
	}
}

type networkingIngress = networkingv1.NetworkPolicyIngressRule

func peers(s *metav1.LabelSelector) []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{PodSelector: s}}
}
