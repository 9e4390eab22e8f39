package diff

import (
	"fmt"
	"sort"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
)

// The routing part of a Linux node is mostly shared: its routes to the
// other nodes' IPAM blocks and its VXLAN neighbour and FDB entries are the
// same lines on every node of a class (linux.Node.RouteClass) but for the
// node's own blocks and VTEP. When every node's routes change (a pool's
// encapsulation), rendering each node's whole table on both sides costs N
// nodes times N routes twice; here the shared lines are rendered once per
// class and twin, their difference once per pair of classes, and each
// node's difference is that with its own routes and its own blocks' lines
// accounted for, which costs only the lines themselves.
// TestEachStepsNodeDifferencesEqualThoseFromRenderingEveryNode holds it to
// rendering every node's whole table.

// sharedLines are one class's shared lines in one twin, each with the
// node it belongs to (which does not program it).
type sharedLines struct {
	lines  []string
	byNode map[string][]string
}

func newSharedLines(lines, owners []string) *sharedLines {
	s := &sharedLines{lines: lines, byNode: map[string][]string{}}
	for i, o := range owners {
		s.byNode[o] = append(s.byNode[o], lines[i])
	}
	return s
}

var noShared = &sharedLines{byNode: map[string][]string{}}

// sharedCache holds a twin's shared routes by class and its L2 lines.
type sharedCache struct {
	mu         sync.Mutex
	m          map[string]*sharedLines
	neigh, fdb *sharedLines
}

func (c *sharedCache) get(key string, render func() *sharedLines) *sharedLines {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*sharedLines{}
	}
	s := c.m[key]
	if s == nil {
		s = render()
		c.m[key] = s
	}
	return s
}

// sharedRoutes are the twin's routes to every block for the class of lx.
func (t *Twin) sharedRoutes(lx *linux.Node) *sharedLines {
	return t.shared.get(lx.RouteClass(), func() *sharedLines {
		rs := lx.SharedRoutes()
		lines, owners := make([]string, len(rs)), make([]string, len(rs))
		for i, r := range rs {
			lines[i], owners[i] = r.String(), r.Node
		}
		return newSharedLines(lines, owners)
	})
}

// sharedL2 are the twin's neighbour and FDB lines of every VTEP, for a
// node with vxlan.calico (none for one without); they are the same for
// every node, so they are read once per twin.
func (t *Twin) sharedL2(lx *linux.Node) (neigh, fdb *sharedLines) {
	if !lx.HasVXLAN() {
		return noShared, noShared
	}
	c := &t.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.neigh == nil {
		ns, fs, owners := lx.SharedL2()
		nl, fl := make([]string, len(ns)), make([]string, len(fs))
		for i := range ns {
			nl[i], fl[i] = neighLine(ns[i]), fdbLine(fs[i])
		}
		c.neigh, c.fdb = newSharedLines(nl, owners), newSharedLines(fl, owners)
	}
	return c.neigh, c.fdb
}

func neighLine(e linux.Neighbor) string {
	return fmt.Sprintf("%s dev %s lladdr %s %s", e.IP, e.Dev, e.MAC, e.State)
}

func fdbLine(e linux.FDBEntry) string {
	return fmt.Sprintf("%s dev %s dst %s self permanent", e.MAC, e.Dev, e.Dst)
}

// ownRoutes are the node's routes but those to other nodes' blocks, as
// lines, read once per twin.
func (t *Twin) ownRoutes(name string, lx *linux.Node) []string {
	c := t.nodeCache(name)
	if c.own == nil {
		own := []string{}
		for _, r := range lx.OwnRoutes() {
			own = append(own, r.String())
		}
		c.own = own
	}
	return c.own
}

// pairDiff is the difference of two classes' shared lines: each line's
// count before less its count after, and the lines that difference
// removes and adds, sorted (as lines gives them).
type pairDiff struct {
	count map[string]int
	diff  Lines
}

// pairCache holds one comparison's pair differences.
type pairCache struct {
	mu sync.Mutex
	m  map[[2]*sharedLines]*pairDiff
}

func (c *pairCache) get(a, b *sharedLines) *pairDiff {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[2]*sharedLines]*pairDiff{}
	}
	k := [2]*sharedLines{a, b}
	if d := c.m[k]; d != nil {
		return d
	}
	d := &pairDiff{count: make(map[string]int, len(a.lines))}
	for _, s := range a.lines {
		d.count[s]++
	}
	for _, s := range b.lines {
		d.count[s]--
	}
	for s, n := range d.count {
		for ; n > 0; n-- {
			d.diff.Removed = append(d.diff.Removed, s)
		}
		for ; n < 0; n++ {
			d.diff.Added = append(d.diff.Added, s)
		}
	}
	sort.Strings(d.diff.Removed)
	sort.Strings(d.diff.Added)
	c.m[k] = d
	return d
}

// nodeLines is lines(ownA + sharedA - node's own in A, ownB + sharedB -
// node's own in B): the shared difference with the few lines the node
// itself adds or leaves out counted again.
func nodeLines(pd *pairDiff, ownA, ownB, exA, exB []string) Lines {
	delta := map[string]int{}
	for _, s := range ownA {
		delta[s]++
	}
	for _, s := range ownB {
		delta[s]--
	}
	for _, s := range exA {
		delta[s]--
	}
	for _, s := range exB {
		delta[s]++
	}
	var extraRemoved, extraAdded []string
	for s, d := range delta {
		n := pd.count[s] + d
		for ; n > 0; n-- {
			extraRemoved = append(extraRemoved, s)
		}
		for ; n < 0; n++ {
			extraAdded = append(extraAdded, s)
		}
	}
	sort.Strings(extraRemoved)
	sort.Strings(extraAdded)
	return Lines{
		Removed: mergeSorted(pd.diff.Removed, extraRemoved, delta),
		Added:   mergeSorted(pd.diff.Added, extraAdded, delta),
	}
}

// mergeSorted merges base, less the lines in skip, with extra; both are
// sorted.
func mergeSorted(base, extra []string, skip map[string]int) []string {
	if len(base) == 0 && len(extra) == 0 {
		return nil
	}
	out := make([]string, 0, len(base)+len(extra))
	j := 0
	for _, s := range base {
		if _, ok := skip[s]; ok {
			continue
		}
		for j < len(extra) && extra[j] < s {
			out = append(out, extra[j])
			j++
		}
		out = append(out, s)
	}
	out = append(out, extra[j:]...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// routingLines compares a node's routes, neighbours and FDB in two twins
// through the shared lines.
func routingLines(before, after *Twin, pairs *pairCache, name string, la, lb *linux.Node) (routes, neigh, fdb Lines) {
	ra, rb := before.sharedRoutes(la), after.sharedRoutes(lb)
	routes = nodeLines(pairs.get(ra, rb), before.ownRoutes(name, la), after.ownRoutes(name, lb), ra.byNode[name], rb.byNode[name])
	na, fa := before.sharedL2(la)
	nb, fb := after.sharedL2(lb)
	neigh = nodeLines(pairs.get(na, nb), nil, nil, na.byNode[name], nb.byNode[name])
	fdb = nodeLines(pairs.get(fa, fb), nil, nil, fa.byNode[name], fb.byNode[name])
	return routes, neigh, fdb
}
