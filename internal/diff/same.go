package diff

import (
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// sameNetworkInputs reports whether two clusters hold the same objects
// for everything the dataplane compilers, traces and reach read: every
// field of the Cluster except the controllers (whose pods are compared),
// CSRs, TigeraStatuses and the build's own notes and bookkeeping. It is
// conservative: a difference in any of them means compiling and comparing.
// Lists are compared element by element, an element shared by both twins
// (the same pointer) without reading it.
func sameNetworkInputs(a, b *model.Cluster) bool {
	return sameList(a.Nodes, b.Nodes) && sameList(a.Namespaces, b.Namespaces) && sameList(a.Pods, b.Pods) &&
		sameList(a.ReplicaSets, b.ReplicaSets) && sameList(a.Services, b.Services) &&
		sameList(a.EndpointSlices, b.EndpointSlices) && sameList(a.NetworkPolicies, b.NetworkPolicies) &&
		sameList(a.RuntimeClasses, b.RuntimeClasses) && sameList(a.ConfigMaps, b.ConfigMaps) &&
		sameList(a.ServiceAccounts, b.ServiceAccounts) &&
		sameList(a.IPPools, b.IPPools) && sameList(a.IPAMBlocks, b.IPAMBlocks) &&
		sameList(a.BlockAffinities, b.BlockAffinities) && sameList(a.FelixConfigs, b.FelixConfigs) &&
		sameList(a.BGPConfigs, b.BGPConfigs) && sameList(a.CalicoPolicies, b.CalicoPolicies) &&
		sameList(a.GlobalNetworkPolicies, b.GlobalNetworkPolicies) && sameList(a.CalicoNodes, b.CalicoNodes) &&
		same(a.Installation, b.Installation) && same(a.APIServer, b.APIServer) && same(a.IPAMConfig, b.IPAMConfig) &&
		equality.Semantic.DeepEqual(a.Hosts, b.Hosts) && equality.Semantic.DeepEqual(a.Network, b.Network) &&
		a.NetworkFrom == b.NetworkFrom && equality.Semantic.DeepEqual(a.Kubeadm, b.Kubeadm)
}

func sameList[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}

func same[T any](a, b *T) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return equality.Semantic.DeepEqual(a, b)
}
