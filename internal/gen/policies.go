package gen

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// policyKind is one shape of NetworkPolicy the generator mixes.
type policyKind int

const (
	denyIngress   policyKind = iota // podSelector {}, no rules
	fromSameNS                      // ingress from a podSelector, named port
	fromOtherNS                     // one peer with namespaceSelector and podSelector
	fromNodes                       // ipBlock with except
	egressRules                     // DNS, another app, the internet (ipBlock with except)
	byExpressions                   // matchExpressions on pods and namespaces, a port range
	metricsScrape                   // named port metrics from one namespace
	bothWays                        // ingress from and egress to pod selectors
	calicoBoth                      // a Calico policy rule with source and destination selectors
	numPolicyKinds
)

// policyWeights: how often each shape is drawn.
var policyWeights = [numPolicyKinds]int{1, 3, 3, 2, 3, 2, 1, 2, 1}

func (p *plan) drawPolicyKind(denyUsed bool) policyKind {
	total := 0
	for k, w := range policyWeights {
		if policyKind(k) == denyIngress && denyUsed {
			continue
		}
		total += w
	}
	n := p.rng.IntN(total)
	for k, w := range policyWeights {
		if policyKind(k) == denyIngress && denyUsed {
			continue
		}
		if n < w {
			return policyKind(k)
		}
		n -= w
	}
	return fromSameNS
}

func tcp(port intstr.IntOrString) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Protocol: ptr(corev1.ProtocolTCP), Port: &port}
}

func matchName(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{labelName: name}}
}

// pickApp returns a random app of the namespace, or nil when it has none.
func (p *plan) pickApp(ns *namespace) *app {
	if ns.last == ns.first {
		return nil
	}
	return &p.apps[ns.first+p.rng.IntN(ns.last-ns.first)]
}

// appSelector selects the app's pods, or the web tier when there is no app.
func appSelector(a *app) (metav1.LabelSelector, string) {
	if a == nil {
		return metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, "web"
	}
	return *matchName(a.name), a.name
}

// policies writes the namespace's NetworkPolicies.
func (p *plan) policies(ns *namespace, put func(any)) {
	used := map[string]bool{}
	denyUsed := false
	for i := 0; i < ns.policies; i++ {
		kind := p.drawPolicyKind(denyUsed)
		if kind == calicoBoth {
			cp := p.calicoPolicy(ns)
			name := cp.Name
			for n := 2; used[name]; n++ {
				name = cp.Name + "-" + strconv.Itoa(n)
			}
			used[name] = true
			cp.Name = name
			put(cp)
			continue
		}
		np := p.policy(ns, kind)
		if kind == denyIngress {
			denyUsed = true
		}
		name := np.Name
		for n := 2; used[name]; n++ {
			name = np.Name + "-" + strconv.Itoa(n)
		}
		used[name] = true
		np.Name = name
		put(np)
	}
}

