package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derivation orders its pods with the previous build's permutation (and
// shares its list of their names) only when they come in the previous
// build's order of names; the derived twin equals the full build either
// way.
func TestADerivationSortsItsPodsAsThePreviousBuildOnlyWhenTheirNamesComeAlike(t *testing.T) {
	pod := func(name, node string) *model.Object {
		p := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
		return &model.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Key: model.Key{Kind: "Pod", Namespace: "default", Name: name}, Typed: p}
	}
	tests := []struct {
		name string
		next func(t *testing.T, s *model.Snapshot, node string) *model.Snapshot
		// same: the previous build's permutation is taken.
		same bool
	}{
		{name: "strictAffinity turned off takes it", next: func(t *testing.T, s *model.Snapshot, _ string) *model.Snapshot {
			return withStrictAffinity(false)(t, s)
		}, same: true},
		{name: "a pod added sorts again", next: func(t *testing.T, s *model.Snapshot, node string) *model.Snapshot {
			return layer(s, pod("aaa-added", node))
		}},
		{name: "a pod removed sorts again", next: func(t *testing.T, s *model.Snapshot, _ string) *model.Snapshot {
			out := &model.Snapshot{Network: s.Network}
			for _, o := range s.Objects {
				if o.Key.Name != "zzz-last" {
					out.Objects = append(out.Objects, o)
				}
			}
			return out
		}},
		{name: "a pod renamed in its place sorts again", next: func(t *testing.T, s *model.Snapshot, node string) *model.Snapshot {
			out := &model.Snapshot{Objects: append([]*model.Object(nil), s.Objects...), Network: s.Network}
			for i := len(out.Objects) - 1; i >= 0; i-- {
				if out.Objects[i].Key.Kind == "Pod" && out.Objects[i].Key.Namespace == "default" {
					out.Objects[i] = pod("aaa-renamed", out.Objects[i].Typed.(*corev1.Pod).Spec.NodeName)
					return out
				}
			}
			t.Fatal("no pod in namespace default")
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := layer(genSnapshot(t), pod("zzz-last", ""))
			prev, err := Build(base)
			if err != nil {
				t.Fatal(err)
			}
			node := prev.Nodes[len(prev.Nodes)-1].Name
			next := tt.next(t, base, node)
			got := derivedAsBuilt(t, prev, base, next)
			const pods = 2 // Pods' place in builder.sort
			was, now := recall(prev).orders[pods], recall(got).orders[pods]
			if len(was.perm) == 0 {
				t.Fatal("no permutation kept: the case does not test the order")
			}
			if same := len(now.perm) > 0 && &was.perm[0] == &now.perm[0]; same != tt.same {
				t.Errorf("the previous build's permutation taken: %v, want %v", same, tt.same)
			}
			// The names it compares are the previous build's list, shared,
			// only when they are the same.
			if shared := len(now.names) > 0 && &was.names[0] == &now.names[0]; shared != tt.same {
				t.Errorf("the previous build's list of names shared: %v, want %v", shared, tt.same)
			}
		})
	}
}
