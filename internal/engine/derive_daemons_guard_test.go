package engine

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A node filled with running pods: its DaemonSet pods no longer fit, so
// none of them may be taken from the previous build, while those of the
// other nodes are. (The filled node turns NotReady and the derivation
// then gives way to a full build; the pods it kept are read before.)
func TestADaemonSetPodIsNotKeptOnANodeWhoseRunningPodsChanged(t *testing.T) {
	dir := t.TempDir()
	o := gen.Options{Nodes: 8, Namespaces: 2, Pods: 120, Services: 10, Policies: 2, Seed: 1, ObservedIPs: true}
	if _, err := gen.WriteDir(dir, o); err != nil {
		t.Fatal(err)
	}
	base, err := load.Load(load.Options{Filenames: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	full := prev.Nodes[len(prev.Nodes)-1]
	var fillers []*model.Object
	for i := range full.Status.Allocatable.Pods().Value() {
		name := fmt.Sprintf("filler-%d", i)
		p := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{NodeName: full.Name, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
		fillers = append(fillers, &model.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Key: model.Key{Kind: "Pod", Namespace: "default", Name: name}, Typed: p})
	}
	next := layer(base, fillers...)
	d := settle(prev, base, next)
	if d == nil {
		t.Fatal("no pod qualifies for reuse: the case does not test the guard")
	}
	d.prev = recall(prev)
	_, _ = build(next, false, d)
	on := map[string]int{}
	for p := range d.kept {
		on[p.Spec.NodeName]++
	}
	if on[full.Name] > 0 {
		t.Errorf("%d DaemonSet pods kept on %s, whose running pods changed", on[full.Name], full.Name)
	}
	if len(on) == 0 {
		t.Error("no DaemonSet pod kept on any node: the case does not test the guard")
	}
}
