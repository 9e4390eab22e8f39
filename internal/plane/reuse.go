package plane

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Reuse is New(c) for a cluster that follows prev's (a long-running
// server's next twin): a node whose compile inputs are the same in both
// keeps the dataplane prev compiled for it, the others compile on first
// use as in New.
//
// What a node's compile reads (internal/dataplane/linux newClusterCtx,
// windows newCompiler, felix.New, kubeproxy.NewCluster):
//   - shared by every node: the Nodes (routes, neighbours and FDB entries
//     to every other node), Hosts, the node network, the kubeadm
//     configuration, Namespaces and ServiceAccounts (policy selectors),
//     Services and EndpointSlices (kube-proxy), the Kubernetes and
//     Calico policies, the Installation, IPPools, FelixConfigurations and
//     each IPAM block's name, CIDR and affinity;
//   - of every pod, what Felix and the routes read of it: namespace,
//     name, labels, spec, addresses and phase (workload endpoints and IP
//     set members, routes to borrowed addresses);
//   - the node's own pods whole.
//
// When a shared input or any pod's network identity differs, every node
// compiles anew; otherwise a node compiles anew when its own pods differ.
// The comparison is done here, once: reflect.DeepEqual of the shared
// inputs and of each pod's identity, linear in the cluster.
//
// A reused node holds the cluster it was compiled from; only nodes prev
// compiled itself are reused, so at most prev's cluster stays reachable
// besides c (a node left unchanged for long compiles again every other
// twin).
func Reuse(prev *Plane, c *model.Cluster) (*Plane, error) {
	p, err := New(c)
	if err != nil || prev == nil {
		return p, err
	}
	p.gen = prev.gen + 1
	if !sameShared(prev.c, c) || !samePodIdentities(prev.c.Pods, c.Pods) {
		return p, nil
	}
	prevPods, nextPods := podsByNode(prev.c.Pods), podsByNode(c.Pods)
	same := func(node string) bool { return reflect.DeepEqual(prevPods[node], nextPods[node]) }
	prev.mu.Lock()
	defer prev.mu.Unlock()
	for name, e := range prev.lx {
		if e.done.Load() && e.gen == prev.gen && e.n != nil && same(name) {
			p.lx[name] = e
		}
	}
	for name, e := range prev.win {
		if e.done.Load() && e.gen == prev.gen && e.err == nil && e.n != nil && same(name) {
			p.win[name] = e
		}
	}
	return p, nil
}

// Follow is New(c) for a cluster that follows prev's (a plan's next
// step): what the two clusters' inputs leave equal is made once for both,
// on first use by either. It shares prev's Felix calculation when Felix
// reads the same objects of both (felix.SameInputs), kube-proxy's Service
// model of the Linux nodes (linux.NewCompilerAfter), the pod index when
// the pods are the same, and the other indexes when what index reads is
// the same (sameIndexInputs); it compiles no node of prev's. Objects are
// compared by pointer: an index holds them. A nil prev is New(c).
func Follow(prev *Plane, c *model.Cluster) (*Plane, error) {
	if prev == nil || c == nil {
		return New(c)
	}
	var calc func() *felix.Calc
	if felix.SameInputs(prev.c, c) {
		calc = prev.calc
	}
	p, err := newPlane(c, calc, prev.lxc)
	if err != nil {
		return nil, err
	}
	if slices.Equal(prev.c.Pods, c.Pods) {
		p.podsOf = prev.podsOf
		if sameIndexInputs(prev.c, c) {
			p.ixOf = prev.ixOf
		}
	}
	return p, nil
}

// sameIndexInputs compares, besides the pods, what index reads: the
// Nodes' names, the Services, EndpointSlices and ReplicaSets (by
// pointer) and each Host's name, NIC name and MTU.
func sameIndexInputs(a, b *model.Cluster) bool {
	if !slices.Equal(a.Services, b.Services) || !slices.Equal(a.EndpointSlices, b.EndpointSlices) ||
		!slices.Equal(a.ReplicaSets, b.ReplicaSets) || len(a.Nodes) != len(b.Nodes) || len(a.Hosts) != len(b.Hosts) {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i].Name != b.Nodes[i].Name {
			return false
		}
	}
	for i := range a.Hosts {
		x, y := &a.Hosts[i], &b.Hosts[i]
		if x.Name != y.Name || x.NIC.Name != y.NIC.Name || x.NIC.MTU != y.NIC.MTU {
			return false
		}
	}
	return true
}

// sameShared compares what every node's compile reads besides the pods.
func sameShared(a, b *model.Cluster) bool {
	return reflect.DeepEqual(a.Nodes, b.Nodes) &&
		reflect.DeepEqual(a.Hosts, b.Hosts) &&
		reflect.DeepEqual(a.Network, b.Network) &&
		reflect.DeepEqual(a.Kubeadm, b.Kubeadm) &&
		reflect.DeepEqual(a.Namespaces, b.Namespaces) &&
		reflect.DeepEqual(a.ServiceAccounts, b.ServiceAccounts) &&
		reflect.DeepEqual(a.Services, b.Services) &&
		reflect.DeepEqual(a.EndpointSlices, b.EndpointSlices) &&
		reflect.DeepEqual(a.NetworkPolicies, b.NetworkPolicies) &&
		reflect.DeepEqual(a.CalicoPolicies, b.CalicoPolicies) &&
		reflect.DeepEqual(a.GlobalNetworkPolicies, b.GlobalNetworkPolicies) &&
		reflect.DeepEqual(a.Installation, b.Installation) &&
		reflect.DeepEqual(a.IPPools, b.IPPools) &&
		reflect.DeepEqual(a.FelixConfigs, b.FelixConfigs) &&
		sameBlocks(a.IPAMBlocks, b.IPAMBlocks)
}

// sameBlocks compares the blocks as the compilers read them: name, CIDR
// and affinity, not the allocations.
func sameBlocks(a, b []*calico.IPAMBlock) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Spec.CIDR != b[i].Spec.CIDR || !reflect.DeepEqual(a[i].Spec.Affinity, b[i].Spec.Affinity) {
			return false
		}
	}
	return true
}

// samePodIdentities compares, pod by pod in order, what a node's compile
// reads of other nodes' pods.
func samePodIdentities(a, b []*corev1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x == y {
			continue // a derived twin shares the pods it reused
		}
		if x.Namespace != y.Namespace || x.Name != y.Name || x.Status.PodIP != y.Status.PodIP ||
			x.Status.Phase != y.Status.Phase || felix.Ready(x) != felix.Ready(y) ||
			!maps.Equal(x.Labels, y.Labels) || !reflect.DeepEqual(x.Status.PodIPs, y.Status.PodIPs) ||
			!reflect.DeepEqual(x.Spec, y.Spec) {
			return false
		}
	}
	return true
}

func podsByNode(pods []*corev1.Pod) map[string][]*corev1.Pod {
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p)
	}
	return out
}
