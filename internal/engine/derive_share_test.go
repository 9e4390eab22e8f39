package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shareSorted replaces an object built again equal by the previous
// twin's, passes over one shared already, and keeps one that differs or
// that the previous twin lacks.
func TestSharingReplacesOnlyEqualObjectsOfTheSameName(t *testing.T) {
	pod := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	a, b, c := pod("x", "a", "n1"), pod("x", "b", "n1"), pod("y", "c", "n1")
	prev := []*corev1.Pod{a, b, c}
	a2, c2, d := pod("x", "a", "n1"), pod("y", "c", "n2"), pod("y", "d", "n1")
	cur := []*corev1.Pod{a2, b, c2, d}
	moved := map[*corev1.Pod]*corev1.Pod{}
	shareSorted(prev, cur, moved)
	want := []*corev1.Pod{a, b, c2, d}
	for i := range want {
		if cur[i] != want[i] {
			t.Errorf("object %d (%s/%s, node %s) is not the one expected", i, cur[i].Namespace, cur[i].Name, cur[i].Spec.NodeName)
		}
	}
	if len(moved) != 1 || moved[a2] != a {
		t.Errorf("moved %v, want only the equal copy of x/a", moved)
	}
}
