package check

import (
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/calicorules"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/kubeconfigrules"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/noderules"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/workloadrules"
)

// builtinRules is the catalogue, one slice per area file of the rule
// families.
func builtinRules() []rule.Rule {
	var all []rule.Rule
	for _, area := range [][]rule.Rule{
		calicorules.CalicoRules(),
		calicorules.CNIRules(),
		noderules.NodeRules(),
		noderules.KubeletRules(),
		workloadrules.WorkloadRules(),
		workloadrules.DaemonSetRules(),
		workloadrules.KubeProxyRules(),
		workloadrules.ServiceRules(),
		noderules.FirewallRules(),
		noderules.WindowsPeerRules(),
		noderules.HostRules(),
		kubeconfigrules.KubeconfigRules(),
	} {
		all = append(all, area...)
	}
	return all
}

var defaultRegistry = sync.OnceValues(func() (*rule.Registry, error) { return rule.NewRegistry(builtinRules()...) })

// Default is the built-in catalogue. The error is non-nil only if the
// catalogue itself is inconsistent, which the package's tests rule out.
func Default() (*rule.Registry, error) { return defaultRegistry() }
