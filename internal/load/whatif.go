package load

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// What-if markers (hybrid.DeleteAnnotation, hybrid.ActionAnnotation) are
// not objects of the cluster. A deletion removes the object of its key
// that an earlier source gave, as it is read. An action is checked here
// and kept in Snapshot.Actions for the engine, which does it on the built
// object, observed or derived (the lab's Nodes and the operator's
// DaemonSets are derived).

// markerOf returns the marker's annotations when o is a what-if marker.
func markerOf(o *model.Object) (map[string]string, bool) {
	m, ok := o.Typed.(metav1.Object)
	if !ok {
		return nil, false
	}
	a := m.GetAnnotations()
	return a, hybrid.IsMarker(a)
}

func markerError(o *model.Object, format string, args ...any) *Error {
	return &Error{File: o.Origin.File, Doc: o.Origin.Doc, Line: o.Origin.Line, Object: keyLabel(o.Key), Msg: fmt.Sprintf(format, args...)}
}

// marker handles a marked object read from src.
func (b *builder) marker(o *model.Object, src source, ann map[string]string) error {
	del, isDel := ann[hybrid.DeleteAnnotation]
	verb, isAct := ann[hybrid.ActionAnnotation]
	if isDel && isAct {
		return markerError(o, "%s and %s: an object either deletes or acts, not both", hybrid.DeleteAnnotation, hybrid.ActionAnnotation)
	}
	if isAct {
		kinds, ok := hybrid.ActionKinds[verb]
		if !ok {
			return markerError(o, "%s %q: use one of %s", hybrid.ActionAnnotation, verb, actionNames())
		}
		if !slices.Contains(kinds, o.Key.Kind) {
			return markerError(o, "%s %q applies to %s, not to a %s", hybrid.ActionAnnotation, verb, strings.Join(kinds, ", "), o.Key.Kind)
		}
		b.snap.Actions = append(b.snap.Actions, o)
		return nil
	}
	if del != "true" {
		return markerError(o, "%s %q: the only value is \"true\"", hybrid.DeleteAnnotation, del)
	}
	i, ok := b.index[o.Key]
	if !ok || b.source[i] >= src {
		return markerError(o, "%s: no earlier input (the lab, an earlier -f, diff's base) gives this object; "+
			"objects the twin derives cannot be deleted (their controller would make them again)", hybrid.DeleteAnnotation)
	}
	b.snap.Objects[i] = nil
	delete(b.index, o.Key)
	b.deleted = true
	return nil
}

func actionNames() string {
	names := make([]string, 0, len(hybrid.ActionKinds))
	for v := range hybrid.ActionKinds {
		names = append(names, v)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// compact drops the places of deleted objects.
func (b *builder) compact() {
	if !b.deleted {
		return
	}
	kept := b.snap.Objects[:0]
	for _, o := range b.snap.Objects {
		if o != nil {
			kept = append(kept, o)
		}
	}
	clear(b.snap.Objects[len(kept):])
	b.snap.Objects = kept
}
