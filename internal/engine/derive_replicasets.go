package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
)

// replicaSetHashes is controllers.ObservedReplicaSets of the pods the
// workloads stage starts from, the previous build's when those pods name
// the same namespaces and controllers in the same order (it reads nothing
// else of them), and keeps both for the next derivation. They are kept
// only when every pod has its namespace: the build changes nothing else
// of what they read (admission gives a pod without one "default"), so
// the kept pods still show what was read.
func (b *builder) replicaSetHashes(pods []*corev1.Pod) controllers.ReplicaSetHashes {
	var h controllers.ReplicaSetHashes
	if k := b.d.previous(); k != nil && k.rsHashes != nil && sameControllers(k.rsPods, pods) {
		h = k.rsHashes
	} else {
		h = controllers.ObservedReplicaSets(pods)
	}
	for _, p := range pods {
		if p.Namespace == "" {
			return h
		}
	}
	b.carry.rsPods, b.carry.rsHashes = pods, h
	return h
}

// sameControllers reports whether a and b are pods of the same
// namespaces and controllers, in order: mostly the same pods, which a
// derivation takes from the previous twin.
func sameControllers(a, b []*corev1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	for i, p := range a {
		q := b[i]
		if p == q {
			continue
		}
		if p.Namespace != q.Namespace {
			return false
		}
		pk, pn := controllers.ControllerOf(p)
		qk, qn := controllers.ControllerOf(q)
		if pk != qk || pn != qn {
			return false
		}
	}
	return true
}
