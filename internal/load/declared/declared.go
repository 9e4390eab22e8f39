// Package declared says which keys of a manifest its Go type declares:
// the JSON member names of a type, and the keys of a document (its generic
// value or its JSON text) that the type does not declare, as the API
// server's strict decoding finds them.
package declared

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Field is a key of the document that its kind does not declare.
type Field struct {
	Path rawdoc.FieldPath
	// CaseOf is the declared field it matches but for case: encoding/json
	// would fill that field, the API server (which decodes case-sensitively,
	// sigs.k8s.io/json) drops the key.
	CaseOf string
}

// Unknown lists the keys of m that t does not declare, as
// sigs.k8s.io/json's DisallowUnknownFields finds them on the API server.
// The twin's own renderings of Calico, the operator and kubeadm hold only
// the fields it models, so inside those only keys that differ from a
// declared field by case are reported: the others may be real upstream
// fields. That exception, and the cost of a second, strict decode of every
// object, are why m is walked along t here rather than decoded with
// sigs.k8s.io/json.UnmarshalStrict.
func Unknown(t reflect.Type, m map[string]any) []Field {
	var out []Field
	walkUnknown(t, m, make(rawdoc.FieldPath, 0, 16), &out, 0)
	if len(out) > 1 {
		sortUnknown(out)
	}
	return out
}

// sortUnknown orders unknown fields by path: maps are walked in no order.
func sortUnknown(out []Field) {
	sort.Slice(out, func(i, j int) bool { return out[i].Path.Dotted() < out[j].Path.Dotted() })
}

var (
	rawMessage = reflect.TypeFor[json.RawMessage]()
	ownPrefix  = "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/"
	ownFull    = ownPrefix + "hybrid" // the twin's own Cluster kind: all its fields are declared
)

// walkInfo is what walkUnknown needs of a type, computed once.
type walkInfo struct {
	self    bool // decodes itself (quantities, times, int-or-string)
	partial bool // one of the twin's renderings of another project's kind
}

var walkInfos sync.Map // reflect.Type → walkInfo

func infoOf(t reflect.Type) walkInfo {
	if w, ok := walkInfos.Load(t); ok {
		return w.(walkInfo)
	}
	pt := reflect.PointerTo(t)
	w := walkInfo{
		self:    t == rawMessage || pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler),
		partial: strings.HasPrefix(t.PkgPath(), ownPrefix) && t.PkgPath() != ownFull,
	}
	walkInfos.Store(t, w)
	return w
}

