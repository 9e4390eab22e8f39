package reach

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

var labOnce struct {
	sync.Once
	e   *trace.Engine
	err error
}

// lab is the engine of the plain lab, built once.
func lab(t testing.TB) *trace.Engine {
	t.Helper()
	labOnce.Do(func() { labOnce.e, labOnce.err = buildEngine() })
	if labOnce.err != nil {
		t.Fatal(labOnce.err)
	}
	return labOnce.e
}

// buildEngine builds the lab with extra YAML documents layered on it the
// way -f layers files: an object with the key of a lab object replaces it.
func buildEngine(extra ...string) (*trace.Engine, error) {
	s, err := load.Load(load.Options{Lab: true})
	if err != nil {
		return nil, err
	}
	for i, y := range extra {
		objs, err := load.DecodeDocuments(strings.NewReader(y), fmt.Sprintf("extra-%d.yaml", i))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			replaced := false
			for j, x := range s.Objects {
				if x.Key == o.Key {
					s.Objects[j], replaced = o, true
				}
			}
			if !replaced {
				s.Objects = append(s.Objects, o)
			}
		}
	}
	c, err := engine.Build(s)
	if err != nil {
		return nil, err
	}
	return trace.New(c)
}

func withExtra(t testing.TB, extra ...string) *trace.Engine {
	t.Helper()
	e, err := buildEngine(extra...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
