package hosttools

import (
	"strings"
	"testing"
)

func TestCommandLinesSplitIntoTheCommandAndItsFilter(t *testing.T) {
	tests := []struct {
		name   string
		argv   []string
		words  string
		filter string
		ok     bool
	}{
		{"separate words stay as given", []string{"crictl", "pods"}, "crictl|pods", "", true},
		{"one line splits at spaces", []string{"crictl pods"}, "crictl|pods", "", true},
		{"a Select-String stage gives its pattern", []string{"crictl version | Select-String Runtime"}, "crictl|version", "Runtime", true},
		{"a quoted pattern keeps its pipes", []string{`containerd.exe config dump | Select-String "a|b"`}, "containerd.exe|config|dump", "a|b", true},
		{"-Pattern names the pattern", []string{"crictl images | Select-String -Pattern samples"}, "crictl|images", "samples", true},
		{"another filter is not ours", []string{"crictl pods | Sort-Object"}, "", "", false},
		{"two filters are not ours", []string{"crictl pods | sls a | sls b"}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			words, filter, ok := splitLine(tt.argv)
			if ok != tt.ok || (ok && (strings.Join(words, "|") != tt.words || filter != tt.filter)) {
				t.Errorf("splitLine(%q) = %q, %q, %v; want %q, %q, %v", tt.argv, words, filter, ok, tt.words, tt.filter, tt.ok)
			}
		})
	}
}

// FuzzSplitLine: any line splits without panicking, and a line without
// quotes or pipes splits into its fields.
func FuzzSplitLine(f *testing.F) {
	for _, s := range []string{"crictl pods", `a | Select-String "x|y"`, `'unterminated`, "|", "a||b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, _, ok := splitLine([]string{s})
		blank := func(r rune) bool { return r == ' ' || r == '\t' }
		if !strings.ContainsAny(s, "|'\"") && ok && strings.Join(words, " ") != strings.Join(strings.FieldsFunc(s, blank), " ") {
			t.Errorf("splitLine(%q) = %q", s, words)
		}
	})
}
