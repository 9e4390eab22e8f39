package load

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

func skipSpace(b []byte, i int) int {
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

// valueEnd returns the index after the value starting at b[i].
func valueEnd(b []byte, i int) int {
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

// decodeKey decodes a JSON string literal.
func decodeKey(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return ""
	}
	return s
}

// eachField calls fn for every member of the object at b[i:], with the
// member's key and the start and end of its value, until fn returns false.
func eachField(b []byte, i int, fn func(k string, start, end int) bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		ke := stringEnd(b, i)
		k := decodeKey(b[i:ke])
		i = skipSpace(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return
		}
		end := valueEnd(b, i)
		if !fn(k, i, end) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// eachElement calls fn for every element of the array at b[i:].
func eachElement(b []byte, i int, fn func(n, start, end int) bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return
	}
	for n := 0; ; n++ {
		i = skipSpace(b, i)
		if i >= len(b) {
			return
		}
		end := valueEnd(b, i)
		if !fn(n, i, end) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

// jsonPathAt returns the path of the innermost value containing offset pos.
func jsonPathAt(b []byte, pos int) fieldPath {
	var p fieldPath
	i := skipSpace(b, 0)
	for i < len(b) {
		next := -1
		switch b[i] {
		case '{':
			eachField(b, i, func(k string, start, end int) bool {
				if start <= pos && pos < end {
					p = append(p, keyElem(k))
					next = start
					return false
				}
				return start <= pos
			})
		case '[':
			eachElement(b, i, func(n, start, end int) bool {
				if start <= pos && pos < end {
					p = append(p, indexElem(n))
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
func jsonOffsetOf(b []byte, p fieldPath) int {
	i := skipSpace(b, 0)
	for _, e := range p {
		next := -1
		if e.isIndex() {
			eachElement(b, i, func(n, start, _ int) bool {
				if n == e.index {
					next = start
					return false
				}
				return true
			})
		} else {
			// The last member with the key wins, as in encoding/json.
			eachField(b, i, func(k string, start, _ int) bool {
				if k == e.key {
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

// jsonLocator finds the line of a field path in a JSON text that starts at
// line first.
type jsonLocator struct {
	text  []byte
	first int
}

func (l jsonLocator) line(p fieldPath) int {
	off := jsonOffsetOf(l.text, p)
	if off < 0 || off > len(l.text) {
		return 0
	}
	return l.first + bytes.Count(l.text[:off], []byte{'\n'})
}
