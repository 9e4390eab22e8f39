package classes

import "math/bits"

// Bitset is a set of small non-negative integers (class or node indexes).
type Bitset []uint64

func NewBitset(n int) Bitset { return make(Bitset, (n+63)/64) }

func (b Bitset) Set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b Bitset) Has(i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(uint(i)&63)) != 0 }

// Intersects reports whether b and o share an element.
func (b Bitset) Intersects(o Bitset) bool {
	n := min(len(b), len(o))
	for i := 0; i < n; i++ {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// Reset returns an empty set for elements below n, reusing b's words
// when they fit (a worker's per-row sets).
func (b Bitset) Reset(n int) Bitset {
	if len(b) != (n+63)/64 {
		return NewBitset(n)
	}
	clear(b)
	return b
}

// Each calls fn with every element, ascending.
func (b Bitset) Each(fn func(i int)) {
	for i, w := range b {
		for w != 0 {
			fn(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// List is the elements, ascending.
func (b Bitset) List() []int {
	var out []int
	b.Each(func(i int) { out = append(out, i) })
	return out
}
