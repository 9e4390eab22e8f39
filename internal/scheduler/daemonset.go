package scheduler

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// daemonTolerations are the tolerations the DaemonSet controller adds to
// every daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations),
// without tolerationSeconds; network-unavailable only for hostNetwork pods.
func daemonTolerations(hostNetwork bool) []corev1.Toleration {
	exists := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	out := []corev1.Toleration{
		exists(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute),
		exists(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule),
		exists(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule),
	}
	if hostNetwork {
		out = append(out, exists(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule))
	}
	return out
}

// addOrUpdateToleration follows pkg/apis/core/v1/helper
// AddOrUpdateTolerationInPodSpec: a toleration with the same key, effect,
// operator and value is replaced in place, otherwise t is appended.
func addOrUpdateToleration(list []corev1.Toleration, t corev1.Toleration) []corev1.Toleration {
	for i := range list {
		if list[i].MatchToleration(&t) {
			list[i] = t
			return list
		}
	}
	return append(list, t)
}

// DaemonPodSpec returns the spec the DaemonSet controller gives ds's pods:
// the template with the daemon tolerations merged in.
func DaemonPodSpec(ds *appsv1.DaemonSet) *corev1.PodSpec {
	spec := ds.Spec.Template.Spec.DeepCopy()
	for _, t := range daemonTolerations(spec.HostNetwork) {
		spec.Tolerations = addOrUpdateToleration(spec.Tolerations, t)
	}
	return spec
}

// DaemonSetNodes returns, sorted by name, the nodes on which the DaemonSet
// controller wants a pod of ds (pkg/controller/daemon NodeShouldRunDaemonPod):
// the template's nodeName, if set, must be the node; nodeSelector and required
// node affinity must match; and no NoSchedule or NoExecute taint may be left
// untolerated once the daemon tolerations are added. Resources are not
// considered: the controller creates the pod and the scheduler may then leave
// it Pending.
func DaemonSetNodes(ds *appsv1.DaemonSet, nodes []*corev1.Node) []string {
	pod := &corev1.Pod{ObjectMeta: ds.Spec.Template.ObjectMeta, Spec: *DaemonPodSpec(ds)}
	pod.Namespace = ds.Namespace
	var out []string
	for _, n := range sortedNodes(nodes) {
		if pod.Spec.NodeName != "" && pod.Spec.NodeName != n.Name {
			continue
		}
		if !matchesRequiredAffinity(pod, n) {
			continue
		}
		if _, bad := firstUntolerated(effectiveTaints(n), pod.Spec.Tolerations, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute); bad {
			continue
		}
		out = append(out, n.Name)
	}
	return out
}
