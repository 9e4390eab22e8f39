// Package aggregate folds a reachability matrix (internal/reach) into a
// view by namespace or by workload: rows and columns are groups, and each
// cell counts the connections between them by verdict — a source pod (or
// node) and a destination pod at one port it serves, or a source and one
// Service port — with the reasons of the denied ones.
//
// The matrix's rows and columns are classes of pods, so a cell stands for
// every pod pair of its two classes; the view weights each cell by the
// pods of each group on either side instead of expanding the pairs. A row
// held as its template's cells and a few differences (reach.Matrix.Held)
// is folded from its template's per-group counts, computed once and spread
// once per group of the rows sharing it, and its own differences: the cost
// is the templates' cells, plus the differences, plus the groups reached
// per template and source group, not the pod pairs.
package aggregate

import (
	"fmt"
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// By is what rows and columns group.
type By string

// Groupings.
const (
	// ByNamespace: a pod's namespace; node rows are "(nodes)".
	ByNamespace By = "namespace"
	// ByWorkload: a pod's workload (deploy/NS/NAME, ds/…, sts/…, job/…,
	// pod/NS/NAME for a pod no controller owns); a node row is
	// node/NAME, a Service column svc/NS/NAME.
	ByWorkload By = "workload"
)

// ParseBy reads --by.
func ParseBy(s string) (By, error) {
	switch By(s) {
	case ByNamespace, ByWorkload:
		return By(s), nil
	case "ns":
		return ByNamespace, nil
	}
	return "", fmt.Errorf("--by %q: use namespace or workload", s)
}

// NodesGroup is the namespace view's group of the node rows.
const NodesGroup = "(nodes)"

// Counts are connections by verdict.
type Counts struct {
	Allowed int64 `json:"allowed"`
	Denied  int64 `json:"denied"`
	Partial int64 `json:"partial"`
	NA      int64 `json:"na"`
}

// Pairs is their sum.
func (c Counts) Pairs() int64 { return c.Allowed + c.Denied + c.Partial + c.NA }

func (c *Counts) add(v reach.Verdict, n int64) {
	switch v {
	case reach.Allowed:
		c.Allowed += n
	case reach.Denied:
		c.Denied += n
	case reach.Partial:
		c.Partial += n
	default:
		c.NA += n
	}
}

// Verdict summarises counts: allowed, denied, partial or n/a when every
// connection has that verdict (not-applicable ones aside), else mixed.
func (c Counts) Verdict() string {
	var kinds []string
	if c.Allowed > 0 {
		kinds = append(kinds, "allowed")
	}
	if c.Denied > 0 {
		kinds = append(kinds, "denied")
	}
	if c.Partial > 0 {
		kinds = append(kinds, "partial")
	}
	switch len(kinds) {
	case 0:
		return "n/a"
	case 1:
		return kinds[0]
	}
	return "mixed"
}

// ReasonCount is one reason of a cell's denied connections.
type ReasonCount struct {
	Reason string `json:"reason"`
	Hop    string `json:"hop,omitempty"`
	Pairs  int64  `json:"connections"`
	// ID indexes the matrix's reasons.
	ID int32 `json:"-"`
}

// Cell is the connections from one group to another.
type Cell struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Verdict string `json:"verdict"`
	Pairs   int64  `json:"connections"`
	Counts
	// Reasons are why the denied connections are denied, the most
	// connections first.
	Reasons []ReasonCount `json:"reasons,omitempty"`
}

// View is the matrix folded by groups.
type View struct {
	By By `json:"by"`
	// OnlyDenied: only the cells with denied connections are kept.
	OnlyDenied bool `json:"onlyDenied,omitempty"`
	// Rows and Columns are the groups, sorted.
	Rows    []string `json:"rows"`
	Columns []string `json:"columns"`
	// Cells are the cells with connections, by row then column.
	Cells []Cell `json:"cells"`
	Total Counts `json:"total"`
	// Notes say what the matrix leaves out.
	Notes []string `json:"notes,omitempty"`
	// ASCII prints the text view with ASCII symbols.
	ASCII bool `json:"-"`
	// Reasons are the matrix's reasons (ReasonCount.ID).
	Reasons []reach.Reason `json:"-"`
}

// weight is some pods of one group.
type weight struct {
	g int32
	n int64
}

// acc accumulates one row's or one cell's connections.
type acc struct {
	c       Counts
	reasons map[int32]int64
}

