package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// generated loads a small generated cluster whose workload pods are
// observed stubs with their node and address (what Derive reuses).
func generated(t *testing.T, plainNodes bool) *model.Snapshot {
	t.Helper()
	dir := t.TempDir()
	o := gen.Options{Nodes: 8, Namespaces: 2, Pods: 120, Services: 10, Policies: 2, Seed: 1, ObservedIPs: true, PlainNodes: plainNodes}
	if _, err := gen.WriteDir(dir, o); err != nil {
		t.Fatal(err)
	}
	return snapshot(t, false, dir)
}

// edited is s with the first object of kind edited by f, on a copy, the
// way a what-if file replaces it.
func edited(t *testing.T, s *model.Snapshot, kind string, f func(o *model.Object)) *model.Snapshot {
	t.Helper()
	for _, o := range s.Objects {
		if o.Key.Kind == kind {
			cp := *o
			f(&cp)
			return plan.Layer(s, &cp)
		}
	}
	t.Fatalf("no %s in the snapshot", kind)
	return nil
}

// whatIf is s with the objects of file layered on it.
func whatIf(t *testing.T, s *model.Snapshot, file string) *model.Snapshot {
	t.Helper()
	w, err := load.Load(load.Options{Filenames: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	return plan.Layer(s, w.Objects...)
}

// Derive must give exactly Build's twin, whether it reuses the previous
// twin's pods (only Calico's configuration changed) or falls back to a
// full build (anything else changed, or what the reused pods read did).
func TestADerivedTwinEqualsTheFullBuild(t *testing.T) {
	// bgpOff turns BGP off in the snapshot's own Installation.
	bgpOff := func(t *testing.T, s *model.Snapshot) *model.Snapshot {
		return edited(t, s, "Installation", func(o *model.Object) {
			in := copyInstallation(t, o.Typed.(*operator.Installation))
			off := "Disabled"
			in.Spec.CalicoNetwork.BGP = &off
			o.Typed, o.Raw = in, nil
		})
	}
	noWindowsDataplane := func(t *testing.T, s *model.Snapshot) *model.Snapshot {
		return whatIf(t, s, "../../examples/what-if/no-windows-dataplane.yaml")
	}
	tests := []struct {
		name  string
		base  func(t *testing.T) *model.Snapshot
		next  func(t *testing.T, s *model.Snapshot) *model.Snapshot
		reuse bool
	}{
		{
			name:  "an Installation change on a generated cluster reuses its observed workload pods",
			base:  func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next:  bgpOff,
			reuse: true,
		},
		{
			name: "an IPAMConfiguration change on a generated cluster reuses its observed workload pods",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return whatIf(t, s, "../../examples/what-if/no-strict-affinity.yaml")
			},
			reuse: true,
		},
		{
			name: "a changed observed pod is built again, the others reused",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return edited(t, s, "Pod", func(o *model.Object) {
					p := o.Typed.(*corev1.Pod).DeepCopy()
					p.Labels = map[string]string{"changed": "yes"}
					o.Typed, o.Raw = p, nil
				})
			},
			reuse: true,
		},
		{
			name:  "a new pod the twin schedules and addresses is built, the others reused",
			base:  func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next:  func(t *testing.T, s *model.Snapshot) *model.Snapshot { return withPod(t, s, metav1.Time{}) },
			reuse: true,
		},
		{
			name: "a removed pod leaves the others reused",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				out := &model.Snapshot{Network: s.Network}
				removed := false
				for _, o := range s.Objects {
					if o.Key.Kind == "Pod" && !removed {
						removed = true
						continue
					}
					out.Objects = append(out.Objects, o)
				}
				return out
			},
			reuse: true,
		},
		{
			name: "a reused node whose pod now claims a host port keeps a new pod pinned there with that port Pending",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				s, node := withHostPort(t, s)
				return withPinnedPod(t, s, node, metav1.Time{})
			},
			reuse: true,
		},
		{
			name: "a reused node whose pod with a host port is gone takes a new pod pinned there with that port",
			base: func(t *testing.T) *model.Snapshot {
				s, _ := withHostPort(t, generated(t, false))
				return s
			},
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				out := &model.Snapshot{Network: s.Network}
				node := ""
				for _, o := range s.Objects {
					if p, ok := o.Typed.(*corev1.Pod); ok && len(p.Spec.Containers) > 0 && len(p.Spec.Containers[0].Ports) > 0 && p.Spec.Containers[0].Ports[0].HostPort == pinnedPort {
						node = p.Spec.NodeName
						continue
					}
					out.Objects = append(out.Objects, o)
				}
				return withPinnedPod(t, out, node, metav1.Time{})
			},
			reuse: true,
		},
		{
			name: "a new pod newer than every object (the reference time moves) is a full build",
			base: func(t *testing.T) *model.Snapshot { return generated(t, true) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return withPod(t, s, metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
			},
		},
		{
			name: "a changed user pod with a changed Installation is built again, the others reused",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return edited(t, bgpOff(t, s), "Pod", func(o *model.Object) {
					p := o.Typed.(*corev1.Pod).DeepCopy()
					p.Annotations = map[string]string{"changed": "yes"}
					o.Typed, o.Raw = p, nil
				})
			},
			reuse: true,
		},
		{
			name: "a changed Node is a full build",
			base: func(t *testing.T) *model.Snapshot { return generated(t, true) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return edited(t, bgpOff(t, s), "Node", func(o *model.Object) {
					n := o.Typed.(*corev1.Node).DeepCopy()
					n.Labels["changed"] = "yes"
					o.Typed, o.Raw = n, nil
				})
			},
		},
		{
			name: "a Windows node that loses its network (no Windows dataplane) is a full build",
			base: func(t *testing.T) *model.Snapshot { return snapshot(t, true) },
			next: noWindowsDataplane,
		},
		{
			name: "a what-if action (drain a node) is a full build",
			base: func(t *testing.T) *model.Snapshot { return generated(t, false) },
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				node := build(t, s).Nodes[1].Name
				file := filepath.Join(t.TempDir(), "drain.yaml")
				doc := "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + node + "\n  annotations:\n    " + hybrid.ActionAnnotation + ": " + hybrid.ActionDrain + "\n"
				if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
					t.Fatal(err)
				}
				n := bgpOff(t, s)
				n.Actions = append(n.Actions, snapshot(t, false, file).Actions...)
				return n
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := tt.base(t)
			prev := build(t, base)
			next := tt.next(t, base)
			got := derived(t, prev, base, next)
			if shared := sharedPods(prev, got); (shared > 0) != tt.reuse {
				t.Errorf("%d pods shared with the previous twin; reuse expected: %v", shared, tt.reuse)
			}
			if again := build(t, base); !reflect.DeepEqual(again, prev) {
				t.Errorf("Derive changed the previous twin:\n%s", firstDifference(t, again, prev))
			}
		})
	}
}

