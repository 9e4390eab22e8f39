package engine

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// mark is one field a build marked derived (Cluster.DerivedFields).
type mark struct {
	k     model.Key
	field string
}

// marks are the fields a build marks derived, in order. A derivation
// marks mostly what the previous build marked, in the same order (every
// completed stub of its reused pods is marked again): while it does, it
// records nothing, and if it marks exactly the previous build's fields
// its twin shares the previous twin's DerivedFields (neither changes
// them once built) instead of making a map of one entry per stub. A full
// build (Build's, not BuildOwned's) keeps its log too, for the first
// derivation from its twin.
type marks struct {
	// list is this build's marks, the previous build's as long as they
	// come alike; prevFields are the DerivedFields those made (carried).
	list       sharedPrefix[mark]
	prevFields map[model.Key][]string
}

// after starts a derivation's marks from the previous build's marks and
// the DerivedFields they made; size is the capacity its own list is made
// with, if it needs one.
func (m *marks) after(prev []mark, fields map[model.Key][]string, size int) {
	m.list = sharedPrefix[mark]{prev: prev, size: max(len(prev), size)}
	m.prevFields = fields
}

// markField records that the build filled in a field of an observed
// object (Cluster.MarkDerived).
func (b *builder) markField(k model.Key, field string) {
	if b.d == nil {
		// A full build marks the map directly; Build's keeps the log
		// besides, for the first derivation from its twin.
		markDirect(b.c, k, field)
		if b.own {
			return
		}
	}
	b.marks.list.add(mark{k, field})
}

// finishMarks sets the twin's DerivedFields from the build's marks, the
// previous twin's when they are all the previous build's, and carries
// them for the next derivation.
func (b *builder) finishMarks() {
	m := &b.marks
	if b.d == nil {
		if !b.own {
			b.carry.marks, _ = m.list.list()
			b.carry.fields = b.c.DerivedFields
		}
		return
	}
	log, whole := m.list.list()
	if whole {
		b.c.DerivedFields = m.prevFields
		b.carry.marks, b.carry.fields = log, m.prevFields
		return
	}
	var fields map[model.Key][]string
	if len(log) > 0 {
		fields = make(map[model.Key][]string, len(log))
	}
	for _, x := range log {
		addMark(fields, x.k, x.field)
	}
	b.c.DerivedFields = fields
	b.carry.marks, b.carry.fields = log, fields
}

// specOnly is the derived fields of a completed stub.
var specOnly = []string{"spec"}

// markDirect is c.MarkDerived(k, field), the map made once for every pod.
func markDirect(c *model.Cluster, k model.Key, field string) {
	if c.DerivedFields == nil {
		c.DerivedFields = make(map[model.Key][]string, len(c.Pods))
	}
	addMark(c.DerivedFields, k, field)
}

// addMark appends field to k's derived fields, without a slice per
// completed stub: one shared, full, so that a later append copies it.
func addMark(fields map[model.Key][]string, k model.Key, field string) {
	f, ok := fields[k]
	if !ok && field == "spec" {
		fields[k] = specOnly[:1:1]
		return
	}
	fields[k] = append(f, field)
}
