package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var update = golden.Update

// build loads the lab (when lab is true) with files layered on top, the way
// `--lab -f FILE` does, and builds the twin.
func build(t testing.TB, lab bool, files ...string) *model.Cluster {
	t.Helper()
	snap, err := load.Load(load.Options{Lab: lab, Filenames: files})
	if err != nil {
		t.Fatalf("load %v: %v", files, err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatalf("build %v: %v", files, err)
	}
	return c
}

// tryBuild is build that returns the error of bad input.
func tryBuild(lab bool, files ...string) (*model.Cluster, error) {
	snap, err := load.Load(load.Options{Lab: lab, Filenames: files})
	if err != nil {
		return nil, err
	}
	return engine.Build(snap)
}

// example is a rule's failing or passing example: testdata/<ID>/<kind>.yaml
// or the directory testdata/<ID>/<kind>/ (for files whose name matters, like
// kubeadm's kubeletconfiguration.yaml patch), and the kubeconfig files
// testdata/<ID>/<kind>-kubeconfig-*.yaml.
type example struct {
	files       []string
	kubeconfigs []string
}

func findExample(id, kind string) (example, error) {
	dir := filepath.Join("testdata", id)
	var ex example
	if _, err := os.Stat(filepath.Join(dir, kind+".yaml")); err == nil {
		ex.files = []string{filepath.Join(dir, kind+".yaml")}
	} else if fi, err := os.Stat(filepath.Join(dir, kind)); err == nil && fi.IsDir() {
		ex.files = []string{filepath.Join(dir, kind)}
	} else {
		return ex, fmt.Errorf("no %s example: add %s/%s.yaml (or the directory %s/%s/)", kind, dir, kind, dir, kind)
	}
	kcs, _ := filepath.Glob(filepath.Join(dir, kind+"-kubeconfig-*.yaml"))
	sort.Strings(kcs)
	ex.kubeconfigs = kcs
	return ex, nil
}

func readKubeconfigs(t testing.TB, files []string) []*rule.Kubeconfig {
	t.Helper()
	var out []*rule.Kubeconfig
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := rule.ParseKubeconfig(f, data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kc)
	}
	return out
}

func mustRun(t testing.TB, c *model.Cluster, opts Options) *Report {
	t.Helper()
	rep, err := Run(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func ids(fs []rule.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.RuleID)
	}
	return out
}

func describe(fs []rule.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s %s %s: %s", f.Severity, f.RuleID, rule.ObjectString(f.Object), f.Field, f.Message)
	}
	return b.String()
}

// golden compares got with testdata/golden/name; -update rewrites it, and a
// mismatch leaves actual_<name> beside it.
func goldenFile(t *testing.T, dir, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join(dir, name), got)
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("\nfirst difference at line %d:\n  want %q\n  got  %q", i+1, wl, gl)
		}
	}
	return ""
}

func render(t *testing.T, f func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
