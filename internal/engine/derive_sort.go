package engine

import (
	corev1 "k8s.io/api/core/v1"
)

// podOrder is how a build sorted its pods: in is the list before (the
// order the workloads stage admitted them), perm the sort's permutation
// (the i-th sorted pod was in[perm[i]]; nil: in order already).
type podOrder struct {
	in   []*corev1.Pod
	perm []int
}

// sortPods sorts the twin's pods by namespace and name, stably. A
// derivation whose pods come in the previous build's order of names
// (every pod at the same place: the same pointer, or the same namespace
// and name) applies that build's permutation, which is the one the sort
// would find, instead of sorting again.
func (b *builder) sortPods() {
	pods := b.c.Pods
	in := append([]*corev1.Pod(nil), pods...)
	var perm []int
	if prev := b.d.podOrder(); prev != nil && sameNames(prev.in, in) {
		perm = prev.perm
		for i, j := range perm {
			pods[i] = in[j]
		}
	} else {
		perm = sortPerm(pods)
	}
	if !b.own {
		b.carry.pods = &podOrder{in: in, perm: perm}
	}
}

// sameNames reports whether a and b hold pods of the same namespaces and
// names in the same order.
func sameNames(a, b []*corev1.Pod) bool {
	if len(a) != len(b) {
		return false
	}
	for i, p := range a {
		if q := b[i]; p != q && (p.Name != q.Name || p.Namespace != q.Namespace) {
			return false
		}
	}
	return true
}

// podOrder is how the previous build sorted its pods, nil if unknown.
func (d *derivation) podOrder() *podOrder {
	if d == nil || d.prev == nil {
		return nil
	}
	return d.prev.pods
}
