// Package textsafe keeps what the input says from steering the terminal:
// control characters (C0 but newline and tab, DEL, C1) and the Unicode
// bidirectional controls that reorder a line (U+202E RIGHT-TO-LEFT OVERRIDE
// and its kin, Unicode TR #9) are written as Go escapes (\x1b, \u202e).
// Names on a real cluster cannot hold them (the API server refuses such
// names), but the twin also prints what it was given.
//
// kubectl's table printer escapes ESC and CR only (cli-runtime
// pkg/printers/terminal.go); text here goes through one Writer instead.
// JSON and YAML are data and are written through Raw.
package textsafe

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// Unsafe reports whether r is written escaped.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\n' && r != '\t'
	case r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional controls (ALM, LRM, RLM, LRE … RLO, LRI … PDI)
	}
	return false
}

// Escape returns s with its unsafe runes, and bytes that are not UTF-8,
// escaped; s itself when there are none.
func Escape(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Unsafe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return string(appendEscaped(nil, []byte(s), true))
}

// appendEscaped appends p escaped.
func appendEscaped(dst, p []byte, final bool) []byte {
	dst, _ = appendEscapedN(dst, p, final)
	return dst
}

// appendEscapedN appends p escaped and returns how much of p it read: all
// of it when final, else up to an incomplete rune at its end.
func appendEscapedN(dst, p []byte, final bool) ([]byte, int) {
	i := 0
	for i < len(p) {
		c := p[i]
		if c < utf8.RuneSelf {
			if Unsafe(rune(c)) {
				dst = append(dst, quoted(rune(c))...)
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		if !final && !utf8.FullRune(p[i:]) {
			return dst, i
		}
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, `\x`...)
			dst = append(dst, hex[c>>4], hex[c&0xf])
		case Unsafe(r):
			dst = append(dst, quoted(r)...)
		default:
			dst = append(dst, p[i:i+n]...)
		}
		i += n
	}
	return dst, i
}

const hex = "0123456789abcdef"

// quoted is r as strconv quotes it, without the quotes: \x1b, \r, \u202e.
func quoted(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}

// Writer escapes what is written through it. A rune split between two
// writes is held until the next write or Flush.
type Writer struct {
	w    io.Writer
	held []byte
	buf  []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) Write(p []byte) (int, error) {
	if len(w.held) == 0 && plainASCII(p) {
		if _, err := w.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	in := p
	if len(w.held) > 0 {
		in = append(w.held, p...)
	}
	out, n := appendEscapedN(w.buf[:0], in, false)
	w.held = append(w.held[:0:0], in[n:]...)
	w.buf = out[:0]
	if _, err := w.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plainASCII reports whether p is printable ASCII, newlines and tabs: the
// common case, written as it is.
func plainASCII(p []byte) bool {
	for _, c := range p {
		if c >= 0x7f || c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
	}
	return true
}

// Flush writes a held incomplete rune, escaped.
func (w *Writer) Flush() error {
	if len(w.held) == 0 {
		return nil
	}
	out := appendEscaped(nil, w.held, true)
	w.held = nil
	_, err := w.w.Write(out)
	return err
}

// Raw returns the writer under w when w is a Writer, for output that is
// data (JSON, YAML) and escapes by its own rules.
func Raw(w io.Writer) io.Writer {
	if t, ok := w.(*Writer); ok {
		if err := t.Flush(); err != nil {
			return t
		}
		return t.w
	}
	return w
}
