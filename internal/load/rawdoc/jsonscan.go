package rawdoc

import (
	"bytes"
	"encoding/json"
)

// A small JSON scanner that finds where values start and end without
// decoding them. It is applied to text encoding/json has validated (except
// valueEnd, which only splits a stream and lets json report syntax errors),
// and every index is bounds-checked so that malformed text cannot make it
// fail.

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isJSONDelim(c byte) bool {
	switch c {
	case ',', ':', '{', '}', '[', ']', '"':
		return true
	}
	return isJSONSpace(c)
}

// SkipSpace is the offset of the first non-space byte from i.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); {
		switch b[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(b)
}

// ValueEnd returns the index after the value starting at b[i].
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	j := i
	for j < len(b) && !isJSONDelim(b[j]) {
		j++
	}
	if j == i {
		return i + 1
	}
	return j
}

// DecodeKey decodes a JSON string literal.
func DecodeKey(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

// EachField calls fn for every member of the object at b[i:], with the
// member's key and the start and end of its value, until fn returns false.
func EachField(b []byte, i int, fn func(k string, start, end int) bool) {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		ke := stringEnd(b, i)
		k := DecodeKey(b[i:ke])
		i = SkipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = SkipSpace(b, i+1)
		if i >= len(b) {
			return
		}
		end := ValueEnd(b, i)
		if !fn(k, i, end) {
			return
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// EachElement calls fn for every element of the array at b[i:].
func EachElement(b []byte, i int, fn func(n, start, end int) bool) {
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return
	}
	for n := 0; ; n++ {
		i = SkipSpace(b, i)
		if i >= len(b) {
			return
		}
		end := ValueEnd(b, i)
		if !fn(n, i, end) {
			return
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// JSONPathAt returns the path of the innermost value containing offset pos.
func JSONPathAt(b []byte, pos int) FieldPath {
	var p FieldPath
	i := SkipSpace(b, 0)
	for i < len(b) {
		next := -1
		switch b[i] {
		case '{':
			EachField(b, i, func(k string, start, end int) bool {
				if start <= pos && pos < end {
					p = append(p, KeyElem(k))
					next = start
					return false
				}
				return start <= pos
			})
		case '[':
			EachElement(b, i, func(n, start, end int) bool {
				if start <= pos && pos < end {
					p = append(p, IndexElem(n))
					next = start
					return false
				}
				return start <= pos
			})
		}
		if next < 0 {
			break
		}
		i = next
	}
	return p
}

// jsonOffsetOf returns where the value at path p starts, or -1.
func jsonOffsetOf(b []byte, p FieldPath) int {
	i := SkipSpace(b, 0)
	for _, e := range p {
		next := -1
		if e.IsIndex() {
			EachElement(b, i, func(n, start, _ int) bool {
				if n == e.Index {
					next = start
					return false
				}
				return true
			})
		} else {
			// The last member with the key wins, as in encoding/json.
			EachField(b, i, func(k string, start, _ int) bool {
				if k == e.Key {
					next = start
				}
				return true
			})
		}
		if next < 0 {
			return -1
		}
		i = next
	}
	return i
}

// JSONLocator finds the line of a field path in a JSON text that starts at
// line first.
type JSONLocator struct {
	Text  []byte
	First int
}

// Line is the line of the field at p, 0 when not found.
func (l JSONLocator) Line(p FieldPath) int {
	off := jsonOffsetOf(l.Text, p)
	if off < 0 || off > len(l.Text) {
		return 0
	}
	return l.First + bytes.Count(l.Text[:off], []byte{'\n'})
}
