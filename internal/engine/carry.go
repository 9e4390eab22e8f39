package engine

import (
	"runtime"
	"sync"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// carried is what a build (Build's or Derive's) keeps for the next
// derivation from its twin: the parts of its stages that a derivation
// which reuses the same pods would compute again exactly. It is kept
// beside the twin, not in it, so that a derived twin still equals the
// built one; it is immutable once the build returns.
type carried struct {
	// sched is the scheduler's State of the pods running before the
	// build placed any (workloads).
	sched *scheduler.Base
	// daemons are the DaemonSets' pods it created, daemonsOn those it
	// placed on each node in order, ref its reference time
	// (derive_daemons.go).
	// settled is the derivation that made the twin, without what it
	// read of the build before (derivation.prev): another derivation
	// from the twin over the same pods makes the same choice (settle).
	settled   *derivation
	daemons   []daemonsMade
	daemonsOn map[string][]*corev1.Pod
	ref       metav1.Time
	// net is IPAM's replay of the observed history and its final
	// state (derive_network.go).
	net *netMemo
	// orders are how the build sorted its lists (derive_sort.go).
	orders orders
	// marks are the fields it marked derived, in order, and fields the
	// twin's DerivedFields they made (derive_marks.go).
	marks  []mark
	fields map[model.Key][]string
	// kubelets are each node's kubelet configuration and what it was
	// made from (derive_kubelets.go).
	kubelets *kubelets
	// cluster is the build's copy of the snapshot's Cluster object
	// clusterInput (collect), as the build left it (reusedCluster).
	cluster, clusterInput *hybrid.Cluster
	// rsHashes are the ReplicaSet hashes the workloads stage read from
	// the pods it started from, rsPods (derive_replicasets.go).
	rsPods   []*corev1.Pod
	rsHashes controllers.ReplicaSetHashes
}

// carriedBy holds each twin's carried parts for as long as the twin is
// reachable: the key is weak and the entry goes when the twin does.
var carriedBy struct {
	sync.Mutex
	m map[weak.Pointer[model.Cluster]]*carried
}

// remember keeps k for the next derivation from c. k must not reach c,
// or c would never be collected.
func remember(c *model.Cluster, k *carried) {
	w := weak.Make(c)
	carriedBy.Lock()
	if carriedBy.m == nil {
		carriedBy.m = map[weak.Pointer[model.Cluster]]*carried{}
	}
	carriedBy.m[w] = k
	carriedBy.Unlock()
	runtime.AddCleanup(c, func(w weak.Pointer[model.Cluster]) {
		carriedBy.Lock()
		delete(carriedBy.m, w)
		carriedBy.Unlock()
	}, w)
}

// recall is what the build of c kept, nil when nothing was.
func recall(c *model.Cluster) *carried {
	carriedBy.Lock()
	defer carriedBy.Unlock()
	return carriedBy.m[weak.Make(c)]
}

// schedBase is the previous build's scheduler Base, nil without one.
func (d *derivation) schedBase() *scheduler.Base {
	if d == nil || d.prev == nil {
		return nil
	}
	return d.prev.sched
}

// carried is the part of d a derivation from its twin may take again:
// the pods and objects it reused and what the build before it spoke of.
func (d *derivation) carried() *derivation {
	return &derivation{reuse: d.reuse, input: d.input, deployments: d.deployments, rs: d.rs,
		slices: d.slices, policies: d.policies, services: d.services, serviceInputs: d.serviceInputs, spoken: d.spoken}
}

// covers reports whether d, a derivation's choice, excluded every object
// of spoken: the objects a later build spoke of, which a derivation from
// it must not reuse.
func (d *derivation) covers(spoken map[model.Key]bool) bool {
	for k := range spoken {
		if !d.spoken[k] {
			return false
		}
	}
	return true
}

// movePods replaces, in what k records of the DaemonSets' pods, each pod
// moved maps by the one the twin holds instead (shareEqual).
func (k *carried) movePods(moved map[*corev1.Pod]*corev1.Pod) {
	for i := range k.daemons {
		for node, p := range k.daemons[i].pods {
			if q, ok := moved[p]; ok {
				k.daemons[i].pods[node] = q
			}
		}
	}
	for _, on := range k.daemonsOn {
		for i, p := range on {
			if q, ok := moved[p]; ok {
				on[i] = q
			}
		}
	}
}

// reusedCluster is the previous build's copy of the snapshot's Cluster
// object t, when it made one of this very object and left it as it was:
// registeredNames renames no host of t (each is its Node's name already),
// and nothing else in a build writes to it. nil to copy t again.
func (d *derivation) reusedCluster(t *hybrid.Cluster) *hybrid.Cluster {
	if d == nil || d.prev == nil || d.prev.clusterInput != t || d.prev.cluster == nil {
		return nil
	}
	for _, h := range t.Spec.Hosts {
		if nodeName(h.Name) != h.Name {
			return nil
		}
	}
	return d.prev.cluster
}

// previous is what the previous build kept, nil without one.
func (d *derivation) previous() *carried {
	if d == nil {
		return nil
	}
	return d.prev
}
