package diff

import (
	"slices"
	"strings"
	"testing"
)

func TestATwinComparedWithAnotherBuildOfTheSameInputHasNoDifference(t *testing.T) {
	r, err := Compare(build(t, true), build(t, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Empty() {
		var b strings.Builder
		_ = r.WriteText(&b)
		t.Fatalf("differences between two builds of the lab:\n%s", b.String())
	}
}

func TestWithoutStrictAffinityTheWindowsNodeLosesItsCalicoNetworkAndTheLinuxNodesTheirRouteToIt(t *testing.T) {
	r, err := Compare(build(t, true), build(t, true, "../../examples/what-if/no-strict-affinity.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var win, linux *NodeDiff
	for i := range r.Nodes {
		switch r.Nodes[i].Node {
		case "k8s-lab-win-1":
			win = &r.Nodes[i]
		case "k8s-lab-node-1":
			linux = &r.Nodes[i]
		}
	}
	if win == nil || linux == nil {
		t.Fatalf("nodes with changes: %v", r.Nodes)
	}
	if len(win.Networks.Removed) == 0 || len(win.Networks.Added) != 0 {
		t.Errorf("the Windows node's HNS networks: %+v, want the Calico network removed", win.Networks)
	}
	if !slices.ContainsFunc(linux.Routes.Removed, func(s string) bool { return strings.Contains(s, "dev vxlan.calico onlink") }) {
		t.Errorf("k8s-lab-node-1's routes: %+v, want the route to the Windows block removed", linux.Routes)
	}
	if len(r.TigeraStatus) != 1 || r.TigeraStatus[0].Name != "calico-windows" {
		t.Errorf("TigeraStatus: %+v, want calico-windows", r.TigeraStatus)
	}
	if r.Reach == nil || !slices.ContainsFunc(r.Reach.Changes, func(c ReachChange) bool { return c.Effect == Lost }) {
		t.Errorf("reach: no lost connectivity")
	}
}
