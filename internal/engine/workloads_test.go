package engine_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestDaemonSetPodsCarryTheControllersTolerations(t *testing.T) {
	exists := func(key string, effect corev1.TaintEffect) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
	}
	// pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations, after the
	// template's own tolerations; network-unavailable only on host network.
	daemon := []corev1.Toleration{
		exists("node.kubernetes.io/not-ready", corev1.TaintEffectNoExecute),
		exists("node.kubernetes.io/unreachable", corev1.TaintEffectNoExecute),
		exists("node.kubernetes.io/disk-pressure", corev1.TaintEffectNoSchedule),
		exists("node.kubernetes.io/memory-pressure", corev1.TaintEffectNoSchedule),
		exists("node.kubernetes.io/pid-pressure", corev1.TaintEffectNoSchedule),
		exists("node.kubernetes.io/unschedulable", corev1.TaintEffectNoSchedule),
	}
	hostNetwork := append(append([]corev1.Toleration(nil), daemon...), exists("node.kubernetes.io/network-unavailable", corev1.TaintEffectNoSchedule))
	c := buildLab(t)
	tests := []struct {
		name      string
		ns, owner string
		node      string
		want      []corev1.Toleration
	}{
		{
			name: "kubeadm's kube-proxy (derived, host network) after its tolerate-everything toleration",
			ns:   "kube-system", owner: "kube-proxy", node: "k8s-lab-node-1",
			want: append([]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, hostNetwork...),
		},
		{
			name: "the operator's csi-node-driver (derived, pod network) without network-unavailable",
			ns:   "calico-system", owner: "csi-node-driver", node: "k8s-lab-node-1",
			want: append([]corev1.Toleration{
				{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
				{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			}, daemon...),
		},
		{
			name: "the observed kube-proxy-windows stub, completed from its template",
			ns:   "kube-system", owner: "kube-proxy-windows", node: "k8s-lab-win-1",
			want: append([]corev1.Toleration{
				{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
				{Operator: corev1.TolerationOpExists},
			}, hostNetwork...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found *corev1.Pod
			for _, p := range podsOn(c, tt.node) {
				if p.Namespace == tt.ns && len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Kind == "DaemonSet" && p.OwnerReferences[0].Name == tt.owner {
					found = p
				}
			}
			if found == nil {
				t.Fatalf("no %s/%s pod on %s", tt.ns, tt.owner, tt.node)
			}
			if !reflect.DeepEqual(found.Spec.Tolerations, tt.want) {
				t.Errorf("%s tolerations\n%+v\nwant\n%+v", found.Name, found.Spec.Tolerations, tt.want)
			}
		})
	}
}

func TestDerivedDaemonSetPodsArePinnedByNodeAffinity(t *testing.T) {
	c := buildLab(t)
	for _, p := range podsWithPrefix(c, "kube-system", "kube-proxy-") {
		if p.Name == "kube-proxy-windows-z9qdq" {
			continue // observed
		}
		na := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		if na == nil || len(na.NodeSelectorTerms) != 1 || len(na.NodeSelectorTerms[0].MatchFields) != 1 {
			t.Errorf("%s node affinity %+v", p.Name, p.Spec.Affinity)
			continue
		}
		f := na.NodeSelectorTerms[0].MatchFields[0]
		if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || !reflect.DeepEqual(f.Values, []string{p.Spec.NodeName}) {
			t.Errorf("%s matchFields %+v, want metadata.name In [%s]", p.Name, f, p.Spec.NodeName)
		}
		if p.Labels["pod-template-generation"] != "1" || p.Labels["k8s-app"] != "kube-proxy" {
			t.Errorf("%s labels %v", p.Name, p.Labels)
		}
	}
}

func TestDerivedDaemonSetPodsCountAgainstMaxPods(t *testing.T) {
	// Without its observed stub, kube-proxy-windows's pod on k8s-lab-win-1
	// is derived: created bound to the node, it must still take one of the
	// node's 60 pods before the 61 aspnetapp replicas are placed.
	s := snapshot(t, true, whatIfBlockFullApp)
	var kept []*model.Object
	for _, o := range s.Objects {
		if o.Key == podKey("kube-system", "kube-proxy-windows-z9qdq") {
			continue
		}
		kept = append(kept, o)
	}
	if len(kept) != len(s.Objects)-1 {
		t.Fatalf("the lab has no kube-proxy-windows-z9qdq stub to drop")
	}
	s.Objects = kept
	c := build(t, s)
	var proxy, running int
	for _, p := range podsOn(c, "k8s-lab-win-1") {
		if p.OwnerReferences[0].Name == "kube-proxy-windows" {
			proxy++
			if c.Observed(podKey(p.Namespace, p.Name)) {
				t.Errorf("kube-proxy-windows pod %s is observed, want it derived", p.Name)
			}
		}
		if p.Namespace == "win-demo" && p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	if proxy != 1 || running != 58 {
		t.Errorf("%d kube-proxy-windows pods and %d running aspnetapp pods on k8s-lab-win-1, want 1 and 58", proxy, running)
	}
	if n := len(podsOn(c, "k8s-lab-win-1")); n != 60 {
		t.Errorf("%d pods on k8s-lab-win-1, want its maxPods 60", n)
	}
}
