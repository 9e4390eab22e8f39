package diff

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// build builds a twin as the commands do: the lab (when lab) with the
// files layered on it in order.
func build(t testing.TB, lab bool, files ...string) *model.Cluster {
	t.Helper()
	s, err := load.Load(load.Options{Lab: lab, Filenames: files, DropRaw: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.BuildOwned(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