// withPod is s with a new pod given whole (the spec of the first built
// workload pod), unbound and without an address, created at created.
func withPod(t *testing.T, s *model.Snapshot, created metav1.Time) *model.Snapshot {
	t.Helper()
	var spec corev1.PodSpec
	for _, p := range build(t, s).Pods {
		if len(p.OwnerReferences) > 0 && p.OwnerReferences[0].Kind == "ReplicaSet" {
			spec = *p.Spec.DeepCopy()
			break
		}
	}
	spec.NodeName = ""
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "added", Namespace: "default", CreationTimestamp: created},
		Spec:       spec,
	}
	o := &model.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Key: model.Key{Kind: "Pod", Namespace: "default", Name: "added"}, Typed: p}
	return plan.Layer(s, o)
}

// pinnedPort is the host port withHostPort and withPinnedPod claim.
const pinnedPort = 9123

// withHostPort is s with its first observed pod given whole (the spec the
// twin completes it with) and claiming host port pinnedPort; node is
// where it runs.
func withHostPort(t *testing.T, s *model.Snapshot) (_ *model.Snapshot, node string) {
	t.Helper()
	c := build(t, s)
	return edited(t, s, "Pod", func(o *model.Object) {
		p := o.Typed.(*corev1.Pod).DeepCopy()
		for _, q := range c.Pods {
			if q.Namespace == p.Namespace && q.Name == p.Name {
				p.Spec.Containers = append([]corev1.Container(nil), q.Spec.Containers...)
			}
		}
		if len(p.Spec.Containers) == 0 {
			t.Fatalf("pod %s/%s is not in the twin", p.Namespace, p.Name)
		}
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: pinnedPort, HostPort: pinnedPort}}
		node = p.Spec.NodeName
		o.Typed, o.Raw = p, nil
	}), node
}

