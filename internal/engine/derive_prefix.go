package engine

// sharedPrefix makes a list that a derivation's build mostly makes as the
// previous build did (its marks, its observed addresses, a list's names):
// while the items come as the previous build's, in order, nothing is
// made, since neither build changes a list once made and the previous
// one can be shared; at the first item that differs, the list is copied
// out and grows from there.
type sharedPrefix[T comparable] struct {
	// prev is the previous build's list; the first same items are its.
	prev []T
	same int
	// own is the list once it differs from prev, nil before; size is the
	// capacity it is made with.
	own  []T
	size int
}

func (s *sharedPrefix[T]) add(x T) {
	if s.own == nil {
		if s.same < len(s.prev) && s.prev[s.same] == x {
			s.same++
			return
		}
		s.own = make([]T, s.same, max(s.size, s.same+1))
		copy(s.own, s.prev)
	}
	s.own = append(s.own, x)
}

// list is the list made, and whether it is the previous build's whole.
func (s *sharedPrefix[T]) list() ([]T, bool) {
	if s.own != nil {
		return s.own, false
	}
	return s.prev[:s.same:s.same], s.same == len(s.prev)
}
