package reach

import "math/bits"

// bitset is a set of small non-negative integers (class or node indexes).
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(uint(i)&63)) != 0 }

// intersects reports whether b and o share an element.
func (b bitset) intersects(o bitset) bool {
	n := min(len(b), len(o))
	for i := 0; i < n; i++ {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// reset returns an empty set for elements below n, reusing b's words
// when they fit (a worker's per-row sets).
func (b bitset) reset(n int) bitset {
	if len(b) != (n+63)/64 {
		return newBitset(n)
	}
	clear(b)
	return b
}

// each calls fn with every element, ascending.
func (b bitset) each(fn func(i int)) {
	for i, w := range b {
		for w != 0 {
			fn(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// list is the elements, ascending.
func (b bitset) list() []int {
	var out []int
	b.each(func(i int) { out = append(out, i) })
	return out
}
