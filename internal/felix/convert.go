package felix

import (
	"fmt"
	"math"
	"sort"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
)

// Policy kinds, as Felix's policy IDs name them (felix/dataplane/windows/
// policy_mgr.go policyIDToString).
const (
	KindKubernetes = "KubernetesNetworkPolicy"
	KindNamespaced = "NetworkPolicy"
	KindGlobal     = "GlobalNetworkPolicy"
)

// DefaultTier is Calico's default tier: the Kubernetes NetworkPolicies and
// every Calico policy that names no tier.
const DefaultTier = "default"

// Rule actions (Calico's, lower case).
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"
	ActionPass  = "pass"
	ActionLog   = "log"
)

// Policy is a NetworkPolicy or GlobalNetworkPolicy as Felix holds it: the
// Kubernetes ones converted by libcalico-go.
type Policy struct {
	// ID is policy-<Kind>/<namespace>/<name> (policy-<Kind>/<name> for a
	// global policy).
	ID        string
	Kind      string
	Namespace string // "" for a global policy
	Name      string
	Tier      string
	Order     float64 // +Inf when the policy has none
	// Selector nil: an invalid selector, which selects nothing.
	Selector          selector.Selector
	NamespaceSelector selector.Selector // spec.namespaceSelector, global policies
	SASelector        selector.Selector // spec.serviceAccountSelector
	Ingress, Egress   bool
	In, Out           []Rule
	// K8s is the Kubernetes NetworkPolicy a KubernetesNetworkPolicy came
	// from.
	K8s *networkingv1.NetworkPolicy
	// bad: a selector that does not parse; the policy selects nothing.
	bad bool
}

// Display is the policy's name in reasons: "NetworkPolicy ns/name" for a
// Kubernetes one, the Calico kind and name otherwise.
func (p *Policy) Display() string {
	switch p.Kind {
	case KindKubernetes:
		return "NetworkPolicy " + p.Namespace + "/" + p.Name
	case KindGlobal:
		return "GlobalNetworkPolicy " + p.Name
	}
	return "projectcalico.org NetworkPolicy " + p.Namespace + "/" + p.Name
}

// Rule is a Calico v3 rule, from a Calico policy or converted from a
// Kubernetes NetworkPolicy rule.
type Rule struct {
	Action      string
	Protocol    *intstr.IntOrString
	NotProtocol *intstr.IntOrString
	IPVersion   int
	ICMP        *calicoapi.ICMPFields
	NotICMP     *calicoapi.ICMPFields
	Src, Dst    Entity
	// Index is the rule's position in the source policy's list: a
	// Kubernetes rule becomes one Calico rule per protocol and peer, all
	// with the Kubernetes rule's index.
	Index int
}

// Entity is one end of a rule.
type Entity struct {
	Nets              []string
	NotNets           []string
	Selector          string
	NamespaceSelector string
	NotSelector       string
	Ports             []intstr.IntOrString
	NotPorts          []intstr.IntOrString
	SANames           []string
	SASelector        string

	c *compiledEntity // set by New
}

// HasSelector reports whether the entity matches endpoints (an IP set).
func (e Entity) HasSelector() bool {
	return e.Selector != "" || e.NamespaceSelector != "" || len(e.SANames) > 0 || e.SASelector != ""
}

