// Package golden compares what the tool prints with golden files, for the
// tests of every package that prints. `go test ./... -args -update` (or
// `-update` on one package) rewrites the files; a mismatch leaves the actual
// output as actual_<name> beside the golden file and reports a line diff.
package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the -update flag of every test binary that imports this package.
var Update = flag.Bool("update", false, "rewrite the golden files")

// Check compares got with the file at path.
func Check(t testing.TB, path, got string) {
	t.Helper()
	actual := filepath.Join(filepath.Dir(path), "actual_"+filepath.Base(path))
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(actual)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the package's tests with -update to create it)", err)
	}
	if string(want) == got {
		_ = os.Remove(actual)
		return
	}
	_ = os.WriteFile(actual, []byte(got), 0o644)
	t.Errorf("%s differs from the golden file (actual output in %s):\n%s", path, actual, Diff(string(want), got))
}

// Diff is a small line diff: the longest common subsequence of lines, with
// "-" for expected-only and "+" for actual-only lines.
func Diff(want, got string) string {
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
