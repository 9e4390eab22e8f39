package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/display"
)

// withStyle runs the commands as on a terminal of the style.
func withStyle(t *testing.T, s display.Style) {
	t.Helper()
	saved := outStyle
	outStyle = s
	t.Cleanup(func() { outStyle = saved })
}

func TestOnANarrowTerminalTablesFitAndWideShowsEverything(t *testing.T) {
	withStyle(t, display.Style{Terminal: true, Unicode: true, Width: 60})
	cases := []struct {
		name    string
		args    []string
		fits    bool
		snippet string
	}{
		{"a table is cut to the width", []string{"get", "pods", "-A", "--lab"}, true, "…"},
		{"the reach matrix is cut to the width", []string{"reach", "-A", "-o", "matrix", "--lab"}, true, "✓"},
		{"-o wide prints whole lines", []string{"get", "pods", "-A", "-o", "wide", "--lab"}, false, "NOMINATED NODE"},
		{"json is never cut", []string{"get", "pods", "-A", "-o", "json", "--lab"}, false, `"apiVersion"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			widest := 0
			for _, l := range strings.Split(out, "\n") {
				widest = max(widest, utf8.RuneCountInString(l))
			}
			if tc.fits && widest > 60 {
				t.Errorf("a line of %d columns on a terminal of 60", widest)
			}
			if !tc.fits && widest <= 60 {
				t.Errorf("the widest line has %d columns: was it cut?", widest)
			}
			if !strings.Contains(out, tc.snippet) {
				t.Errorf("no %q in:\n%s", tc.snippet, out)
			}
		})
	}
}

func TestCheckPaintsSeveritiesOnlyWithColour(t *testing.T) {
	args := []string{"check", "-f", "../../examples/main-cluster", "--expect-windows"}
	withStyle(t, display.Style{Terminal: true, Unicode: true, Color: true})
	out, _, _ := run(t, "", args...)
	if !strings.Contains(out, "\x1b[1;31mErrors (") || !strings.Contains(out, "\x1b[31mHYB001\x1b[0m") {
		t.Errorf("no red errors in:\n%q", out)
	}
	withStyle(t, display.Plain)
	out, _, _ = run(t, "", args...)
	if strings.Contains(out, "\x1b") {
		t.Errorf("colour without a terminal:\n%q", out)
	}
}
