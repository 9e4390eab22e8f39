package migrate

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cputime"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// BenchmarkMigrateComparisons times only the comparisons of a five-step
// plan (the base twin with step 1, step 1 with step 2, ...; no builds, no
// reach), from the step twins Compute gives ("full": each derived from the
// previous by engine.Derive, sharing the objects it reuses) and from the
// same twins with every object equal to the previous twin's replaced by
// that twin's pointer ("shared", what a derived twin shares at best): the
// comparisons' part of the plan, which objects shared between twins make
// cheaper. HYBRID_BENCH_MIGRATE_NODES sets the cluster size (default 200).
func BenchmarkMigrateComparisons(b *testing.B) {
	full, ids := stepChain(b, 200)
	shared := []*model.Cluster{full[0]}
	for _, next := range full[1:] {
		shared = append(shared, sharedWith(shared[len(shared)-1], next))
	}
	for _, tc := range []struct {
		name  string
		chain []*model.Cluster
	}{{"full", full}, {"shared", shared}} {
		b.Run(tc.name, func(b *testing.B) {
			timeComparisons(b, tc.chain, ids, diff.Options{NoReach: true})
		})
	}
}

// BenchmarkMigrateReachComparisons: the comparisons of a five-step
// migration of a 1,000-node cluster with the reach difference, as the plan
// makes them (each step's twin derived from the one before, fresh twins
// per op), without the builds, the derivations and the final check.
// HYBRID_BENCH_MIGRATE_NODES overrides the size.
func BenchmarkMigrateReachComparisons(b *testing.B) {
	chain, ids := stepChain(b, 1000)
	b.ResetTimer()
	timeComparisons(b, chain, ids, diff.Options{})
}

// stepChain is the base twin of benchSnapshot's cluster and each step's
// twin as Compute derives it, with the steps' IDs.
func stepChain(b *testing.B, nodes int) ([]*model.Cluster, []string) {
	b.Helper()
	snap := benchSnapshot(b, nodes)
	c, err := engine.Build(snap)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		b.Fatal(err)
	}
	chain, ids := []*model.Cluster{c}, []string{}
	for _, st := range m.Steps {
		if st.Cluster != nil {
			chain = append(chain, st.Cluster)
			ids = append(ids, st.ID)
		}
	}
	return chain, ids
}

// timeComparisons compares each twin of the chain with the one before,
// fresh twins per op, and reports the CPU time per op from getrusage (the
// garbage collector's included), and each step's as <step>-cpu-ms/op.
func timeComparisons(b *testing.B, chain []*model.Cluster, ids []string, opt diff.Options) {
	defer cpuMetric(b)()
	steps := make([]time.Duration, len(ids))
	for b.Loop() {
		prev := diff.NewTwin(chain[0])
		for i, next := range chain[1:] {
			t := diff.NewTwin(next)
			start := cputime.Now()
			if _, err := diff.CompareTwins(prev, t, opt); err != nil {
				b.Fatal(err)
			}
			steps[i] += cputime.Now() - start
			prev = t
		}
	}
	for i, d := range steps {
		b.ReportMetric(float64(d.Milliseconds())/float64(b.N), ids[i]+"-cpu-ms/op")
	}
}

// sharedWith is next with every object that equals prev's object of the
// same kind, namespace and name replaced by prev's.
func sharedWith(prev, next *model.Cluster) *model.Cluster {
	out := *next
	out.Nodes = share(prev.Nodes, next.Nodes)
	out.Namespaces = share(prev.Namespaces, next.Namespaces)
	out.Pods = share(prev.Pods, next.Pods)
	out.Deployments = share(prev.Deployments, next.Deployments)
	out.ReplicaSets = share(prev.ReplicaSets, next.ReplicaSets)
	out.DaemonSets = share(prev.DaemonSets, next.DaemonSets)
	out.StatefulSets = share(prev.StatefulSets, next.StatefulSets)
	out.Services = share(prev.Services, next.Services)
	out.EndpointSlices = share(prev.EndpointSlices, next.EndpointSlices)
	out.NetworkPolicies = share(prev.NetworkPolicies, next.NetworkPolicies)
	out.RuntimeClasses = share(prev.RuntimeClasses, next.RuntimeClasses)
	out.ConfigMaps = share(prev.ConfigMaps, next.ConfigMaps)
	out.ServiceAccounts = share(prev.ServiceAccounts, next.ServiceAccounts)
	out.CSRs = share(prev.CSRs, next.CSRs)
	out.TigeraStatuses = share(prev.TigeraStatuses, next.TigeraStatuses)
	out.IPPools = share(prev.IPPools, next.IPPools)
	out.IPAMBlocks = share(prev.IPAMBlocks, next.IPAMBlocks)
	out.BlockAffinities = share(prev.BlockAffinities, next.BlockAffinities)
	out.FelixConfigs = share(prev.FelixConfigs, next.FelixConfigs)
	out.BGPConfigs = share(prev.BGPConfigs, next.BGPConfigs)
	out.CalicoPolicies = share(prev.CalicoPolicies, next.CalicoPolicies)
	out.GlobalNetworkPolicies = share(prev.GlobalNetworkPolicies, next.GlobalNetworkPolicies)
	if reflect.DeepEqual(prev.Installation, next.Installation) {
		out.Installation = prev.Installation
	}
	if reflect.DeepEqual(prev.IPAMConfig, next.IPAMConfig) {
		out.IPAMConfig = prev.IPAMConfig
	}
	if reflect.DeepEqual(prev.APIServer, next.APIServer) {
		out.APIServer = prev.APIServer
	}
	return &out
}

func share[T metav1.Object](prev, next []T) []T {
	by := make(map[string]T, len(prev))
	for _, o := range prev {
		by[o.GetNamespace()+"/"+o.GetName()] = o
	}
	out := make([]T, len(next))
	for i, o := range next {
		out[i] = o
		if p, ok := by[o.GetNamespace()+"/"+o.GetName()]; ok && reflect.DeepEqual(p, o) {
			out[i] = p
		}
	}
	return out
}
