package reach

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Reach compiles the Windows endpoints' ACLs with the plane's compiler,
// the one trace walks, not a second one of its own.
func TestReachUsesThePlanesWindowsCompiler(t *testing.T) {
	e := lab(t)
	want, err := e.Plane().WindowsCompiler()
	if err != nil {
		t.Fatal(err)
	}
	an := newAnalyzer(e, Options{AllNamespaces: true})
	an.prepare()
	if got := an.AclCompiler(); got == nil || got != want {
		t.Errorf("reach's Windows compiler is %p, the plane's %p", got, want)
	}
}

// linuxOnly is the lab's cluster without its Windows nodes, in an engine
// over a plane of its own.
func linuxOnly(t *testing.T) *trace.Engine {
	t.Helper()
	c := *lab(t).Cluster()
	c.Nodes = nil
	for _, n := range lab(t).Cluster().Nodes {
		if n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
			c.Nodes = append(c.Nodes, n)
		}
	}
	p, err := plane.New(&c)
	if err != nil {
		t.Fatal(err)
	}
	e, err := trace.FromPlane(p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Reach asks for the Windows compiler only for the ACLs of a Windows
// endpoint: a cluster with no Windows node never makes one, whichever
// classes' ACLs are asked for.
func TestReachAsksForTheWindowsCompilerOnlyWithAWindowsEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    *trace.Engine
		want bool
	}{
		{"the lab, with Windows pods, asks", lab(t), true},
		{"the lab without its Windows nodes does not", linuxOnly(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			an := newAnalyzer(tc.e, Options{AllNamespaces: true})
			asked := false
			get := an.AclCompiler
			an.AclCompiler = func() *windows.Compiler { asked = true; return get() }
			an.prepare()
			for _, c := range an.Classes {
				an.EndpointACLs(c.RepIP)
			}
			if asked != tc.want {
				t.Errorf("asked for the Windows compiler: %t, want %t", asked, tc.want)
			}
		})
	}
}

// Reach tells Linux nodes apart without compiling them: its preparation
// compiles one node per set of alike nodes (whose routes it reads), not
// every node.
func TestReachPreparesWithoutCompilingEveryLinuxNode(t *testing.T) {
	snap, err := load.Load(load.Options{Filenames: []string{genDir(t, 600, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plane.New(c)
	if err != nil {
		t.Fatal(err)
	}
	e, err := trace.FromPlane(p)
	if err != nil {
		t.Fatal(err)
	}
	an := newAnalyzer(e, Options{AllNamespaces: true})
	an.prepare()
	linuxNodes := 0
	for _, n := range an.Nodes {
		if !n.Windows {
			linuxNodes++
		}
	}
	if got := p.Compiled().Linux; got >= linuxNodes || got == 0 {
		t.Errorf("preparing compiled %d of %d Linux nodes, want at least one and fewer than all", got, linuxNodes)
	}
}