// withPinnedPod is withPod with a pod that runs only on node and claims
// host port pinnedPort.
func withPinnedPod(t *testing.T, s *model.Snapshot, node string, created metav1.Time) *model.Snapshot {
	t.Helper()
	s = withPod(t, s, created)
	o := s.Objects[len(s.Objects)-1]
	p := o.Typed.(*corev1.Pod)
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: pinnedPort, HostPort: pinnedPort}}
	return s
}

func copyInstallation(t *testing.T, in *operator.Installation) *operator.Installation {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := &operator.Installation{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// derived is engine.Derive(prev, base, next), held equal to the full
// build of next.
func derived(t *testing.T, prev *model.Cluster, base, next *model.Snapshot) *model.Cluster {
	t.Helper()
	got, err := engine.Derive(prev, base, next)
	if err != nil {
		t.Fatal(err)
	}
	if want := build(t, next); !reflect.DeepEqual(want, got) {
		t.Fatalf("Derive differs from Build:\n%s", firstDifference(t, want, got))
	}
	return got
}

func sharedPods(a, b *model.Cluster) int {
	in := make(map[*corev1.Pod]bool, len(a.Pods))
	for _, p := range a.Pods {
		in[p] = true
	}
	n := 0
	for _, p := range b.Pods {
		if in[p] {
			n++
		}
	}
	return n
}

// A twin derived from a derived twin (each plan step's) equals the full
// build too: the pods the first derivation shared with its base are
// reused again by the next one, which places a new pod among them.
func TestATwinDerivedFromADerivedTwinEqualsTheFullBuild(t *testing.T) {
	base := generated(t, false)
	first := whatIf(t, base, "../../examples/what-if/no-strict-affinity.yaml")
	second := withPod(t, first, metav1.Time{})
	prev := build(t, base)
	mid, err := engine.Derive(prev, base, first)
	if err != nil {
		t.Fatal(err)
	}
	if sharedPods(prev, mid) == 0 {
		t.Fatal("the first derivation reused no pod")
	}
	got := derived(t, mid, first, second)
	if sharedPods(mid, got) == 0 {
		t.Error("the second derivation reused no pod")
	}
	if again := build(t, first); !reflect.DeepEqual(again, mid) {
		t.Errorf("Derive changed the derived twin it started from:\n%s", firstDifference(t, again, mid))
	}
}

// Two steps that change only Calico's configuration: the second
// derivation takes the first one's choice of pods again (no pod
// changed) and still equals the full build.
func TestATwinDerivedTwiceOverTheSamePodsEqualsTheFullBuild(t *testing.T) {
	base := generated(t, false)
	first := whatIf(t, base, "../../examples/what-if/no-strict-affinity.yaml")
	second := edited(t, first, "Installation", func(o *model.Object) {
		in := copyInstallation(t, o.Typed.(*operator.Installation))
		mtu := int32(1400)
		in.Spec.CalicoNetwork.MTU = &mtu
		o.Typed, o.Raw = in, nil
	})
	prev := build(t, base)
	mid, err := engine.Derive(prev, base, first)
	if err != nil {
		t.Fatal(err)
	}
	got := derived(t, mid, first, second)
	if sharedPods(mid, got) == 0 {
		t.Error("the second derivation reused no pod")
	}
}
