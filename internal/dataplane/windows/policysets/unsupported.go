package policysets

import (
	"fmt"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	fc "github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// Reasons Felix on Windows gives for not programming a rule
// (felix/dataplane/windows/policysets/policysets.go protoRuleToHnsRules
// returns ErrNotSupported for each; protoRulesToHnsRules logs "Skipped
// rule because it's not supported on Windows" and leaves the rule out).
const (
	SkipIPv6       = "IPv6 rule"
	SkipNegative   = "negative match"
	SkipICMP       = "ICMP type/code match"
	SkipNamedPort  = "named port"
	SkipLogAction  = "log action"
	skipUnknownAct = "unknown action "
)

// windowsSkip says why Felix on Windows does not program a rule, "" when
// it does. It is the one decision the ACL compiler (ruleACLs) and the
// check of policies (UnsupportedRules) share. The order is upstream's: IP
// version (a rule for another version than IPv4), negative matches
// (ruleHasNegativeMatches: notNets, notPorts, notSelector, notProtocol,
// notICMP; a NetworkPolicy's ipBlock.except becomes notNets), ICMP type or
// code, named ports, then the log action.
func windowsSkip(r *fc.Rule) string {
	switch {
	case r.IPVersion == 6:
		return SkipIPv6
	case r.NotProtocol != nil || r.NotICMP != nil || len(r.Src.NotNets) > 0 || len(r.Dst.NotNets) > 0 ||
		r.Src.NotSelector != "" || r.Dst.NotSelector != "" || len(r.Src.NotPorts) > 0 || len(r.Dst.NotPorts) > 0:
		return SkipNegative
	case r.ICMP != nil:
		return SkipICMP
	case namedPorts(r.Src.Ports) || namedPorts(r.Dst.Ports):
		return SkipNamedPort
	case r.Action == fc.ActionLog:
		return SkipLogAction
	}
	return ""
}

// WindowsSkip says why Felix on Windows does not program a rule of the
// calculation, "" when it does.
func WindowsSkip(r *fc.Rule) string { return windowsSkip(r) }

// Unsupported is one rule of a policy that Felix on Windows does not
// program.
type Unsupported struct {
	// Field is the rule's path in the policy: "spec.ingress[0]".
	Field string
	// Action is the rule's action, lower case ("allow" for a NetworkPolicy).
	Action string
	// Reasons are windowsSkip's reasons for the Calico rules the rule makes
	// (a NetworkPolicy rule becomes one per protocol and peer), each once.
	Reasons []string
}

// UnsupportedNetworkPolicyRules lists the rules of a Kubernetes
// NetworkPolicy, in the directions it applies to, that Felix on Windows
// skips, converted as the compiler converts them (k8sPolicy).
func UnsupportedNetworkPolicyRules(np *networkingv1.NetworkPolicy) []Unsupported {
	ps := fc.FromKubernetes(np)
	var out []Unsupported
	if ps.Ingress {
		for i, r := range np.Spec.Ingress {
			out = appendUnsupported(out, fmt.Sprintf("spec.ingress[%d]", i), fc.KubernetesRules(r.From, r.Ports, true, i))
		}
	}
	if ps.Egress {
		for i, r := range np.Spec.Egress {
			out = appendUnsupported(out, fmt.Sprintf("spec.egress[%d]", i), fc.KubernetesRules(r.To, r.Ports, false, i))
		}
	}
	return out
}

// UnsupportedCalicoRules lists the rules of a Calico NetworkPolicy or
// GlobalNetworkPolicy, in the directions it applies to, that Felix on
// Windows skips.
func UnsupportedCalicoRules(spec calicoapi.PolicySpec) []Unsupported {
	ingress, egress := spec.Directions()
	var out []Unsupported
	if ingress {
		for i, r := range spec.Ingress {
			out = appendUnsupported(out, fmt.Sprintf("spec.ingress[%d]", i), []fc.Rule{fc.CalicoRule(r)})
		}
	}
	if egress {
		for i, r := range spec.Egress {
			out = appendUnsupported(out, fmt.Sprintf("spec.egress[%d]", i), []fc.Rule{fc.CalicoRule(r)})
		}
	}
	return out
}

func appendUnsupported(out []Unsupported, field string, rules []fc.Rule) []Unsupported {
	var reasons []string
	action := ""
	for i := range rules {
		action = rules[i].Action
		if why := windowsSkip(&rules[i]); why != "" && !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) == 0 {
		return out
	}
	if action == "" {
		action = "allow" // Calico's default action
	}
	return append(out, Unsupported{Field: field, Action: action, Reasons: reasons})
}
