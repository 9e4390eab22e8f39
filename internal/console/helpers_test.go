package console

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

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
func buildWith(t testing.TB, extra ...string) *trace.Engine {
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
	e, err := trace.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// lab is the lab with the check pod, built once.
func lab(t testing.TB) *trace.Engine {
	t.Helper()
	labMu.Lock()
	defer labMu.Unlock()
	labOnce.Do(func() { labEng = buildWith(t) })
	return labEng
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

// execIn runs a command and fails the test on a not-modeled answer.
func execIn(t testing.TB, e *trace.Engine, src, ns string, argv ...string) Output {
	t.Helper()
	s, err := e.ParseSource(src, ns)
	if err != nil {
		t.Fatalf("source %s: %v", src, err)
	}
	o, handled, err := tracer{e}.exec(s, argv)
	if err != nil || !handled {
		t.Fatalf("%s %q: handled=%v err=%v", src, argv, handled, err)
	}
	return o
}

var (
	labOnce sync.Once
	labEng  *trace.Engine
	labMu   sync.Mutex
)

// Policies layered on the lab (what -f does), as YAML.
const gnpDenyWinDemoToHello = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: deny-win-demo-to-hello}
spec:
  selector: app.kubernetes.io/name == 'hello'
  types: [Ingress]
  ingress:
    - action: Deny
      source:
        namespaceSelector: projectcalico.org/name == 'win-demo'
    - action: Allow
`

const denyAllIngressWinDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: win-demo}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`

const denyEgressDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-egress, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
`

const allowDNSDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to:
        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
          podSelector: {matchLabels: {k8s-app: kube-dns}}
      ports:
        - {protocol: UDP, port: 53}
        - {protocol: TCP, port: 53}
`
