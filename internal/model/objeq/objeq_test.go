package objeq

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeepEqual must be reflect.DeepEqual: nil and empty differ, maps are
// equal by key and deep value, interfaces by dynamic type, quantities by
// their fields (1 and 1000m differ), and objects deep.
func TestDeepEqualAgreesWithReflect(t *testing.T) {
	one, two := 1, 1
	pod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
				Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				}}},
			},
		}
	}
	edited := func(f func(p *corev1.Pod)) *corev1.Pod {
		p := pod()
		f(p)
		return p
	}
	type private struct{ m map[string]int }
	for _, tc := range []struct {
		name string
		a, b any
	}{
		{"a nil slice and an empty one", []string(nil), []string{}},
		{"a nil map and an empty one", map[string]string(nil), map[string]string{}},
		{"maps with another value", map[string]string{"a": "b"}, map[string]string{"a": "c"}},
		{"maps with another key", map[string]string{"a": "b"}, map[string]string{"c": "b"}},
		{"equal maps", map[string]string{"a": "b"}, map[string]string{"a": "b"}},
		{"maps of slices", map[string][]int{"a": {1}}, map[string][]int{"a": {1}}},
		{"maps of slices that differ", map[string][]int{"a": {1}}, map[string][]int{"a": {2}}},
		{"maps in unexported fields", private{map[string]int{"a": 1}}, private{map[string]int{"a": 1}}},
		{"maps in unexported fields that differ", private{map[string]int{"a": 1}}, private{map[string]int{"a": 2}}},
		{"pointers to equal values", &one, &two},
		{"a nil pointer and another", (*int)(nil), &one},
		{"interfaces of other types", []any{1}, []any{int64(1)}},
		{"a nil interface and a nil pointer in one", []any{nil}, []any{(*int)(nil)}},
		{"arrays", [2]float64{1, 2}, [2]float64{1, 3}},
		{"a pod and its copy", pod(), pod()},
		{"a pod and one with another label", pod(), edited(func(p *corev1.Pod) { p.Labels["app"] = "api" })},
		{"a pod and one with another request", pod(), edited(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
		})},
		{"a pod and one whose request is spelled otherwise", pod(), edited(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")
		})},
		{"a pod and one with a request more", pod(), edited(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		})},
		{"a pod and one with no annotations", pod(), edited(func(p *corev1.Pod) { p.Annotations = nil })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := Equal(tc.a, tc.b), reflect.DeepEqual(tc.a, tc.b); got != want {
				t.Errorf("Equal %v, reflect.DeepEqual %v", got, want)
			}
		})
	}
}

// Comparing two equal objects allocates only a holder for the keys and
// values of a map that is neither labels nor annotations, and the copy of
// each value read from the other map (a node's capacity: 2 + 2).
func TestComparingEqualObjectsAllocatesLittle(t *testing.T) {
	a := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b", "c": "d"}, Annotations: map[string]string{"e": "f"}},
		Status:     corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}},
	}
	b := a.DeepCopy()
	if !Equal(a, b) {
		t.Fatal("a node and its copy differ")
	}
	if n := testing.AllocsPerRun(100, func() { Equal(a, b) }); n > 4 {
		t.Errorf("%v allocations per comparison, want at most 4 (reflect.DeepEqual makes 15)", n)
	}
}