// walkUnknown walks v along t; p is a stack the callee may append to and
// that out's entries copy.
func walkUnknown(t reflect.Type, v any, p rawdoc.FieldPath, out *[]Field, depth int) {
	if depth > 64 || v == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	info := infoOf(t)
	if depth > 0 && info.self {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := Fields(t)
		for k, val := range m {
			if ft, ok := fields[k]; ok {
				walkUnknown(ft, val, append(p, rawdoc.KeyElem(k)), out, depth+1)
				continue
			}
			caseOf := ""
			for name := range fields {
				if strings.EqualFold(name, k) {
					caseOf = name
					break
				}
			}
			if info.partial && caseOf == "" {
				continue
			}
			*out = append(*out, Field{Path: p.With(rawdoc.KeyElem(k)), CaseOf: caseOf})
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range s {
			walkUnknown(t.Elem(), e, append(p, rawdoc.IndexElem(i)), out, depth+1)
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, val := range m {
			walkUnknown(t.Elem(), val, append(p, rawdoc.KeyElem(k)), out, depth+1)
		}
	}
}

// UnknownJSON is Unknown read from valid JSON text instead of its
// generic value, the same keys in the same order. false: the text has a key with escapes, a key given
// twice whose first value the walk would enter (the generic value holds
// only the last), or a key that differs from a declared field only by case.
func UnknownJSON(t reflect.Type, text []byte) ([]Field, bool) {
	w := textWalk{b: text}
	w.value(t, rawdoc.SkipSpace(text, 0), 0)
	if w.bad {
		return nil, false
	}
	if len(w.out) > 1 {
		sortUnknown(w.out)
	}
	return w.out, true
}

// textWalk is walkUnknown over JSON text. path holds the offsets of the
// keys (start and end of the literal; -1 start: an index in end) from the
// root to the value being walked.
type textWalk struct {
	b    []byte
	path [][2]int
	out  []Field
	bad  bool
}

// value walks the value at b[i] along t and returns the offset after it.
func (w *textWalk) value(t reflect.Type, i, depth int) int {
	b := w.b
	if w.bad || i >= len(b) {
		return len(b)
	}
	if depth > 64 || b[i] == 'n' {
		return rawdoc.ValueEnd(b, i)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	info := infoOf(t)
	if depth > 0 && info.self {
		return rawdoc.ValueEnd(b, i)
	}
	switch t.Kind() {
	case reflect.Struct:
		if b[i] != '{' {
			return rawdoc.ValueEnd(b, i)
		}
		fields := Fields(t)
		return w.members(i, func(ks, ke, vs int) (reflect.Type, bool) {
			key := b[ks+1 : ke-1]
			if ft, ok := fields[string(key)]; ok {
				return ft, true
			}
			for name := range fields {
				if strings.EqualFold(name, string(key)) {
					w.bad = true // dropped before decoding: build does that
					return nil, false
				}
			}
			if !info.partial {
				w.out = append(w.out, Field{Path: w.fieldPath(ks, ke)})
			}
			return nil, false
		}, depth)
	case reflect.Map:
		if b[i] != '{' {
			return rawdoc.ValueEnd(b, i)
		}
		elem := t.Elem()
		return w.members(i, func(int, int, int) (reflect.Type, bool) { return elem, true }, depth)
	case reflect.Slice, reflect.Array:
		if b[i] != '[' {
			return rawdoc.ValueEnd(b, i)
		}
		elem := t.Elem()
		i = rawdoc.SkipSpace(b, i+1)
		for n := 0; i < len(b) && b[i] != ']' && !w.bad; n++ {
			w.path = append(w.path, [2]int{-1, n})
			i = rawdoc.SkipSpace(b, w.value(elem, i, depth+1))
			w.path = w.path[:len(w.path)-1]
			if i < len(b) && b[i] == ',' {
				i = rawdoc.SkipSpace(b, i+1)
			}
		}
		return i + 1
	}
	return rawdoc.ValueEnd(b, i)
}

// members walks the members of the object at b[i]: field gives the type
// to walk a member's value along (false: not walked). A key given twice
// is bad when a value walked or reported came first, since the generic
// value holds only the last.
func (w *textWalk) members(i int, field func(ks, ke, vs int) (reflect.Type, bool), depth int) int {
	b := w.b
	var walked [][2]int // keys whose value was walked or reported
	i = rawdoc.SkipSpace(b, i+1)
	for i < len(b) && b[i] == '"' && !w.bad {
		ks := i
		ke := stringEndOf(b, i)
		key := b[ks+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			w.bad = true
			break
		}
		for _, k := range walked {
			if bytes.Equal(b[k[0]+1:k[1]-1], key) {
				w.bad = true
			}
		}
		i = rawdoc.SkipSpace(b, ke)
		if i < len(b) && b[i] == ':' {
			i = rawdoc.SkipSpace(b, i+1)
		}
		n := len(w.out)
		if ft, ok := field(ks, ke, i); ok && i < len(b) && (b[i] == '{' || b[i] == '[') {
			w.path = append(w.path, [2]int{ks, ke})
			i = w.value(ft, i, depth+1)
			w.path = w.path[:len(w.path)-1]
			walked = append(walked, [2]int{ks, ke})
		} else {
			if len(w.out) > n {
				walked = append(walked, [2]int{ks, ke})
			}
			i = rawdoc.ValueEnd(b, i)
		}
		i = rawdoc.SkipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i = rawdoc.SkipSpace(b, i+1)
		}
	}
	return i + 1
}

// stringEndOf is the offset after the string literal at b[i].
func stringEndOf(b []byte, i int) int { return rawdoc.ValueEnd(b, i) }

// fieldPath is the path of the member whose key is at b[ks:ke].
func (w *textWalk) fieldPath(ks, ke int) rawdoc.FieldPath {
	p := make(rawdoc.FieldPath, 0, len(w.path)+1)
	for _, e := range append(w.path, [2]int{ks, ke}) {
		if e[0] < 0 {
			p = append(p, rawdoc.IndexElem(e[1]))
		} else {
			p = append(p, rawdoc.KeyElem(string(w.b[e[0]+1:e[1]-1])))
		}
	}
	return p
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// Fields maps a struct's JSON member names to their types, with the
// members of embedded structs promoted as encoding/json does.
func Fields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	var add func(t reflect.Type, depth int)
	add = func(t reflect.Type, depth int) {
		var embedded []reflect.Type
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					embedded = append(embedded, ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := out[name]; !dup {
				out[name] = f.Type
			}
		}
		if depth < 5 {
			for _, e := range embedded {
				add(e, depth+1)
			}
		}
	}
	add(t, 0)
	fieldCache.Store(t, out)
	return out
}
