// Package display decides how text output looks on the terminal it goes
// to: colour only on a terminal and never with NO_COLOR (https://no-color.org)
// or TERM=dumb, Unicode symbols only on a terminal (plain ASCII in files,
// pipes and CI logs), and lines cut to the terminal's width.
package display

import (
	"bytes"
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/term"
)

// Style is how to print to one stream.
type Style struct {
	// Terminal: the stream is a terminal.
	Terminal bool
	// Color: ANSI colours may be used.
	Color bool
	// Unicode: symbols beyond ASCII may be used.
	Unicode bool
	// Width is the terminal's width in columns; 0 when not a terminal.
	Width int
}

// Plain is the style of anything that is not a terminal.
var Plain = Style{}

// Detect reads the style of w: a terminal's when w is an *os.File on one.
// getenv is os.Getenv (tests pass their own).
func Detect(w io.Writer, getenv func(string) string) Style {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return Plain
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		width = 0
	}
	return terminal(width, getenv)
}

// terminal is the style of a terminal width columns wide.
func terminal(width int, getenv func(string) string) Style {
	return Style{Terminal: true, Unicode: true, Width: width,
		Color: getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
}

// ANSI colours (SGR codes).
const (
	Red    = "31"
	Yellow = "33"
	Green  = "32"
	Cyan   = "36"
	Bold   = "1"
)

// Paint wraps text in the colour when the style has colour.
func (s Style) Paint(code, text string) string {
	if !s.Color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Symbol is unicode on a Unicode stream, else ascii.
func (s Style) Symbol(unicode, ascii string) string {
	if s.Unicode {
		return unicode
	}
	return ascii
}

// Fit cuts each line of text wider than the terminal to its width, ending
// it with a marker ("…", or ">" in ASCII); text itself when the style has
// no width. Colour sequences count no width.
func (s Style) Fit(text []byte) []byte {
	if s.Width <= 0 {
		return text
	}
	marker := s.Symbol("…", ">")
	lines := bytes.SplitAfter(text, []byte("\n"))
	var out []byte
	for _, l := range lines {
		nl := bytes.HasSuffix(l, []byte("\n"))
		l = bytes.TrimSuffix(l, []byte("\n"))
		out = append(out, cut(l, s.Width, marker)...)
		if nl {
			out = append(out, '\n')
		}
	}
	return out
}

// cut keeps the first width-1 columns and the marker when the line is
// wider than width.
func cut(line []byte, width int, marker string) []byte {
	if visible(line) <= width {
		return line
	}
	var out []byte
	cols := 0
	for i := 0; i < len(line); {
		if line[i] == 0x1b { // an escape sequence: copy it whole
			j := bytes.IndexByte(line[i:], 'm')
			if j < 0 {
				break
			}
			out = append(out, line[i:i+j+1]...)
			i += j + 1
			continue
		}
		if cols == width-1 {
			break
		}
		_, n := utf8.DecodeRune(line[i:])
		out = append(out, line[i:i+n]...)
		cols++
		i += n
	}
	out = append(out, marker...)
	if bytes.Contains(line, []byte{0x1b}) {
		out = append(out, "\x1b[0m"...)
	}
	return out
}

// visible is the line's width in columns, escape sequences left out.
func visible(line []byte) int {
	n := 0
	for i := 0; i < len(line); {
		if line[i] == 0x1b {
			j := bytes.IndexByte(line[i:], 'm')
			if j < 0 {
				return n
			}
			i += j + 1
			continue
		}
		_, size := utf8.DecodeRune(line[i:])
		i += size
		n++
	}
	return n
}
