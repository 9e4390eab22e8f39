package migrate

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// input loads files (and the lab when asked) and builds the twin.
func input(t *testing.T, lab bool, files ...string) plan.Input {
	t.Helper()
	snap, err := load.Load(load.Options{Filenames: files, Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Input{Cluster: c, Snapshot: snap}
}
