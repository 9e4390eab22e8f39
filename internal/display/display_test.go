package display

import (
	"bytes"
	"testing"
)

func TestFitCutsWideLinesWithAMarker(t *testing.T) {
	cases := []struct {
		name  string
		style Style
		in    string
		want  string
	}{
		{"not a terminal: unchanged", Plain, "abcdefghij\n", "abcdefghij\n"},
		{"a short line is kept", Style{Width: 10, Unicode: true}, "abc\n", "abc\n"},
		{"a line of exactly the width is kept", Style{Width: 5, Unicode: true}, "abcde\n", "abcde\n"},
		{"a wide line ends with an ellipsis", Style{Width: 5, Unicode: true}, "abcdefgh\nxy\n", "abcd…\nxy\n"},
		{"in ASCII the marker is >", Style{Width: 5}, "abcdefgh", "abcd>"},
		{"runes count as one column", Style{Width: 4, Unicode: true}, "✓✓✓✓✓\n", "✓✓✓…\n"},
		{"colour takes no width", Style{Width: 4, Unicode: true}, "\x1b[31mabcdef\x1b[0m\n", "\x1b[31mabc…\x1b[0m\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.style.Fit([]byte(tc.in))); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAStreamThatIsNoTerminalGetsNoColourAndASCII(t *testing.T) {
	s := Detect(&bytes.Buffer{}, func(string) string { return "" })
	if s != Plain {
		t.Errorf("a buffer is styled %+v", s)
	}
	if got := s.Paint(Red, "x"); got != "x" {
		t.Errorf("painted %q without colour", got)
	}
	if got := (Style{Color: true}).Paint(Red, "x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("painted %q", got)
	}
}

func TestATerminalHasColourUnlessNoColorOrADumbTerminal(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"a terminal", map[string]string{"TERM": "xterm-256color"}, true},
		{"NO_COLOR set", map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := terminal(80, func(k string) string { return tc.env[k] })
			if s.Color != tc.want || !s.Unicode || s.Width != 80 {
				t.Errorf("style %+v, want colour %v", s, tc.want)
			}
		})
	}
}
