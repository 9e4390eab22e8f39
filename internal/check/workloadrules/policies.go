package workloadrules

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var (
	k8sNetworkPolicy  = rule.Reference{Title: "Kubernetes: Network Policies", URL: "https://kubernetes.io/docs/concepts/services-networking/network-policies/"}
	felixWindowsRules = rule.Reference{Title: "Calico: felix/dataplane/windows/policysets/policysets.go, protoRuleToHnsRules (rules skipped as not supported on Windows)",
		URL: "https://github.com/projectcalico/calico/blob/master/felix/dataplane/windows/policysets/policysets.go"}
)

// windowsPodSet is a Windows workload as policy selectors see it: its pod
// template's labels (a workload's pods share them) in its namespace.
type windowsPodSet struct {
	w      *rule.Workload
	labels map[string]string // Kubernetes labels
	calico map[string]string // Calico's view (calicoPodLabels)
}

// windowsPodSets are the workloads meant for or running on Windows whose
// pods get an HNS endpoint from Calico (not host-network, not HostProcess).
func windowsPodSets(x *rule.Context) []windowsPodSet {
	var out []windowsPodSet
	for _, w := range x.Idx().Workloads {
		if !w.Windows() || w.HostProcess || w.Spec.HostNetwork {
			continue
		}
		stub := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.Key.Namespace, Labels: w.PodMeta.Labels},
			Spec: corev1.PodSpec{ServiceAccountName: w.Spec.ServiceAccountName}}
		out = append(out, windowsPodSet{w: w, labels: w.PodMeta.Labels, calico: calicoPodLabels(stub)})
	}
	return out
}

// skipConsequence says what skipping a rule of this action does to the
// traffic it matches (policysets.go leaves it out of the endpoint's ACLs;
// the tier ends in a Block).
func skipConsequence(action string) string {
	switch action {
	case "allow":
		return "the traffic it allows is dropped by the end-of-tier Block"
	case "deny":
		return "the traffic it denies is not denied by it and may be let through by a later rule"
	case "pass", "next-tier":
		return "the traffic it passes to the next tier is decided by this tier's later rules instead"
	}
	return "it has no effect there"
}

// skipFix is the rewrite for each reason.
var skipFix = map[string]string{
	windows.SkipNamedPort: "use the port number instead of its name",
	windows.SkipNegative:  "replace except, notNets, notSelector, notPorts and notProtocol with positive matches (list the allowed CIDRs, or a Deny rule before an Allow)",
	windows.SkipICMP:      "match the ICMP protocol without a type or code",
	windows.SkipIPv6:      "leave IPv6 rules out of policies for Windows pods: Calico for Windows is IPv4 only",
	windows.SkipLogAction: "drop the Log rule: Windows has no packet log",
}

// skipWhat names each reason as the message says it.
var skipWhat = map[string]string{
	windows.SkipNamedPort: "a named port",
	windows.SkipNegative:  "a negative match",
	windows.SkipICMP:      "an ICMP type or code",
	windows.SkipIPv6:      "ipVersion 6",
	windows.SkipLogAction: "the Log action",
}

// harmless: a rule skipped only for these reasons changes no verdict on an
// IPv4-only Windows endpoint.
func harmless(reasons []string) bool {
	for _, r := range reasons {
		if r != windows.SkipIPv6 && r != windows.SkipLogAction {
			return false
		}
	}
	return true
}

