package felix

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Endpoints with equal Calico labels share one map and LabelSet; every endpoint's map
// is still its own pod's PodLabels, whatever differs between two pods.
func TestEndpointsShareTheirLabelsOnlyWhenEqual(t *testing.T) {
	n := 0
	pod := func(ns, sa string, labels map[string]string) *corev1.Pod {
		n++
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", n), Namespace: ns, Labels: labels},
			Spec:       corev1.PodSpec{NodeName: "node-1", ServiceAccountName: sa},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", n)},
		}
	}
	for _, tc := range []struct {
		name  string
		a, b  *corev1.Pod
		share bool
	}{
		{"two replicas", pod("web", "", map[string]string{"app": "web", "hash": "1"}), pod("web", "", map[string]string{"app": "web", "hash": "1"}), true},
		{"an empty service account is default", pod("web", "", map[string]string{"app": "web"}), pod("web", "default", map[string]string{"app": "web"}), true},
		{"another value", pod("web", "", map[string]string{"app": "web"}), pod("web", "", map[string]string{"app": "api"}), false},
		{"another namespace", pod("web", "", map[string]string{"app": "web"}), pod("api", "", map[string]string{"app": "web"}), false},
		{"another service account", pod("web", "a", map[string]string{"app": "web"}), pod("web", "b", map[string]string{"app": "web"}), false},
		{"one more label", pod("web", "", map[string]string{"app": "web"}), pod("web", "", map[string]string{"app": "web", "tier": "x"}), false},
		{"a key's end moved into its value", pod("web", "", map[string]string{"ab": "c"}), pod("web", "", map[string]string{"a": "bc"}), false},
		{"a namespace's end moved into the service account", pod("ab", "c", nil), pod("a", "bc", nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := New(&model.Cluster{Pods: []*corev1.Pod{tc.a, tc.b}})
			if len(x.Endpoints) != 2 {
				t.Fatalf("%d endpoints, want 2", len(x.Endpoints))
			}
			for _, ep := range x.Endpoints {
				if want := PodLabels(ep.Pod); !maps.Equal(ep.Labels, want) {
					t.Errorf("%s has labels %v, want %v", ep.Pod.Name, ep.Labels, want)
				}
			}
			shared := fmt.Sprintf("%p", x.Endpoints[0].Labels) == fmt.Sprintf("%p", x.Endpoints[1].Labels)
			if shared != tc.share {
				t.Errorf("the endpoints share one map: %t, want %t", shared, tc.share)
			}
			if same := x.Endpoints[0].LabelSet == x.Endpoints[1].LabelSet; same != tc.share {
				t.Errorf("the endpoints have one LabelSet: %t, want %t", same, tc.share)
			}
		})
	}
}

// An endpoint's addresses are its pod's status.podIPs in order (the
// status.podIP alone when the list is empty), each parsed once.
func TestAnEndpointsAddressesAreItsPodsInOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		ips  []string
		want string
	}{
		{"no list: the pod IP", nil, "[10.0.0.1]"},
		{"the pod IP first", []string{"10.0.0.1", "fd00::1"}, "[10.0.0.1 fd00::1]"},
		{"the pod IP second", []string{"fd00::1", "10.0.0.1"}, "[fd00::1 10.0.0.1]"},
		{"an address that does not parse is left out", []string{"10.0.0.1", "bad"}, "[10.0.0.1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "n"},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}
			for _, ip := range tc.ips {
				p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
			}
			x := New(&model.Cluster{Pods: []*corev1.Pod{p}})
			if got := fmt.Sprint(x.Endpoints[0].Addrs); got != tc.want {
				t.Errorf("addresses %s, want %s", got, tc.want)
			}
		})
	}
}
