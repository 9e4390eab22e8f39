package selector

import (
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	linux := map[string]string{"kubernetes.io/os": "linux", "kubernetes.io/hostname": "k8s-lab-node-1", "zone": "a"}
	windows := map[string]string{"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.26100"}
	none := map[string]string{}

	cases := []struct {
		name     string
		selector string
		labels   map[string]string
		want     bool
	}{
		{"an empty selector selects everything", "", none, true},
		{"all() selects a node without labels", "all()", none, true},
		{"all() tolerates blanks inside the parentheses", "all( )", none, true},
		{"global() selects everything", "global()", none, true},
		{"has() is true when the label is present", "has(zone)", linux, true},
		{"has() is false when the label is absent", "has(zone)", windows, false},
		{"== matches an equal value", "kubernetes.io/os == 'linux'", linux, true},
		{"== does not match another value", "kubernetes.io/os == 'linux'", windows, false},
		{"== with double quotes is the same", `kubernetes.io/os == "windows"`, windows, true},
		{"== on an absent label is false", "zone == 'a'", windows, false},
		{"!= on an absent label is true", "zone != 'a'", windows, true},
		{"!= on an equal value is false", "zone != 'a'", linux, false},
		{"in matches a member of the set", "kubernetes.io/os in {'windows', 'linux'}", linux, true},
		{"in does not match outside the set", "zone in {'b','c'}", linux, false},
		{"in on an absent label is false", "zone in {'a'}", windows, false},
		{"not in on an absent label is true", "zone not in {'a'}", windows, true},
		{"not in excludes a member", "zone not in {'a'}", linux, false},
		{"notin written as one word is accepted", "zone notin {'b'}", linux, true},
		{"an empty set never matches with in", "zone in {}", linux, false},
		{"a trailing comma in a set is accepted", "zone in {'a',}", linux, true},
		{"! negates an operation", "!has(zone)", windows, true},
		{"a double ! cancels out", "!!has(zone)", windows, false},
		{"&& needs both sides", "has(zone) && kubernetes.io/os == 'windows'", linux, false},
		{"|| needs one side", "has(zone) || kubernetes.io/os == 'windows'", windows, true},
		{"&& binds tighter than ||", "zone == 'x' && has(zone) || kubernetes.io/os == 'linux'", linux, true},
		{"parentheses override precedence", "zone == 'x' && (has(zone) || kubernetes.io/os == 'linux')", linux, false},
		{"! applies to a parenthesised expression", "!(has(zone) || has(nothing))", windows, true},
		{"contains matches a substring", "kubernetes.io/hostname contains 'node'", linux, true},
		{"starts with matches a prefix", "kubernetes.io/hostname starts with 'k8s-lab'", linux, true},
		{"ends with matches a suffix", "kubernetes.io/hostname ends with '-2'", linux, false},
		{"tabs count as blanks", "zone\t==\t'a'", linux, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sel, err := Parse(c.selector)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.selector, err)
			}
			if got := sel.Evaluate(c.labels); got != c.want {
				t.Errorf("Parse(%q).Evaluate(%v) = %v, want %v", c.selector, c.labels, got, c.want)
			}
			// The canonical form must select the same way.
			again, err := Parse(sel.String())
			if err != nil {
				t.Fatalf("re-parse of %q: %v", sel.String(), err)
			}
			if got := again.Evaluate(c.labels); got != c.want {
				t.Errorf("canonical %q evaluates to %v, want %v", sel.String(), got, c.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name     string
		selector string
		wantErr  string
	}{
		{"a single = is not an operator", "a = 'b'", "expected =="},
		{"a label needs an operator", "a", "unexpected end of string looking for op"},
		{"a label followed by a word that is no operator", "a is 'b'", `expected operator after label "a"`},
		{"a comparison needs a string", "a == b", "expected string"},
		{"an unterminated string", "a == 'b", "unterminated string"},
		{"a set needs braces", "a in 'b'", "expected set literal"},
		{"a set needs its closing brace", "a in {'b'", "expected }"},
		{"a parenthesis needs its partner", "(has(a)", "expected )"},
		{"trailing garbage after a complete expression", "has(a) has(b)", "unexpected content at end of selector"},
		{"a single & is not an operator", "has(a) & has(b)", "expected &&"},
		{"a single | is not an operator", "has(a) | has(b)", "expected ||"},
		{"has() needs a label", "has()", "expected identifier"},
		{"all() takes no arguments", "all(x)", "no closing ')' after all("},
		{"a newline is not whitespace", "has(a)\n", "expected identifier"},
		{"an && with nothing after it", "has(a) &&", "unexpected end of string looking for op"},
		{"a label longer than 512 characters", strings.Repeat("x", 513) + " == 'a'", "label too long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.selector)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", c.selector, err, c.wantErr)
			}
		})
	}
}

func TestCanonicalForm(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "all()"},
		{"a=='b'", `a == "b"`},
		{`a == 'say "hi"'`, `a == 'say "hi"'`},
		{"a in {'z','b','z'}", `a in {"b", "z"}`},
		{"!(has(a)||has(b))&&c!='d'", `!(has(a) || has(b)) && c != "d"`},
	}
	for _, c := range cases {
		sel, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		if got := sel.String(); got != c.want {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParse checks that the parser never panics, and that whatever it
// accepts renders to a canonical form that parses to itself and selects the
// same label sets.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "all()", "has(a)", "a == 'b'", `a != "b"`, "a in {'x', 'y'}", "a not in {}",
		"!(has(a) || b == 'c') && d contains 'e'", "x starts with 'p' || y ends with \"s\"",
		"global()", "kubernetes.io/os == 'linux'", "((a == 'b'))", "!!!has(z)",
	} {
		f.Add(s)
	}
	probes := []map[string]string{
		{}, {"a": "b"}, {"a": "x", "b": "c"}, {"kubernetes.io/os": "linux", "d": "eee"},
		{"x": "pq", "y": "ss", "z": ""},
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			return
		}
		canon := sel.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", canon, s, err)
		}
		if again.String() != canon {
			t.Fatalf("canonical form is not stable: %q -> %q", canon, again.String())
		}
		for _, l := range probes {
			if sel.Evaluate(l) != again.Evaluate(l) {
				t.Fatalf("%q and its canonical form %q disagree on %v", s, canon, l)
			}
		}
	})
}
