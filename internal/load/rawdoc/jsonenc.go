package rawdoc

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MarshalGeneric is json.Marshal for the generic values the YAML converter
// makes (map[string]any, []any, string, int64, uint64, float64, bool,
// nil), into buf. The text decodes to exactly what json.Marshal's text
// decodes to — keys in the same sorted order (which decides what wins when
// encoding/json matches two keys to one field case-insensitively), numbers
// formatted alike, invalid UTF-8 as U+FFFD — but without reflection: the
// YAML→JSON step of every object was a fifth of decoding a large cluster.
// Any other value falls back to json.Marshal.
func MarshalGeneric(buf []byte, v any) ([]byte, error) {
	e := genericEncoder{buf: buf}
	if !e.value(v) {
		return json.Marshal(v)
	}
	return e.buf, nil
}

type genericEncoder struct {
	buf  []byte
	keys []string
}

// value appends v; false when v holds a type it does not handle.
func (e *genericEncoder) value(v any) bool {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case string:
		e.str(x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case uint64:
		e.buf = strconv.AppendUint(e.buf, x, 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return false
		}
		e.float(x)
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if !e.value(el) {
				return false
			}
		}
		e.buf = append(e.buf, ']')
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return true
		}
		// The keys of nested maps share one scratch slice: sorted keys
		// are taken from its end and released on return.
		base := len(e.keys)
		for k := range x {
			e.keys = append(e.keys, k)
		}
		keys := e.keys[base:]
		slices.Sort(keys)
		e.buf = append(e.buf, '{')
		for i := range keys {
			k := e.keys[base+i]
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.str(k)
			e.buf = append(e.buf, ':')
			if !e.value(x[k]) {
				return false
			}
		}
		e.buf = append(e.buf, '}')
		e.keys = e.keys[:base]
	default:
		return false
	}
	return true
}

// float is encoding/json's floatEncoder for 64-bit floats.
func (e *genericEncoder) float(f float64) {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(e.buf)
		if n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str appends s as a JSON string that decodes to what json.Marshal's
// encoding of s decodes to: invalid UTF-8 bytes become U+FFFD.
func (e *genericEncoder) str(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch b {
			case '"', '\\':
				e.buf = append(e.buf, '\\', b)
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}
