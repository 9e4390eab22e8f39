package engine

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
)

// shareEqual replaces each object of the derived twin c that equals
// (reflect.DeepEqual, compared through objeq) prev's object of the same
// kind, namespace and name by prev's: the build made it again (a Node, a Service, a pod of a rendered
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
	shareSorted(prev.Pods, c.Pods, moved)
	if k := recall(c); k != nil && len(moved) > 0 {
		k.movePods(moved)
	}
	shareSorted(prev.Nodes, c.Nodes)
	shareSorted(prev.Namespaces, c.Namespaces)
	shareSorted(prev.Deployments, c.Deployments)
	shareSorted(prev.ReplicaSets, c.ReplicaSets)
	shareSorted(prev.DaemonSets, c.DaemonSets)
	shareSorted(prev.StatefulSets, c.StatefulSets)
	shareSorted(prev.Services, c.Services)
	shareSorted(prev.EndpointSlices, c.EndpointSlices)
	shareSorted(prev.NetworkPolicies, c.NetworkPolicies)
	shareSorted(prev.RuntimeClasses, c.RuntimeClasses)
	shareSorted(prev.PriorityClasses, c.PriorityClasses)
	shareSorted(prev.ConfigMaps, c.ConfigMaps)
	shareSorted(prev.ServiceAccounts, c.ServiceAccounts)
	shareSorted(prev.CSRs, c.CSRs)
	shareSorted(prev.TigeraStatuses, c.TigeraStatuses)
	shareSorted(prev.IPPools, c.IPPools)
	shareList(prev.FelixConfigs, c.FelixConfigs)
	shareList(prev.BGPConfigs, c.BGPConfigs)
	shareList(prev.CalicoPolicies, c.CalicoPolicies)
	shareList(prev.GlobalNetworkPolicies, c.GlobalNetworkPolicies)
	shareSorted(prev.CalicoNodes, c.CalicoNodes)
	shareOne(prev.Installation, &c.Installation)
	shareOne(prev.APIServer, &c.APIServer)
	shareOne(prev.IPAMConfig, &c.IPAMConfig)
}

func shareOne[T comparable](prev T, cur *T) {
	var zero T
	if prev != zero && *cur != zero && *cur != prev && objeq.Equal(prev, *cur) {
		*cur = prev
	}
}

// shareList pairs the two lists' objects by namespace and name: walking
// both in order when both are sorted so, else through an index of prev's.
func shareList[T interface {
	comparable
	metav1.Object
}](prev, cur []T) {
	if slices.IsSortedFunc(prev, byNsName[T]) && slices.IsSortedFunc(cur, byNsName[T]) {
		shareSorted(prev, cur)
		return
	}
	byName := make(map[[2]string]T, len(prev))
	for _, p := range prev {
		byName[[2]string{p.GetNamespace(), p.GetName()}] = p
	}
	for i, o := range cur {
		if p, ok := byName[[2]string{o.GetNamespace(), o.GetName()}]; ok && o != p && objeq.Equal(p, o) {
			cur[i] = p
		}
	}
}

func byNsName[T metav1.Object](a, b T) int {
	if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
		return c
	}
	return strings.Compare(a.GetName(), b.GetName())
}

// shareSorted is shareList for two lists sorted by namespace and name
// (builder.sort sorts them in every build; were one not, objects would
// only go unshared), recording in moved (if given) the objects it
// replaced.
func shareSorted[T interface {
	comparable
	metav1.Object
}](prev, cur []T, moved ...map[T]T) {
	j := 0
	for i, o := range cur {
		if j < len(prev) && prev[j] == o {
			j++ // shared already (a reused or kept pod)
			continue
		}
		for j < len(prev) && byNsName(prev[j], o) < 0 {
			j++
		}
		if j < len(prev) && byNsName(prev[j], o) == 0 {
			if p := prev[j]; o != p && objeq.Equal(p, o) {
				cur[i] = p
				if len(moved) > 0 {
					moved[0][o] = p
				}
			}
		}
	}
}
