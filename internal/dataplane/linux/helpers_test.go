package linux

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var update = golden.Update

var (
	labOnce    sync.Once
	labCluster *model.Cluster
	labNodes   map[string]*Node
	labErr     error
)

// lab compiles the built-in lab once.
func lab(t testing.TB) (*model.Cluster, map[string]*Node) {
	t.Helper()
	labOnce.Do(func() {
		s, err := load.Load(load.Options{Lab: true})
		if err != nil {
			labErr = err
			return
		}
		labCluster, labErr = engine.Build(s)
		if labErr != nil {
			return
		}
		labNodes, labErr = Compile(labCluster)
	})
	if labErr != nil {
		t.Fatal(labErr)
	}
	return labCluster, labNodes
}

func labNode(t testing.TB, name string) *Node {
	t.Helper()
	_, ns := lab(t)
	n := ns[name]
	if n == nil {
		t.Fatalf("no Linux node %s in the lab", name)
	}
	return n
}

// run prints what a command shows on the node, from its text form: the
// renderer each of the tests' fixed command lines asks for (reading the
// command line is internal/console's and tested there).
func run(t testing.TB, n *Node, cmd string) string {
	t.Helper()
	switch cmd {
	case "ip route":
		return n.IPRoute()
	case "ip addr":
		return n.IPAddr("")
	case "ip link":
		return n.IPLink("", false)
	case "ip -d link show vxlan.calico":
		return n.IPLink(VXLANDevice, true)
	case "ip neigh show dev vxlan.calico":
		return n.IPNeigh()
	case "bridge fdb show dev vxlan.calico":
		return n.BridgeFDB()
	case "nft list ruleset":
		var b strings.Builder
		for _, tb := range n.NFTTables() {
			b.WriteString(tb.Text)
		}
		return b.String()
	}
	for _, tb := range n.NFTTables() {
		if cmd == "nft list table "+tb.Family+" "+tb.Name {
			return tb.Text
		}
	}
	t.Fatalf("%s: no such view of node %s", cmd, n.Name)
	return ""
}

// trimLines drops the trailing blank iproute2 leaves on each line, which
// pasted transcripts lose, and the final newline.
func trimLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines
}

func assertLines(t *testing.T, what string, got string, want ...string) {
	t.Helper()
	g := trimLines(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s", what, lineDiff(strings.Join(want, "\n"), strings.Join(g, "\n")))
	}
}

// checkGolden compares got with testdata/golden/<name>.golden. With -update
// it rewrites the file; on a mismatch it writes actual_<base> beside it and
// fails with a line diff.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), got)
}

func lineDiff(want, got string) string { return golden.Diff(want, got) }
