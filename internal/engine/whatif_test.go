package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	actionDrain   = "../../examples/actions/drain-k8s-lab-node-1.yaml"
	actionCordon  = "../../examples/actions/cordon-and-taint-k8s-lab-node-2.yaml"
	actionRestart = "../../examples/actions/restart-calico-node.yaml"
	actionApprove = "../../examples/actions/approve-k8s-lab-win-2-serving-csr.yaml"
	secondWindows = "../../examples/what-if/second-windows-node"
)

func node(c *model.Cluster, name string) *corev1.Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func podNamesOn(c *model.Cluster, name string) []string {
	var out []string
	for _, p := range c.Pods {
		if p.Spec.NodeName == name {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return out
}

func TestACordonedAndTaintedNodeKeepsItsPodsAndTakesTheTaint(t *testing.T) {
	before, after := buildLab(t), buildLab(t, actionCordon)
	n := node(after, "k8s-lab-node-2")
	if !n.Spec.Unschedulable {
		t.Error("k8s-lab-node-2 is not cordoned")
	}
	if !slices.ContainsFunc(n.Spec.Taints, func(tt corev1.Taint) bool {
		return tt.Key == "maintenance" && tt.Value == "planned" && tt.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("taints %v, want maintenance=planned:NoSchedule", n.Spec.Taints)
	}
	if got, want := podNamesOn(after, "k8s-lab-node-2"), podNamesOn(before, "k8s-lab-node-2"); !slices.Equal(got, want) {
		t.Errorf("pods on k8s-lab-node-2: %q, want them as before %q", got, want)
	}
}

func TestADrainedNodeKeepsOnlyItsDaemonSetPodsAndTheOthersAreRecreatedElsewhere(t *testing.T) {
	before, after := buildLab(t), buildLab(t, actionDrain)
	if !node(after, "k8s-lab-node-1").Spec.Unschedulable {
		t.Error("k8s-lab-node-1 is not cordoned")
	}
	var evicted []string
	for _, p := range before.Pods {
		if p.Spec.NodeName != "k8s-lab-node-1" {
			continue
		}
		if slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "DaemonSet" }) {
			if !slices.Contains(podNamesOn(after, "k8s-lab-node-1"), p.Namespace+"/"+p.Name) {
				t.Errorf("DaemonSet pod %s/%s was evicted", p.Namespace, p.Name)
			}
			continue
		}
		evicted = append(evicted, p.Namespace+"/"+p.Name)
		if slices.Contains(podNamesOn(after, "k8s-lab-node-1"), p.Namespace+"/"+p.Name) {
			t.Errorf("pod %s/%s is still on the drained node", p.Namespace, p.Name)
		}
	}
	if len(evicted) == 0 {
		t.Fatal("the lab has no pod on k8s-lab-node-1 that a drain evicts")
	}
	// hello is a Deployment: its replica comes back on another node.
	hello := 0
	for _, p := range after.Pods {
		if p.Namespace == "demo" && strings.HasPrefix(p.Name, "hello-") && p.Spec.NodeName != "" && p.Spec.NodeName != "k8s-lab-node-1" {
			hello++
		}
	}
	if hello != 2 {
		t.Errorf("hello has %d pods on other nodes after the drain, want its 2 replicas", hello)
	}
}

func TestARestartSetsTheTemplateAnnotationOfADaemonSetTheOperatorRenders(t *testing.T) {
	c := buildLab(t, actionRestart)
	for _, d := range c.DaemonSets {
		if d.Namespace == "calico-system" && d.Name == "calico-node" {
			if got := d.Spec.Template.Annotations[hybrid.RestartedAtAnnotation]; got != "2026-11-06T21:30:00Z" {
				t.Errorf("restartedAt %q, want the marker's", got)
			}
			return
		}
	}
	t.Fatal("no calico-node DaemonSet")
}

func TestAnApprovedCSRGainsKubectlsApprovedCondition(t *testing.T) {
	c := buildLab(t, secondWindows, actionApprove)
	for _, r := range c.CSRs {
		if r.Name != "csr-w6ln9" {
			continue
		}
		if !slices.ContainsFunc(r.Status.Conditions, func(cd certv1.CertificateSigningRequestCondition) bool {
			return cd.Type == certv1.CertificateApproved && cd.Status == corev1.ConditionTrue && cd.Reason == "KubectlApprove"
		}) {
			t.Errorf("conditions %+v, want Approved by KubectlApprove", r.Status.Conditions)
		}
		return
	}
	t.Fatal("no csr-w6ln9")
}

func TestAnActionOnAnObjectTheClusterDoesNotHoldIsAnEngineError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cordon.yaml")
	doc := "apiVersion: v1\nkind: Node\nmetadata:\n  name: no-such-node\n  annotations: {hybrid.kubectl-hybrid.io/action: cordon}\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := engine.Build(snapshot(t, true, p))
	var ee *engine.Error
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), `Node no-such-node: hybrid.kubectl-hybrid.io/action "cordon": the cluster has no such object`) {
		t.Fatalf("error %v, want an engine.Error naming the node", err)
	}
}