// FromKubernetes converts a Kubernetes NetworkPolicy the way libcalico-go
// does (lib/backend/k8s/conversion/conversion.go K8sNetworkPolicyToCalico):
// order 1000 in the default tier, the pod selector prefixed with the
// orchestrator, one rule per protocol and peer, TCP when a port names no
// protocol, ipBlock excepts as NotNets. Without policyTypes it applies to
// ingress, and to egress when it has egress rules (the API server's
// defaulting, which the converter repeats).
func FromKubernetes(np *networkingv1.NetworkPolicy) *Policy {
	p := &Policy{
		ID:        "policy-" + KindKubernetes + "/" + np.Namespace + "/" + np.Name,
		Kind:      KindKubernetes,
		Namespace: np.Namespace,
		Name:      np.Name,
		Tier:      DefaultTier,
		Order:     1000,
		K8s:       np,
	}
	p.Selector, p.bad = parse(KubernetesSelector(&np.Spec.PodSelector, true))
	for _, t := range np.Spec.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeIngress:
			p.Ingress = true
		case networkingv1.PolicyTypeEgress:
			p.Egress = true
		}
	}
	if len(np.Spec.PolicyTypes) == 0 {
		p.Ingress, p.Egress = true, len(np.Spec.Egress) > 0
	}
	for i, r := range np.Spec.Ingress {
		p.In = append(p.In, KubernetesRules(r.From, r.Ports, true, i)...)
	}
	for i, r := range np.Spec.Egress {
		p.Out = append(p.Out, KubernetesRules(r.To, r.Ports, false, i)...)
	}
	return p
}

// KubernetesSelector is conversion.go k8sSelectorToCalico: pod selectors are
// prefixed with the orchestrator label; an empty namespace selector is all().
func KubernetesSelector(s *metav1.LabelSelector, pod bool) string {
	var parts []string
	if pod {
		parts = append(parts, LabelOrchestrator+" == 'k8s'")
	}
	if s == nil {
		return strings.Join(parts, " && ")
	}
	if !pod && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return "all()"
	}
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s == '%s'", k, s.MatchLabels[k]))
	}
	for _, e := range s.MatchExpressions {
		vals := strings.Join(e.Values, "', '")
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			parts = append(parts, fmt.Sprintf("%s in { '%s' }", e.Key, vals))
		case metav1.LabelSelectorOpNotIn:
			parts = append(parts, fmt.Sprintf("%s not in { '%s' }", e.Key, vals))
		case metav1.LabelSelectorOpExists:
			parts = append(parts, fmt.Sprintf("has(%s)", e.Key))
		case metav1.LabelSelectorOpDoesNotExist:
			parts = append(parts, fmt.Sprintf("! has(%s)", e.Key))
		}
	}
	return strings.Join(parts, " && ")
}

// KubernetesRules is conversion.go k8sRuleToCalico: ports group by protocol
// (TCP when none is named; a port without a number allows the whole
// protocol; no ports at all, everything), and each protocol group makes one
// Allow rule per peer. index is the Kubernetes rule's position.
func KubernetesRules(peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort, ingress bool, index int) []Rule {
	byProto := map[string][]intstr.IntOrString{}
	wholeProto := map[string]bool{}
	all := len(ports) == 0
	for _, p := range ports {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		if _, ok := byProto[proto]; !ok {
			byProto[proto] = nil
		}
		if p.Port == nil {
			wholeProto[proto] = true
			continue
		}
		port := *p.Port
		if port.Type == intstr.Int && p.EndPort != nil {
			port = intstr.FromString(fmt.Sprintf("%d:%d", port.IntVal, *p.EndPort))
		}
		byProto[proto] = append(byProto[proto], port)
	}
	for proto := range wholeProto {
		byProto[proto] = nil
	}
	protos := make([]string, 0, len(byProto))
	for k := range byProto {
		protos = append(protos, k)
	}
	sort.Strings(protos)
	if all {
		protos = []string{""}
	}
	if len(peers) == 0 {
		peers = []networkingv1.NetworkPolicyPeer{{}}
	}
	var out []Rule
	for _, proto := range protos {
		var protocol *intstr.IntOrString
		if proto != "" {
			v := intstr.FromString(proto)
			protocol = &v
		}
		for _, peer := range peers {
			e := PeerEntity(peer)
			e.Ports = byProto[proto]
			r := Rule{Action: ActionAllow, Protocol: protocol, Index: index}
			if ingress {
				r.Src = Entity{Nets: e.Nets, NotNets: e.NotNets, Selector: e.Selector, NamespaceSelector: e.NamespaceSelector}
				r.Dst = Entity{Ports: e.Ports}
			} else {
				r.Dst = e
			}
			out = append(out, r)
		}
	}
	return out
}

