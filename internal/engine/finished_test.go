package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestAFinishedPodKeepsItsPhaseAndIsNotReady(t *testing.T) {
	c := buildLab(t, "testdata/finished-pods.yaml")
	tests := []struct {
		name   string
		phase  corev1.PodPhase
		reason string
		exit   int32
	}{
		{"migrate-done", corev1.PodSucceeded, "Completed", 0},
		{"migrate-failed", corev1.PodFailed, "Error", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name+" stays "+string(tt.phase), func(t *testing.T) {
			p := findPod(t, c, "demo", tt.name)
			if p.Status.Phase != tt.phase {
				t.Errorf("phase %s, want %s", p.Status.Phase, tt.phase)
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status != corev1.ConditionFalse {
					t.Errorf("Ready %s, want False", cond.Status)
				}
			}
			if len(p.Status.ContainerStatuses) != 1 {
				t.Fatalf("%d container statuses, want 1", len(p.Status.ContainerStatuses))
			}
			term := p.Status.ContainerStatuses[0].State.Terminated
			if term == nil || term.Reason != tt.reason || term.ExitCode != tt.exit {
				t.Errorf("container state %+v, want terminated %s exit %d", p.Status.ContainerStatuses[0].State, tt.reason, tt.exit)
			}
		})
	}
}
