package engine_test

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	whatIfNoWindowsDataplane = "../../examples/what-if/no-windows-dataplane.yaml"
	whatIfImageNewerThanHost = "../../examples/what-if/image-newer-than-host.yaml"
)

// notReady is the kubelet's Ready message without CNI configuration.
const notReady = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// eventsAbout are the reasons and messages of the events about an object.
func eventsAbout(c *model.Cluster, kind, ns, name string) []string {
	var out []string
	for _, e := range c.Events {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Namespace == ns && e.InvolvedObject.Name == name {
			out = append(out, e.Type+" "+e.Reason+" "+e.Source.Component+": "+e.Message)
		}
	}
	return out
}

// Without the Windows dataplane nothing writes the CNI configuration on
// k8s-lab-win-1: its kubelet reports the network not ready, starts no
// sandbox for the aspnetapp pods bound to it and records NetworkNotReady;
// the pods lose the addresses the lab observed and the node claims no
// block.
func TestWithoutTheWindowsDataplaneTheAspnetappPodsStayContainerCreating(t *testing.T) {
	c := buildLab(t, whatIfNoWindowsDataplane)
	n := findNode(t, c, "k8s-lab-win-1")
	if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != corev1.ConditionFalse || n.Status.Conditions[0].Message != notReady {
		t.Fatalf("k8s-lab-win-1 conditions %+v, want NotReady with NetworkPluginNotReady", n.Status.Conditions)
	}
	pods := podsWithPrefix(c, "win-demo", "aspnetapp-")
	if len(pods) != 2 {
		t.Fatalf("%d aspnetapp pods, want the lab's 2", len(pods))
	}
	wantEvent := []string{"Warning NetworkNotReady kubelet: network is not ready: " + notReady}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodPending || waitingReason(p) != "ContainerCreating" {
			t.Errorf("%s is %s/%q, want Pending/ContainerCreating", p.Name, p.Status.Phase, waitingReason(p))
		}
		if p.Status.PodIP != "" || p.Spec.NodeName != "k8s-lab-win-1" {
			t.Errorf("%s has address %q on %q, want none on k8s-lab-win-1", p.Name, p.Status.PodIP, p.Spec.NodeName)
		}
		if !c.Derived(podKey("win-demo", p.Name), "status.podIP") {
			t.Errorf("%s: the dropped observed address is not marked derived", p.Name)
		}
		if got := eventsAbout(c, "Pod", "win-demo", p.Name); !reflect.DeepEqual(got, wantEvent) {
			t.Errorf("events of %s = %q, want %q", p.Name, got, wantEvent)
		}
	}
	if got := blocksByNode(c)["k8s-lab-win-1"]; len(got) != 0 {
		t.Errorf("k8s-lab-win-1 holds blocks %v, want none (no pod got an address there)", got)
	}
	wantNode := []string{"Normal NodeNotReady kubelet: Node k8s-lab-win-1 status is now: NodeNotReady"}
	if got := eventsAbout(c, "Node", "", "k8s-lab-win-1"); !reflect.DeepEqual(got, wantNode) {
		t.Errorf("events of the node = %q, want %q", got, wantNode)
	}
	// Host-network pods start: the kubelet checks the network for pods on
	// the pod network only.
	for _, p := range podsOn(c, "k8s-lab-win-1") {
		if p.Spec.HostNetwork && p.Status.Phase != corev1.PodRunning {
			t.Errorf("host-network pod %s is %s, want Running", p.Name, p.Status.Phase)
		}
	}
}

// The lab itself records no event: every pod starts and every node is
// Ready.
func TestTheLabRecordsNoEvents(t *testing.T) {
	if c := buildLab(t); len(c.Events) != 0 {
		t.Errorf("the lab has %d events, want none: %v", len(c.Events), c.Events[0])
	}
}

// The 61st pod of a full Windows block gets the kubelet's
// FailedCreatePodSandBox event with the Calico CNI plugin's error as
// containerd wraps it.
func TestTheSixtyFirstWindowsPodRecordsFailedCreatePodSandBox(t *testing.T) {
	c := buildLab(t, whatIfBlockFull)
	var got []string
	for _, e := range c.Events {
		if e.Reason == "FailedCreatePodSandBox" {
			got = append(got, e.InvolvedObject.Name)
			for _, want := range []string{"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"",
				`plugin type="calico" failed (add): cannot allocate new block due to per host block limit`} {
				if !strings.Contains(e.Message, want) {
					t.Errorf("message %q lacks %q", e.Message, want)
				}
			}
			if e.Source.Host != "k8s-lab-win-1" || e.Type != corev1.EventTypeWarning {
				t.Errorf("event %s from %+v type %s, want the kubelet of k8s-lab-win-1, Warning", e.Name, e.Source, e.Type)
			}
		}
	}
	if len(got) != 1 {
		t.Errorf("FailedCreatePodSandBox for %v, want one pod", got)
	}
}