// PeerEntity is a NetworkPolicy peer as a Calico rule side: an ipBlock's
// CIDR and excepts as nets and notNets, selectors converted; an empty peer
// matches everything.
func PeerEntity(peer networkingv1.NetworkPolicyPeer) Entity {
	var e Entity
	switch {
	case peer.IPBlock != nil:
		e.Nets = []string{peer.IPBlock.CIDR}
		e.NotNets = peer.IPBlock.Except
	case peer.PodSelector != nil || peer.NamespaceSelector != nil:
		e.Selector = KubernetesSelector(peer.PodSelector, true)
		if peer.NamespaceSelector != nil {
			e.NamespaceSelector = KubernetesSelector(peer.NamespaceSelector, false)
		}
	}
	return e
}

// FromCalico takes a projectcalico.org/v3 NetworkPolicy (ns set) or
// GlobalNetworkPolicy (ns "").
func FromCalico(kind, ns, name string, spec calicoapi.PolicySpec) *Policy {
	p := &Policy{ID: "policy-" + kind + "/" + name, Kind: kind, Namespace: ns, Name: name, Tier: spec.Tier, Order: math.Inf(1)}
	if ns != "" {
		p.ID = "policy-" + kind + "/" + ns + "/" + name
	}
	if p.Tier == "" {
		p.Tier = DefaultTier
	}
	if spec.Order != nil {
		p.Order = *spec.Order
	}
	p.Selector, p.bad = parse(spec.Selector) // "" is all()
	if spec.NamespaceSelector != "" {
		var bad bool
		p.NamespaceSelector, bad = parse(spec.NamespaceSelector)
		p.bad = p.bad || bad
	}
	if spec.ServiceAccountSelector != "" {
		var bad bool
		p.SASelector, bad = parse(spec.ServiceAccountSelector)
		p.bad = p.bad || bad
	}
	p.Ingress, p.Egress = spec.Directions()
	for i, r := range spec.Ingress {
		p.In = append(p.In, fromCalicoRule(r, i))
	}
	for i, r := range spec.Egress {
		p.Out = append(p.Out, fromCalicoRule(r, i))
	}
	return p
}

// CalicoRule converts one rule of a Calico policy.
func CalicoRule(r calicoapi.Rule) Rule { return fromCalicoRule(r, 0) }

func fromCalicoRule(r calicoapi.Rule, i int) Rule {
	cr := Rule{
		Action:      strings.ToLower(r.Action),
		Protocol:    r.Protocol,
		NotProtocol: r.NotProtocol,
		ICMP:        r.ICMP,
		NotICMP:     r.NotICMP,
		Src:         fromEntity(r.Source),
		Dst:         fromEntity(r.Destination),
		Index:       i,
	}
	if r.IPVersion != nil {
		cr.IPVersion = *r.IPVersion
	}
	return cr
}

func fromEntity(e calicoapi.EntityRule) Entity {
	ce := Entity{
		Nets:              e.Nets,
		NotNets:           e.NotNets,
		Selector:          e.Selector,
		NamespaceSelector: e.NamespaceSelector,
		NotSelector:       e.NotSelector,
		Ports:             e.Ports,
		NotPorts:          e.NotPorts,
	}
	if e.ServiceAccounts != nil {
		ce.SANames = e.ServiceAccounts.Names
		ce.SASelector = e.ServiceAccounts.Selector
	}
	return ce
}

// parse parses a selector; bad is true when it does not parse.
func parse(s string) (selector.Selector, bool) {
	sel, err := selector.Parse(s)
	if err != nil {
		return nil, true
	}
	return sel, false
}
