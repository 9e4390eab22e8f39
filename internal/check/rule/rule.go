package rule

import (
	"fmt"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Severity of a rule or a finding.
type Severity string

// Severities, from the most to the least severe.
const (
	// Error: the cluster will break (a pod never starts, traffic is dropped,
	// the operator refuses the configuration).
	Error Severity = "error"
	// Warning: it degrades or is risky.
	Warning Severity = "warning"
	// Info: worth knowing, nothing breaks.
	Info Severity = "info"
)

// Rank orders severities: Error is 3, Info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as severe as t or more.
func (s Severity) AtLeast(t Severity) bool { return s.Rank() >= t.Rank() && s.Rank() > 0 }

// ParseSeverity reads "error", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	switch Severity(s) {
	case Error, Warning, Info:
		return Severity(s), nil
	}
	return "", fmt.Errorf("unknown severity %q: use error, warning or info", s)
}

// Reference is where a rule's facts come from: upstream documentation or
// a documentation page, issue or source file.
type Reference struct {
	Title string `json:"title"`
	URL   string `json:"url,omitempty"`
}

// Rule is one constraint of a hybrid cluster.
type Rule struct {
	// ID is stable: HYB and three digits. Findings, --rule, --skip and the
	// skip-checks annotation use it.
	ID string
	// Name is a stable kebab-case slug (SARIF's rule name); --rule, --skip
	// and the annotation accept it too.
	Name string
	// Title is one line, stated as the problem.
	Title string
	// Severity of the rule's findings. For a Blocker it is the severity
	// when Windows nodes exist or are planned.
	Severity Severity
	// Blocker marks a Windows readiness blocker: Error when the cluster has
	// or plans Windows nodes, Warning otherwise.
	Blocker bool
	// Examines lists the kinds the rule reads, as Kind.group
	// ("Installation.operator.tigera.io", "Pod"). A kind the input could
	// not give (a live read refused it) keeps the rule from running.
	Examines []string
	// Needs lists what the rule cannot judge without; when the input lacks
	// one (no Installation among the manifests), the rule is reported as
	// not run, with that cause, rather than passing on nothing. Each kind
	// is one of Examines.
	Needs []Need
	// Description says what breaks and why, with the upstream fact.
	Description string
	// Remediation is the command or manifest change that fixes it; findings
	// carry one filled in for the object at hand.
	Remediation string
	// References: seed sections, Kubernetes and Calico documentation.
	References []Reference
	// Check returns the rule's findings. It must not modify the Cluster.
	Check func(*Context) []Finding
}

// HelpURI is the first reference with a URL (SARIF's helpUri).
func (r *Rule) HelpURI() string {
	for _, ref := range r.References {
		if ref.URL != "" {
			return ref.URL
		}
	}
	return ""
}

// Finding is one violation of a rule by one object.
type Finding struct {
	// RuleID is filled in by Run.
	RuleID string
	// Severity is filled in by Run from the rule unless the rule's Check set
	// it (a finding more or less severe than the rule's default).
	Severity Severity
	// Object is the object at fault, as the loader keys it.
	Object model.Key
	// Field is the path of the field at fault in Object ("spec.taints"),
	// empty when the object as a whole is.
	Field string
	// Message names the object and field and says what is wrong.
	Message string
	// Remediation fixes this object; Run fills in the rule's when empty.
	Remediation string
	// Source is the object Object derives from, when Object is derived (the
	// Installation for an operator-rendered DaemonSet, the JoinConfiguration
	// for a Node's taints). Run uses it for the location and suppression;
	// when nil, Run infers it (owner references, operator and kubeadm
	// objects).
	Source *model.Key
	// Location is where Object (or else Source) was read from; zero when
	// both are derived. Filled in by Run.
	Location model.Origin

	// OwnOrigin is Object's own origin (zero for a derived object).
	OwnOrigin model.Origin
}

// ObjectString renders a key the way messages name objects:
// "Deployment win-demo/aspnetapp", "Installation default".
func ObjectString(k model.Key) string {
	if k.Kind == "" && k.Name == "" {
		return "cluster"
	}
	if k.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", k.Kind, k.Namespace, k.Name)
	}
	if k.Name == "" {
		return k.Kind
	}
	return fmt.Sprintf("%s %s", k.Kind, k.Name)
}
