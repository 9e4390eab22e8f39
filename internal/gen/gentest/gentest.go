// Package gentest gives tests and benchmarks internal/gen's clusters,
// loaded as `kubectl-hybrid -f DIR` reads them.
package gentest

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Shape is the benchmarks' cluster of n Linux nodes: 30 pods with
// observed addresses, 2 Services and 0.4 NetworkPolicies per node, a
// namespace per ten nodes, seed 1. Callers add Windows nodes and the rest.
func Shape(n int) gen.Options {
	return gen.Options{Nodes: n, Namespaces: max(1, n/10), Pods: 30 * n, Services: 2 * n,
		Policies: 2 * n / 5, Seed: 1, ObservedIPs: true}
}

// Snapshot writes gen's cluster of o to a temporary directory and loads
// it with lo (its Filenames set to that directory).
func Snapshot(tb testing.TB, o gen.Options, lo load.Options) *model.Snapshot {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := gen.WriteDir(dir, o); err != nil {
		tb.Fatal(err)
	}
	lo.Filenames = []string{dir}
	s, err := load.Load(lo)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
