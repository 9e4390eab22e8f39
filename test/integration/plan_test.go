package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// repoDir is the checkout's root (test/..).
func repoDir() string { return filepath.Dir(testModuleDir()) }

// TestPlanManifestsAreAcceptedByTheAPIServer renders plans with
// `plan join-windows -o yaml` and has the API server accept every Kubernetes
// object of each stream by a server-side apply dry-run: the lab before its
// Windows node, the main cluster after its migration (which changes the
// Installation and adds kubernetes-services-endpoint), and three Windows
// nodes joining a generated cluster. kubeadm's JoinConfiguration and the
// kubelet patch are not API objects; they are left to the plan's own tests.
func TestPlanManifestsAreAcceptedByTheAPIServer(t *testing.T) {
	ctx := context.Background()
	gen := filepath.Join(env.tmp, "plan-gen")
	if r := hybrid(ctx, "gen", "--nodes", "6", "--windows-nodes", "0", "--pods", "20", "--output-dir", gen); r.code != 0 {
		t.Fatalf("gen: %s", r)
	}
	plans := []struct {
		name string
		args []string
	}{
		{"the lab before k8s-lab-win-1", []string{"k8s-lab-win-1", "--ip", "192.168.10.25", "--cpu", "4", "--memory", "8Gi",
			"-f", filepath.Join(repoDir(), "internal", "plan", "testdata", "lab-before-win-1")}},
		{"the main cluster after migration", []string{"k8s-win-1", "--ip", "192.168.10.40", "--cpu", "4", "--memory", "8Gi",
			"-f", filepath.Join(repoDir(), "examples", "main-cluster"), "-f", filepath.Join(repoDir(), "examples", "what-if", "main-cluster-migrated.yaml")}},
		{"three Windows nodes on a generated cluster", []string{"gw-1", "--ip", "192.168.0.201", "gw-2", "--ip", "192.168.0.202",
			"gw-3", "--ip", "192.168.0.203", "--cpu", "4", "--memory", "8Gi", "-f", gen}},
	}
	cfg := env.lab.restConfig(env.lab.loaderToken)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			r := hybrid(ctx, append([]string{"plan", "join-windows", "-o", "yaml"}, p.args...)...)
			if r.code != 0 {
				t.Fatalf("plan: %s", r)
			}
			applied := 0
			for _, doc := range strings.Split(r.stdout, "\n---\n") {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
					t.Fatalf("document does not parse: %v\n%s", err, doc)
				}
				gvk := u.GroupVersionKind()
				if gvk.Group == "kubeadm.k8s.io" || gvk.Group == "kubelet.config.k8s.io" {
					continue
				}
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Fatalf("%s: %v", gvk, err)
				}
				body, err := u.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if ns := u.GetNamespace(); ns != "" {
					ri = dyn.Resource(m.Resource).Namespace(ns)
				}
				force := true
				_, err = ri.Patch(ctx, u.GetName(), types.ApplyPatchType, body,
					metav1.PatchOptions{FieldManager: "kubectl-hybrid-plan", Force: &force, DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					t.Errorf("%s %s/%s refused: %v", gvk.Kind, u.GetNamespace(), u.GetName(), err)
				}
				applied++
			}
			if applied == 0 {
				t.Error("the plan has no cluster manifest")
			}
			t.Logf("%d manifests accepted", applied)
		})
	}
	_ = os.Remove(gen)
}
