package diff

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// SameReachInputs is sameReachInputs, for the external tests.
func SameReachInputs(before, after *Twin) bool { return sameReachInputs(before, after) }

// ForcedReach is the reach difference of every namespace computed from
// both twins' matrices, whatever their inputs' hashes say.
func ForcedReach(before, after *Twin) (*ReachDiff, error) {
	return compareReach(before, after, reach.Options{AllNamespaces: true})
}

// newDigest hashes the cluster's objects, reusing prev's hashes of the
// objects the two twins share (newDigestMatch, without tokens).
func newDigest(c *model.Cluster, prev *digest) *digest {
	d, _ := newDigestMatch(c, prev, false)
	return d
}

// compareObjects is compareObjectsMatched, the objects paired here.
func compareObjects(a, b *digest) []ObjectChange { return compareObjectsMatched(a, b, nil) }

// compareWorkloads is compareWorkloadsOf of the two clusters.
func compareWorkloads(a, b *model.Cluster, da, db *digest) []WorkloadDiff {
	return compareWorkloadsOf(func() map[ObjectRef][]string { return podsByController(a) }, workloadsOf(a), workloadsOf(b), da, db)
}

// match is matchSorted of keys by row or column.
func match(a, b map[string]int) (out []matched, onlyA, onlyB int) {
	return matchSorted(sortedKeys(a), sortedKeys(b))
}
