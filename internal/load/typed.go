package load

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/declared"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
)

var (
	canonOnce sync.Once
	canon     map[[2]string]string
)

// canonicalKind is the name a kind's Key uses: the first registered kind of
// the same group decoding to the same type, so that Calico's IPAMConfig
// (crd.projectcalico.org/v1) and IPAMConfiguration (projectcalico.org/v3)
// are one object.
func canonicalKind(k meta.Kind) string {
	canonOnce.Do(func() {
		type typeKey struct {
			group string
			t     reflect.Type
		}
		canon = map[[2]string]string{}
		first := map[typeKey]string{}
		for _, rk := range registry.All() {
			if rk.New == nil {
				continue
			}
			tk := typeKey{rk.Group, reflect.TypeOf(rk.New())}
			if f, ok := first[tk]; ok {
				canon[[2]string{rk.Group, rk.Kind}] = f
			} else {
				first[tk] = rk.Kind
			}
		}
	})
	if c, ok := canon[[2]string{k.Group, k.Kind}]; ok {
		return c
	}
	return k.Kind
}

// typeProblem explains why text did not decode into typed: the field, what
// its type expects, and what the document gives.
func typeProblem(err error, text []byte, m map[string]any, typed any) *rawdoc.Problem {
	var ute *json.UnmarshalTypeError
	isUTE := errors.As(err, &ute)
	if isUTE && ute.Offset > 0 && int(ute.Offset) <= len(text) {
		p := rawdoc.JSONPathAt(text, int(ute.Offset)-1)
		if v, ok := rawdoc.ValueAt(m, p); ok && rawdoc.JSONKind(v) == valueKind0(ute.Value) && namesField(p, ute.Field) {
			return &rawdoc.Problem{Path: p, Msg: expected(ute.Type, v)}
		}
	}
	// An Unmarshaler failed (a quantity, a time, an int-or-string), possibly
	// with a type error of its own whose offset is not in text: find the field
	// by walking the type along the document.
	if t := reflect.TypeOf(typed); t != nil {
		if p, ferr, ok := findFailing(t, m, nil, 0); ok {
			var inner *json.UnmarshalTypeError
			if errors.As(ferr, &inner) {
				v, _ := rawdoc.ValueAt(m, p)
				return &rawdoc.Problem{Path: p, Msg: expected(inner.Type, v)}
			}
			return &rawdoc.Problem{Path: p, Msg: strings.TrimPrefix(ferr.Error(), "json: ")}
		}
	}
	if isUTE {
		if p, ok := rawdoc.FindByNames(m, ute.Field, valueKind0(ute.Value)); ok {
			v, _ := rawdoc.ValueAt(m, p)
			return &rawdoc.Problem{Path: p, Msg: expected(ute.Type, v)}
		}
		msg := "expected " + typeName(ute.Type) + ", got " + ute.Value
		if ute.Field != "" {
			msg = ute.Field + ": " + msg
		}
		return &rawdoc.Problem{Msg: msg}
	}
	return &rawdoc.Problem{Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

// valueKind0 is the first word of UnmarshalTypeError.Value ("number 1.5").
func valueKind0(v string) string {
	k, _, _ := strings.Cut(v, " ")
	return k
}

// namesField reports whether path p fits encoding/json's Field: its last
// name is one of p's keys (Field leaves out list indices and map keys).
func namesField(p rawdoc.FieldPath, field string) bool {
	if field == "" {
		return true
	}
	last := field[strings.LastIndexByte(field, '.')+1:]
	for _, e := range p {
		if !e.IsIndex() && e.Key == last {
			return true
		}
	}
	return false
}

func expected(t reflect.Type, got any) string {
	return "expected " + typeName(t) + ", got " + rawdoc.Describe(got)
}

// typeName names a Go type the way a manifest's author thinks of it.
func typeName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "a list"
	case reflect.Interface:
		return "a value"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	}
	return t.Kind().String() // int32, uint64, float64, …
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// findFailing walks type t along the generic value v and returns the path of
// the first value whose own UnmarshalJSON (or UnmarshalText) rejects it.
func findFailing(t reflect.Type, v any, p rawdoc.FieldPath, depth int) (rawdoc.FieldPath, error, bool) {
	if depth > 100 || v == nil {
		return nil, nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if depth > 0 && pt.Implements(jsonUnmarshaler) {
		text, err := json.Marshal(v)
		if err != nil {
			return nil, nil, false
		}
		u, ok := reflect.New(t).Interface().(json.Unmarshaler)
		if !ok {
			return nil, nil, false
		}
		if err := u.UnmarshalJSON(text); err != nil {
			return p, err, true
		}
		return nil, nil, false
	}
	if s, isString := v.(string); isString && depth > 0 && pt.Implements(textUnmarshaler) {
		u, ok := reflect.New(t).Interface().(encoding.TextUnmarshaler)
		if !ok {
			return nil, nil, false
		}
		if err := u.UnmarshalText([]byte(s)); err != nil {
			return p, err, true
		}
		return nil, nil, false
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		fields := declared.Fields(t)
		for _, k := range rawdoc.SortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				for name, t2 := range fields {
					if strings.EqualFold(name, k) {
						ft, ok = t2, true
						break
					}
				}
			}
			if !ok {
				continue
			}
			if fp, err, found := findFailing(ft, m[k], p.With(rawdoc.KeyElem(k)), depth+1); found {
				return fp, err, true
			}
		}
	case reflect.Slice, reflect.Array:
		s, ok := v.([]any)
		if !ok {
			return nil, nil, false
		}
		for i, e := range s {
			if fp, err, found := findFailing(t.Elem(), e, p.With(rawdoc.IndexElem(i)), depth+1); found {
				return fp, err, true
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, false
		}
		for _, k := range rawdoc.SortedKeys(m) {
			if fp, err, found := findFailing(t.Elem(), m[k], p.With(rawdoc.KeyElem(k)), depth+1); found {
				return fp, err, true
			}
		}
	}
	return nil, nil, false
}
