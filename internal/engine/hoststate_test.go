package engine_test

import (
	corev1 "k8s.io/api/core/v1"

	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

func TestAHostStateReachesTheModelByNodeName(t *testing.T) {
	c := buildLab(t, "testdata/hoststate/containerd-stopped.yaml")
	h := c.HostStates["k8s-lab-win-1"]
	if h == nil {
		t.Fatalf("HostStates = %v, want the Windows node's", c.HostStates)
	}
	if len(h.Spec.Services) != 1 || h.Spec.Services[0].Name != hybrid.ServiceContainerd || h.Spec.ClockOffset != "2h" {
		t.Errorf("HostState = %+v", h.Spec)
	}
	if len(c.HostStates) != 1 {
		t.Errorf("%d HostStates, want 1", len(c.HostStates))
	}
}

func TestReservationsInTheWindowsPatchLowerItsAllocatable(t *testing.T) {
	c := buildLab(t, "testdata/reserved/kubeletconfiguration.yaml")
	n := findNode(t, c, "k8s-lab-win-1")
	// 4 CPUs less 500m and 250m; 8Gi less 1Gi, 512Mi and the kubelet's
	// Windows eviction default of 500Mi.
	cpu, mem := n.Status.Allocatable[corev1.ResourceCPU], n.Status.Allocatable[corev1.ResourceMemory]
	if cpu.String() != "3250m" || mem.String() != "6156Mi" {
		t.Errorf("allocatable cpu %s memory %s, want 3250m and 6156Mi", cpu.String(), mem.String())
	}
	if c := n.Status.Capacity[corev1.ResourceMemory]; c.String() != "8Gi" {
		t.Errorf("capacity memory %s, want 8Gi (reservations leave capacity alone)", c.String())
	}
	lnx := findNode(t, c, "k8s-lab-node-1")
	if m := lnx.Status.Allocatable[corev1.ResourceMemory]; m.String() != "8092Mi" {
		t.Errorf("a Linux node's allocatable memory %s, want 8092Mi (the patch is the Windows node's)", m.String())
	}
}
