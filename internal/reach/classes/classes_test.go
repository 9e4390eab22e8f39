package classes

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func runningPod(name, ip, app string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
}

// A class key reads the labels Calico selectors see from the pod's Felix
// endpoint, which must be the pod's own: a pod whose address an earlier
// pod holds, or that Felix does not know, has its own labels.
func TestTheCalicoLabelsOfAPodAreItsOwn(t *testing.T) {
	first := runningPod("first", "10.0.0.1", "a")
	second := runningPod("second", "10.0.0.1", "b") // the same address
	stranger := runningPod("stranger", "10.0.0.9", "c")
	calc := felix.New(&model.Cluster{Pods: []*corev1.Pod{first, second}})
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
	}{
		{"the pod holding the address", first},
		{"a pod sharing an earlier pod's address", second},
		{"a pod Felix does not know", stranger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EndpointOf(calc, tc.pod).Labels
			if want := felix.PodLabels(tc.pod); !maps.Equal(got, want) {
				t.Errorf("labels %v, want %v", got, want)
			}
		})
	}
}
