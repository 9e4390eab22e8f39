package engine

import (
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// shareEqual replaces each object of the derived twin c that equals
// (reflect.DeepEqual) prev's object of the same kind, namespace and name by
// prev's: the build made it again (a Node, a Service, a pod of a rendered
// DaemonSet, the operator's objects), but the step left it as it was, and
// whoever compares the two twins skips an object they share by pointer
// (diff's digest, plane.Reuse) instead of encoding it again. c stays equal
// to what it was under reflect.DeepEqual; neither twin may change a shared
// object afterwards, as for the pods a derivation reuses.
//
// The pods of DaemonSets the build made that it shares are the previous
// twin's in what it carries for the next derivation too (carry.go), so
// that the next one keeps the pods the twin holds.
func shareEqual(prev, c *model.Cluster) {
	moved := map[*corev1.Pod]*corev1.Pod{}
	shareList(prev.Pods, c.Pods, moved)
	if k := recall(c); k != nil && len(moved) > 0 {
		k.movePods(moved)
	}
	shareList(prev.Nodes, c.Nodes)
	shareList(prev.Namespaces, c.Namespaces)
	shareList(prev.Deployments, c.Deployments)
	shareList(prev.ReplicaSets, c.ReplicaSets)
	shareList(prev.DaemonSets, c.DaemonSets)
	shareList(prev.StatefulSets, c.StatefulSets)
	shareList(prev.Services, c.Services)
	shareList(prev.EndpointSlices, c.EndpointSlices)
	shareList(prev.NetworkPolicies, c.NetworkPolicies)
	shareList(prev.RuntimeClasses, c.RuntimeClasses)
	shareList(prev.PriorityClasses, c.PriorityClasses)
	shareList(prev.ConfigMaps, c.ConfigMaps)
	shareList(prev.ServiceAccounts, c.ServiceAccounts)
	shareList(prev.CSRs, c.CSRs)
	shareList(prev.TigeraStatuses, c.TigeraStatuses)
	shareList(prev.IPPools, c.IPPools)
	shareList(prev.FelixConfigs, c.FelixConfigs)
	shareList(prev.BGPConfigs, c.BGPConfigs)
	shareList(prev.CalicoPolicies, c.CalicoPolicies)
	shareList(prev.GlobalNetworkPolicies, c.GlobalNetworkPolicies)
	shareList(prev.CalicoNodes, c.CalicoNodes)
	shareOne(prev.Installation, &c.Installation)
	shareOne(prev.APIServer, &c.APIServer)
	shareOne(prev.IPAMConfig, &c.IPAMConfig)
}

func shareOne[T comparable](prev T, cur *T) {
	var zero T
	if prev != zero && *cur != zero && *cur != prev && reflect.DeepEqual(prev, *cur) {
		*cur = prev
	}
}

// shareList pairs the two lists' objects by namespace and name: walking
// both in order when both are sorted so (Build sorts most lists), else
// through an index of prev's.
func shareList[T interface {
	comparable
	metav1.Object
}](prev, cur []T, moved ...map[T]T) {
	if len(prev) == 0 || len(cur) == 0 {
		return
	}
	cmp := func(a, b T) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	}
	share := func(i int, p T) {
		if o := cur[i]; o != p && reflect.DeepEqual(p, o) {
			cur[i] = p
			if len(moved) > 0 {
				moved[0][o] = p
			}
		}
	}
	if slices.IsSortedFunc(prev, cmp) && slices.IsSortedFunc(cur, cmp) {
		j := 0
		for i, o := range cur {
			for j < len(prev) && cmp(prev[j], o) < 0 {
				j++
			}
			if j < len(prev) && cmp(prev[j], o) == 0 {
				share(i, prev[j])
			}
		}
		return
	}
	byName := make(map[[2]string]T, len(prev))
	for _, p := range prev {
		byName[[2]string{p.GetNamespace(), p.GetName()}] = p
	}
	for i, o := range cur {
		if p, ok := byName[[2]string{o.GetNamespace(), o.GetName()}]; ok {
			share(i, p)
		}
	}
}
