package cli

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
)

// generatedCluster builds a cluster of `gen`'s shape: nodes nodes, a tenth
// of them Windows, 30 pods per node, 2 Services per node.
func generatedCluster(tb testing.TB, nodes int) *model.Cluster {
	tb.Helper()
	o := gentest.Shape(nodes)
	o.WindowsNodes = nodes / 10
	c, err := engine.Build(gentest.Snapshot(tb, o, load.Options{}))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// lastNodes are the last Linux and the last Windows node of c.
func lastNodes(tb testing.TB, c *model.Cluster) (lx, win string) {
	tb.Helper()
	for _, n := range c.Nodes {
		if n.Labels["kubernetes.io/os"] == "windows" {
			win = n.Name
		} else {
			lx = n.Name
		}
	}
	if lx == "" || win == "" {
		tb.Fatalf("no Linux (%q) or Windows (%q) node", lx, win)
	}
	return lx, win
}

func TestExecAndGetOfOneNodeCompileOnlyThatNode(t *testing.T) {
	c := generatedCluster(t, 200)
	lx, win := lastNodes(t, c)
	exec := func(node string, argv ...string) func(t *testing.T) *plane.Plane {
		return func(t *testing.T) *plane.Plane {
			pl, err := plane.New(c)
			if err != nil {
				t.Fatal(err)
			}
			out, err := console.Exec(console.FromPlane(pl), console.Target{Kind: console.KindNode, Name: node}, argv)
			if err != nil || out.Code != 0 || out.Stdout == "" {
				t.Fatalf("exec: code %d, err %v, stderr %q, stdout %q", out.Code, err, out.Stderr, out.Stdout)
			}
			return pl
		}
	}
	get := func(node, kind string) func(t *testing.T) *plane.Plane {
		return func(t *testing.T) *plane.Plane {
			d := &dataplane{cluster: func() *model.Cluster { return c }, node: node}
			var rows []any
			var err error
			if kind == "routes" {
				rows, err = d.routes()
			} else {
				rows, err = d.windowsRows(kind)
			}
			if err != nil || len(rows) == 0 {
				t.Fatalf("get %s --node %s: %d rows, %v", kind, node, len(rows), err)
			}
			return d.pl
		}
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) *plane.Plane
		want plane.Compiled
	}{
		{"exec ip route on a Linux node compiles that node", exec(lx, "ip", "route"), plane.Compiled{Linux: 1}},
		{"exec nft list ruleset on a Linux node compiles that node", exec(lx, "nft", "list", "ruleset"), plane.Compiled{Linux: 1}},
		{"exec of an HNS cmdlet on a Windows node compiles that node", exec(win, "Get-HnsEndpoint | ConvertTo-Json"), plane.Compiled{Windows: 1}},
		{"exec hnsdiag on a Windows node compiles that node", exec(win, "hnsdiag", "list", "loadbalancers"), plane.Compiled{Windows: 1}},
		{"get routes of a Linux node compiles that node", get(lx, "routes"), plane.Compiled{Linux: 1}},
		{"get routes of a Windows node compiles that node", get(win, "routes"), plane.Compiled{Windows: 1}},
		{"get hnsendpoints of a Windows node compiles that node", get(win, "hnsendpoints"), plane.Compiled{Windows: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.run(t).Compiled(); got != tc.want {
				t.Errorf("compiled %+v, want %+v", got, tc.want)
			}
		})
	}
}

// benchNodes is the size of the benchmarks' generated cluster, 200 nodes
// unless HYBRID_BENCH_PLANE_NODES says otherwise.
func benchNodes(b *testing.B) int {
	n := 200
	if s := os.Getenv("HYBRID_BENCH_PLANE_NODES"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// BenchmarkExecOneLinuxNode is `exec node/X -- ip route` after the twin is
// built: every-node is the work exec did before the plane (the Felix
// calculation, every Linux node compiled, the command run on one), plane
// what it does now.
func BenchmarkExecOneLinuxNode(b *testing.B) {
	c := generatedCluster(b, benchNodes(b))
	lx, _ := lastNodes(b, c)
	argv := []string{"ip", "route"}
	b.Run("every-node", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			nodes, err := linux.CompileFelix(c, felix.New(c))
			if err != nil {
				b.Fatal(err)
			}
			if len(nodes[lx].IPRoute()) == 0 {
				b.Fatal("no routes")
			}
		}
	})
	b.Run("plane", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			pl, err := plane.New(c)
			if err != nil {
				b.Fatal(err)
			}
			if out, err := console.Exec(console.FromPlane(pl), console.Target{Kind: console.KindNode, Name: lx}, argv); err != nil || out.Code != 0 {
				b.Fatal(out.Code, err)
			}
		}
	})
}

// BenchmarkGetRoutesOneNode is `get routes --node X` of a Linux node after
// the twin is built: every-node is the work get did before the plane (the
// Felix calculation, every Linux node compiled, a Windows compiler with a
// calculation of its own; one node's routes read), plane what it does now,
// its rows made too.
func BenchmarkGetRoutesOneNode(b *testing.B) {
	c := generatedCluster(b, benchNodes(b))
	lx, _ := lastNodes(b, c)
	b.Run("every-node", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			nodes, err := linux.CompileFelix(c, felix.New(c))
			if err != nil {
				b.Fatal(err)
			}
			if len(nodes[lx].Routes()) == 0 {
				b.Fatal("no routes")
			}
			if _, err := windows.NewCompiler(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plane", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			d := &dataplane{cluster: func() *model.Cluster { return c }, node: lx}
			if rows, err := d.routes(); err != nil || len(rows) == 0 {
				b.Fatal(len(rows), err)
			}
		}
	})
}

// cpuPerOp reports the process's CPU time (user and system) per
// operation: on a shared machine it varies less than wall time.
func cpuPerOp(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((processCPU()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		}
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
