// Package meta holds the small vocabulary shared by the typed API packages:
// how a kind is registered so that the loader can decode it and the faces
// can name it, in the shape of a RESTMapper's entries.
package meta

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind describes one decodable kind. The loader matches a document's
// apiVersion group and kind against Group and Kind; any version listed in
// Versions is accepted (Calico kinds arrive as projectcalico.org/v3 or
// crd.projectcalico.org/v1 with the same shape); the first is the one
// written on output.
type Kind struct {
	Group      string
	Versions   []string
	Kind       string
	Namespaced bool
	// Resource is the plural in URLs and kubectl get ("networkpolicies");
	// the registry fills it from Kind as apimachinery guesses it when empty.
	Resource string
	// ShortNames are what kubectl accepts besides the plural and the
	// singular ("po", "netpol"), as the API server's discovery lists them.
	ShortNames []string
	// New returns a pointer to an empty typed object for strict decoding.
	New func() any
}

// GroupKind returns the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// Version is the version written on output copies.
func (k Kind) Version() string {
	if len(k.Versions) == 0 {
		return ""
	}
	return k.Versions[0]
}

// GroupVersionKind is the kind at its output version.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version(), Kind: k.Kind}
}

// GroupResource is the kind's group and plural resource.
func (k Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// Singular is the lower-case kind, the resource's singular name.
func (k Kind) Singular() string { return strings.ToLower(k.Kind) }

// AnswersTo reports whether word (any case) is the kind's plural, singular
// or one of its short names.
func (k Kind) AnswersTo(word string) bool {
	w := strings.ToLower(word)
	if w == k.Resource || w == k.Singular() {
		return true
	}
	for _, s := range k.ShortNames {
		if w == s {
			return true
		}
	}
	return false
}
