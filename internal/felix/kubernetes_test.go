package felix

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Direction names a direction in the tables below.
type Direction string

// Directions.
const (
	Ingress Direction = "Ingress"
	Egress  Direction = "Egress"
)

// allows is Decide for the tables: the Kubernetes semantics the
// calculation must keep for NetworkPolicies.
func (x *Calc) allows(pod *corev1.Pod, dir Direction, peer netip.Addr, proto string, port int32) (bool, string) {
	d := x.Decide(pod, dir == Ingress, Flow{Peer: peer, Proto: proto, DstPort: port})
	return d.Allowed, d.Reason
}

// policyWorld is a small cluster for NetworkPolicy semantics as Felix
// enforces them (the table internal/policy held for its own evaluator):
//
//	prod/web   10.244.0.10 app=web, container port "http" 8080/TCP, "dns" 53/UDP
//	prod/db    10.244.0.11 app=db,  container port "pg" 5432
//	dev/web    10.244.1.10 app=web
//	dev/tool   10.244.1.11 app=tool
//	kube-system/host 10.0.0.11, host-networked
//
// Namespaces: prod (env=prod), dev (env=dev), kube-system.
type policyWorld struct {
	pods     map[string]*corev1.Pod
	ns       []*corev1.Namespace
	policies []*networkingv1.NetworkPolicy
}

func newPolicyWorld() *policyWorld {
	w := &policyWorld{pods: map[string]*corev1.Pod{}}
	addNS := func(name string, l map[string]string) {
		w.ns = append(w.ns, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}})
	}
	addNS("prod", map[string]string{"env": "prod"})
	addNS("dev", map[string]string{"env": "dev"})
	addNS("kube-system", nil)
	add := func(ns, name, ip string, l map[string]string, host bool, ports ...corev1.ContainerPort) {
		w.pods[ns+"/"+name] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l},
			Spec:   corev1.PodSpec{NodeName: "n1", HostNetwork: host, Containers: []corev1.Container{{Name: "c", Ports: ports}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
	}
	add("prod", "web", "10.244.0.10", map[string]string{"app": "web"}, false,
		corev1.ContainerPort{Name: "http", ContainerPort: 8080}, corev1.ContainerPort{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP})
	add("prod", "db", "10.244.0.11", map[string]string{"app": "db"}, false, corev1.ContainerPort{Name: "pg", ContainerPort: 5432})
	add("dev", "web", "10.244.1.10", map[string]string{"app": "web"}, false)
	add("dev", "tool", "10.244.1.11", map[string]string{"app": "tool"}, false)
	add("kube-system", "host", "10.0.0.11", map[string]string{"app": "host"}, true)
	return w
}

func (w *policyWorld) index() *Calc {
	var pods []*corev1.Pod
	for _, p := range w.pods {
		pods = append(pods, p)
	}
	return New(&model.Cluster{NetworkPolicies: w.policies, Namespaces: w.ns, Pods: pods})
}

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func np(ns, name string, podSel *metav1.LabelSelector, types []networkingv1.PolicyType, in []networkingv1.NetworkPolicyIngressRule, eg []networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: *podSel, PolicyTypes: types, Ingress: in, Egress: eg}}
}

func port(p intstr.IntOrString, proto corev1.Protocol, end int32) networkingv1.NetworkPolicyPort {
	np := networkingv1.NetworkPolicyPort{Port: &p}
	if proto != "" {
		np.Protocol = &proto
	}
	if end != 0 {
		np.EndPort = &end
	}
	return np
}

func TestKubernetesNetworkPolicySemantics(t *testing.T) {
	type flow struct {
		pod   string
		dir   Direction
		peer  string
		proto string
		port  int32
		allow bool
	}
	all := &metav1.LabelSelector{}
	web := sel("app", "web")
	fromPods := func(ps ...networkingv1.NetworkPolicyPeer) []networkingv1.NetworkPolicyIngressRule {
		return []networkingv1.NetworkPolicyIngressRule{{From: ps}}
	}
	for _, tc := range []struct {
		name     string
		policies []*networkingv1.NetworkPolicy
		flows    []flow
		reason   string // substring of the first flow's reason
	}{
		{name: "a pod no policy selects is open in both directions",
			flows:  []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Egress, "8.8.8.8", "UDP", 53, true}},
			reason: "no NetworkPolicy selects prod/web for ingress"},
		{name: "a policy without policyTypes and without egress rules isolates ingress only",
			policies: []*networkingv1.NetworkPolicy{np("prod", "deny", all, nil, nil, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, false}, {"prod/web", Egress, "10.244.1.11", "TCP", 80, true}},
			reason:   "denied: prod/web is selected for ingress by prod/deny and no rule allows from 10.244.1.11 (dev/tool) TCP/8080"},
		{name: "a policy with egress rules and no policyTypes isolates egress too",
			policies: []*networkingv1.NetworkPolicy{np("prod", "eg", web, nil, nil, []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "db")}}}})},
			flows:    []flow{{"prod/web", Egress, "10.244.0.11", "TCP", 5432, true}, {"prod/web", Egress, "10.244.1.11", "TCP", 80, false}, {"prod/web", Ingress, "10.244.1.11", "TCP", 8080, false}}},
		{name: "policyTypes Egress without rules denies all egress and leaves ingress open",
			policies: []*networkingv1.NetworkPolicy{np("prod", "no-egress", all, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, nil, nil)},
			flows:    []flow{{"prod/web", Egress, "8.8.8.8", "UDP", 53, false}, {"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}}},
		{name: "an empty ingress rule allows every peer on every port",
			policies: []*networkingv1.NetworkPolicy{np("prod", "open", web, nil, []networkingv1.NetworkPolicyIngressRule{{}}, nil)},
			flows:    []flow{{"prod/web", Ingress, "203.0.113.9", "SCTP", 9, true}},
			reason:   "allowed by NetworkPolicy prod/open ingress rule 0"},
		{name: "a podSelector peer only matches pods of the policy's namespace",
			policies: []*networkingv1.NetworkPolicy{np("prod", "from-web", sel("app", "db"), nil, fromPods(networkingv1.NetworkPolicyPeer{PodSelector: web}), nil)},
			flows:    []flow{{"prod/db", Ingress, "10.244.0.10", "TCP", 5432, true}, {"prod/db", Ingress, "10.244.1.10", "TCP", 5432, false}}},
		{name: "a namespaceSelector peer matches every pod of the matching namespaces",
			policies: []*networkingv1.NetworkPolicy{np("prod", "from-dev", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("env", "dev")}), nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Ingress, "10.244.0.11", "TCP", 8080, false}}},
		{name: "an empty namespaceSelector matches pods of every namespace",
			policies: []*networkingv1.NetworkPolicy{np("prod", "from-all", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: all}), nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Ingress, "198.51.100.1", "TCP", 8080, false}}},
		{name: "podSelector and namespaceSelector in one peer must both match",
			policies: []*networkingv1.NetworkPolicy{np("prod", "dev-web", sel("app", "db"), nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("env", "dev"), PodSelector: web}), nil)},
			flows:    []flow{{"prod/db", Ingress, "10.244.1.10", "TCP", 5432, true}, {"prod/db", Ingress, "10.244.1.11", "TCP", 5432, false}, {"prod/db", Ingress, "10.244.0.10", "TCP", 5432, false}}},
		{name: "the kubernetes.io/metadata.name label selects a namespace by name",
			policies: []*networkingv1.NetworkPolicy{np("prod", "by-name", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("kubernetes.io/metadata.name", "dev")}), nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.10", "TCP", 8080, true}}},
		{name: "matchExpressions select too",
			policies: []*networkingv1.NetworkPolicy{np("prod", "expr", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "x"}}}}, nil, nil, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, false}, {"prod/db", Ingress, "10.244.1.11", "TCP", 5432, true}}},
		{name: "an ipBlock matches its CIDR minus the excepted ranges",
			policies: []*networkingv1.NetworkPolicy{np("prod", "cidr", web, nil, fromPods(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.0/16", Except: []string{"192.168.5.0/24"}}}), nil)},
			flows:    []flow{{"prod/web", Ingress, "192.168.1.1", "TCP", 8080, true}, {"prod/web", Ingress, "192.168.5.9", "TCP", 8080, false}}},
		{name: "an ipBlock matches pod addresses as Calico does",
			policies: []*networkingv1.NetworkPolicy{np("prod", "podnet", web, nil, fromPods(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.244.1.0/24"}}), nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}}},
		{name: "a selector never matches a host-networked pod, which is no workload",
			policies: []*networkingv1.NetworkPolicy{np("prod", "from-all", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: all}), nil)},
			flows:    []flow{{"prod/web", Ingress, "10.0.0.11", "TCP", 8080, false}}},
		{name: "a port without protocol is TCP",
			policies: []*networkingv1.NetworkPolicy{np("prod", "tcp80", web, nil, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(8080), "", 0)}}}, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Ingress, "10.244.1.11", "UDP", 8080, false}, {"prod/web", Ingress, "10.244.1.11", "TCP", 8081, false}}},
		{name: "endPort makes an inclusive range",
			policies: []*networkingv1.NetworkPolicy{np("prod", "range", web, nil, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(8000), corev1.ProtocolTCP, 8080)}}}, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8000, true}, {"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Ingress, "10.244.1.11", "TCP", 8081, false}}},
		{name: "a named ingress port resolves on the selected pod",
			policies: []*networkingv1.NetworkPolicy{np("prod", "named", web, nil, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromString("http"), "", 0), port(intstr.FromString("dns"), corev1.ProtocolUDP, 0)}}}, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/web", Ingress, "10.244.1.11", "UDP", 53, true}, {"prod/web", Ingress, "10.244.1.11", "TCP", 53, false}}},
		{name: "a named egress port resolves on the destination pod",
			policies: []*networkingv1.NetworkPolicy{np("prod", "to-pg", web, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, nil,
				[]networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromString("pg"), "", 0)}}})},
			flows: []flow{{"prod/web", Egress, "10.244.0.11", "TCP", 5432, true}, {"prod/web", Egress, "10.244.1.11", "TCP", 5432, false}, {"prod/web", Egress, "198.51.100.1", "TCP", 5432, false}}},
		{name: "a rule with ports never matches ICMP, a rule without ports does",
			policies: []*networkingv1.NetworkPolicy{
				np("prod", "a-ports", web, nil, []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(8080), "", 0)}}}, nil),
				np("prod", "b-dev", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("env", "dev")}), nil)},
			flows: []flow{{"prod/web", Ingress, "10.244.0.11", "ICMP", 0, false}, {"prod/web", Ingress, "10.244.1.11", "ICMP", 0, true}}},
		{name: "policies add up: any selecting policy's rule allows",
			policies: []*networkingv1.NetworkPolicy{
				np("prod", "a-deny", all, nil, nil, nil),
				np("prod", "b-allow-dev", web, nil, fromPods(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("env", "dev")}), nil)},
			flows:  []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"prod/db", Ingress, "10.244.1.11", "TCP", 5432, false}},
			reason: "allowed by NetworkPolicy prod/b-allow-dev ingress rule 0"},
		{name: "a policy only selects pods of its own namespace",
			policies: []*networkingv1.NetworkPolicy{np("dev", "deny", all, nil, nil, nil)},
			flows:    []flow{{"prod/web", Ingress, "10.244.1.11", "TCP", 8080, true}, {"dev/web", Ingress, "10.244.0.10", "TCP", 80, false}}},
		{name: "a host-networked pod is not policed",
			policies: []*networkingv1.NetworkPolicy{np("kube-system", "deny", all, nil, nil, nil)},
			flows:    []flow{{"kube-system/host", Ingress, "203.0.113.1", "TCP", 10250, true}},
			reason:   "host-networked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPolicyWorld()
			w.policies = tc.policies
			x := w.index()
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

func TestADecisionNamesThePolicyAndRuleThatAllowedIt(t *testing.T) {
	w := newPolicyWorld()
	w.policies = []*networkingv1.NetworkPolicy{
		np("prod", "a-deny", &metav1.LabelSelector{}, nil, nil, nil),
		np("prod", "b-dev", sel("app", "web"), nil, []networkingv1.NetworkPolicyIngressRule{
			{From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "198.51.100.0/24"}}}},
			{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("env", "dev")}}}}, nil)}
	d := w.index().Decide(w.pods["prod/web"], true, Flow{Peer: netip.MustParseAddr("10.244.1.11"), Proto: "TCP", DstPort: 8080})
	if !d.Allowed || !d.Isolated || d.Policy == nil || d.Policy.Namespace+"/"+d.Policy.Name != "prod/b-dev" || d.Rule != 1 {
		t.Errorf("%+v", d)
	}
	if strings.Join(d.Selecting, ",") != "prod/a-deny,prod/b-dev" {
		t.Errorf("selecting %v", d.Selecting)
	}
	d = w.index().Decide(w.pods["prod/db"], true, Flow{Peer: netip.MustParseAddr("10.244.1.11"), Proto: "ICMP"})
	if d.Allowed || !strings.HasSuffix(d.Reason, "no rule allows from 10.244.1.11 (dev/tool) ICMP") {
		t.Errorf("%+v", d)
	}
}

func TestIPSetMembersAreTheWorkloadsASelectorMatchesInAddressOrder(t *testing.T) {
	w := newPolicyWorld()
	x := w.index()
	p := FromKubernetes(np("prod", "p", &metav1.LabelSelector{}, nil, nil, nil))
	idx, ok := x.Members(p, PeerEntity(networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: sel("app", "web")}))
	var got []string
	for _, i := range idx {
		got = append(got, x.Endpoints[i].Addr.String())
	}
	if !ok || fmt.Sprint(got) != "[10.244.0.10 10.244.1.10]" {
		t.Errorf("members %v", got)
	}
	if PeerEntity(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}).HasSelector() {
		t.Error("an ipBlock has no IP set")
	}
	if x.EndpointAt(netip.MustParseAddr("10.0.0.11")) != nil {
		t.Error("a host-networked pod is no workload endpoint")
	}
}
