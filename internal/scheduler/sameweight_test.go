package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two pods weigh the same for the pods placed after them only when
// everything State records or the filters read of a placed pod is equal.
func TestTwoPodsWeighTheSameOnlyWhenWhatTheSchedulerReadsOfThemIsEqual(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "agent-x", Namespace: "calico-system", Labels: map[string]string{"k8s-app": "agent"},
				OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: new(true)}}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{
				Name: "agent", Image: "agent:1",
				Env:       []corev1.EnvVar{{Name: "MTU", Value: "1450"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	tests := []struct {
		name string
		edit func(p *corev1.Pod)
		same bool
	}{
		{name: "a different environment weighs the same", edit: func(p *corev1.Pod) { p.Spec.Containers[0].Env[0].Value = "1400" }, same: true},
		{name: "a different image weighs the same", edit: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "agent:2" }, same: true},
		{name: "a larger cpu request does not", edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		}},
		{name: "a host port does not", edit: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 9099, HostPort: 9099}}
		}},
		{name: "another label does not", edit: func(p *corev1.Pod) { p.Labels["extra"] = "yes" }},
		{name: "a priority does not", edit: func(p *corev1.Pod) { p.Spec.Priority = new(int32(10)) }},
		{name: "another owner does not", edit: func(p *corev1.Pod) { p.OwnerReferences[0].Name = "other" }},
		{name: "another namespace does not", edit: func(p *corev1.Pod) { p.Namespace = "kube-system" }},
		{name: "a pod anti-affinity does not", edit: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}}
		}},
		{name: "being deleted does not", edit: func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }},
		{name: "having finished does not", edit: func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			tt.edit(b)
			if got := SameWeight(a, b); got != tt.same {
				t.Errorf("SameWeight = %v, want %v", got, tt.same)
			}
		})
	}
}
