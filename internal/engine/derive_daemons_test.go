package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derived twin takes the previous twin's pods of a DaemonSet the
// operator renders again unchanged, and builds them again where the
// DaemonSet or what placing them reads changed; either way it equals
// the full build.
func TestADerivedTwinTakesThePodsOfUnchangedDaemonSets(t *testing.T) {
	tests := []struct {
		name string
		next func(t *testing.T, s *model.Snapshot) *model.Snapshot
		// kept reports whether the previous twin's calico-node pod on a
		// node is expected in the derived twin.
		kept func(node string) bool
	}{
		{
			// The control plane's pod is built again (its static pods
			// are made anew) but equals the previous one, so the
			// derivation shares it afterwards (derive_share.go).
			name: "an IPAMConfiguration change keeps calico-node's pods",
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return whatIf(t, s, "../../examples/what-if/no-strict-affinity.yaml")
			},
			kept: func(string) bool { return true },
		},
		{
			name: "an MTU in the Installation changes calico-node's template: its pods are built again",
			next: func(t *testing.T, s *model.Snapshot) *model.Snapshot {
				return edited(t, s, "Installation", func(o *model.Object) {
					in := copyInstallation(t, o.Typed.(*operator.Installation))
					mtu := int32(1400)
					in.Spec.CalicoNetwork.MTU = &mtu
					o.Typed, o.Raw = in, nil
				})
			},
			kept: func(string) bool { return false },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := generated(t, false)
			prev := build(t, base)
			next := tt.next(t, base)
			got := derived(t, prev, base, next)
			in := map[*corev1.Pod]bool{}
			for _, p := range got.Pods {
				in[p] = true
			}
			seen := 0
			for _, p := range prev.Pods {
				if len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Name != "calico-node" {
					continue
				}
				seen++
				if in[p] != tt.kept(p.Spec.NodeName) {
					t.Errorf("calico-node's pod on %s taken from the previous twin: %v, want %v", p.Spec.NodeName, in[p], tt.kept(p.Spec.NodeName))
				}
			}
			if seen == 0 {
				t.Fatal("the previous twin has no calico-node pod")
			}
		})
	}
}
