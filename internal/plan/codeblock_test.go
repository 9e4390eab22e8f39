package plan

import (
	"strings"
	"testing"
)

func TestACodeBlockPrintsWhatCodePrintsOfTheLinesOfItsText(t *testing.T) {
	texts := []struct{ name, text string }{
		{"an empty text", ""},
		{"only newlines", "\n\n"},
		{"one line without a newline", "a"},
		{"lines with a blank one between", "a\n\nb\n"},
		{"a leading blank line", "\na"},
		{"trailing blank lines", "a\nb\n\n\n"},
		{"indented lines", "  - x\n    + y\n"},
	}
	for _, md := range []bool{false, true} {
		for _, tt := range texts {
			name := tt.name + map[bool]string{false: " for a terminal", true: " in Markdown"}[md]
			t.Run(name, func(t *testing.T) {
				var want strings.Builder
				p := NewPrinter(&want, md)
				p.Code(strings.Split(strings.TrimRight(tt.text, "\n"), "\n")...)
				// Written in pieces of every size, as a writer may hand
				// it over.
				for size := 1; size <= len(tt.text)+1; size++ {
					var got strings.Builder
					b := NewPrinter(&got, md).CodeBlock()
					for rest := tt.text; rest != ""; {
						n := min(size, len(rest))
						if _, err := b.Write([]byte(rest[:n])); err != nil {
							t.Fatal(err)
						}
						rest = rest[n:]
					}
					if err := b.Close(); err != nil {
						t.Fatal(err)
					}
					if got.String() != want.String() {
						t.Fatalf("written %d bytes at a time: %q, want %q", size, got.String(), want.String())
					}
				}
			})
		}
	}
}
