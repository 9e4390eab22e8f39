package names

import (
	"strings"
	"testing"
)

func TestGeneratedNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, c := range []struct {
		name string
		base string
		seed string
		want func(string) bool
	}{
		{"a generated name is the base and five characters", "web-", "x", func(n string) bool { return len(n) == 9 && strings.HasPrefix(n, "web-") }},
		{"a long base is cut to 58 characters", long, "x", func(n string) bool { return len(n) == 63 && strings.HasPrefix(n, long[:58]) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Generate(c.base, c.seed)
			if !c.want(got) {
				t.Errorf("Generate(%q) = %q", c.base, got)
			}
			if !IsGenerated(got, c.base) {
				t.Errorf("IsGenerated(%q, %q) = false", got, c.base)
			}
			if Generate(c.base, c.seed) != got {
				t.Errorf("Generate is not deterministic")
			}
		})
	}
}

func TestDifferentSeedsGiveDifferentSuffixes(t *testing.T) {
	if Suffix("a") == Suffix("b") {
		t.Errorf("seeds a and b give the same suffix %q", Suffix("a"))
	}
	if IsGenerated("web-AAAAA", "web-") || IsGenerated("web-bcd", "web-") || IsGenerated("api-bcdfg", "web-") {
		t.Errorf("IsGenerated accepts a name Generate cannot make")
	}
}
