package load

import (
	"sort"
	"strconv"
	"strings"
)

// pathElem is one step into a document: a mapping key, or a list index when
// index >= 0.
type pathElem struct {
	key   string
	index int
}

func keyElem(k string) pathElem  { return pathElem{key: k, index: -1} }
func indexElem(i int) pathElem   { return pathElem{index: i} }
func (p pathElem) isIndex() bool { return p.index >= 0 }

// fieldPath is a path from the document's root.
type fieldPath []pathElem

// parsePath turns "spec.network.cidr" into keys (no indices; callers append
// them).
func parsePath(s string) fieldPath {
	var p fieldPath
	for _, k := range strings.Split(s, ".") {
		p = append(p, keyElem(k))
	}
	return p
}

// with returns p extended by more elements, never sharing p's array.
func (p fieldPath) with(more ...pathElem) fieldPath {
	out := make(fieldPath, 0, len(p)+len(more))
	out = append(out, p...)
	return append(out, more...)
}

// String formats the path as kubectl explains fields:
// spec.containers[0].ports[0].containerPort; keys that are not plain words
// are quoted: metadata.labels["app.kubernetes.io/name"].
func (p fieldPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case e.isIndex():
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
		case plainKey(e.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		default:
			b.WriteString("[")
			b.WriteString(strconv.Quote(clip(e.key)))
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

// valueAt follows p through a generic value (maps and slices).
func valueAt(v any, p fieldPath) (any, bool) {
	for _, e := range p {
		switch t := v.(type) {
		case map[string]any:
			if e.isIndex() {
				return nil, false
			}
			next, ok := t[e.key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !e.isIndex() || e.index >= len(t) {
				return nil, false
			}
			v = t[e.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// jsonKind is the JSON kind of a generic value, as encoding/json names it in
// UnmarshalTypeError.Value: string, number, bool, array, object, null.
func jsonKind(v any) string {
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

// describe renders a generic value for "got VALUE": string "80", number 1.5,
// bool true, an object, a list.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + strconv.Quote(clip(t))
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

// findByNames looks for the value encoding/json's UnmarshalTypeError.Field
// ("spec.containers.ports.containerPort": JSON names without list indices,
// sometimes with Go names of embedded structs) points at, whose JSON kind is
// want. It returns the first such path with its indices.
func findByNames(root any, field, want string) (fieldPath, bool) {
	if field == "" {
		return nil, false
	}
	names := strings.Split(field, ".")
	var walk func(v any, i int, p fieldPath) (fieldPath, bool)
	walk = func(v any, i int, p fieldPath) (fieldPath, bool) {
		if i == len(names) {
			if jsonKind(v) == want {
				return p, true
			}
			// A map's element: encoding/json does not name map keys.
			if m, ok := v.(map[string]any); ok {
				for _, k := range sortedKeys(m) {
					if jsonKind(m[k]) == want {
						return p.with(keyElem(k)), true
					}
				}
			}
			return nil, false
		}
		switch t := v.(type) {
		case map[string]any:
			if next, ok := t[names[i]]; ok {
				return walk(next, i+1, p.with(keyElem(names[i])))
			}
			// Not a key: the Go name of an embedded struct.
			return walk(v, i+1, p)
		case []any:
			for j, e := range t {
				if found, ok := walk(e, i, p.with(indexElem(j))); ok {
					return found, true
				}
			}
		}
		return nil, false
	}
	return walk(root, 0, nil)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
