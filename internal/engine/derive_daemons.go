package engine

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// daemonsMade is what a build made of one DaemonSet: the spec its pods
// were made from (a copy) and the pods it created, bound to their node,
// by node name.
type daemonsMade struct {
	namespace, name string
	spec            appsv1.DaemonSetSpec
	pods            map[string]*corev1.Pod
}

// keptDaemons gives, per DaemonSet in c.DaemonSets' order, the previous
// build's pods a derivation may take as they are (nil for none): those
// of a DaemonSet whose spec is the previous build's. The operator renders
// its DaemonSets again in every build; a pod of an unchanged one on a
// node is what this build would create there, provided that what its
// creation read is the same too: the pods placed on the node before it
// (keepDaemon), its node and namespace (derivation.holds), the reference
// time it is stamped with, and the previous build said nothing about it.
func (b *builder) keptDaemons() []map[string]*corev1.Pod {
	d := b.d
	if d == nil || d.prev == nil || !d.prev.ref.Equal(&b.ref) {
		return nil
	}
	d.podNet = b.sameIPAMInputs()
	out := make([]map[string]*corev1.Pod, len(b.c.DaemonSets))
	for i, ds := range b.c.DaemonSets {
		for j := range d.prev.daemons {
			was := &d.prev.daemons[j]
			if was.namespace == ds.Namespace && was.name == ds.Name && objeq.Equal(&was.spec, &ds.Spec) {
				out[i] = was.pods
			}
		}
	}
	return out
}

// keepDaemon reports whether p, the previous build's pod of a DaemonSet
// on node, can be taken as it is: bound there and running, on the host
// network (its address is the node's) or with an address from IPAM
// (the network stage asks IPAM again and checks it gets the same one:
// keptAddress), not spoken of, the previous build's i-th DaemonSet pod
// placed on the node (the i placed before it weigh as the previous
// build's: weighDaemon), and placing it reads only its node, whose
// running pods are the previous build's.
func (b *builder) keepDaemon(p *corev1.Pod, node string, i int, state *scheduler.State) bool {
	on := b.d.prev.daemonsOn[node]
	return p.Spec.NodeName == node && (p.Spec.HostNetwork || (b.d.podNet && p.Status.PodIP != "")) && p.Status.Phase == corev1.PodRunning &&
		i < len(on) && on[i] == p && b.carry.sched.Kept(node) && !b.d.spoken[keyOf(p)] && !scheduler.ReadsOtherNodes(p, state)
}

// weighDaemon compares the DaemonSet pod just placed on node, the last of
// on, with the previous build's pod placed there in the same turn, and
// marks the node in weighsOther when they weigh differently for the pods
// placed after them (scheduler.SameWeight): a pod built again (its
// DaemonSet's template changed, calico-node's in a migration step) that
// the scheduler records as it recorded the previous one leaves the later
// DaemonSet pods' placement as it was, so they may still be kept.
func (b *builder) weighDaemon(node string, on []*corev1.Pod, weighsOther map[string]bool) {
	i, was := len(on)-1, b.d.prev.daemonsOn[node]
	if i >= len(was) || (on[i] != was[i] && !scheduler.SameWeight(on[i], was[i])) {
		weighsOther[node] = true
	}
}

// keptOnPodNetwork reports whether p is a kept DaemonSet pod on the pod
// network: the previous build's IPAM gave it its address, so this one
// asks IPAM in the same turn (its state must move the same way) and
// keeps the pod only if the answer is that address.
func (d *derivation) keptOnPodNetwork(p *corev1.Pod) bool {
	return d != nil && d.kept[p] && !p.Spec.HostNetwork
}

// keptAddress checks the address IPAM gives a kept pod on the pod
// network in its turn against the one it holds: a different one (or a
// failure, which would make it Pending) would change a pod the twin
// shares with the previous one, so the derivation stops.
func (b *builder) keptAddress(p *corev1.Pod, got string) bool {
	if got != p.Status.PodIP {
		b.d.broken = true
		return false
	}
	return true
}

// madeDaemons records, for the next derivation, the DaemonSets' pods
// this build created and bound, and those it placed on each node in
// order (on).
func (b *builder) madeDaemons(made []map[string]*corev1.Pod, on map[string][]*corev1.Pod) {
	b.carry.ref = b.ref
	b.carry.daemonsOn = on
	b.carry.daemons = make([]daemonsMade, len(b.c.DaemonSets))
	for i, ds := range b.c.DaemonSets {
		m := &b.carry.daemons[i]
		m.namespace, m.name = ds.Namespace, ds.Name
		ds.Spec.DeepCopyInto(&m.spec)
		m.pods = make(map[string]*corev1.Pod, len(made[i]))
		for node, p := range made[i] {
			if p.Spec.NodeName == node {
				m.pods[node] = p
			}
		}
	}
}
