// Package model holds the twin's two central values: the Snapshot, objects
// exactly as the input gave them, and the Cluster that engine.Build derives
// from it. Both are plain data; nothing here does I/O.
package model

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// Origin says where an object came from.
type Origin struct {
	// File is the path as given (or "<stdin>", "lab:<name>", "live").
	File string `json:"file,omitempty"`
	// Doc is the 1-based index of the YAML document in File.
	Doc int `json:"doc,omitempty"`
	// Line is the 1-based line where the object starts (0 when unknown).
	Line int `json:"line,omitempty"`
}

func (o Origin) String() string {
	switch {
	case o.File == "":
		return "derived"
	case o.Line > 0:
		return fmt.Sprintf("%s:%d (document %d)", o.File, o.Line, o.Doc)
	case o.Doc > 0:
		return fmt.Sprintf("%s (document %d)", o.File, o.Doc)
	}
	return o.File
}

// Key identifies an object: same Key means the same object (a later one
// replaces an earlier one when --lab and -f combine).
type Key struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

func (k Key) String() string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", kind, k.Namespace, k.Name)
	}
	return fmt.Sprintf("%s %s", kind, k.Name)
}

// Object is one decoded document.
type Object struct {
	GVK schema.GroupVersionKind
	Key Key
	// Typed is a pointer to the decoded typed object (*corev1.Pod,
	// *calico.IPPool, …), or nil for a kind the twin does not model.
	Typed any
	// Raw is the document as a generic map, kept for kinds not modeled and
	// for re-emitting input untouched.
	Raw    map[string]any
	Origin Origin
}

// Undecodable is the Typed value of a pod the API server cannot decode (a
// resource quantity that does not parse): the server refuses that request
// alone with Err, a BadRequest status error, and the rest of the input is
// applied.
type Undecodable struct{ Err error }

// Snapshot is everything the input gave, in input order, one object per Key.
type Snapshot struct {
	Objects []*Object
	// Warnings are non-fatal notes from loading (kinds not modeled, …).
	Warnings []string
	// Network holds the node-network facts stated on the command line
	// (--node-network, --node-gateway); a field set here wins over the
	// Cluster kind's.
	Network hybrid.Network
	// Actions are what-if markers with hybrid.ActionAnnotation, in input
	// order: imperative steps (approve, cordon, drain, restart, …) the
	// engine does on the built object of the marker's key, observed or
	// derived. They are not objects of the cluster.
	Actions []*Object
	// Unread are the kinds a live read could not list (refused, or not
	// served by the server); always empty for files. Their absence from
	// Objects says nothing about the cluster.
	Unread []UnreadKind
}

// UnreadKind is a kind the input could not give, and why.
type UnreadKind struct {
	// Group and Kind as the twin registers them ("operator.tigera.io",
	// "Installation"; Calico's under projectcalico.org whichever API
	// served them).
	Group, Kind string
	// Reason is the server's answer: "forbidden: …", "the server does not
	// serve it (no such API or CRD)".
	Reason string
}

// String is "Kind.group", or "Kind" for the core group.
func (u UnreadKind) String() string {
	if u.Group == "" {
		return u.Kind
	}
	return u.Kind + "." + u.Group
}
