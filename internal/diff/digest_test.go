package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// sharing is a twin made from c as a derived twin is: every list copied,
// every object shared, so that change can replace some of them (with
// changed copies), drop or add some, and leave the rest the same pointers.
func sharing(c *model.Cluster, change func(t *testing.T, c *model.Cluster), t *testing.T) *model.Cluster {
	d := *c
	d.Nodes = append([]*corev1.Node(nil), c.Nodes...)
	d.Pods = append([]*corev1.Pod(nil), c.Pods...)
	d.Services = append([]*corev1.Service(nil), c.Services...)
	change(t, &d)
	return &d
}

func hostNetworkPod(t *testing.T, c *model.Cluster) int {
	t.Helper()
	for i, p := range c.Pods {
		if p.Spec.HostNetwork && p.Spec.NodeName != "" {
			return i
		}
	}
	t.Fatal("the lab has no host-network pod")
	return -1
}

func workloadPod(t *testing.T, c *model.Cluster) int {
	t.Helper()
	for i, p := range c.Pods {
		if !p.Spec.HostNetwork && p.Status.PodIP != "" {
			return i
		}
	}
	t.Fatal("the lab has no pod on the pod network")
	return -1
}

// A twin's digest takes an earlier twin's hashes of the objects both hold
// (the same pointers) instead of encoding them again: it must be exactly
// the digest made by hashing every object of the twin from scratch, and
// the comparison through it exactly the one without reuse.
func TestADigestReusingAnEarlierTwinsHashesEqualsOneMadeFromScratch(t *testing.T) {
	base := build(t, true)
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, c *model.Cluster)
	}{
		{"nothing changes", func(*testing.T, *model.Cluster) {}},
		{"a pod's labels change", func(t *testing.T, c *model.Cluster) {
			i := workloadPod(t, c)
			p := c.Pods[i].DeepCopy()
			p.Labels = map[string]string{"app": "changed"}
			c.Pods[i] = p
		}},
		{"an agent's spec changes, as a rollout does", func(t *testing.T, c *model.Cluster) {
			i := hostNetworkPod(t, c)
			p := c.Pods[i].DeepCopy()
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "CALICO_NETWORKING_BACKEND", Value: "vxlan"})
			c.Pods[i] = p
		}},
		{"an agent moves to another node", func(t *testing.T, c *model.Cluster) {
			i := hostNetworkPod(t, c)
			p := c.Pods[i].DeepCopy()
			p.Spec.NodeName = c.Nodes[len(c.Nodes)-1].Name
			c.Pods[i] = p
		}},
		{"a node's annotation changes", func(t *testing.T, c *model.Cluster) {
			n := c.Nodes[0].DeepCopy()
			n.Annotations = map[string]string{"example.com/x": "y"}
			c.Nodes[0] = n
		}},
		{"a pod is removed and another added", func(t *testing.T, c *model.Cluster) {
			i := workloadPod(t, c)
			p := c.Pods[i].DeepCopy()
			p.Name += "-new"
			c.Pods = append(append(c.Pods[:i:i], c.Pods[i+1:]...), p)
		}},
		{"a pod moves from the first place to the last, beyond align's look-ahead", func(_ *testing.T, c *model.Cluster) {
			c.Pods = append(c.Pods[1:len(c.Pods):len(c.Pods)], c.Pods[0])
		}},
		{"a node is removed and a pod replaced in place", func(t *testing.T, c *model.Cluster) {
			c.Nodes = c.Nodes[1:]
			i := workloadPod(t, c)
			p := c.Pods[i].DeepCopy()
			p.Name += "-new"
			c.Pods[i] = p
		}},
		{"the same pods come in another order", func(_ *testing.T, c *model.Cluster) {
			for i, j := 0, len(c.Pods)-1; i < j; i, j = i+1, j-1 {
				c.Pods[i], c.Pods[j] = c.Pods[j], c.Pods[i]
			}
		}},
		{"the Installation changes", func(t *testing.T, c *model.Cluster) {
			raw, err := json.Marshal(c.Installation)
			if err != nil {
				t.Fatal(err)
			}
			in := &operator.Installation{}
			if err := json.Unmarshal(raw, in); err != nil {
				t.Fatal(err)
			}
			off := "Disabled"
			in.Spec.CalicoNetwork.BGP = &off
			c.Installation = in
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := sharing(base, tc.change, t)
			prev := newDigest(base, nil)
			reused := newDigest(after, prev)
			fresh := newDigest(after, nil)
			shared := 0
			for _, k := range align(prev.objects, fresh.objects) {
				if k >= 0 {
					shared++
				}
			}
			if shared == 0 {
				t.Fatal("the twins share no object: nothing was reused")
			}
			if !reflect.DeepEqual(reused, fresh) {
				t.Errorf("the digest reusing the earlier twin's hashes differs from the one made from scratch")
			}
			// The objects paired by pointer (align) and the rest by key
			// give what pairing every object by key gives.
			if got, want := compareObjects(prev, fresh), compareObjectsByKey(prev, fresh); !reflect.DeepEqual(got, want) {
				t.Errorf("objects paired by pointer: %+v\nby key: %+v", got, want)
			}
			// Through the comparison: the after twin's digest made first
			// (from scratch) or from the before twin's.
			ta, tb := NewTwin(base), NewTwin(after)
			tb.digest()
			want, err := CompareTwins(ta, tb, Options{NoReach: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := CompareTwins(NewTwin(base), NewTwin(after), Options{NoReach: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("comparison with reused hashes %+v\nfrom scratch %+v", got, want)
			}
		})
	}
}

// compareObjectsByKey is compareObjects pairing every object by its key:
// the reference for pairing the shared ones by pointer.
func compareObjectsByKey(a, b *digest) []ObjectChange {
	before := map[model.Key]int{}
	for i, o := range a.objects {
		before[o.key] = i
	}
	after := map[model.Key]bool{}
	var out []ObjectChange
	for i, o := range b.objects {
		after[o.key] = true
		k, ok := before[o.key]
		switch {
		case !ok:
			out = append(out, ObjectChange{Object: objectRef(o.key), Change: Added})
		case a.sums[k].sum != b.sums[i].sum:
			if f := fieldChanges(a.objects[k].obj, o.obj); len(f) > 0 {
				out = append(out, ObjectChange{Object: objectRef(o.key), Change: Changed, Fields: f})
			}
		}
	}
	for _, o := range a.objects {
		if !after[o.key] {
			out = append(out, ObjectChange{Object: objectRef(o.key), Change: Removed})
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessRef(out[i].Object, out[j].Object) })
	return out
}

// align pairs every object next shares with prev (the same pointer) with
// its index in prev, and no other, whatever runs were inserted, removed or
// replaced and however the list was reordered: as a map by pointer does.
func TestAlignPairsExactlyTheObjectsBothListsHold(t *testing.T) {
	fresh := func(n int) []object {
		out := make([]object, n)
		for i := range out {
			out[i] = object{obj: &corev1.Pod{}}
		}
		return out
	}
	prev := fresh(300)
	cat := func(parts ...[]object) []object {
		var out []object
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	reversed := make([]object, len(prev))
	for i, o := range prev {
		reversed[len(prev)-1-i] = o
	}
	for _, tc := range []struct {
		name string
		next []object
	}{
		{"the same list", prev},
		{"a short run inserted", cat(prev[:10], fresh(5), prev[10:])},
		{"a long run inserted", cat(prev[:10], fresh(150), prev[10:])},
		{"a short run removed", cat(prev[:10], prev[20:])},
		{"a long run removed", cat(prev[:10], prev[200:])},
		{"a long run replaced in place", cat(prev[:10], fresh(150), prev[160:])},
		{"the list reversed", reversed},
		{"the first object moved to the end", cat(prev[1:], prev[:1])},
		{"nothing shared", fresh(300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := map[any]int32{}
			for i, o := range prev {
				at[o.obj] = int32(i)
			}
			got := align(prev, tc.next)
			for i, o := range tc.next {
				want, ok := at[o.obj]
				if !ok {
					want = -1
				}
				if got[i] != want {
					t.Fatalf("object %d paired with %d, want %d", i, got[i], want)
				}
			}
		})
	}
}

// A panic in one of parallel's workers is raised again in its caller, with
// the worker's stack, after the other workers end (internal/crash): the
// command's recover sees it instead of the process ending.
func TestAPanicInAParallelWorkerIsRaisedInItsCaller(t *testing.T) {
	var done atomic.Int32
	got := func() (p *crash.Panic) {
		defer func() { p, _ = recover().(*crash.Panic) }()
		parallel(64, func(j int, _ *[]byte) {
			if j == 5 {
				panic("boom")
			}
			done.Add(1)
		})
		return nil
	}()
	if got == nil || fmt.Sprint(got.Value) != "boom" || !strings.Contains(string(got.Stack), "TestAPanicInAParallelWorker") {
		t.Fatalf("recovered %+v, want the worker's panic boom with its stack", got)
	}
	if done.Load() == 0 {
		t.Errorf("no other item was done")
	}
}
