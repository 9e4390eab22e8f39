package rawdoc

import (
	"sort"
	"strconv"
	"strings"
)

// PathElem is one step into a document: a mapping key, or a list index when
// index >= 0.
type PathElem struct {
	Key   string
	Index int
}

// KeyElem is a map key path element; IndexElem a list index.
func KeyElem(k string) PathElem { return PathElem{Key: k, Index: -1} }
func IndexElem(i int) PathElem  { return PathElem{Index: i} }

// IsIndex reports whether the element is a list index.
func (p PathElem) IsIndex() bool { return p.Index >= 0 }

// FieldPath is a path from the document's root.
type FieldPath []PathElem

// ParsePath turns "spec.network.cidr" into keys (no indices; callers append
// them).
func ParsePath(s string) FieldPath {
	var p FieldPath
	for _, k := range strings.Split(s, ".") {
		p = append(p, KeyElem(k))
	}
	return p
}

// With returns p extended by more elements, never sharing p's array.
func (p FieldPath) With(more ...PathElem) FieldPath {
	out := make(FieldPath, 0, len(p)+len(more))
	out = append(out, p...)
	return append(out, more...)
}

// String formats the path as kubectl explains fields:
// spec.containers[0].ports[0].containerPort; keys that are not plain words
// are quoted: metadata.labels["app.kubernetes.io/name"].
func (p FieldPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case e.IsIndex():
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.Index))
			b.WriteByte(']')
		case plainKey(e.Key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.Key)
		default:
			b.WriteString("[")
			b.WriteString(strconv.Quote(Clip(e.Key)))
			b.WriteString("]")
		}
	}
	return b.String()
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValueAt follows p through a generic value (maps and slices).
func ValueAt(v any, p FieldPath) (any, bool) {
	for _, e := range p {
		switch t := v.(type) {
		case map[string]any:
			if e.IsIndex() {
				return nil, false
			}
			next, ok := t[e.Key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !e.IsIndex() || e.Index >= len(t) {
				return nil, false
			}
			v = t[e.Index]
		default:
			return nil, false
		}
	}
	return v, true
}

// JSONKind is the JSON kind of a generic value, as encoding/json names it in
// UnmarshalTypeError.Value: string, number, bool, array, object, null.
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case int64, uint64, float64, int:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// Describe renders a generic value for "got VALUE": string "80", number 1.5,
// bool true, an object, a list.
func Describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + strconv.Quote(Clip(t))
	case bool:
		return "bool " + strconv.FormatBool(t)
	case int64:
		return "number " + strconv.FormatInt(t, 10)
	case int:
		return "number " + strconv.Itoa(t)
	case uint64:
		return "number " + strconv.FormatUint(t, 10)
	case float64:
		return "number " + strconv.FormatFloat(t, 'g', -1, 64)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// FindByNames looks for the value encoding/json's UnmarshalTypeError.Field
// ("spec.containers.ports.containerPort": JSON names without list indices,
// sometimes with Go names of embedded structs) points at, whose JSON kind is
// want. It returns the first such path with its indices.
func FindByNames(root any, field, want string) (FieldPath, bool) {
	if field == "" {
		return nil, false
	}
	names := strings.Split(field, ".")
	var walk func(v any, i int, p FieldPath) (FieldPath, bool)
	walk = func(v any, i int, p FieldPath) (FieldPath, bool) {
		if i == len(names) {
			if JSONKind(v) == want {
				return p, true
			}
			// A map's element: encoding/json does not name map keys.
			if m, ok := v.(map[string]any); ok {
				for _, k := range SortedKeys(m) {
					if JSONKind(m[k]) == want {
						return p.With(KeyElem(k)), true
					}
				}
			}
			return nil, false
		}
		switch t := v.(type) {
		case map[string]any:
			if next, ok := t[names[i]]; ok {
				return walk(next, i+1, p.With(KeyElem(names[i])))
			}
			// Not a key: the Go name of an embedded struct.
			return walk(v, i+1, p)
		case []any:
			for j, e := range t {
				if found, ok := walk(e, i, p.With(IndexElem(j))); ok {
					return found, true
				}
			}
		}
		return nil, false
	}
	return walk(root, 0, nil)
}

// SortedKeys are the keys of m, sorted.
func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clip shortens s for a message.
func Clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Dotted is the path as the API server's strict decoding names it:
// spec.ports[0].foo.
func (p FieldPath) Dotted() string {
	var b strings.Builder
	for i, e := range p {
		if e.IsIndex() {
			b.WriteString("[" + strconv.Itoa(e.Index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.Key)
	}
	return b.String()
}
