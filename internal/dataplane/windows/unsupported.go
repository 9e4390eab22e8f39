package windows

import (
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
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
	skipSASelector = "serviceAccounts.selector (not modeled)"
	skipUnknownAct = "unknown action "
)

// windowsSkip says why Felix on Windows does not program a rule, "" when
// it does. It is the one decision the ACL compiler (ruleACLs) and the
// check of policies (UnsupportedRules) share. The order is upstream's: IP
// version (a rule for another version than IPv4), negative matches
// (ruleHasNegativeMatches: notNets, notPorts, notSelector, notProtocol,
// notICMP; a NetworkPolicy's ipBlock.except becomes notNets), ICMP type or
// code, named ports, then the log action.
func windowsSkip(r crule) string {
	switch {
	case r.ipVersion == 6:
		return SkipIPv6
	case r.notProtocol || r.notICMP || len(r.src.notNets) > 0 || len(r.dst.notNets) > 0 ||
		r.src.notSelector != "" || r.dst.notSelector != "" || r.src.notPorts || r.dst.notPorts:
		return SkipNegative
	case r.icmp:
		return SkipICMP
	case namedPorts(r.src.ports) || namedPorts(r.dst.ports):
		return SkipNamedPort
	case r.action == "log":
		return SkipLogAction
	}
	return ""
}

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
	ps := k8sPolicy(np)
	var out []Unsupported
	if ps.ingress {
		for i, r := range np.Spec.Ingress {
			out = appendUnsupported(out, fmt.Sprintf("spec.ingress[%d]", i), k8sRules(r.From, r.Ports, true))
		}
	}
	if ps.egress {
		for i, r := range np.Spec.Egress {
			out = appendUnsupported(out, fmt.Sprintf("spec.egress[%d]", i), k8sRules(r.To, r.Ports, false))
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
			out = appendUnsupported(out, fmt.Sprintf("spec.ingress[%d]", i), []crule{fromCalicoRule(r)})
		}
	}
	if egress {
		for i, r := range spec.Egress {
			out = appendUnsupported(out, fmt.Sprintf("spec.egress[%d]", i), []crule{fromCalicoRule(r)})
		}
	}
	return out
}

func appendUnsupported(out []Unsupported, field string, rules []crule) []Unsupported {
	var reasons []string
	action := ""
	for _, r := range rules {
		action = r.action
		if why := windowsSkip(r); why != "" && !containsStr(reasons, why) {
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
