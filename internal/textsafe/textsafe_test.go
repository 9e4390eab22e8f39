package textsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnsafeRunesAreEscapedAndOthersKept(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain text is kept", "pod/web-1 Running", "pod/web-1 Running"},
		{"newlines and tabs are kept", "a\tb\nc", "a\tb\nc"},
		{"an ESC sequence is escaped", "x\x1b[31mred", `x\x1b[31mred`},
		{"a carriage return is escaped", "a\rb", `a\rb`},
		{"DEL and a C1 control are escaped", "a\x7fb\u0085c\u009b", `a\x7fb\u0085c\u009b`},
		{"a right-to-left override is escaped", "web\u202egpj.exe", `web\u202egpj.exe`},
		{"the isolates and marks are escaped", "\u2066a\u2069\u200e\u200f\u061c", `\u2066a\u2069\u200e\u200f\u061c`},
		{"letters of other scripts are kept", "под-1 ウェブ café", "под-1 ウェブ café"},
		{"bytes that are not UTF-8 are escaped", "a\xffb", `a\xffb`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Escape(c.in); got != c.want {
				t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
			}
			var b bytes.Buffer
			w := NewWriter(&b)
			for i := 0; i < len(c.in); i++ { // one byte a write: runes are split
				if _, err := w.Write([]byte{c.in[i]}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("Writer wrote %q, want %q", b.String(), c.want)
			}
		})
	}
}

func TestRawIsTheWriterUnderneath(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	_, _ = w.Write([]byte("\xe2\x80")) // half of U+202E, held
	raw := Raw(w)
	if raw != &b {
		t.Fatalf("Raw returned %T", raw)
	}
	if b.String() != `\xe2\x80` {
		t.Errorf("the held bytes were not flushed before raw output: %q", b.String())
	}
	if Raw(&b) != &b {
		t.Error("Raw of a plain writer is not itself")
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "abc", "\x1b[2J", "a\u202eb", "\xff\xfe", "\u0085", "x\ty\n"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, split int) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("Escape(%q) = %q holds %U", s, got, r)
			}
		}
		if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || Unsafe(r) }) && got != s {
			t.Fatalf("Escape changed safe text %q to %q", s, got)
		}
		// Written in two parts, the result is the same.
		if split < 0 {
			split = -split
		}
		cut := 0
		if len(s) > 0 {
			cut = split % (len(s) + 1)
		}
		var b bytes.Buffer
		w := NewWriter(&b)
		_, _ = w.Write([]byte(s[:cut]))
		_, _ = w.Write([]byte(s[cut:]))
		_ = w.Flush()
		if b.String() != got {
			t.Fatalf("Writer(%q split at %d) = %q, Escape = %q", s, cut, b.String(), got)
		}
	})
}
