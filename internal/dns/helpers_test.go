package dns

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
	labOnce, extraOnce sync.Once
	labC, extraC       *model.Cluster
	labErr, extraErr   error
)

func build(opts load.Options) (*model.Cluster, error) {
	s, err := load.Load(opts)
	if err != nil {
		return nil, err
	}
	return engine.Build(s)
}

// lab is the built-in lab as load and engine build it.
func lab(t *testing.T) *model.Cluster {
	t.Helper()
	labOnce.Do(func() { labC, labErr = build(load.Options{Lab: true}) })
	if labErr != nil {
		t.Fatal(labErr)
	}
	return labC
}

// labExtra is the lab plus testdata/extra.yaml (headless and ExternalName
// Services, a pod with hostname and subdomain).
func labExtra(t *testing.T) *model.Cluster {
	t.Helper()
	extraOnce.Do(func() {
		extraC, extraErr = build(load.Options{Lab: true, Filenames: []string{filepath.Join("testdata", "extra.yaml")}})
	})
	if extraErr != nil {
		t.Fatal(extraErr)
	}
	return extraC
}

// checkPod is seed 000's `kubectl run -i --rm check --image=busybox:1.37`
// in default, which lands on k8s-lab-node-2.
var checkPod = Source{Namespace: "default", Pod: "check", Node: "k8s-lab-node-2", Image: "busybox:1.37"}

// aspnetapp is the first aspnetapp pod (Windows, win-demo).
func aspnetapp(t *testing.T, c *model.Cluster) Source {
	t.Helper()
	s, ok := FindPod(c, "win-demo", "aspnetapp-769559d8ff-dkp9z")
	if !ok {
		t.Fatal("no aspnetapp pod in the lab")
	}
	return s
}

// helloPod is a Linux pod of the demo namespace.
func helloPod(t *testing.T, c *model.Cluster) Source {
	t.Helper()
	s, ok := FindPod(c, "demo", "hello-55fb8f8684-69mvv")
	if !ok {
		t.Fatal("no hello pod in the lab")
	}
	return s
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

// fileName turns a sentence into a golden file name.
func fileName(s string) string {
	r := strings.NewReplacer(" ", "_", "/", "_", ":", "", "\"", "", "'", "", ",", "")
	return r.Replace(s) + ".txt"
}

// lookupPod is testdata/extra.yaml's busybox pod of demo with example.com
// added to its search list.
func lookupPod(t *testing.T, c *model.Cluster) Source {
	t.Helper()
	s, ok := FindPod(c, "demo", "lookup")
	if !ok {
		t.Fatal("no lookup pod in testdata/extra.yaml")
	}
	return s
}

var (
	verifiedOnce sync.Once
	verifiedC    *model.Cluster
	verifiedErr  error
)

// labVerified is the lab plus testdata/verified.yaml: kubeadm's Corefile
// with pods verified, and two finished pods of demo.
func labVerified(t *testing.T) *model.Cluster {
	t.Helper()
	verifiedOnce.Do(func() {
		verifiedC, verifiedErr = build(load.Options{Lab: true, Filenames: []string{filepath.Join("testdata", "verified.yaml")}})
	})
	if verifiedErr != nil {
		t.Fatal(verifiedErr)
	}
	return verifiedC
}
