package diff

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
)

// The objects' field differences convert both objects to their JSON
// fields (runtime.DefaultUnstructuredConverter, through reflection) and
// walk them. A plan step that rolls an agent out changes a few fields of
// one pod per node; converting each whole pod twice dominated the
// comparison. So the fields equal in both are left out before converting
// (pruned), and a comparison computes the differences of each distinct
// pruned pair once (fieldMemo): the pods of a DaemonSet differ from their
// old selves by the same template change.
//
// Pruning gives the same differences as the whole objects: walk visits
// each field on its own, and a field equal in both objects (typed, so
// equal in JSON) yields nothing, whether present or zeroed in both.

// prune returns shallow copies of two objects of one struct type with the
// fields equal in both set to their zero values, descending into the
// struct fields (and pointers to structs) that differ; a and b themselves
// when they are not pointers to such a struct.
func prune(a, b any) (any, any) {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if !va.IsValid() || !vb.IsValid() || va.Type() != vb.Type() || va.Kind() != reflect.Pointer ||
		va.IsNil() || vb.IsNil() || !prunable(va.Type().Elem()) {
		return a, b
	}
	ca, cb := reflect.New(va.Type().Elem()), reflect.New(va.Type().Elem())
	ca.Elem().Set(va.Elem())
	cb.Elem().Set(vb.Elem())
	pruneStruct(ca.Elem(), cb.Elem())
	return ca.Interface(), cb.Interface()
}

// pruneStruct zeroes, in two addressable values of one prunable struct
// type, the fields equal in both, and prunes the differing ones further
// where their type allows.
func pruneStruct(x, y reflect.Value) {
	t := x.Type()
	for i := 0; i < t.NumField(); i++ {
		fx, fy := x.Field(i), y.Field(i)
		ft := t.Field(i).Type
		// The converter leaves a zero value out of an omitzero field:
		// pruned to zero on one side only, it would vanish there.
		omitzero := strings.Contains(t.Field(i).Tag.Get("json"), "omitzero")
		if ft.Kind() == reflect.Struct && !omitzero && prunable(ft) {
			// Pruned field by field: comparing it whole first would
			// compare the fields twice when it differs.
			pruneStruct(fx, fy)
			continue
		}
		// Compared in place: no copy of a large field.
		if objeq.DeepEqual(fx, fy) {
			fx.SetZero()
			fy.SetZero()
			continue
		}
		if omitzero {
			continue
		}
		if ft.Kind() == reflect.Pointer && !fx.IsNil() && !fy.IsNil() && prunable(ft.Elem()) {
			na, nb := reflect.New(ft.Elem()), reflect.New(ft.Elem())
			na.Elem().Set(fx.Elem())
			nb.Elem().Set(fy.Elem())
			pruneStruct(na.Elem(), nb.Elem())
			fx.Set(na)
			fy.Set(nb)
		}
	}
}

var prunableTypes sync.Map // reflect.Type → bool

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	// value.UnstructuredConverter, which the converter calls instead of
	// reading the fields (metav1.Time, resource.Quantity, IntOrString).
	unstructuredConverter = reflect.TypeFor[interface{ ToUnstructured() interface{} }]()
)

// prunable says whether the converter reads a struct type field by field:
// every field exported, and no conversion of its own (a type that
// marshals itself, as a Quantity or an IntOrString does, may read one
// field through another, so it is compared whole).
func prunable(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if v, ok := prunableTypes.Load(t); ok {
		return v.(bool)
	}
	ok := true
	for _, custom := range []reflect.Type{jsonMarshaler, textMarshaler, unstructuredConverter} {
		if t.Implements(custom) || reflect.PointerTo(t).Implements(custom) {
			ok = false
		}
	}
	for i := 0; ok && i < t.NumField(); i++ {
		ok = t.Field(i).IsExported()
	}
	prunableTypes.Store(t, ok)
	return ok
}

// fieldMemo is the field differences of the pruned pairs of objects one
// comparison has seen, by the hash of the pair's encoding. A pair is
// taken from the memo only when both objects are deeply equal to the ones
// it was computed from, so the hash only finds candidates.
type fieldMemo map[uint64][]memoEntry

type memoEntry struct {
	a, b any
	out  []FieldChange
}

// changes is fieldChanges(a, b), computed once per distinct pruned pair.
func (m fieldMemo) changes(a, b any) []FieldChange {
	pa, pb := prune(a, b)
	h, ok := pairHash(pa, pb)
	if !ok {
		return fieldChangesOf(pa, pb)
	}
	for _, e := range m[h] {
		if objeq.DeepEqual(reflect.ValueOf(e.a), reflect.ValueOf(pa)) && objeq.DeepEqual(reflect.ValueOf(e.b), reflect.ValueOf(pb)) {
			return slices.Clone(e.out)
		}
	}
	out := fieldChangesOf(pa, pb)
	m[h] = append(m[h], memoEntry{a: pa, b: pb, out: slices.Clone(out)})
	return out
}

// pairHash hashes two objects' protobuf encodings; ok is false for types
// without one (their JSON would cost what the memo saves).
func pairHash(a, b any) (uint64, bool) {
	type proto interface {
		Size() int
		MarshalToSizedBuffer([]byte) (int, error)
	}
	if _, ok := a.(proto); !ok {
		return 0, false
	}
	if _, ok := b.(proto); !ok {
		return 0, false
	}
	return mixKey(fnvOffset64, objectHash(a), objectHash(b)), true
}
