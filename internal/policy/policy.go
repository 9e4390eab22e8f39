// Package policy holds what the Kubernetes NetworkPolicy API itself says:
// the directions a policy applies to and how one peer's ipBlock or one
// port matches. Which policies apply to a pod, and what Calico decides,
// is the Felix calculation's (internal/felix), which converts
// NetworkPolicies as libcalico-go does; reach's class-level evaluator
// reads these helpers and is held to that calculation by its tests.
//
// Semantics (k8s.io/api/networking/v1; the apiserver's defaulting in
// pkg/apis/networking/v1/defaults.go):
//
//   - policyTypes defaults to Ingress, plus Egress when the policy has
//     egress rules.
//   - A port's protocol defaults to TCP; a number, a range port..endPort, or
//     a name resolved on the destination pod's container ports. A rule with
//     ports never matches ICMP.
package policy

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// Direction is the direction of traffic relative to the pod a policy
// selects.
type Direction string

// Directions.
const (
	Ingress Direction = "Ingress"
	Egress  Direction = "Egress"
)

// PolicyTypes returns the directions a policy applies to: spec.policyTypes,
// or when empty, Ingress and, if it has egress rules, Egress (the
// apiserver's SetDefaults_NetworkPolicy; Calico's converter does the same).
func PolicyTypes(p *networkingv1.NetworkPolicy) []Direction {
	if len(p.Spec.PolicyTypes) > 0 {
		out := make([]Direction, 0, len(p.Spec.PolicyTypes))
		for _, t := range p.Spec.PolicyTypes {
			out = append(out, Direction(t))
		}
		return out
	}
	out := []Direction{Ingress}
	if len(p.Spec.Egress) > 0 {
		out = append(out, Egress)
	}
	return out
}

// IPBlockMatches reports whether ip is in the block's CIDR and in none of
// its except ranges.
func IPBlockMatches(b *networkingv1.IPBlock, ip netip.Addr) bool {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !cidr.Contains(ip) {
		return false
	}
	for _, e := range b.Except {
		if ex, err := netip.ParsePrefix(e); err == nil && ex.Contains(ip) {
			return false
		}
	}
	return true
}

// PortMatches reports whether a NetworkPolicyPort matches a connection with
// proto to port on dstPod (whose container ports name named ports).
func PortMatches(p networkingv1.NetworkPolicyPort, proto string, port int32, dstPod *corev1.Pod) bool {
	pp := corev1.ProtocolTCP
	if p.Protocol != nil {
		pp = *p.Protocol
	}
	if !strings.EqualFold(string(pp), proto) {
		return false
	}
	if p.Port == nil {
		return true
	}
	if p.Port.Type == intstr.Int {
		lo := p.Port.IntVal
		if p.EndPort != nil {
			return port >= lo && port <= *p.EndPort
		}
		return port == lo
	}
	return felix.NamedPort(dstPod, p.Port.StrVal, pp) == port && port != 0
}
