// Package meta holds the small vocabulary shared by the typed API packages:
// how a kind is registered so that the loader can decode it.
package meta

import "k8s.io/apimachinery/pkg/runtime/schema"

// Kind describes one decodable kind. The loader matches a document's
// apiVersion group and kind against Group and Kind; any version listed in
// Versions is accepted (Calico kinds arrive as projectcalico.org/v3 or
// crd.projectcalico.org/v1 with the same shape).
type Kind struct {
	Group      string
	Versions   []string
	Kind       string
	Namespaced bool
	// New returns a pointer to an empty typed object for strict decoding.
	New func() any
}

// GroupKind returns the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }
