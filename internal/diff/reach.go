package diff

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// compareReach computes both twins' reach matrices and reports the cells
// whose verdict changes. Classes need not match between the twins (a new
// policy splits a class): rows are matched through the pods (and nodes)
// both hold, columns through the pods at a port and the Service ports, and
// each pair of (before row, after row) × (before column, after column)
// that some pod pair falls into is compared once (cellDiffer says which
// differ without reading every cell).
func compareReach(before, after *Twin, opt reach.Options) (*ReachDiff, error) {
	return compareReachWith(before, after, opt, func(ma, mb *reach.Matrix, dsts []matched) func(a, b int) []int32 {
		return newCellDiffer(ma, mb, dsts).changed
	})
}

// compareReachWith is compareReach with the columns whose verdicts differ
// for a pair of rows told by the function differ makes.
func compareReachWith(before, after *Twin, opt reach.Options, differ func(ma, mb *reach.Matrix, dsts []matched) func(a, b int) []int32) (*ReachDiff, error) {
	ma, ka, err := before.reachMatrix(opt)
	if err != nil {
		return nil, fmt.Errorf("the before twin's reach: %w", err)
	}
	mb, kb, err := after.reachMatrix(opt)
	if err != nil {
		return nil, fmt.Errorf("the after twin's reach: %w", err)
	}
	srcs, onlyA, onlyB := matchSorted(ka.sources, kb.sources)
	dsts, donlyA, donlyB := matchSorted(ka.dests, kb.dests)
	rd := &ReachDiff{}
	changed := differ(ma, mb, dsts)
	// Cells the twin cannot decide on one side (a trace that stopped as
	// not modeled, such as a reply arriving at another address) are
	// counted, not listed: their change is not known.
	unknown, unknownWhy := 0, ""
	for _, s := range srcs {
		for _, j := range changed(s.a, s.b) {
			d := &dsts[j]
			ca, cb := ma.At(s.a, d.a), mb.At(s.b, d.b)
			// Only the verdict counts: reasons name classes, whose labels
			// change when a class splits. They are read only for the
			// cells that change.
			if ca.Verdict == cb.Verdict || selfOnly(&s, d) {
				continue
			}
			va, vb := verdict(ma, ca), verdict(mb, cb)
			if nmA, nmB := ma.NotModeled(ca), mb.NotModeled(cb); nmA || nmB {
				if unknown++; unknownWhy == "" {
					unknownWhy = vb.Reason
					if nmA {
						unknownWhy = va.Reason
					}
				}
				continue
			}
			src, dst := &mb.Sources[s.b], &mb.Destinations[d.b]
			ch := ReachChange{From: src.Label, To: dst.Label, Port: dst.Port, Proto: string(dst.Proto),
				Before: va, After: vb, Effect: Altered}
			if src.Kind == "pods" {
				ch.FromPods = s.keys
			}
			if dst.Kind == "pods" {
				for _, k := range d.keys {
					pod, _, _ := strings.Cut(k, " ")
					ch.ToPods = append(ch.ToPods, pod)
				}
			}
			switch {
			case vb.Verdict == reach.Allowed.String():
				ch.Effect = Gained
			case va.Verdict == reach.Allowed.String():
				ch.Effect = Lost
			}
			rd.Changes = append(rd.Changes, ch)
		}
	}
	// The order is total: two changes of one row and column pair are
	// told apart by their pods.
	sort.Slice(rd.Changes, func(i, j int) bool {
		a, b := rd.Changes[i], rd.Changes[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		if a.Proto != b.Proto {
			return a.Proto < b.Proto
		}
		return strings.Join(a.FromPods, ",")+"|"+strings.Join(a.ToPods, ",") < strings.Join(b.FromPods, ",")+"|"+strings.Join(b.ToPods, ",")
	})
	if unknown > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d changed cells are not listed: the twin does not model what decides them on one side (%s)", unknown, unknownWhy))
	}
	if onlyA+onlyB > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("sources only one twin has are not compared: %d only before, %d only after", onlyA, onlyB))
	}
	if donlyA+donlyB > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("destinations only one twin has are not compared: %d only before, %d only after", donlyA, donlyB))
	}
	return rd, nil
}

// selfOnly reports whether the only pod pair a row and column pair holds
// is one pod to itself: no connection, whatever the cells of the classes
// say (a class of one pod in one twin, of several in the other).
func selfOnly(s, d *matched) bool {
	if len(s.keys) != 1 || len(d.keys) != 1 {
		return false
	}
	pod, _, _ := strings.Cut(d.keys[0], " ")
	return pod == s.keys[0]
}

// cellDiffer tells, for a pair of rows, the column pairs (indexes in
// dsts) whose verdicts may differ, reading each template pair's cells
// once: a row a matrix holds as its template's (reach.Matrix.Held) has
// the template's verdict in every column but its own diff columns, so
// two rows differ where their templates do, but in those columns, which
// are read cell by cell.
type cellDiffer struct {
	ma, mb *reach.Matrix
	dsts   []matched
	// byA and byB list, per column of each matrix, the column pairs that
	// hold it.
	byA, byB [][]int32
	// tmpl are, per pair of template rows, the column pairs whose
	// verdicts differ.
	tmpl map[[2]int][]int32
	// seen marks the column pairs a row pair's diff columns name (seen[j]
	// == stamp); out is the list changed returns for such a pair.
	seen  []uint32
	stamp uint32
	out   []int32
}

