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
	snap := benchSnapshot(b, 200)
	c, err := engine.Build(snap)
	if err != nil {
		b.Fatal(err)
	}
	m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		b.Fatal(err)
	}
	full, ids := []*model.Cluster{c}, []string{}
	for _, st := range m.Steps {
		if st.Cluster != nil {
			full = append(full, st.Cluster)
			ids = append(ids, st.ID)
		}
	}
	shared := []*model.Cluster{c}
	for _, next := range full[1:] {
		shared = append(shared, sharedWith(shared[len(shared)-1], next))
	}
	for _, tc := range []struct {
		name  string
		chain []*model.Cluster
	}{{"full", full}, {"shared", shared}} {
		b.Run(tc.name, func(b *testing.B) {
			defer cpuMetric(b)()
			// Each step's CPU time too (the garbage collector's while it
			// runs included), as <step>-cpu-ms/op.
			steps := make([]time.Duration, len(ids))
			for b.Loop() {
				prev := diff.NewTwin(tc.chain[0])
				for i, next := range tc.chain[1:] {
					start := cputime.Now()
					t := diff.NewTwin(next)
					if _, err := diff.CompareTwins(prev, t, diff.Options{NoReach: true}); err != nil {
						b.Fatal(err)
					}
					steps[i] += cputime.Now() - start
					prev = t
				}
			}
			for i, d := range steps {
				b.ReportMetric(float64(d.Milliseconds())/float64(b.N), ids[i]+"-cpu-ms/op")
			}
		})
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
