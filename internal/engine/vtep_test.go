package engine_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	whatIfSecondWindows = "../../examples/what-if/second-windows-node/"
	// hyb071Fail is the lab's Windows node as an observed Node with its
	// tunnel address and no VTEP MAC.
	hyb071Fail = "../check/testdata/HYB071/fail.yaml"
)

func nodeNamed(c *model.Cluster, name string) *corev1.Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func TestWindowsVTEPMACsAreObservedPlaceholdersOrLeftAsRecorded(t *testing.T) {
	cases := []struct {
		name        string
		files       []string
		node        string
		wantMAC     string // "" for none
		placeholder bool
	}{
		{"a Windows host with an observed MAC keeps it", nil, "k8s-lab-win-1", "00:15:5d:eb:90:ae", false},
		{"a Windows host joined without one gets the placeholder", []string{whatIfSecondWindows}, "k8s-lab-win-2", engine.WindowsVTEPPlaceholder("k8s-lab-win-2"), true},
		{"the first Windows host is unchanged by the second", []string{whatIfSecondWindows}, "k8s-lab-win-1", "00:15:5d:eb:90:ae", false},
		{"an observed Node with a tunnel address and no MAC is left as recorded", []string{hyb071Fail}, "k8s-lab-win-1", "", false},
		{"a Linux node records no MAC (Felix derives it from the name)", []string{whatIfSecondWindows}, "k8s-lab-node-1", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := buildLab(t, tc.files...)
			n := nodeNamed(c, tc.node)
			if n == nil {
				t.Fatalf("no node %s", tc.node)
			}
			if got := n.Annotations[annoMAC]; got != tc.wantMAC {
				t.Errorf("%s = %q, want %q", annoMAC, got, tc.wantMAC)
			}
			if got := n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] != ""; got != tc.placeholder {
				t.Errorf("marked as a placeholder: %v, want %v", got, tc.placeholder)
			}
			noted := false
			for _, note := range c.Notes {
				if note.Object.Name == tc.node && strings.Contains(note.Message, "is a placeholder") {
					noted = true
				}
			}
			if noted != tc.placeholder {
				t.Errorf("placeholder note: %v, want %v", noted, tc.placeholder)
			}
		})
	}
}

func TestThePlaceholderVTEPMACIsAHyperVMACPerNodeName(t *testing.T) {
	a, b := engine.WindowsVTEPPlaceholder("k8s-lab-win-2"), engine.WindowsVTEPPlaceholder("k8s-lab-win-3")
	if !strings.HasPrefix(a, "00:15:5d:") || !strings.HasPrefix(b, "00:15:5d:") {
		t.Errorf("not in Hyper-V's range: %s, %s", a, b)
	}
	if a == b {
		t.Errorf("two nodes share the placeholder %s", a)
	}
	if a != engine.WindowsVTEPPlaceholder("k8s-lab-win-2") {
		t.Error("the placeholder is not deterministic")
	}
	if a == felix.VTEPMACForHost("k8s-lab-win-2") {
		t.Error("the placeholder is the Linux rule's MAC")
	}
}