var rulePolicyWindowsSkips = rule.Rule{
	ID: "HYB056", Name: "policy-rule-skipped-on-windows", Severity: rule.Error,
	Title: "Policy rule selecting Windows pods uses a match Felix on Windows does not program",
	Examines: []string{"NetworkPolicy.networking.k8s.io", "NetworkPolicy.projectcalico.org", "GlobalNetworkPolicy.projectcalico.org",
		"Pod", "Deployment.apps", "DaemonSet.apps", "StatefulSet.apps", "ReplicaSet.apps", "Node"},
	Description: `Felix on Windows turns each policy rule into HNS ACLs on the endpoints of the Windows pods
the policy selects, but it cannot express every match: a rule with a named port, a negative
match (notNets, notSelector, notPorts, notProtocol, notICMP; a NetworkPolicy ipBlock's except
becomes notNets), an ICMP type or code, ipVersion 6, or the Log action is logged as "not
supported on Windows" and left out (policysets.go protoRuleToHnsRules returns ErrNotSupported).
The policy still applies, so a skipped Allow rule leaves its traffic to the tier's final Block
(Kubernetes would allow it), and a skipped Deny lets through traffic the policy denies. Linux
pods of the same policy get the rule. The ACL compiler of this tool and this check share one
decision of what is skipped; trace shows the dropped packet. Rules skipped only for IPv6 or Log
change no verdict on Windows' IPv4-only endpoints and are reported as info.`,
	Remediation: `Rewrite the rule in a form Felix on Windows programs: numeric ports, positive matches only, ICMP without type or code`,
	References:  []rule.Reference{rule.CalicoLimitations, felixWindowsRules, rule.CalicoPolicy, k8sNetworkPolicy},
	Check: func(x *rule.Context) []rule.Finding {
		sets := windowsPodSets(x)
		if len(sets) == 0 {
			return nil
		}
		var out []rule.Finding
		report := func(key model.Key, selected []string, skipped []windows.Unsupported) {
			if len(selected) == 0 {
				return
			}
			sort.Strings(selected)
			for _, u := range skipped {
				var what, fixes []string
				for _, r := range u.Reasons {
					what, fixes = append(what, skipWhat[r]), append(fixes, skipFix[r])
				}
				fix := strings.Join(fixes, "; ")
				f := rule.Finding{Object: key, Field: u.Field,
					Message: fmt.Sprintf("%s (%s) uses %s; Felix on Windows does not program it on the HNS endpoints of %s, so %s",
						u.Field, u.Action, strings.Join(what, " and "), rule.ListNames(selected, 3), skipConsequence(u.Action)),
					Remediation: strings.ToUpper(fix[:1]) + fix[1:]}
				if harmless(u.Reasons) {
					f.Severity = rule.Info
				}
				out = append(out, f)
			}
		}
		for _, np := range x.Cluster.NetworkPolicies {
			skipped := windows.UnsupportedNetworkPolicyRules(np)
			if len(skipped) == 0 {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				continue // the API server refuses such a policy
			}
			var selected []string
			for _, s := range sets {
				if s.w.Key.Namespace == np.Namespace && sel.Matches(labels.Set(s.labels)) {
					selected = append(selected, rule.ObjectString(s.w.Key))
				}
			}
			report(model.Key{Group: "networking.k8s.io", Kind: "NetworkPolicy", Namespace: np.Namespace, Name: np.Name}, selected, skipped)
		}
		calicoPolicy := func(key model.Key, ns string, spec calico.PolicySpec) {
			skipped := windows.UnsupportedCalicoRules(spec)
			if len(skipped) == 0 {
				return
			}
			sel, err := selector.Parse(spec.Selector)
			if err != nil {
				return
			}
			scope := policyScope{namespace: ns}
			if spec.NamespaceSelector != "" {
				nsSel, err := selector.Parse(spec.NamespaceSelector)
				if err != nil {
					return
				}
				scope = policyScope{nsSel: nsSel, nsText: spec.NamespaceSelector}
			}
			var selected []string
			for _, s := range sets {
				if holds(x, scope, s.w.Key.Namespace) && sel.Evaluate(s.calico) {
					selected = append(selected, rule.ObjectString(s.w.Key))
				}
			}
			report(key, selected, skipped)
		}
		for _, p := range x.Cluster.CalicoPolicies {
			calicoPolicy(model.Key{Group: calico.Group, Kind: "NetworkPolicy", Namespace: p.Namespace, Name: p.Name}, p.Namespace, p.Spec)
		}
		for _, p := range x.Cluster.GlobalNetworkPolicies {
			calicoPolicy(model.Key{Group: calico.Group, Kind: "GlobalNetworkPolicy", Name: p.Name}, "", p.Spec)
		}
		return out
	},
}
