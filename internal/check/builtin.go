package check

import (
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

// builtinRules is the catalogue, one slice per area file.
func builtinRules() []rule.Rule {
	var all []rule.Rule
	for _, area := range [][]rule.Rule{
		calicoRules(),
		cniRules(),
		nodeRules(),
		workloadRules(),
		daemonSetRules(),
		kubeProxyRules(),
		serviceRules(),
		firewallRules(),
		windowsPeerRules(),
		kubeconfigRules(),
	} {
		all = append(all, area...)
	}
	return all
}

var defaultRegistry = sync.OnceValues(func() (*rule.Registry, error) { return rule.NewRegistry(builtinRules()...) })

// Default is the built-in catalogue. The error is non-nil only if the
// catalogue itself is inconsistent, which the package's tests rule out.
func Default() (*rule.Registry, error) { return defaultRegistry() }
