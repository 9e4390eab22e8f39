package engine

import (
	"slices"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// kubelets are the kubelet configurations a build made for its nodes
// (kubeadm's cluster-wide configuration with each node's patches applied)
// and the input objects they were made from. A derivation whose input
// holds the same KubeletConfiguration objects (the same pointers: the
// snapshot's unchanged objects) takes the previous build's configuration
// of a node with the same patches instead of copying and patching it
// again; neither build changes one once made.
type kubelets struct {
	objects []*model.Object
	byHost  map[string]kubeletMade
	// prev is the previous build's while the nodes are made (nil when
	// it was made from other objects), dropped after so that twins do
	// not hold each other's.
	prev *kubelets
}

// kubeletMade is one node's configuration and the patches it applied.
type kubeletMade struct {
	patches []string
	kc      *kubeletv1beta1.KubeletConfiguration
}

// kubeletsMade starts this build's record of its nodes' kubelet
// configurations (nil for an owned build, which keeps nothing).
func (b *builder) kubeletsMade() *kubelets {
	if b.own {
		return nil
	}
	k := &kubelets{objects: b.in.kubeletObjects, byHost: make(map[string]kubeletMade, len(b.hosts))}
	if was := b.d.previous(); was != nil && was.kubelets != nil && slices.Equal(was.kubelets.objects, k.objects) {
		k.prev = was.kubelets
	}
	b.carry.kubelets = k
	return k
}

// of is host h's kubelet configuration: the previous build's when it was
// made from the same objects and patches, else made.
func (k *kubelets) of(h plannedHost, build func() (*kubeletv1beta1.KubeletConfiguration, error)) (*kubeletv1beta1.KubeletConfiguration, error) {
	if k == nil {
		return build()
	}
	var kc *kubeletv1beta1.KubeletConfiguration
	if k.prev != nil {
		if was, ok := k.prev.byHost[h.Name]; ok && slices.Equal(was.patches, h.Patches) {
			kc = was.kc
		}
	}
	if kc == nil {
		var err error
		if kc, err = build(); err != nil {
			return nil, err
		}
	}
	k.byHost[h.Name] = kubeletMade{patches: h.Patches, kc: kc}
	return kc, nil
}

// done drops the previous build's record.
func (k *kubelets) done() {
	if k != nil {
		k.prev = nil
	}
}
