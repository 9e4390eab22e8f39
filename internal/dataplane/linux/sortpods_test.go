package linux

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A node's pods are ordered by creation, then address, then
// "namespace/name" as one string (so namespace "a" sorts after "a-b":
// '/' is after '-'), then their place in the list.
func TestANodesPodsAreOrderedByCreationAddressThenNamespaceSlashName(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	pod := func(ns, name, ip string, at metav1.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: at},
			Status: corev1.PodStatus{PodIP: ip}}
	}
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want []string
	}{
		{"the earlier first", []*corev1.Pod{pod("z", "z", "10.0.0.1", t1), pod("a", "a", "10.0.0.9", t0)}, []string{"a/a", "z/z"}},
		{"the lower address first at one time", []*corev1.Pod{pod("a", "a", "10.0.0.10", t0), pod("z", "z", "10.0.0.9", t0)}, []string{"z/z", "a/a"}},
		{"namespace and name as one string", []*corev1.Pod{pod("a", "x", "10.0.0.1", t0), pod("a-b", "x", "10.0.0.1", t0)}, []string{"a-b/x", "a/x"}},
		{"the name within a namespace", []*corev1.Pod{pod("a", "y", "", t0), pod("a", "x", "", t0)}, []string{"a/x", "a/y"}},
		{"equal keys keep their order, a pod without an address first", []*corev1.Pod{pod("a", "x", "", t0), pod("a", "x", "10.0.0.1", t0), pod("a", "x", "", t0)}, []string{"a/x", "a/x", "a/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := slices.Clone(tc.pods)
			sortPods(ps)
			var got []string
			for _, p := range ps {
				got = append(got, p.Namespace+"/"+p.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if tc.name == "equal keys keep their order, a pod without an address first" && (ps[0] != tc.pods[0] || ps[1] != tc.pods[2] || ps[2] != tc.pods[1]) {
				t.Errorf("the pods without an address are not first in their order")
			}
		})
	}
}
