package diff

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"

// SameReachInputs is sameReachInputs, for the external tests.
func SameReachInputs(before, after *Twin) bool { return sameReachInputs(before, after) }

// ForcedReach is the reach difference of every namespace computed from
// both twins' matrices, whatever their inputs' hashes say.
func ForcedReach(before, after *Twin) (*ReachDiff, error) {
	return compareReach(before, after, reach.Options{AllNamespaces: true})
}