func newCellDiffer(ma, mb *reach.Matrix, dsts []matched) *cellDiffer {
	c := &cellDiffer{ma: ma, mb: mb, dsts: dsts, tmpl: map[[2]int][]int32{},
		byA: make([][]int32, len(ma.Destinations)), byB: make([][]int32, len(mb.Destinations)), seen: make([]uint32, len(dsts))}
	for j, d := range dsts {
		c.byA[d.a] = append(c.byA[d.a], int32(j))
		c.byB[d.b] = append(c.byB[d.b], int32(j))
	}
	return c
}

// changed lists the column pairs whose verdicts may differ between row a
// of the before matrix and row b of the after one; the list is valid
// until the next call.
func (c *cellDiffer) changed(a, b int) []int32 {
	ta, diffA := c.ma.Held(a)
	tb, diffB := c.mb.Held(b)
	key := [2]int{ta, tb}
	base, ok := c.tmpl[key]
	if !ok {
		for j, d := range c.dsts {
			if c.ma.At(ta, d.a).Verdict != c.mb.At(tb, d.b).Verdict {
				base = append(base, int32(j))
			}
		}
		c.tmpl[key] = base
	}
	if len(diffA) == 0 && len(diffB) == 0 {
		return base
	}
	c.stamp++
	if c.stamp == 0 { // wrapped: clear the marks
		clear(c.seen)
		c.stamp = 1
	}
	c.out = c.out[:0]
	mark := func(cols []int32, by [][]int32) {
		for _, col := range cols {
			for _, j := range by[col] {
				if c.seen[j] != c.stamp {
					c.seen[j] = c.stamp
					c.out = append(c.out, j)
				}
			}
		}
	}
	mark(diffA, c.byA)
	mark(diffB, c.byB)
	for _, j := range base {
		if c.seen[j] != c.stamp {
			c.out = append(c.out, j)
		}
	}
	return c.out
}

func verdict(m *reach.Matrix, c reach.Cell) Verdict {
	v := Verdict{Verdict: c.Verdict.String()}
	v.Reason, v.Hop = m.Why(c)
	return v
}

// reachKeys are a matrix's rows and columns by key (sourceKeys,
// destKeys), sorted, made once per twin and matrix.
type reachKeys struct{ sources, dests []keyed }

// sourceKeys lists each pod ("namespace/name") and node ("node/NAME")
// with its row, by key.
func sourceKeys(m *reach.Matrix) []keyed {
	n := 0
	for _, s := range m.Sources {
		n += max(1, len(s.Pods))
	}
	out := make([]keyed, 0, n)
	for i, s := range m.Sources {
		if s.Kind == "node" {
			out = append(out, keyed{s.Label, i})
			continue
		}
		for _, p := range s.Pods {
			out = append(out, keyed{s.Namespace + "/" + p, i})
		}
	}
	return sortKeyed(out)
}

// destKeys lists each pod at a port ("namespace/name port/proto") and
// each Service port ("svc/namespace/name port/proto") with its column, by
// key.
func destKeys(m *reach.Matrix) []keyed {
	n := 0
	for _, d := range m.Destinations {
		n += max(1, len(d.Pods))
	}
	out := make([]keyed, 0, n)
	for j, d := range m.Destinations {
		at := " " + strconv.Itoa(d.Port) + "/" + string(d.Proto)
		if d.Kind == "service" {
			out = append(out, keyed{"svc/" + d.Namespace + "/" + d.Name + at, j})
			continue
		}
		for _, p := range d.Pods {
			out = append(out, keyed{d.Namespace + "/" + p + at, j})
		}
	}
	return sortKeyed(out)
}

// sortKeyed sorts keys listed in row (or column) order by key, and keeps
// of a key that two rows hold the last row's (an invalid cluster's pods
// of one name).
func sortKeyed(out []keyed) []keyed {
	slices.SortFunc(out, func(x, y keyed) int {
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	w := 0
	for r := range out {
		if r+1 < len(out) && out[r+1].key == out[r].key {
			continue
		}
		out[w] = out[r]
		w++
	}
	return out[:w]
}

// matched is a row (or column) of each matrix and the keys that fall into
// both, sorted.
type matched struct {
	a, b int
	keys []string
}

// keyed is a key and its row or column.
type keyed struct {
	key string
	i   int
}

// matchSorted groups the keys both sides hold by their (before, after)
// index pair, in the order of each group's first key, and counts the keys
// only one side holds: one merge of the two lists, sorted once per matrix
// (a twin keeps them for the comparisons it is in).
func matchSorted(a, b []keyed) (out []matched, onlyA, onlyB int) {
	type ab struct{ a, b int }
	idx := map[ab]int{}
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b) || i < len(a) && a[i].key < b[j].key:
			onlyA++
			i++
		case i == len(a) || b[j].key < a[i].key:
			onlyB++
			j++
		default:
			p := ab{a[i].i, b[j].i}
			g, ok := idx[p]
			if !ok {
				g = len(out)
				idx[p] = g
				out = append(out, matched{a: p.a, b: p.b})
			}
			out[g].keys = append(out[g].keys, a[i].key)
			i++
			j++
		}
	}
	return out, onlyA, onlyB
}
