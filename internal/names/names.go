// Package names makes the names the API server generates, deterministically:
// the five random characters of generateName
// (k8s.io/apiserver pkg/storage/names SimpleNameGenerator) and of
// controller-made names come from a hash of a seed, so that the same input
// always gives the same names.
package names

import (
	"hash/fnv"
	"strings"
)

// alphanums is the alphabet of generated suffixes
// (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits).
const alphanums = "bcdfghjklmnpqrstvwxz2456789"

// suffixLength and maxGeneratedNameLength are SimpleNameGenerator's: the
// base is cut so that base and suffix fit a 63-character name.
const (
	suffixLength           = 5
	maxGeneratedNameLength = 63 - suffixLength
)

// Suffix is a deterministic stand-in for the random five-character suffix:
// the same seed always gives the same suffix.
func Suffix(seed string) string {
	h := fnv.New64a()
	h.Write([]byte(seed))
	v := h.Sum64()
	var b strings.Builder
	for i := 0; i < suffixLength; i++ {
		b.WriteByte(alphanums[v%uint64(len(alphanums))])
		v /= uint64(len(alphanums))
	}
	return b.String()
}

// Generate is the name the API server gives an object with only
// metadata.generateName base: base, cut to 58 characters, and a suffix.
func Generate(base, seed string) string {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	return base + Suffix(seed)
}

// IsGenerated reports whether name is one Generate could make from base.
func IsGenerated(name, base string) bool {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	rest, ok := strings.CutPrefix(name, base)
	if !ok || len(rest) != suffixLength {
		return false
	}
	for _, r := range rest {
		if !strings.ContainsRune(alphanums, r) {
			return false
		}
	}
	return true
}
