package engine

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// orders are how a build sorted each of its lists (builder.sort), by the
// list's place there.
type orders []listOrder

// listOrder is how a build sorted one list: names are its objects'
// namespaces and names before, perm the sort's permutation (the i-th
// sorted object was the perm[i]-th; nil: in order already).
type listOrder struct {
	names []nsName
	perm  []int
}

// sortAs sorts s by namespace and name, stably, as the slot-th list, and
// records how in o (nil: nothing is kept). A derivation whose list comes
// with the previous build's names in the same order (prev) applies that
// build's permutation, which is the one the sort would find: it depends
// on nothing but the order of the names.
func sortAs[T metav1.Object](o, prev orders, slot int, s []T) {
	if o == nil && prev == nil {
		sortObjs(s)
		return
	}
	// names are s's names, the previous build's list of them while they
	// are the same.
	ns := sharedPrefix[nsName]{size: len(s)}
	if slot < len(prev) {
		ns.prev = prev[slot].names
	}
	for _, x := range s {
		ns.add(nsName{x.GetNamespace(), x.GetName()})
	}
	names, whole := ns.list()
	equal := whole && ns.prev != nil
	if names == nil {
		names = []nsName{} // recorded, if empty
	}
	var perm []int
	if equal {
		perm = prev[slot].perm
		if perm != nil {
			in := slices.Clone(s)
			for i, j := range perm {
				s[i] = in[j]
			}
		}
	} else {
		perm = sortPerm(s)
	}
	if o != nil {
		o[slot] = listOrder{names: names, perm: perm}
	}
}

// orders is how the previous build sorted its lists, nil if unknown.
func (d *derivation) orders() orders {
	if d == nil || d.prev == nil {
		return nil
	}
	return d.prev.orders
}
