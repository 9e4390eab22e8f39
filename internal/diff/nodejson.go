package diff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// A node's changes are most of a large result's JSON: at 1,000 nodes a
// change of the pools' encapsulation lists some four million route lines.
// json.Encoder reaches each through reflection and then indents the whole
// value a second time; NodeJSON writes the same bytes in one pass, reading
// the keys and their order from NodeDiff's and Lines' struct tags.

// jsonField is one field of a struct as encoding/json writes it: its key,
// and whether it is left out when zero (omitzero) or empty (omitempty).
type jsonField struct {
	index               int
	key                 string
	omitZero, omitEmpty bool
}

// jsonFields are the struct's exported fields in order, or false when one
// has a kind nodeJSON does not write (a string, a []string, or Lines).
func jsonFields(t reflect.Type) ([]jsonField, bool) {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		jf := jsonField{index: i, key: name}
		for _, o := range strings.Split(opts, ",") {
			jf.omitZero = jf.omitZero || o == "omitzero"
			jf.omitEmpty = jf.omitEmpty || o == "omitempty"
		}
		switch {
		case f.Type.Kind() == reflect.String:
		case f.Type == reflect.TypeFor[[]string]():
		case f.Type == reflect.TypeFor[Lines]():
		default:
			return nil, false
		}
		out = append(out, jf)
	}
	return out, true
}

var (
	nodeFields, nodeOK   = jsonFields(reflect.TypeFor[NodeDiff]())
	linesFields, linesOK = jsonFields(reflect.TypeFor[Lines]())
)

// NodeJSON writes nodes' changes as json.Encoder does with SetIndent(prefix,
// "  "), without the first line's prefix and the trailing newline. One
// NodeJSON serves every node of an output; it is not safe for concurrent
// use.
type NodeJSON struct {
	buf  bytes.Buffer
	enc  *json.Encoder
	html bool
}

// NewNodeJSON makes a NodeJSON that escapes '<', '>' and '&' as
// json.Encoder's SetEscapeHTML(escapeHTML) says.
func NewNodeJSON(escapeHTML bool) *NodeJSON {
	x := &NodeJSON{html: escapeHTML}
	x.enc = json.NewEncoder(&x.buf)
	x.enc.SetEscapeHTML(escapeHTML)
	return x
}

// Write writes the node at the prefix.
func (x *NodeJSON) Write(bw *bufio.Writer, n *NodeDiff, prefix string) error {
	if !nodeOK || !linesOK {
		return x.Encode(bw, n, prefix)
	}
	nodeJSON(bw, x, reflect.ValueOf(n).Elem(), nodeFields, prefix)
	return nil
}

// Encode writes any value as Write writes a node, through json.Encoder;
// its buffer serves every value, so a value's encoding reuses the memory
// of the one before it.
func (x *NodeJSON) Encode(w io.Writer, v any, prefix string) error {
	x.buf.Reset()
	x.enc.SetIndent(prefix, "  ")
	if err := x.enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(x.buf.Bytes(), []byte("\n")))
	return err
}

// nodeJSON writes a struct value of the fields' kinds as json.Encoder with
// SetIndent(prefix, "  ") and HTML left unescaped does, without the first
// prefix and the trailing newline.
func nodeJSON(bw *bufio.Writer, x *NodeJSON, v reflect.Value, fields []jsonField, prefix string) {
	inner := prefix + "  "
	n := 0
	for _, f := range fields {
		fv := v.Field(f.index)
		if (f.omitZero && fv.IsZero()) || (f.omitEmpty && fv.Kind() == reflect.Slice && fv.Len() == 0) ||
			(f.omitEmpty && fv.Kind() == reflect.String && fv.Len() == 0) {
			continue
		}
		if n == 0 {
			bw.WriteString("{\n")
		} else {
			bw.WriteString(",\n")
		}
		n++
		bw.WriteString(inner)
		x.quote(bw, f.key)
		bw.WriteString(": ")
		switch fv.Kind() {
		case reflect.String:
			x.quote(bw, fv.String())
		case reflect.Slice:
			if fv.IsNil() {
				bw.WriteString("null")
				continue
			}
			lines := fv.Interface().([]string)
			if len(lines) == 0 {
				bw.WriteString("[]")
				continue
			}
			bw.WriteString("[\n")
			item := inner + "  "
			for i, l := range lines {
				if i > 0 {
					bw.WriteString(",\n")
				}
				bw.WriteString(item)
				x.quote(bw, l)
			}
			bw.WriteByte('\n')
			bw.WriteString(inner)
			bw.WriteByte(']')
		default:
			nodeJSON(bw, x, fv, linesFields, inner)
		}
	}
	if n == 0 {
		bw.WriteString("{}")
		return
	}
	bw.WriteByte('\n')
	bw.WriteString(prefix)
	bw.WriteByte('}')
}

// quote writes s as a JSON string: as it is between quotes when no byte
// needs escaping (printable ASCII but '"' and '\', and '<', '>' and '&'
// when HTML is escaped), else through the encoder.
func (x *NodeJSON) quote(bw *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || (x.html && (c == '<' || c == '>' || c == '&')) {
			x.buf.Reset()
			x.enc.SetIndent("", "")
			_ = x.enc.Encode(s) // a string always encodes
			bw.Write(x.buf.Bytes()[:x.buf.Len()-1])
			return
		}
	}
	bw.WriteByte('"')
	bw.WriteString(s)
	bw.WriteByte('"')
}
