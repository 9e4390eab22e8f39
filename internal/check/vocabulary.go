package check

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"

// The rules' vocabulary lives in package rule; the names a caller of Run
// and of the writers needs are repeated here so that callers import one
// package.
type (
	Severity   = rule.Severity
	Rule       = rule.Rule
	Finding    = rule.Finding
	Registry   = rule.Registry
	Kubeconfig = rule.Kubeconfig
	NotRun     = rule.NotRun
)

// Severities, from the most to the least severe.
const (
	Error   = rule.Error
	Warning = rule.Warning
	Info    = rule.Info
)

var (
	// ParseSeverity reads "error", "warning" or "info".
	ParseSeverity = rule.ParseSeverity
	// ParseKubeconfig decodes one kubeconfig file.
	ParseKubeconfig = rule.ParseKubeconfig
	// ObjectString renders a key the way messages name objects.
	ObjectString = rule.ObjectString
)
