package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// realShapesDir holds inputs shaped like what real clusters print (typed
// List kinds, empty selfLink, metadata and status, both Calico API groups,
// provider CNIs, Windows nodes of managed clusters); its README.md lists
// the shapes. Each case is laid out like a case of the bad-input corpus.
var realShapesDir = filepath.Join("testdata", "realshapes")

// TestEveryCommandReadsTheRealShapesCorpus runs every command that reads a
// cluster on each case: none may crash or refuse the input, and what each
// answered is kept in the case's want.golden.
func TestEveryCommandReadsTheRealShapesCorpus(t *testing.T) {
	entries, err := os.ReadDir(realShapesDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(realShapesDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			golden.Check(t, filepath.Join(dir, "want.golden"), runCaseWith(t, dir, true))
		})
	}
	if n < 8 {
		t.Errorf("the real-shapes corpus has %d cases, want at least 8", n)
	}
}
