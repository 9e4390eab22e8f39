package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

var update = golden.Update

// checkPodYAML is the pod `kubectl run -i --rm check --image=busybox:1.37
// --restart=Never` creates in seed 000; the twin's scheduler puts it on
// k8s-lab-node-2, as the seed observed.
const checkPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: check
  namespace: default
  labels:
    run: check
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox:1.37
`

// buildWith builds the lab, the check pod and extra YAML documents (a
// what-if layered with -f), then the engine.
func buildWith(t testing.TB, extra ...string) *Engine {
	t.Helper()
	s, err := load.Load(load.Options{Lab: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, y := range append([]string{checkPodYAML}, extra...) {
		objs, err := load.DecodeDocuments(strings.NewReader(y), fmt.Sprintf("extra-%d.yaml", i))
		if err != nil {
			t.Fatal(err)
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
		t.Fatal(err)
	}
	for _, r := range c.Rejected {
		t.Logf("rejected: %s", r.Message)
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var (
	labOnce sync.Once
	labEng  *Engine
	labMu   sync.Mutex
)

// lab is the lab with the check pod, built once.
func lab(t testing.TB) *Engine {
	t.Helper()
	labMu.Lock()
	defer labMu.Unlock()
	labOnce.Do(func() { labEng = buildWith(t) })
	return labEng
}

// traceOf parses and traces, failing the test on bad input.
func traceOf(t testing.TB, e *Engine, src, dst, ns string, proto Proto, port int) *Result {
	t.Helper()
	s, err := e.ParseSource(src, ns)
	if err != nil {
		t.Fatalf("source %s: %v", src, err)
	}
	d, err := e.ParseTarget(dst, ns)
	if err != nil {
		t.Fatalf("destination %s: %v", dst, err)
	}
	if port == 0 && proto != ICMP {
		port = e.DefaultPort(d, proto)
	}
	return e.Trace(s, d, proto, port)
}

// golden compares got with testdata/golden/name, rewriting it with -update
// and leaving actual_<name> beside it on a mismatch.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

// readSeed is seed 000's text; the test is skipped without it.
func readSeed(t *testing.T, prefix string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "seeds", prefix+"_*.txt"))
	if len(matches) == 0 {
		t.Skip("seed articles are not beside the checkout")
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hopWith finds the first hop whose component contains s.
func hopWith(r *Result, s string) *Hop {
	for i := range r.Hops {
		if strings.Contains(r.Hops[i].Component, s) {
			return &r.Hops[i]
		}
	}
	return nil
}

func textOf(r *Result) string {
	var b strings.Builder
	_ = r.WriteText(&b)
	return b.String()
}