func (a *acc) add(v reach.Verdict, reason int32, n int64) {
	if n == 0 {
		return
	}
	a.c.add(v, n)
	if v == reach.Denied {
		if a.reasons == nil {
			a.reasons = map[int32]int64{}
		}
		a.reasons[reason] += n
	}
}

// scaled adds o times k.
func (a *acc) scaled(o *acc, k int64) {
	a.c.Allowed += o.c.Allowed * k
	a.c.Denied += o.c.Denied * k
	a.c.Partial += o.c.Partial * k
	a.c.NA += o.c.NA * k
	for r, n := range o.reasons {
		if a.reasons == nil {
			a.reasons = map[int32]int64{}
		}
		a.reasons[r] += n * k
	}
}

// groups names and numbers the groups.
type groups struct {
	names []string
	id    map[string]int32
}

func (g *groups) of(name string) int32 {
	if id, ok := g.id[name]; ok {
		return id
	}
	id := int32(len(g.names))
	g.names = append(g.names, name)
	g.id[name] = id
	return id
}

// histogram is the pods of a row or column per group.
func histogram(g *groups, names []string) []weight {
	var out []weight
	for _, n := range names {
		id := g.of(n)
		found := false
		for k := range out {
			if out[k].g == id {
				out[k].n++
				found = true
				break
			}
		}
		if !found {
			out = append(out, weight{id, 1})
		}
	}
	return out
}

// sides are the rows' and columns' groups with their pods.
func sides(m *reach.Matrix, by By) (g *groups, src, dst [][]weight) {
	g = &groups{id: map[string]int32{}}
	src = make([][]weight, len(m.Sources))
	for i, s := range m.Sources {
		switch {
		case s.Kind == "node" && by == ByNamespace:
			src[i] = []weight{{g.of(NodesGroup), 1}}
		case s.Kind == "node":
			src[i] = []weight{{g.of(s.Label), 1}}
		case by == ByNamespace:
			src[i] = []weight{{g.of(s.Namespace), int64(len(s.Pods))}}
		default:
			src[i] = histogram(g, s.Workloads)
		}
	}
	dst = make([][]weight, len(m.Destinations))
	for j, d := range m.Destinations {
		switch {
		case d.Kind == "service" && by == ByNamespace:
			dst[j] = []weight{{g.of(d.Namespace), 1}}
		case d.Kind == "service":
			dst[j] = []weight{{g.of(d.Label), 1}}
		case by == ByNamespace:
			dst[j] = []weight{{g.of(d.Namespace), int64(len(d.Pods))}}
		default:
			dst[j] = histogram(g, d.Workloads)
		}
	}
	return g, src, dst
}

// ownColumns are, per source, the pod columns of its own class: a pod
// and itself are no connection.
func ownColumns(m *reach.Matrix) [][]int {
	byLabel := map[string][]int{}
	for j, d := range m.Destinations {
		if d.Kind == "pods" {
			byLabel[d.Label] = append(byLabel[d.Label], j)
		}
	}
	out := make([][]int, len(m.Sources))
	for i, s := range m.Sources {
		if s.Kind == "pods" {
			out[i] = byLabel[s.Label]
		}
	}
	return out
}

