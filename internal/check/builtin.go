package check

import (
	"sync"
)

// builtinRules is the catalogue, one slice per area file.
func builtinRules() []Rule {
	var all []Rule
	for _, area := range [][]Rule{
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

var defaultRegistry = sync.OnceValues(func() (*Registry, error) { return NewRegistry(builtinRules()...) })

// Default is the built-in catalogue. The error is non-nil only if the
// catalogue itself is inconsistent, which the package's tests rule out.
func Default() (*Registry, error) { return defaultRegistry() }
