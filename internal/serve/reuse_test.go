package serve

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// generatedSnapshot is internal/gen's shape at nodes nodes, a tenth
// Windows.
func generatedSnapshot(tb testing.TB, nodes int) *model.Snapshot {
	tb.Helper()
	o := gentest.Shape(nodes)
	o.WindowsNodes = max(1, nodes/10)
	return gentest.Snapshot(tb, o, load.Options{DropRaw: true})
}

// replaced is snap with the i-th object's typed value replaced.
func replaced(snap *model.Snapshot, i int, typed any) *model.Snapshot {
	next := *snap
	next.Objects = append([]*model.Object(nil), snap.Objects...)
	o := *snap.Objects[i]
	o.Typed = typed
	next.Objects[i] = &o
	return &next
}

// nodeAnswers are every node's exec answers and the traces of pairs, as
// JSON, from one plane.
func nodeAnswers(t *testing.T, p *plane.Plane, pairs [][2]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	tw := console.FromPlane(p)
	for _, n := range p.Cluster().Nodes {
		cmds := [][]string{{"ip", "route"}, {"ip", "neigh"}, {"bridge", "fdb"}, {"nft", "list", "ruleset"}}
		if p.IsWindows(n.Name) {
			cmds = [][]string{{"hnsdiag", "list", "networks"}, {"hnsdiag", "list", "endpoints"}, {"hnsdiag", "list", "loadbalancers"}, {"Get-HnsPolicyList"}}
		}
		for _, argv := range cmds {
			o, err := console.Exec(tw, console.Target{Kind: console.KindNode, Name: n.Name}, argv)
			out[fmt.Sprintf("%s %v", n.Name, argv)] = fmt.Sprintf("%+v %v", o, err)
		}
	}
	e, err := trace.FromPlane(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range pairs {
		r, err := query.RunTrace(e, query.Trace{Src: pr[0], Dst: pr[1], Proto: trace.TCP})
		b, _ := json.Marshal(r)
		out["trace "+pr[0]+" "+pr[1]] = fmt.Sprintf("%s %v", b, err)
	}
	return out
}

// A plane that reuses the previous plane's nodes answers every exec on
// every node, and every trace, as a plane compiled from scratch; and it
// compiles anew only the nodes whose inputs changed.
func TestAReusingPlaneAnswersAsOneCompiledFromScratch(t *testing.T) {
	snap := generatedSnapshot(t, 20)
	c0, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	pairs := benchPairs(t, c0)[:9]
	// The first running pod with an address, and a Service with ports.
	podAt, svcAt := -1, -1
	for i, o := range snap.Objects {
		switch v := o.Typed.(type) {
		case *corev1.Pod:
			if podAt < 0 && v.Status.PodIP != "" && !v.Spec.HostNetwork && gen.IsWorkloadNamespace(v.Namespace) {
				podAt = i
			}
		case *corev1.Service:
			if svcAt < 0 && len(v.Spec.Ports) > 0 && gen.IsWorkloadNamespace(v.Namespace) {
				svcAt = i
			}
		}
	}
	if podAt < 0 || svcAt < 0 {
		t.Fatal("the generated cluster has no observed pod or Service")
	}
	pod := snap.Objects[podAt].Typed.(*corev1.Pod)
	const one, all = -1, -2
	cases := []struct {
		name string
		next func() *model.Snapshot
		// compiles is how many nodes compile anew: none, one, or all.
		compiles int
	}{
		{"nothing changed", func() *model.Snapshot { return snap }, 0},
		{"a pod's annotation changed", func() *model.Snapshot {
			p := pod.DeepCopy()
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations["example.com/touched"] = "yes"
			return replaced(snap, podAt, p)
		}, one},
		{"a pod's labels changed", func() *model.Snapshot {
			p := pod.DeepCopy()
			p.Labels = map[string]string{"app": "moved"}
			return replaced(snap, podAt, p)
		}, all},
		{"a pod was deleted", func() *model.Snapshot {
			next := *snap
			next.Objects = append(append([]*model.Object(nil), snap.Objects[:podAt]...), snap.Objects[podAt+1:]...)
			return &next
		}, all},
		{"a Service's port changed", func() *model.Snapshot {
			s := snap.Objects[svcAt].Typed.(*corev1.Service).DeepCopy()
			s.Spec.Ports[0].Port++
			return replaced(snap, svcAt, s)
		}, all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c1, err := engine.Build(snap)
			if err != nil {
				t.Fatal(err)
			}
			p1, err := plane.New(c1)
			if err != nil {
				t.Fatal(err)
			}
			nodeAnswers(t, p1, pairs) // compiles every node
			c2, err := engine.Build(tc.next())
			if err != nil {
				t.Fatal(err)
			}
			reused, err := plane.Reuse(p1, c2)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := plane.New(c2)
			if err != nil {
				t.Fatal(err)
			}
			got, want := nodeAnswers(t, reused, pairs), nodeAnswers(t, fresh, pairs)
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s differs from a plane compiled from scratch:\n%s", k, golden.Diff(w, got[k]))
				}
			}
			n, f := reused.Compiled(), fresh.Compiled()
			compiled, total := n.Linux+n.Windows, f.Linux+f.Windows
			want1 := map[int]int{0: 0, one: 1, all: total}[tc.compiles]
			if compiled != want1 {
				t.Errorf("%d of %d nodes compiled anew, want %d", compiled, total, want1)
			}
		})
	}
}