// Fold folds the matrix by namespace or workload. Each row's counts per
// destination group are those of its template row (computed once per
// template) corrected where the row differs, spread over the row's groups
// by their pods.
func Fold(m *reach.Matrix, by By, onlyDenied bool) *View {
	g, src, dst := sides(m, by)
	own := ownColumns(m)
	// perTmpl: a template row's connections per destination group, for
	// one source pod.
	perTmpl := map[int]map[int32]*acc{}
	rowOf := func(t int) map[int32]*acc {
		if r, ok := perTmpl[t]; ok {
			return r
		}
		r := map[int32]*acc{}
		for j, c := range m.Row(t, nil) {
			for _, w := range dst[j] {
				a := r[w.g]
				if a == nil {
					a = &acc{}
					r[w.g] = a
				}
				a.add(c.Verdict, c.Reason, w.n)
			}
		}
		perTmpl[t] = r
		return r
	}
	// keep, for --only denied, are the cells some connection of which is
	// denied: only they are counted (the others go to sink), so that the
	// denied cells of a large view cost what they hold.
	var keep map[[2]int32]bool
	if onlyDenied {
		keep = deniedCells(m, src, dst, rowOf)
	}
	sink := &acc{}
	cells := map[[2]int32]*acc{}
	cell := func(a, b int32) *acc {
		k := [2]int32{a, b}
		if keep != nil && !keep[k] {
			return sink
		}
		x := cells[k]
		if x == nil {
			x = &acc{}
			cells[k] = x
		}
		return x
	}
	// byTmpl: the pods of each group whose rows are a template's, with
	// their differences apart; the template's counts are spread once per
	// group.
	byTmpl := map[[2]int32]int64{}
	for i := range m.Sources {
		t, diff := m.Held(i)
		// The row's own differences, per destination group: its cell
		// counted, the template's taken back.
		var delta map[int32]*acc
		if len(diff) > 0 {
			delta = map[int32]*acc{}
			for _, j := range diff {
				mine, theirs := m.At(i, int(j)), m.At(t, int(j))
				for _, w := range dst[j] {
					d := delta[w.g]
					if d == nil {
						d = &acc{}
						delta[w.g] = d
					}
					d.add(mine.Verdict, mine.Reason, w.n)
					d.add(theirs.Verdict, theirs.Reason, -w.n)
				}
			}
		}
		for _, sw := range src[i] {
			byTmpl[[2]int32{int32(t), sw.g}] += sw.n
			for dg, d := range delta {
				cell(sw.g, dg).scaled(d, sw.n)
			}
		}
		// A pod to itself: the own columns counted each pod once too
		// many for its own group.
		for _, j := range own[i] {
			c := m.At(i, j)
			for _, sw := range src[i] {
				cell(sw.g, sw.g).add(c.Verdict, c.Reason, -sw.n)
			}
		}
	}
	for k, n := range byTmpl {
		for dg, a := range rowOf(int(k[0])) {
			cell(k[1], dg).scaled(a, n)
		}
	}
	v := &View{By: by, OnlyDenied: onlyDenied, Notes: m.Notes, ASCII: m.ASCII, Reasons: m.Reasons}
	rows, cols := map[string]bool{}, map[string]bool{}
	for k, a := range cells {
		if a.c.Pairs() == 0 || onlyDenied && a.c.Denied == 0 {
			continue
		}
		c := Cell{From: g.names[k[0]], To: g.names[k[1]], Counts: a.c, Pairs: a.c.Pairs(), Verdict: a.c.Verdict()}
		for id, n := range a.reasons {
			if n == 0 {
				continue
			}
			rc := ReasonCount{ID: id, Pairs: n}
			if int(id) >= 0 && int(id) < len(m.Reasons) {
				rc.Reason, rc.Hop = m.Reasons[id].Text, m.Reasons[id].Hop
			}
			c.Reasons = append(c.Reasons, rc)
		}
		sort.Slice(c.Reasons, func(x, y int) bool {
			a, b := c.Reasons[x], c.Reasons[y]
			if a.Pairs != b.Pairs {
				return a.Pairs > b.Pairs
			}
			if a.Hop != b.Hop {
				return a.Hop < b.Hop
			}
			return a.Reason < b.Reason
		})
		v.Cells = append(v.Cells, c)
		rows[c.From], cols[c.To] = true, true
		v.Total.Allowed += c.Allowed
		v.Total.Denied += c.Denied
		v.Total.Partial += c.Partial
		v.Total.NA += c.NA
	}
	sort.Slice(v.Cells, func(x, y int) bool {
		a, b := v.Cells[x], v.Cells[y]
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	v.Rows, v.Columns = sorted(rows), sorted(cols)
	return v
}

// deniedCells are the cells to which some row contributes denied
// connections: through its template row's counts or its own differences.
func deniedCells(m *reach.Matrix, src, dst [][]weight, rowOf func(int) map[int32]*acc) map[[2]int32]bool {
	keep := map[[2]int32]bool{}
	tmplGroups := map[[2]int32]bool{}
	for i := range m.Sources {
		t, diff := m.Held(i)
		for _, sw := range src[i] {
			tmplGroups[[2]int32{int32(t), sw.g}] = true
		}
		for _, j := range diff {
			if m.At(i, int(j)).Verdict != reach.Denied {
				continue
			}
			for _, sw := range src[i] {
				for _, w := range dst[j] {
					keep[[2]int32{sw.g, w.g}] = true
				}
			}
		}
	}
	for k := range tmplGroups {
		for dg, a := range rowOf(int(k[0])) {
			if a.c.Denied > 0 {
				keep[[2]int32{k[1], dg}] = true
			}
		}
	}
	return keep
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
