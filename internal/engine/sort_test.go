package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
)

// TestSortObjsIsAStableSortByNamespaceAndName holds sortObjs to the stable
// sort it stands for, duplicates included.
func TestSortObjsIsAStableSortByNamespaceAndName(t *testing.T) {
	pod := func(ns, name, uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: apitypes.UID(uid)}}
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := func(n, names int) []*corev1.Pod {
		var out []*corev1.Pod
		for i := 0; i < n; i++ {
			out = append(out, pod(fmt.Sprintf("ns-%d", r.IntN(3)), fmt.Sprintf("p-%d", r.IntN(names)), fmt.Sprint(i)))
		}
		return out
	}
	cases := []struct {
		name string
		in   []*corev1.Pod
	}{
		{"an empty list stays empty", nil},
		{"a sorted list stays as it is", []*corev1.Pod{pod("a", "x", "1"), pod("a", "y", "2"), pod("b", "a", "3")}},
		{"namespaces order before names", []*corev1.Pod{pod("b", "a", "1"), pod("a", "z", "2")}},
		{"objects of one namespace and name keep their input order", []*corev1.Pod{pod("a", "x", "1"), pod("", "x", "2"), pod("a", "x", "3"), pod("a", "w", "4"), pod("a", "x", "5")}},
		{"a large shuffled list with many duplicates", random(2000, 50)},
		{"a large shuffled list with few duplicates", random(2000, 100000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.in)
			want := slices.Clone(tc.in)
			slices.SortStableFunc(want, func(a, b *corev1.Pod) int {
				if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
					return c
				}
				return strings.Compare(a.Name, b.Name)
			})
			sortObjs(got)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("position %d: %s/%s (uid %s), want %s/%s (uid %s)", i, got[i].Namespace, got[i].Name, got[i].UID, want[i].Namespace, want[i].Name, want[i].UID)
				}
			}
		})
	}
}
