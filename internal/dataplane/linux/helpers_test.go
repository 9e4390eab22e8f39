package linux

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

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

// run executes a command line on the node and fails on a non-zero exit.
func run(t testing.TB, n *Node, cmd string) string {
	t.Helper()
	out, errOut, code := n.Exec(strings.Fields(cmd))
	if code != 0 {
		t.Fatalf("%s on %s: exit %d: %s", cmd, n.Name, code, errOut)
	}
	return out
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
	path := filepath.Join("testdata", "golden", name+".golden")
	actual := filepath.Join(filepath.Dir(path), "actual_"+filepath.Base(path))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(actual)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/dataplane/linux -update to create it)", err)
	}
	if string(want) == got {
		os.Remove(actual)
		return
	}
	if err := os.WriteFile(actual, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Errorf("%s differs from %s (actual output in %s):\n%s", name, path, actual, lineDiff(string(want), got))
}

// lineDiff is a small LCS line diff: "-" expected only, "+" actual only.
func lineDiff(want, got string) string {
	a := strings.Split(want, "\n")
	b := strings.Split(got, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			fmt.Fprintf(&sb, "  %q\n", a[i])
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&sb, "+ %q\n", b[j])
			j++
		default:
			fmt.Fprintf(&sb, "- %q\n", a[i])
			i++
		}
	}
	return sb.String()
}
