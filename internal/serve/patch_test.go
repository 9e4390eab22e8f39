package serve

import (
	"cmp"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// fakeCluster is an API server's objects, read as live.Read reads them
// (each through the watch's decoding, units in live.Rank's order).
type fakeCluster struct {
	mu   sync.Mutex
	objs map[string]*unstructured.Unstructured // by unit
	gvr  map[string]schema.GroupVersionResource
}

func gvrOf(u *unstructured.Unstructured) schema.GroupVersionResource {
	gvk := u.GroupVersionKind()
	return gvk.GroupVersion().WithResource(live.Plural(gvk.Kind))
}

// newFakeCluster holds the lab's objects.
func newFakeCluster(t testing.TB) *fakeCluster {
	t.Helper()
	snap, err := load.Load(load.Options{Lab: true})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCluster{objs: map[string]*unstructured.Unstructured{}, gvr: map[string]schema.GroupVersionResource{}}
	for _, o := range snap.Objects {
		// The Cluster kind reads the lab's files beside it: it is not an
		// API server's object.
		if o.Raw == nil || o.GVK.Group == hybrid.Group {
			continue
		}
		// An object that does not decode alone (the Cluster kind reads
		// the lab's files beside it) is not the API server's.
		if ch := f.put(&unstructured.Unstructured{Object: o.Raw}); ch.Err != nil {
			f.remove(ch.Unit)
		}
	}
	return f
}

// put stores u and returns its update as the watch delivers it.
func (f *fakeCluster) put(u *unstructured.Unstructured) Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	up := live.DecodeUpdate(u.DeepCopy(), gvrOf(u), u.GetKind())
	f.objs[up.Unit] = u.DeepCopy()
	return Change{Unit: up.Unit, Objects: up.Objects, Warnings: up.Warnings, Err: up.Err}
}

func (f *fakeCluster) remove(unit string) Change {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objs, unit)
	return Change{Unit: unit}
}

func (f *fakeCluster) get(unit string) *unstructured.Unstructured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objs[unit].DeepCopy()
}

// read decodes every object afresh, as a read of the cluster would.
func (f *fakeCluster) read(context.Context) (*model.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ups []live.Update
	for _, u := range f.objs {
		up := live.DecodeUpdate(u.DeepCopy(), gvrOf(u), u.GetKind())
		if up.Err != nil {
			return nil, up.Err
		}
		ups = append(ups, up)
	}
	slices.SortFunc(ups, func(a, b live.Update) int {
		return cmp.Or(cmp.Compare(live.Rank(a.Unit), live.Rank(b.Unit)), strings.Compare(a.Unit, b.Unit))
	})
	snap := &model.Snapshot{}
	for _, up := range ups {
		snap.Objects = append(snap.Objects, up.Objects...)
	}
	return snap, nil
}

func mustObject(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatal(err)
	}
	return &u
}

// The questions whose answers a patched twin and a fresh one must share.
var followQuestions = []struct{ method, target, body string }{
	{"GET", "/api/v1/check", ""},
	{"GET", "/api/v1/get/pods?allNamespaces=true", ""},
	{"GET", "/api/v1/get/pods?allNamespaces=true&selector=app%3Dprobe", ""},
	{"GET", "/api/v1/get/nodes", ""},
	{"GET", "/api/v1/get/networkpolicies?allNamespaces=true", ""},
	{"GET", "/api/v1/get/installations", ""},
	{"GET", "/api/v1/get/ipamblocks", ""},
	{"GET", "/api/v1/trace?src=deploy/aspnetapp&dst=hello.demo&namespace=win-demo&port=80", ""},
	{"GET", "/api/v1/trace?namespace=demo&src=deploy/hello&dst=svc/win-demo/aspnetapp", ""},
	{"POST", "/api/v1/exec", `{"target": "node/k8s-lab-node-1", "command": ["ip", "route"]}`},
	{"POST", "/api/v1/exec", `{"target": "node/k8s-lab-win-1", "command": ["hnsdiag", "list", "endpoints"]}`},
	{"GET", "/metrics", ""},
}

var rebuildLines = regexp.MustCompile(`(?m)^kubectl_hybrid_(rebuilds_total|last_rebuild_timestamp_seconds|last_rebuild_duration_seconds) .*$`)

func answers(s *Server) []string {
	h := s.Handler()
	out := make([]string, len(followQuestions))
	for i, q := range followQuestions {
		status, _, body := do(h, q.method, q.target, q.body)
		out[i] = rebuildLines.ReplaceAllString(body, "") + "\nstatus " + string(rune('0'+status/100))
	}
	return out
}

