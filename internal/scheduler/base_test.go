package scheduler

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// bound is p bound to node, with a host port when port is not 0.
func bound(p *corev1.Pod, node string, port int32) *corev1.Pod {
	p.Spec.NodeName = node
	if port != 0 {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
	return p
}

// recorded is what State holds, without the generations that say which
// State may change shared node totals in place.
func recorded(s *State) State {
	out := *s
	out.gen = 0
	if s.totals != nil {
		out.totals = map[string]*nodeTotals{}
		for k, t := range s.totals {
			cp := *t
			cp.gen = 0
			// The counts a copy reads from the totals it was made
			// from are its own.
			cp.owners, cp.ownersBase = map[string]int{}, nil
			for owner := range t.ownersBase {
				cp.owners[owner] = t.ownerCount(owner)
			}
			for owner := range t.owners {
				cp.owners[owner] = t.ownerCount(owner)
			}
			out.totals[k] = &cp
		}
	}
	return out
}

// keptNode: the node holds the same running pods, in the same order, in
// both lists (a Base with no running pod keeps nothing).
func keptNode(before, after []*corev1.Pod, node string) bool {
	on := func(pods []*corev1.Pod) []*corev1.Pod {
		var out []*corev1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == node && !finished(p) {
				out = append(out, p)
			}
		}
		return out
	}
	a, b := on(before), on(after)
	on2 := func(pods []*corev1.Pod) []*corev1.Pod {
		var out []*corev1.Pod
		for _, p := range pods {
			if !finished(p) {
				out = append(out, p)
			}
		}
		return out
	}
	if len(on2(after)) == 0 {
		return false
	}
	return slices.Equal(a, b)
}

func addAll(pods []*corev1.Pod) *State {
	s := NewState()
	for _, p := range pods {
		s.Add(p, p.Spec.NodeName)
	}
	return s
}

// A State made from the previous build's Base must be exactly the State
// that adding every pod in order gives, whatever changed between the two.
func TestABaseFromThePreviousBaseEqualsAddingEveryPod(t *testing.T) {
	a := bound(replica("demo", "web-1", 0, "100m", "64Mi"), "n1", 0)
	b := bound(replica("demo", "web-1", 1, "100m", "64Mi"), "n2", 0)
	c := bound(replica("demo", "api-2", 0, "250m", ""), "n1", 8080)
	d := bound(replica("demo", "api-2", 1, "250m", ""), "n3", 0)
	e := bound(aspnetAdmitted(0), "n2", 0)
	e.Spec.Overhead = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	done := bound(replica("demo", "job-3", 0, "1", "1Gi"), "n3", 0)
	done.Status.Phase = corev1.PodSucceeded
	changed := a.DeepCopy()
	changed.Spec.Containers[0].Resources = requests("900m", "")
	aDone := a.DeepCopy()
	aDone.Status.Phase = corev1.PodFailed
	otherOwner := e.DeepCopy()
	otherOwner.OwnerReferences[0].Name = "aspnetapp-other"
	moved := b.DeepCopy()
	moved.Spec.NodeName = "n3"
	base := []*corev1.Pod{a, b, c, d, e, done}
	tests := []struct {
		name string
		next []*corev1.Pod
	}{
		{"the same pods", base},
		{"a pod changed on one node", []*corev1.Pod{changed, b, c, d, e, done}},
		{"a pod changed with another owner", []*corev1.Pod{a, b, c, d, otherOwner, done}},
		{"a pod that finished", []*corev1.Pod{aDone, b, c, d, e, done}},
		{"the same pod twice", []*corev1.Pod{a, b, c, d, e, a}},
		{"a pod moved to another node", []*corev1.Pod{a, moved, c, d, e, done}},
		{"a pod removed", []*corev1.Pod{a, c, d, e, done}},
		{"a pod added on a node of its own", []*corev1.Pod{a, b, c, d, e, done, bound(replica("demo", "web-1", 2, "", ""), "n4", 0)}},
		{"the same pods in another order (the owners' nodes change order)", []*corev1.Pod{d, c, b, a, e, done}},
		{"only a finished pod", []*corev1.Pod{done}},
		{"no pods", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := NewBase(nil, base)
			b2 := NewBase(prev, tt.next)
			got := b2.State()
			if want := addAll(tt.next); !reflect.DeepEqual(recorded(got), recorded(want)) {
				t.Errorf("the State made from the previous Base differs from adding every pod:\n got %+v\nwant %+v", recorded(got), recorded(want))
			}
			for _, node := range []string{"n1", "n2", "n3", "n4"} {
				if got, want := b2.Kept(node), keptNode(base, tt.next, node); got != want {
					t.Errorf("Kept(%s) = %v, want %v", node, got, want)
				}
			}
			if !reflect.DeepEqual(recorded(prev.state), recorded(addAll(base))) {
				t.Error("making the next Base changed the previous one")
			}
		})
	}
}

// Adding to a Base's State (a build placing its new pods) changes
// neither the Base nor another State made from it.
func TestAddingToABasesStateLeavesTheBaseAsItWas(t *testing.T) {
	pods := []*corev1.Pod{
		bound(replica("demo", "web-1", 0, "100m", "64Mi"), "n1", 80),
		bound(replica("demo", "web-1", 1, "100m", "64Mi"), "n2", 0),
	}
	base := NewBase(nil, pods)
	other := base.State()
	s := base.State()
	added := []struct {
		pod  *corev1.Pod
		node string
	}{
		{bound(replica("demo", "web-1", 2, "300m", ""), "", 80), "n1"},
		{bound(replica("demo", "api-1", 0, "", ""), "", 0), "n2"},
		{bound(replica("demo", "api-1", 1, "", ""), "", 0), "n3"},
		{bound(replica("demo", "web-1", 3, "", ""), "", 0), "n1"},
	}
	all := addAll(pods)
	for _, a := range added {
		s.Add(a.pod, a.node)
		all.Add(a.pod, a.node)
	}
	if !reflect.DeepEqual(recorded(s), recorded(all)) {
		t.Errorf("the State added to differs from adding every pod to an empty one:\n got %+v\nwant %+v", recorded(s), recorded(all))
	}
	want := recorded(addAll(pods))
	if !reflect.DeepEqual(recorded(base.state), want) {
		t.Errorf("adding to a State changed its Base:\n got %+v\nwant %+v", recorded(base.state), want)
	}
	if !reflect.DeepEqual(recorded(other), want) {
		t.Errorf("adding to a State changed another State of the same Base:\n got %+v\nwant %+v", recorded(other), want)
	}
	if got := s.totalsOn("n1").count; got != 3 {
		t.Errorf("n1 holds %d pods in the State added to, want 3", got)
	}
}
