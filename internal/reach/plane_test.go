package reach

import "testing"

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
