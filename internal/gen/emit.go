package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// encoder writes objects one at a time as a YAML stream ("---" between
// documents) or as the items of one v1 List in JSON, the two shapes
// `kubectl get -o yaml|json` prints and -f reads back. Nothing is kept
// between documents but a scratch buffer.
//
// Each object is marshalled with encoding/json (so field names and
// omitempty are the API types' own) and the JSON is then re-emitted without
// null members ("creationTimestamp": null, a stub's "containers": null) and
// without an empty top-level metadata or status. YAML keys keep the order of
// the Go structs (apiVersion, kind, metadata, spec, status); strings that a
// YAML resolver could read as anything else are double-quoted.
type encoder struct {
	w      io.Writer
	format Format
	docs   int
	buf    []byte
	out    []byte
	err    error
	// header is written once before the first document (YAML: comment lines).
	header string
	opened bool
	// single writes JSON as one object rather than a List (one document).
	single bool
}

func newEncoder(w io.Writer, format Format, header string) *encoder {
	return &encoder{w: w, format: format, header: header}
}

// put writes one object.
func (e *encoder) put(obj any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(obj)
	if err != nil {
		e.err = fmt.Errorf("encoding %T: %w", obj, err)
		return
	}
	e.out = e.out[:0]
	if !e.opened {
		e.opened = true
		switch {
		case e.format == FormatJSON && !e.single:
			e.out = append(e.out, `{"apiVersion":"v1","kind":"List","items":[`...)
			e.out = append(e.out, '\n')
		case e.format != FormatJSON:
			// JSON has no comments: the header is YAML's only.
			e.out = append(e.out, e.header...)
		}
	}
	if e.format == FormatJSON {
		if e.docs > 0 {
			e.out = append(e.out, ",\n"...)
		}
		c := conv{in: b, out: e.out}
		c.jsonValue(0)
		e.out = c.out
	} else {
		if e.docs > 0 {
			e.out = append(e.out, "---\n"...)
		}
		c := conv{in: b, out: e.out}
		c.yamlObject(0, false, 0)
		e.out = c.out
	}
	e.docs++
	_, e.err = e.w.Write(e.out)
}

// close ends the stream (the JSON List's closing brackets).
func (e *encoder) close() error {
	if e.err != nil {
		return e.err
	}
	switch {
	case e.format == FormatJSON && e.single:
		if e.opened {
			_, e.err = io.WriteString(e.w, "\n")
		}
	case e.format == FormatJSON && !e.opened:
		_, e.err = io.WriteString(e.w, `{"apiVersion":"v1","kind":"List","items":[]}`+"\n")
	case e.format == FormatJSON:
		_, e.err = io.WriteString(e.w, "\n]}\n")
	case !e.opened:
		_, e.err = io.WriteString(e.w, e.header)
	}
	return e.err
}

// conv re-emits compact JSON as produced by encoding/json (no insignificant
// whitespace, valid by construction).
type conv struct {
	in  []byte
	pos int
	out []byte
}

