package plan

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

// input loads files (and the lab when asked) and builds the twin.
func input(t *testing.T, lab bool, files ...string) Input {
	t.Helper()
	snap, err := load.Load(load.Options{Filenames: files, Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Cluster: c, Snapshot: snap}
}

const labBefore = "testdata/lab-before-win-1"
