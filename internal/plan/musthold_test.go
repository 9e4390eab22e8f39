package plan

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// labRequest is the seed's join: the host's address and capacity as the
// admin gave them (examples/lab/00-cluster.yaml).
var labRequest = Request{Nodes: []NodeRequest{{Name: "k8s-lab-win-1", Address: "192.168.10.25", CPU: "4", Memory: "8Gi"}}}

func labPlan(t *testing.T) *Bundle {
	t.Helper()
	b, err := Compute(input(t, false, labBefore), labRequest)
	if err != nil {
		t.Fatal(err)
	}
	if b.Refused {
		t.Fatalf("the lab's plan is refused: %+v", b.Findings)
	}
	return b
}

func fileBody(t *testing.T, files []File, path string) string {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			return f.Body
		}
	}
	t.Fatalf("no file %s in the plan", path)
	return ""
}

func generic(t *testing.T, text string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The token and the CA hash are the two values the lab does not hold (the
// token was made for the join; the lab carries no cluster-info CA): the
// plan leaves named placeholders, which the seed's values fill.
func TestTheLabsPlanRendersTheSeedsFilesValueForValue(t *testing.T) {
	b := labPlan(t)
	node := b.Nodes[0]
	seed := func(name string) map[string]any {
		data, err := os.ReadFile("../../examples/lab/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return generic(t, string(data))
	}
	join := fileBody(t, node.Files, joinPath)
	join = strings.Replace(join, TokenPlaceholder, "6w1r8t.p3k9m2x7c5v0b4n1", 1)
	join = strings.Replace(join, CAHashPlaceholder, "sha256:7b2e9d4a1c6f8b3e0d5a2c7f9e4b1d6a8c3f0e5b2d7a9c4e1f6b8d3a0c5e2f7b", 1)
	cases := []struct {
		name, seed, got string
	}{
		{"join.yaml", "join-k8s-lab-win-1.yaml", join},
		{"kubelet patch", "kubeletconfiguration.yaml", fileBody(t, node.Files, patchPath)},
		{"kube-proxy-windows", "kube-proxy-windows.yaml", fileBody(t, b.Cluster, "kube-proxy-windows.yaml")},
		{"RuntimeClass", "runtimeclass-windows-2025.yaml", fileBody(t, b.Cluster, "runtimeclass-windows-2025.yaml")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if want, got := seed(tc.seed), generic(t, tc.got); !reflect.DeepEqual(want, got) {
				t.Errorf("rendered:\n%s\nseed: %v", tc.got, want)
			}
		})
	}
	if len(b.Cluster) != 2 {
		t.Errorf("cluster manifests: %d, want kube-proxy-windows and the RuntimeClass only", len(b.Cluster))
	}
}

func TestTheLabsPlanPredictsWhatTheSeedObserved(t *testing.T) {
	b := labPlan(t)
	n := b.Nodes[0]
	if n.Block != "172.21.41.0/26" || n.TunnelAddress != "172.21.41.1" || n.MaxPods != 60 || !n.Ready {
		t.Errorf("predicted %+v; the seed shows block 172.21.41.0/26, tunnel 172.21.41.1, 60 pods, Ready", n)
	}
	if n.RuntimeClass != "windows-2025" {
		t.Errorf("RuntimeClass %s, want windows-2025", n.RuntimeClass)
	}
	p := b.Proof.Nodes[0]
	if len(p.Pods) != 2 || !strings.Contains(p.Pods[0], "calico-node-windows") || !strings.Contains(p.Pods[1], "kube-proxy-windows") {
		t.Errorf("node agents %v", p.Pods)
	}
	for _, pod := range p.Pods {
		if !strings.HasSuffix(pod, "Running") {
			t.Errorf("%s is not Running", pod)
		}
	}
	if !b.Proof.Clean {
		t.Errorf("the predicted cluster is not clean: %+v", b.Proof.Check)
	}
	if len(b.Proof.Traces) != 3 {
		t.Fatalf("traces: %+v", b.Proof.Traces)
	}
	for _, tr := range b.Proof.Traces {
		if !tr.Delivered || tr.ReplyTTL == 0 {
			t.Errorf("trace %s → %s: %s %s", tr.From, tr.To, tr.Outcome, tr.Reason)
		}
	}
	// The seed's ping from a Linux pod to a Windows pod: the reply leaves
	// Windows with 128 and crosses two routers.
	if b.Proof.Traces[0].ReplyTTL != 126 {
		t.Errorf("Linux → Windows reply TTL %d, want 126", b.Proof.Traces[0].ReplyTTL)
	}
}

func TestTheFirewallIsNarrowedToTheNodeNetworkAndControlPlanesOutsideIt(t *testing.T) {
	cases := []struct {
		name string
		in   Inputs
		want []string
	}{
		{"a control plane in the node network adds nothing", Inputs{NodeCIDR: "192.168.10.0/24", ControlPlanes: []string{"192.168.10.23"}}, []string{"192.168.10.0/24"}},
		{"a control plane elsewhere is added", Inputs{NodeCIDR: "192.168.10.0/24", ControlPlanes: []string{"10.0.0.5"}}, []string{"192.168.10.0/24", "10.0.0.5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := firewallSources(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestALinuxDaemonSetWithoutAnOSSelectorIsPatchedAndTheProofAppliesIt(t *testing.T) {
	b, err := Compute(input(t, false, labBefore, "testdata/node-exporter.yaml"), labRequest)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Patches) != 1 || b.Patches[0].Name != "node-exporter" {
		t.Fatalf("patches %+v", b.Patches)
	}
	found := false
	for _, s := range b.Steps {
		for _, c := range s.Commands {
			found = found || strings.Contains(c, "-n monitoring patch daemonset node-exporter")
		}
	}
	if !found {
		t.Error("no step patches node-exporter")
	}
	for _, f := range b.Proof.Check {
		if f.ID == "HYB045" || f.ID == "HYB046" {
			t.Errorf("the predicted cluster still has %s: %s", f.ID, f.Message)
		}
	}
	for _, p := range b.Proof.Cluster.Pods {
		if strings.HasPrefix(p.Name, "node-exporter-") && p.Spec.NodeName == "k8s-lab-win-1" {
			t.Errorf("%s runs on the Windows node", p.Name)
		}
	}
}