// valueEnd returns the index after the value starting at i.
func (c *conv) valueEnd(i int) int {
	switch c.in[i] {
	case '"':
		return stringEnd(c.in, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(c.in); j++ {
			switch c.in[j] {
			case '"':
				j = stringEnd(c.in, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(c.in)
	}
	j := i
	for j < len(c.in) && c.in[j] != ',' && c.in[j] != '}' && c.in[j] != ']' {
		j++
	}
	return j
}

func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// member is one key/value of an object: byte ranges into in.
type member struct{ k0, k1, v0, v1 int }

// members lists an object's members, skipping nulls; at depth 0 (the
// document) an empty metadata or status is skipped too.
func (c *conv) members(i, depth int, dst []member) ([]member, int) {
	j := i + 1 // after '{'
	for c.in[j] != '}' {
		k1 := stringEnd(c.in, j)
		v0 := k1 + 1 // after ':'
		v1 := c.valueEnd(v0)
		val := c.in[v0:v1]
		keep := !bytes.Equal(val, []byte("null"))
		if keep && string(val) == `""` && string(c.in[j:k1]) == `"uid"` {
			keep = false // an owner reference written by hand has no uid
		}
		if keep && depth == 0 {
			switch string(c.in[j+1 : k1-1]) {
			case "metadata":
				keep = !c.zero(v0, v1)
			case "status":
				keep = !c.zero(v0, v1)
			}
		}
		if keep {
			dst = append(dst, member{j, k1, v0, v1})
		}
		j = v1
		if c.in[j] == ',' {
			j++
		}
	}
	// TypeMeta declares kind before apiVersion; kubectl prints apiVersion first.
	if depth == 0 && len(dst) >= 2 && c.key(dst[0]) == "kind" && c.key(dst[1]) == "apiVersion" {
		dst[0], dst[1] = dst[1], dst[0]
	}
	return dst, j + 1
}

func (c *conv) key(m member) string { return string(c.in[m.k0+1 : m.k1-1]) }

// zero reports whether a value holds nothing but zero values: null, 0,
// false, "", and objects and arrays of those (an unset status).
func (c *conv) zero(i, j int) bool {
	switch v := string(c.in[i:j]); v {
	case "null", "0", "false", `""`, "{}", "[]":
		return true
	}
	switch c.in[i] {
	case '{':
		ms, _ := c.members(i, 1, nil)
		for _, m := range ms {
			if !c.zero(m.v0, m.v1) {
				return false
			}
		}
		return true
	case '[':
		els, _ := c.elements(i)
		for _, e := range els {
			if !c.zero(e[0], e[1]) {
				return false
			}
		}
		return true
	}
	return false
}

// elements lists an array's elements.
func (c *conv) elements(i int) ([][2]int, int) {
	var out [][2]int
	j := i + 1
	for c.in[j] != ']' {
		e := c.valueEnd(j)
		out = append(out, [2]int{j, e})
		j = e
		if c.in[j] == ',' {
			j++
		}
	}
	return out, j + 1
}

// jsonValue writes the value at pos compactly, without null members.
func (c *conv) jsonValue(depth int) {
	i := c.pos
	switch c.in[i] {
	case '{':
		ms, end := c.members(i, depth, nil)
		c.out = append(c.out, '{')
		for n, m := range ms {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			c.out = append(c.out, c.in[m.k0:m.k1]...)
			c.out = append(c.out, ':')
			c.pos = m.v0
			c.jsonValue(depth + 1)
		}
		c.out = append(c.out, '}')
		c.pos = end
	case '[':
		els, end := c.elements(i)
		c.out = append(c.out, '[')
		for n, e := range els {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			c.pos = e[0]
			c.jsonValue(depth + 1)
		}
		c.out = append(c.out, ']')
		c.pos = end
	default:
		end := c.valueEnd(i)
		c.out = append(c.out, c.in[i:end]...)
		c.pos = end
	}
}

func (c *conv) indent(n int) {
	for ; n > 0; n-- {
		c.out = append(c.out, ' ')
	}
}

// yamlObject writes the object at c.pos as a block mapping at indent; with
// inline the first key continues the current line (after "- ").
func (c *conv) yamlObject(indent int, inline bool, depth int) {
	ms, end := c.members(c.pos, depth, nil)
	for n, m := range ms {
		if n > 0 || !inline {
			c.indent(indent)
		}
		c.scalar(m.k0, m.k1)
		c.out = append(c.out, ':')
		c.yamlMemberValue(m.v0, m.v1, indent, depth+1)
	}
	c.pos = end
}

// yamlMemberValue writes the value of a mapping member, starting after "key:".
func (c *conv) yamlMemberValue(v0, v1, indent, depth int) {
	switch c.in[v0] {
	case '{':
		if ms, _ := c.members(v0, depth, nil); len(ms) == 0 {
			c.out = append(c.out, " {}\n"...)
			return
		}
		c.out = append(c.out, '\n')
		c.pos = v0
		c.yamlObject(indent+2, false, depth)
	case '[':
		if v1-v0 == 2 {
			c.out = append(c.out, " []\n"...)
			return
		}
		c.out = append(c.out, '\n')
		c.pos = v0
		c.yamlArray(indent, depth)
	default:
		c.out = append(c.out, ' ')
		c.scalar(v0, v1)
		c.out = append(c.out, '\n')
	}
}

// yamlArray writes the array at c.pos as a block sequence at indent
// (kubectl's style: "- " at the parent key's indentation).
func (c *conv) yamlArray(indent, depth int) {
	els, end := c.elements(c.pos)
	for _, e := range els {
		c.indent(indent)
		c.out = append(c.out, "- "...)
		switch c.in[e[0]] {
		case '{':
			if ms, _ := c.members(e[0], depth, nil); len(ms) == 0 {
				c.out = append(c.out, "{}\n"...)
				continue
			}
			c.pos = e[0]
			c.yamlObject(indent+2, true, depth+1)
		case '[':
			// A list in a list: JSON's flow form is valid YAML.
			c.pos = e[0]
			c.jsonValue(depth + 1)
			c.out = append(c.out, '\n')
		default:
			c.scalar(e[0], e[1])
			c.out = append(c.out, '\n')
		}
	}
	c.pos = end
}

// scalar writes a JSON scalar (or key) as YAML: numbers, booleans and safe
// strings plain, other strings in JSON's double-quoted form, which YAML
// reads the same.
func (c *conv) scalar(i, j int) {
	v := c.in[i:j]
	if v[0] != '"' {
		c.out = append(c.out, v...)
		return
	}
	s := v[1 : len(v)-1]
	if plainSafe(s) {
		c.out = append(c.out, s...)
		return
	}
	c.out = append(c.out, v...)
}

// plainSafe reports whether a string can be written unquoted and still be
// read back as that string by YAML 1.1 and 1.2 resolvers: it starts with a
// letter, '/' or '_', holds only [A-Za-z0-9._/:-], does not end with ':'
// and is not a boolean or null word (yes, no, on, off, y, n, true, false,
// null in any case).
func plainSafe(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	c0 := s[0]
	if !(c0 >= 'a' && c0 <= 'z' || c0 >= 'A' && c0 <= 'Z' || c0 == '/' || c0 == '_') {
		return false
	}
	for _, ch := range s {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case ch == '.', ch == '_', ch == '/', ch == '-', ch == ':':
		default:
			return false
		}
	}
	if s[len(s)-1] == ':' {
		return false
	}
	if len(s) <= 5 {
		switch string(bytes.ToLower(s)) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}