func keys(snap *model.Snapshot) []string {
	out := make([]string, len(snap.Objects))
	for i, o := range snap.Objects {
		out[i] = o.Key.String() + " " + o.Origin.String()
	}
	return out
}

// After each change of a followed cluster, the patched twin's snapshot
// and answers equal those of a twin built from a fresh read.
func TestAPatchedTwinAnswersAsAFreshRead(t *testing.T) {
	f := newFakeCluster(t)
	s := New(Options{Read: f.read, Rank: live.Rank, Now: fixedNow})
	ctx := context.Background()
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	probe := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"serve-probe","namespace":"demo","labels":{"app":"probe"}},
		"spec":{"nodeName":"k8s-lab-node-1","containers":[{"name":"c","image":"busybox:1.36","ports":[{"containerPort":8080}],
		"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}}]}}`
	steps := []struct {
		name   string
		change func(t *testing.T) []Change
	}{
		{"a pod is created", func(t *testing.T) []Change { return []Change{f.put(mustObject(t, probe))} }},
		{"the pod's labels change", func(t *testing.T) []Change {
			u := f.get("live:pod/demo/serve-probe")
			u.SetLabels(map[string]string{"app": "hello"})
			return []Change{f.put(u)}
		}},
		{"the pod is deleted", func(t *testing.T) []Change { return []Change{f.remove("live:pod/demo/serve-probe")} }},
		{"a node is created and cordoned in one burst", func(t *testing.T) []Change {
			u := mustObject(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"k8s-lab-node-9",
				"labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"k8s-lab-node-9"}}}`)
			first := f.put(u)
			_ = unstructured.SetNestedField(u.Object, true, "spec", "unschedulable")
			return []Change{first, f.put(u)}
		}},
		{"the node is deleted", func(t *testing.T) []Change { return []Change{f.remove("live:node/k8s-lab-node-9")} }},
		{"a policy is created", func(t *testing.T) []Change {
			return []Change{f.put(mustObject(t, `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"serve-deny","namespace":"demo"},
				"spec":{"podSelector":{},"policyTypes":["Ingress","Egress"]}}`))}
		}},
		{"the policy is deleted", func(t *testing.T) []Change {
			return []Change{f.remove("live:networkpolicy.networking.k8s.io/demo/serve-deny")}
		}},
		{"the Installation turns BGP on", func(t *testing.T) []Change {
			u := f.get("live:installation.operator.tigera.io/default")
			if u == nil {
				t.Fatal("the lab has no Installation default")
			}
			_ = unstructured.SetNestedField(u.Object, "Enabled", "spec", "calicoNetwork", "bgp")
			return []Change{f.put(u)}
		}},
		{"the Installation is deleted", func(t *testing.T) []Change {
			return []Change{f.remove("live:installation.operator.tigera.io/default")}
		}},
	}
	prev := answers(s)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for _, ch := range st.change(t) {
				s.Follow(ch)
			}
			if err := s.Update(ctx); err != nil {
				t.Fatal(err)
			}
			fresh := New(Options{Read: f.read, Now: fixedNow})
			if err := fresh.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := keys(s.cur.Load().snap), keys(fresh.cur.Load().snap); !slices.Equal(got, want) {
				t.Errorf("the patched snapshot is not the fresh read's:\n%s", golden.Diff(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
			got, want := answers(s), answers(fresh)
			if slices.Equal(want, prev) {
				t.Errorf("the change is in none of the answers")
			}
			prev = want
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %s differs from a fresh read's:\n%s", followQuestions[i].method, followQuestions[i].target, golden.Diff(want[i], got[i]))
				}
			}
		})
	}
}

// An object the loader refuses stops the rebuilds, as a read of the
// cluster would fail, and the previous twin stays until it is fixed.
func TestARefusedObjectKeepsThePreviousTwinUntilItChanges(t *testing.T) {
	f := newFakeCluster(t)
	s := New(Options{Read: f.read, Rank: live.Rank, Now: fixedNow})
	ctx := context.Background()
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	before := s.cur.Load()
	refused := errors.New("pods \"bad\" is invalid")
	s.Follow(Change{Unit: "live:pod/demo/bad", Err: refused})
	if err := s.Update(ctx); !errors.Is(err, refused) {
		t.Fatalf("the update gave %v, want the refusal", err)
	}
	if s.cur.Load() != before {
		t.Error("the twin changed although an object is refused")
	}
	s.Follow(f.remove("live:pod/demo/bad"))
	if err := s.Update(ctx); err != nil {
		t.Fatalf("the refused object is gone, yet: %v", err)
	}
	if s.cur.Load() == before {
		t.Error("the twin was not rebuilt after the refused object went")
	}
}
