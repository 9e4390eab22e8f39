package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

func TestConformance(t *testing.T) {
	needNamespaces(t)
	genDir := t.TempDir()
	{
		f, err := os.Create(filepath.Join(genDir, gen.MainFile(gen.FormatYAML)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.Create(filepath.Join(genDir, gen.PatchFile(gen.FormatYAML)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gen.Generate(gen.Options{Nodes: 20, WindowsNodes: 3, Namespaces: 3, Pods: 120, Services: 20, Policies: 10, Seed: 1}, gen.Outputs{Main: f, KubeletPatch: p}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		p.Close()
	}
	netpolPods := []string{"kube-system/coredns-8f97fdbd9-9gc9h", "kube-system/coredns-8f97fdbd9-vr6vv"}
	for _, ns := range []string{"x", "y", "z"} {
		for _, pod := range []string{"a", "b", "c"} {
			netpolPods = append(netpolPods, ns+"/"+pod)
		}
	}
	for _, tc := range []struct {
		name  string
		lab   bool
		files []string
		pods  []string
		probe ProbeOptions
	}{
		{name: "the lab", lab: true},
		{name: "the lab with ingress to win-demo denied", lab: true, files: []string{"../../examples/what-if/deny-win-demo-ingress.yaml"}},
		{name: "the lab without strictAffinity", lab: true, files: []string{"../../examples/what-if/no-strict-affinity.yaml"}},
		{name: "the lab with 60 aspnetapp replicas", lab: true, files: []string{"../../examples/what-if/aspnetapp-60.yaml"}, probe: ProbeOptions{Max: 200}},
		{name: "the lab with a second Windows node", lab: true, files: []string{"../../examples/what-if/second-windows-node"}},
		{name: "the lab with the Windows block full", lab: true, files: []string{"../../examples/what-if/windows-block-full"}, probe: ProbeOptions{Max: 200}},
		{name: "the lab with hello on a NodePort", lab: true, files: []string{"testdata/nodeport.yaml"}},
		{name: "the main cluster", files: []string{"../../examples/main-cluster"}},
		{name: "the main cluster migrated to VXLAN", files: []string{"../../examples/main-cluster", "../../examples/what-if/main-cluster-migrated.yaml"}},
		{name: "the netpol e2e topology with a sample of policies", lab: true, files: []string{"testdata/netpol"}, pods: netpolPods,
			probe: ProbeOptions{AllSources: true, Max: 300}},
		{name: "a generated 20-node cluster", files: []string{genDir}, probe: ProbeOptions{Max: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := planOf(t, tc.lab, tc.files, Options{Prefix: testPrefix, Pods: tc.pods})
			state := t.TempDir()
			x := &Executor{StateDir: state, Self: os.Args[0]}
			t.Cleanup(func() { _, _ = x.Down(testPrefix) })
			if err := x.Up(p); err != nil {
				t.Fatal(err)
			}
			e, err := trace.New(c)
			if err != nil {
				t.Fatal(err)
			}
			probes, _ := Probes(p, c, tc.probe)
			res := RunProbes(probes, e, &Runner{Self: os.Args[0]}, p.StandIns())
			if _, err := x.Down(testPrefix); err != nil {
				t.Fatal(err)
			}
			var bad []Result
			compared := 0
			for _, r := range res {
				if r.Skipped != "" {
					continue
				}
				compared++
				if r.Agree {
					continue
				}
				bad = append(bad, r)
			}
			if compared < len(res)/2 {
				t.Errorf("only %d of %d probes compared", compared, len(res))
			}
			if len(bad) > 0 {
				var b strings.Builder
				_ = WriteResults(&b, bad, false)
				t.Errorf("%d of %d probes disagree:\n%s", len(bad), compared, b.String())
			}
		})
	}
}
