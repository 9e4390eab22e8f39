package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLinuxDeploymentWithoutTolerationsStaysOffWindowsAndTheControlPlane(t *testing.T) {
	c := buildLab(t, "testdata/linux-spread.yaml")
	pods := podsWithPrefix(c, "spread", "web-")
	if len(pods) != 12 {
		t.Fatalf("%d web pods, want 12", len(pods))
	}
	perNode := map[string]int{}
	for _, p := range pods {
		perNode[p.Spec.NodeName]++
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s is %s", p.Name, p.Status.Phase)
		}
		for _, tol := range p.Spec.Tolerations {
			if tol.Key == "os" || tol.Key == "node-role.kubernetes.io/control-plane" {
				t.Errorf("%s got toleration %+v it did not ask for", p.Name, tol)
			}
		}
	}
	if perNode["k8s-lab-win-1"] != 0 || perNode["k8s-lab-master-1"] != 0 {
		t.Errorf("pods per node %v: some landed on the tainted Windows node or control plane", perNode)
	}
	if perNode["k8s-lab-node-1"]+perNode["k8s-lab-node-2"] != 12 || perNode["k8s-lab-node-1"] == 0 || perNode["k8s-lab-node-2"] == 0 {
		t.Errorf("pods per node %v, want all 12 spread over both Linux workers", perNode)
	}
}

func TestPodMatchingNoNodeStaysPendingWithTheSchedulersMessage(t *testing.T) {
	c := buildLab(t, "testdata/nowhere.yaml")
	p := findPod(t, c, "default", "nowhere")
	if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending || p.Status.PodIP != "" {
		t.Errorf("node %q phase %s ip %q, want unbound Pending without an address", p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
	}
	cond := condition(p, corev1.PodScheduled)
	if cond == nil {
		t.Fatalf("no PodScheduled condition in %+v", p.Status.Conditions)
	}
	// Filters stop at the first failure per node: the taints of the control
	// plane and the Windows node come before NodeAffinity; the Linux workers
	// fail on the selector. Then preemption's dry run (DRA's PostFilter adds nothing since v1.37).
	const want = "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s). " +
		"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
	if cond.Status != corev1.ConditionFalse || cond.Reason != corev1.PodReasonUnschedulable || cond.Message != want {
		t.Errorf("PodScheduled = %s/%s %q\nwant False/Unschedulable %q", cond.Status, cond.Reason, cond.Message, want)
	}
	if c.Rejected != nil {
		t.Errorf("an unschedulable pod is not a refusal: %+v", c.Rejected)
	}
}
