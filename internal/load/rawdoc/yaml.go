package rawdoc

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Problem is a field-level finding: what is wrong at path, and the line when
// known (0: the locator or the object's start line decides).
type Problem struct {
	Path FieldPath
	Line int
	Msg  string
}

// YAMLConverter turns a YAML node tree into the generic value JSON would
// give (map[string]any, []any, string, int64, uint64, float64, bool, nil),
// resolving aliases and merge keys. It stops at the first problem.
type YAMLConverter struct {
	lineOffset int // added to node lines
	budget     int // nodes it may still produce (guards alias bombs)
	Prob       *Problem
	path       FieldPath
	active     map[*yaml.Node]bool // alias targets being expanded
	// Keys interns mapping keys: every pod has the same few dozen, and
	// sharing them saves a tenth of a snapshot's memory.
	Keys map[string]string
}

func (c *YAMLConverter) intern(k string) string {
	if s, ok := c.Keys[k]; ok {
		return s
	}
	if c.Keys != nil && len(k) <= 64 && len(c.Keys) < 10_000 {
		c.Keys[k] = k
	}
	return k
}

// NewYAMLConverter converts YAML nodes to generic values, numbering lines
// from lineOffset and failing past budget nodes (a guard against alias bombs).
func NewYAMLConverter(lineOffset, budget int) *YAMLConverter {
	return &YAMLConverter{lineOffset: lineOffset, budget: budget}
}

func (c *YAMLConverter) fail(n *yaml.Node, format string, args ...any) {
	if c.Prob != nil {
		return
	}
	line := 0
	if n != nil && n.Line > 0 {
		line = n.Line + c.lineOffset
	}
	c.Prob = &Problem{Path: c.path.With(), Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Value is n as a generic value (map, slice, string, number, bool, nil).
func (c *YAMLConverter) Value(n *yaml.Node) any {
	if c.Prob != nil || n == nil {
		return nil
	}
	c.budget--
	if c.budget < 0 {
		c.fail(n, "too many nodes after expanding aliases")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.Value(n.Content[0])
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			c.fail(n, "unknown alias *%s", n.Value)
			return nil
		}
		if c.active[t] {
			c.fail(n, "alias *%s refers to the value that contains it", n.Value)
			return nil
		}
		if c.active == nil {
			c.active = map[*yaml.Node]bool{}
		}
		c.active[t] = true
		v := c.Value(t)
		delete(c.active, t)
		return v
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			c.path = append(c.path, IndexElem(i))
			out = append(out, c.Value(e))
			c.path = c.path[:len(c.path)-1]
		}
		return out
	case yaml.ScalarNode:
		return c.Scalar(n)
	}
	c.fail(n, "unsupported YAML node")
	return nil
}

// Deref follows alias nodes (a bounded number of times).
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; i < 100 && n != nil && n.Kind == yaml.AliasNode; i++ {
		n = n.Alias
	}
	return n
}

func (c *YAMLConverter) mapping(n *yaml.Node) any {
	m := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := Deref(kn)
		if k == nil || k.Kind != yaml.ScalarNode {
			c.fail(kn, "a mapping key must be a string, not a list or mapping")
			return nil
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		if _, dup := m[k.Value]; dup {
			first := 0
			for j := 0; j < i; j += 2 {
				if d := Deref(n.Content[j]); d != nil && d.Kind == yaml.ScalarNode && d.Value == k.Value {
					first = n.Content[j].Line + c.lineOffset
					break
				}
			}
			c.path = append(c.path, KeyElem(k.Value))
			c.fail(kn, "key given twice (first at line %d)", first)
			return nil
		}
		c.path = append(c.path, KeyElem(k.Value))
		m[c.intern(k.Value)] = c.Value(vn)
		c.path = c.path[:len(c.path)-1]
		if c.Prob != nil {
			return nil
		}
	}
	// Merge keys (<<: *anchor, or a list of them): explicit keys win, then
	// earlier merged mappings over later ones.
	for _, mn := range merges {
		src := Deref(mn)
		var parts []*yaml.Node
		switch {
		case src != nil && src.Kind == yaml.MappingNode:
			parts = []*yaml.Node{mn}
		case src != nil && src.Kind == yaml.SequenceNode:
			parts = src.Content
		default:
			c.fail(mn, "the value of a merge key (<<) must be a mapping or a list of mappings")
			return nil
		}
		for _, p := range parts {
			if d := Deref(p); d == nil || d.Kind != yaml.MappingNode {
				c.fail(p, "the value of a merge key (<<) must be a mapping or a list of mappings")
				return nil
			}
			merged, _ := c.Value(p).(map[string]any)
			if c.Prob != nil {
				return nil
			}
			for k, v := range merged {
				if _, ok := m[k]; !ok {
					m[k] = v
				}
			}
		}
	}
	return m
}

