package rawdoc

import (
	"math"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// AppendYAMLJSON appends to buf the JSON text of the YAML value n: the text
// MarshalGeneric gives for the generic value YAMLConverter makes of n, keys
// sorted alike, but without making that value (a map per mapping, an
// interface per scalar), which cost as much as decoding the text again.
// false when n holds what the converter resolves or refuses — an alias, a
// merge key, a key given twice or that is not a scalar, a scalar that is not
// what its tag says — and the caller converts n instead; the returned slice
// is then only buf's storage.
func AppendYAMLJSON(buf []byte, n *yaml.Node) ([]byte, bool) {
	e := yamlJSON{genericEncoder: genericEncoder{buf: buf}}
	ok := e.node(n)
	return e.buf, ok
}

type yamlJSON struct {
	genericEncoder
	// idx holds the key positions of the mappings being written, nested
	// ones after their parents'.
	idx []int
}

func (e *yamlJSON) node(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			e.buf = append(e.buf, "null"...)
			return true
		}
		return e.node(n.Content[0])
	case yaml.MappingNode:
		return e.mapping(n)
	case yaml.SequenceNode:
		e.buf = append(e.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if !e.node(c) {
				return false
			}
		}
		e.buf = append(e.buf, ']')
		return true
	case yaml.ScalarNode:
		return e.scalar(n)
	}
	return false // an alias, or a node the converter refuses
}

func (e *yamlJSON) mapping(n *yaml.Node) bool {
	base := len(e.idx)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			return false
		}
		e.idx = append(e.idx, i)
	}
	keys := e.idx[base:]
	slices.SortFunc(keys, func(a, b int) int { return strings.Compare(n.Content[a].Value, n.Content[b].Value) })
	e.buf = append(e.buf, '{')
	for j, i := range keys {
		k := n.Content[i].Value
		if j > 0 {
			if n.Content[keys[j-1]].Value == k {
				return false // given twice: the converter says where
			}
			e.buf = append(e.buf, ',')
		}
		e.str(k)
		e.buf = append(e.buf, ':')
		if !e.node(n.Content[i+1]) {
			return false
		}
	}
	e.buf = append(e.buf, '}')
	e.idx = e.idx[:base]
	return true
}

// scalar writes what YAMLConverter.Scalar gives, as MarshalGeneric would.
func (e *yamlJSON) scalar(n *yaml.Node) bool {
	v := n.Value
	switch n.ShortTag() {
	case "!!null":
		e.buf = append(e.buf, "null"...)
	case "!!bool":
		switch strings.ToLower(v) {
		case "true", "yes", "on", "y":
			e.buf = append(e.buf, "true"...)
		case "false", "no", "off", "n":
			e.buf = append(e.buf, "false"...)
		default:
			return false
		}
	case "!!int":
		plain := strings.ReplaceAll(v, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			e.buf = strconv.AppendInt(e.buf, i, 10)
		} else if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			e.buf = strconv.AppendUint(e.buf, u, 10)
		} else {
			return false
		}
	case "!!float":
		switch strings.ToLower(strings.TrimPrefix(v, "+")) {
		case ".inf", "-.inf", ".nan":
			return false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return false
		}
		e.float(f)
	default:
		e.str(v)
	}
	return true
}