func (p *plan) policy(ns *namespace, kind policyKind) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		TypeMeta:   typeMeta("networking.k8s.io/v1", "NetworkPolicy"),
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.name},
	}
	spec := &np.Spec
	ingress := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	target := p.pickApp(ns)
	sel, targetName := appSelector(target)
	http := tcp(intstr.FromString("http"))
	switch kind {
	case denyIngress:
		np.Name = "default-deny-ingress"
		spec.PolicyTypes = ingress
	case fromSameNS:
		peer := p.pickApp(ns)
		peerSel, peerName := appSelector(peer)
		np.Name = "allow-" + targetName + "-from-" + peerName
		spec.PodSelector, spec.PolicyTypes = sel, ingress
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &peerSel}},
			Ports: []networkingv1.NetworkPolicyPort{http},
		}}
	case fromOtherNS:
		other := &p.namespaces[p.rng.IntN(len(p.namespaces))]
		peerSel, _ := appSelector(p.pickApp(other))
		np.Name = "allow-" + targetName + "-from-" + other.name
		spec.PodSelector, spec.PolicyTypes = sel, ingress
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: other.name}},
				PodSelector:       &peerSel,
			}},
			Ports: []networkingv1.NetworkPolicyPort{tcp(intstr.FromInt32(portHTTP))},
		}}
	case fromNodes:
		np.Name = "allow-" + targetName + "-from-nodes"
		spec.PodSelector, spec.PolicyTypes = sel, ingress
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{
				CIDR:   nodeNet.String(),
				Except: []string{p.hosts[0].addr.String() + "/32"},
			}}},
			Ports: []networkingv1.NetworkPolicyPort{http},
		}}
	case egressRules:
		peerSel, _ := appSelector(p.pickApp(ns))
		np.Name = "restrict-egress-" + targetName
		spec.PodSelector = sel
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
		spec.Egress = []networkingv1.NetworkPolicyEgressRule{
			{
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "kube-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{
					{Protocol: ptr(corev1.ProtocolUDP), Port: ptr(intstr.FromInt32(53))},
					tcp(intstr.FromInt32(53)),
				},
			},
			{To: []networkingv1.NetworkPolicyPeer{{PodSelector: &peerSel}}, Ports: []networkingv1.NetworkPolicyPort{http}},
			{
				To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{
					CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"},
				}}},
				Ports: []networkingv1.NetworkPolicyPort{tcp(intstr.FromInt32(443))},
			},
		}
	case byExpressions:
		np.Name = "allow-web-and-api-from-teams"
		spec.PodSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}},
		}}
		spec.PolicyTypes = ingress
		rangePort := tcp(intstr.FromInt32(8000))
		rangePort.EndPort = ptr(int32(8100))
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "team", Operator: metav1.LabelSelectorOpExists},
				{Key: "environment", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"staging"}},
			}}}},
			Ports: []networkingv1.NetworkPolicyPort{rangePort},
		}}
	case metricsScrape:
		port := http
		if target != nil && target.metrics {
			port = tcp(intstr.FromString("metrics"))
		}
		scraper := p.namespaces[0].name
		np.Name = "allow-metrics-" + targetName
		spec.PodSelector, spec.PolicyTypes = sel, ingress
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: scraper}}}},
			Ports: []networkingv1.NetworkPolicyPort{port},
		}}
	case bothWays:
		from, _ := appSelector(p.pickApp(ns))
		to, _ := appSelector(p.pickApp(ns))
		np.Name = "isolate-" + targetName
		spec.PodSelector = sel
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
		spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &from}},
			Ports: []networkingv1.NetworkPolicyPort{http},
		}}
		spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &to}},
			Ports: []networkingv1.NetworkPolicyPort{http},
		}}
	}
	return np
}

// calicoPolicy is a projectcalico.org/v3 NetworkPolicy whose ingress rule
// names both ends with selectors: the shape Calico's documentation warns
// about on Windows, where each such rule becomes the product of local and
// remote addresses in HNS ACLs (felix/dataplane/windows/policysets).
func (p *plan) calicoPolicy(ns *namespace) *calico.NetworkPolicy {
	dst, dstName := appSelector(p.pickApp(ns))
	src, _ := appSelector(p.pickApp(ns))
	return &calico.NetworkPolicy{
		TypeMeta:   typeMeta("projectcalico.org/v3", "NetworkPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: "calico-" + dstName + "-from-peers", Namespace: ns.name},
		Spec: calico.PolicySpec{
			Selector: "all()",
			Types:    []string{"Ingress"},
			Ingress: []calico.Rule{{
				Action:      "Allow",
				Protocol:    ptr(intstr.FromString("TCP")),
				Source:      calico.EntityRule{Selector: calicoSelector(src)},
				Destination: calico.EntityRule{Selector: calicoSelector(dst), Ports: []intstr.IntOrString{intstr.FromInt32(8080)}},
			}},
		},
	}
}

// calicoSelector writes a label selector's match labels in Calico's
// selector syntax.
func calicoSelector(sel metav1.LabelSelector) string {
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+" == '"+sel.MatchLabels[k]+"'")
	}
	if len(parts) == 0 {
		return "all()"
	}
	return strings.Join(parts, " && ")
}