// Scalar is the scalar node n as a generic value.
func (c *YAMLConverter) Scalar(n *yaml.Node) any {
	v := n.Value
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		switch strings.ToLower(v) {
		case "true", "yes", "on", "y":
			return true
		case "false", "no", "off", "n":
			return false
		}
		c.fail(n, "%s is not a bool", strconv.Quote(Clip(v)))
		return nil
	case "!!int":
		plain := strings.ReplaceAll(v, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return u
		}
		c.fail(n, "%s is not an integer", strconv.Quote(Clip(v)))
		return nil
	case "!!float":
		switch strings.ToLower(strings.TrimPrefix(v, "+")) {
		case ".inf", "-.inf", ".nan":
			c.fail(n, "%s has no JSON representation", v)
			return nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			c.fail(n, "%s is not a number JSON can hold", strconv.Quote(Clip(v)))
			return nil
		}
		return f
	}
	// !!str, !!timestamp (kept as written, as Kubernetes parses times from
	// strings), !!binary (kept as base64, as JSON carries bytes) and any
	// other tag.
	if len(v) <= 16 {
		return c.intern(v)
	}
	return v
}

// YAMLLocator finds the line of a field path in a YAML node tree.
type YAMLLocator struct {
	Root       *yaml.Node
	LineOffset int
}

// Line is the line of the field at p, 0 when not found.
func (l YAMLLocator) Line(p FieldPath) int {
	n := Deref(l.Root)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = Deref(n.Content[0])
	}
	for _, e := range p {
		if n == nil {
			return 0
		}
		var next *yaml.Node
		switch {
		case n.Kind == yaml.SequenceNode && e.IsIndex():
			if e.Index < len(n.Content) {
				next = n.Content[e.Index]
			}
		case n.Kind == yaml.MappingNode && !e.IsIndex():
			next = MappingValue(n, e.Key)
		}
		if next == nil {
			return 0
		}
		n = Deref(next)
	}
	if n == nil || n.Line <= 0 {
		return 0
	}
	return n.Line + l.LineOffset
}

// MappingValue finds key's value in a mapping node, looking through merge
// keys (each merged mapping once, so that shared anchors cost nothing).
func MappingValue(n *yaml.Node, k string) *yaml.Node {
	var seen map[*yaml.Node]bool
	var find func(n *yaml.Node) *yaml.Node
	find = func(n *yaml.Node) *yaml.Node {
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn := Deref(n.Content[i])
			if kn == nil || kn.Kind != yaml.ScalarNode {
				continue
			}
			if kn.ShortTag() == "!!merge" {
				merges = append(merges, n.Content[i+1])
			} else if kn.Value == k {
				return n.Content[i+1]
			}
		}
		if len(merges) == 0 {
			return nil
		}
		if seen == nil {
			seen = map[*yaml.Node]bool{n: true}
		}
		for _, mn := range merges {
			src := Deref(mn)
			if src == nil {
				continue
			}
			parts := []*yaml.Node{src}
			if src.Kind == yaml.SequenceNode {
				parts = src.Content
			}
			for _, p := range parts {
				if d := Deref(p); d != nil && d.Kind == yaml.MappingNode && !seen[d] {
					seen[d] = true
					if v := find(d); v != nil {
						return v
					}
				}
			}
		}
		return nil
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return find(n)
}

// ScalarValue returns the value of a top-level scalar key of a mapping node
// ("" when absent or not a scalar).
func ScalarValue(n *yaml.Node, k string) (string, bool) {
	v := Deref(MappingValue(n, k))
	if v == nil || v.Kind != yaml.ScalarNode {
		return "", false
	}
	return v.Value, true
}

// Reset readies the converter for the next document.
func (c *YAMLConverter) Reset(lineOffset int) {
	c.lineOffset = lineOffset
	c.Prob = nil
	c.path = c.path[:0]
	clear(c.active)
}
