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
// build keeps no log (the first derivation from it makes its own).
type marks struct {
	// log is this build's marks, nil while they are the first same of
	// prev's.
	log  []mark
	same int
	// prev and prevFields are the previous build's marks and the
	// DerivedFields they made (carried).
	prev       []mark
	prevFields map[model.Key][]string
}

// markField records that the build filled in a field of an observed
// object (Cluster.MarkDerived).
func (b *builder) markField(k model.Key, field string) {
	if b.d == nil {
		// A full build marks the map directly and keeps no log: the
		// first derivation from its twin makes its own.
		markDirect(b.c, k, field)
		return
	}
	m := &b.marks
	if m.log == nil {
		if m.same < len(m.prev) && m.prev[m.same] == (mark{k, field}) {
			m.same++
			return
		}
		m.log = make([]mark, m.same, max(len(m.prev), len(b.c.Pods)))
		copy(m.log, m.prev)
	}
	m.log = append(m.log, mark{k, field})
}

// finishMarks sets the twin's DerivedFields from the build's marks, the
// previous twin's when they are all the previous build's, and carries
// them for the next derivation.
func (b *builder) finishMarks() {
	if b.d == nil {
		return
	}
	m := &b.marks
	if m.log == nil && m.same == len(m.prev) {
		b.c.DerivedFields = m.prevFields
		b.carry.marks, b.carry.fields = m.prev, m.prevFields
		return
	}
	if m.log == nil {
		m.log = m.prev[:m.same:m.same]
	}
	var fields map[model.Key][]string
	if len(m.log) > 0 {
		fields = make(map[model.Key][]string, len(m.log))
	}
	for _, x := range m.log {
		f, ok := fields[x.k]
		switch {
		case !ok && x.field == "spec":
			// One shared slice, full, so that a later append copies it.
			fields[x.k] = specOnly[:1:1]
		default:
			fields[x.k] = append(f, x.field)
		}
	}
	b.c.DerivedFields = fields
	b.carry.marks, b.carry.fields = m.log, fields
}

// specOnly is the derived fields of a completed stub.
var specOnly = []string{"spec"}

// markDirect is c.MarkDerived(k, field) without a slice per completed
// stub (one shared, full, so that a later append copies it), the map
// made once for every pod.
func markDirect(c *model.Cluster, k model.Key, field string) {
	if field != "spec" {
		c.MarkDerived(k, field)
		return
	}
	if c.DerivedFields == nil {
		c.DerivedFields = make(map[model.Key][]string, len(c.Pods))
	}
	if f, ok := c.DerivedFields[k]; ok {
		c.DerivedFields[k] = append(f, "spec")
		return
	}
	c.DerivedFields[k] = specOnly[:1:1]
}
