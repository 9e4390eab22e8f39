package engine_test

import (
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
