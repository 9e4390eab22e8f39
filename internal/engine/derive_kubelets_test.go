package engine

import (
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// A derivation from the same KubeletConfiguration objects takes the
// previous build's kubelet configuration of each node; one whose objects
// differ (a changed configuration, which Derive itself sends to a full
// build) makes them again from the new one.
func TestADerivationTakesThePreviousKubeletConfigurationsOnlyFromTheSameObjects(t *testing.T) {
	tests := []struct {
		name string
		// maxPods, when not 0, is set on a copy of the input's
		// KubeletConfiguration put in its place.
		maxPods int32
	}{
		{name: "the same objects take them"},
		{name: "a changed configuration makes them again", maxPods: 57},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, prev := builtGen(t)
			if len(prev.Kubeadm.NodeKubelet) == 0 {
				t.Fatal("no node has a kubelet configuration: the case tests nothing")
			}
			next := withStrictAffinity(false)(t, base)
			d := settle(prev, base, next)
			if d == nil {
				t.Fatal("no pod qualifies for reuse: the case does not test the reuse")
			}
			d.prev = recall(prev)
			if tt.maxPods != 0 {
				next = editFirst(t, next, "KubeletConfiguration", func(kc *kubeletv1beta1.KubeletConfiguration) { kc.MaxPods = tt.maxPods })
			}
			got, err := build(next, false, d)
			if err != nil {
				t.Fatal(err)
			}
			for name, was := range prev.Kubeadm.NodeKubelet {
				now := got.Kubeadm.NodeKubelet[name]
				if taken := now == was; taken != (tt.maxPods == 0) {
					t.Errorf("node %s's kubelet configuration taken from the previous build: %v, want %v", name, taken, tt.maxPods == 0)
				}
				if tt.maxPods != 0 && now.MaxPods != tt.maxPods {
					t.Errorf("node %s's kubelet configuration has maxPods %d, want %d", name, now.MaxPods, tt.maxPods)
				}
			}
			if tt.maxPods == 0 {
				derivedAsBuilt(t, prev, base, next)
			}
		})
	}
}

// A node whose patches differ from those the previous build applied to
// its configuration gets its own, made again.
func TestANodeWithOtherPatchesGetsItsKubeletConfigurationMadeAgain(t *testing.T) {
	was := &kubeletv1beta1.KubeletConfiguration{MaxPods: 110}
	prev := &kubelets{byHost: map[string]kubeletMade{"n1": {patches: []string{"kubeletconfiguration-a"}, kc: was}}}
	for _, tt := range []struct {
		name    string
		patches []string
		taken   bool
	}{
		{name: "the same patches take it", patches: []string{"kubeletconfiguration-a"}, taken: true},
		{name: "no patch does not"},
		{name: "another patch does not", patches: []string{"kubeletconfiguration-b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &kubelets{byHost: map[string]kubeletMade{}, prev: prev}
			h := plannedHost{}
			h.Name, h.Patches = "n1", tt.patches
			made := &kubeletv1beta1.KubeletConfiguration{MaxPods: 57}
			got, err := k.of(h, func() (*kubeletv1beta1.KubeletConfiguration, error) { return made, nil })
			if err != nil {
				t.Fatal(err)
			}
			if taken := got == was; taken != tt.taken {
				t.Errorf("taken from the previous build: %v, want %v", taken, tt.taken)
			}
		})
	}
}