// Pods the scheduler cannot place get its FailedScheduling event with the
// same message as their PodScheduled condition.
func TestUnschedulablePodsRecordFailedScheduling(t *testing.T) {
	c := buildLab(t, whatIfAspnetapp60)
	n := 0
	for _, p := range podsWithPrefix(c, "win-demo", "aspnetapp-") {
		cond := condition(p, corev1.PodScheduled)
		if cond == nil || cond.Status != corev1.ConditionFalse {
			continue
		}
		n++
		want := []string{"Warning FailedScheduling default-scheduler: " + cond.Message}
		if got := eventsAbout(c, "Pod", "win-demo", p.Name); !reflect.DeepEqual(got, want) {
			t.Errorf("events of %s = %q, want %q", p.Name, got, want)
		}
	}
	if n != 20 {
		t.Errorf("%d unschedulable pods, want 20", n)
	}
}

// An image built for a newer Windows than the host's fails in HCS when
// containerd creates the container.
func TestAnImageNewerThanTheHostFailsInHCS(t *testing.T) {
	c := buildLab(t, whatIfImageNewerThanHost)
	for _, p := range podsWithPrefix(c, "win-demo", "aspnetapp-") {
		if waitingReason(p) != "CreateContainerError" {
			t.Errorf("%s waiting %q, want CreateContainerError", p.Name, waitingReason(p))
		}
		got := eventsAbout(c, "Pod", "win-demo", p.Name)
		if len(got) != 1 || !strings.HasPrefix(got[0], "Warning Failed kubelet: Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem ") ||
			!strings.HasSuffix(got[0], ": The container operating system does not match the host operating system.: unknown") {
			t.Errorf("events of %s = %q, want HCS's OS mismatch", p.Name, got)
		}
	}
}

// A HostState's departures leave the node as the kubelet and the node
// lifecycle controller would: NotReady with the runtime down, or Unknown
// when nothing posts its status; the node's pods are marked not Ready and
// leave their Services' endpoints.
func TestAHostStateLeavesTheNodeAndItsPodsNotReady(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		status  corev1.ConditionStatus
		message string
		taint   string
		note    string
	}{
		{"containerd stopped", "../../examples/what-if/containerd-stopped.yaml", corev1.ConditionFalse, "container runtime is down", corev1.TaintNodeNotReady, ""},
		{"the kubelet stuck", "../../examples/what-if/kubelet-stuck.yaml", corev1.ConditionUnknown, "Kubelet stopped posting node status.", corev1.TaintNodeUnreachable, "stuck"},
		{"the clock a day behind", "../../examples/what-if/clock-skew.yaml", corev1.ConditionUnknown, "Kubelet stopped posting node status.", corev1.TaintNodeUnreachable,
			`Get "https://k8s-lab-api.example.com:6443/api/v1/nodes/k8s-lab-win-1?timeout=10s": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-05T18:16:48Z is before 2026-11-06T18:42:40Z`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := buildLab(t, tc.file)
			n := findNode(t, c, "k8s-lab-win-1")
			if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != tc.status || n.Status.Conditions[0].Message != tc.message {
				t.Errorf("conditions %+v, want Ready %s %q", n.Status.Conditions, tc.status, tc.message)
			}
			tainted := 0
			for _, taint := range n.Spec.Taints {
				if taint.Key == tc.taint {
					tainted++
				}
			}
			if tainted != 2 {
				t.Errorf("taints %v, want %s NoSchedule and NoExecute", n.Spec.Taints, tc.taint)
			}
			for _, p := range podsWithPrefix(c, "win-demo", "aspnetapp-") {
				if cond := condition(p, corev1.PodReady); cond == nil || cond.Status != corev1.ConditionFalse || p.Status.Phase != corev1.PodRunning {
					t.Errorf("%s is %s with Ready %+v, want Running and not Ready", p.Name, p.Status.Phase, cond)
				}
			}
			for _, s := range slicesFor(c, "win-demo", "aspnetapp") {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready == nil || *e.Conditions.Ready {
						t.Errorf("endpoint %v is ready, want not", e.Addresses)
					}
				}
			}
			if tc.note != "" {
				found := false
				for _, nt := range c.Notes {
					found = found || (nt.Object.Name == "k8s-lab-win-1" && strings.Contains(nt.Message, tc.note))
				}
				if !found {
					t.Errorf("no note on k8s-lab-win-1 holding %q", tc.note)
				}
			}
			if got := eventsAbout(c, "Node", "", "k8s-lab-win-1"); len(got) != 1 || got[0] != "Normal NodeNotReady node-controller: Node k8s-lab-win-1 status is now: NodeNotReady" {
				t.Errorf("node events %q", got)
			}
		})
	}
}

// A clock off by less than the certificates allow changes nothing.
func TestAClockWithinTheCertificatesValidityChangesNothing(t *testing.T) {
	c := buildLab(t, "testdata/hoststate/clock-ahead.yaml")
	n := findNode(t, c, "k8s-lab-win-1")
	if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("conditions %+v, want Ready", n.Status.Conditions)
	}
}
