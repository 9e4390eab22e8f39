package output

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// PairCount is the verdicts between one source namespace (or the nodes)
// and one destination namespace.
type PairCount struct {
	From, To string
	// Counts are indexed by reach.Verdict.
	Counts [4]int
}

// nodesRow is what a node row's "namespace" is in the summary.
const nodesRow = "(nodes)"

// Summary counts the cells per source and destination namespace, sorted.
func Summary(m *reach.Matrix) []PairCount {
	idx := map[[2]string]*PairCount{}
	m.EachRow(func(i int, cells []reach.Cell) {
		from := m.Sources[i].Namespace
		if m.Sources[i].Kind == "node" {
			from = nodesRow
		}
		for j, c := range cells {
			key := [2]string{from, m.Destinations[j].Namespace}
			p := idx[key]
			if p == nil {
				p = &PairCount{From: key[0], To: key[1]}
				idx[key] = p
			}
			p.Counts[c.Verdict]++
		}
	})
	out := make([]PairCount, 0, len(idx))
	for _, p := range idx {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// WriteSummary prints the allowed, denied, partial and not applicable
// cells per namespace pair, then the totals.
func WriteSummary(w io.Writer, m *reach.Matrix) error { return View{}.Summary(w, m) }

// Summary is WriteSummary of the namespace pairs with a denied cell when
// the view asks for denied ones only.
func (v View) Summary(w io.Writer, m *reach.Matrix) error {
	bw := bufio.NewWriter(w)
	if len(m.Sources) == 0 || len(m.Destinations) == 0 {
		return WriteText(w, m)
	}
	pairs := Summary(m)
	if v.OnlyDenied {
		kept := pairs[:0]
		for _, p := range pairs {
			if p.Counts[reach.Denied] > 0 {
				kept = append(kept, p)
			}
		}
		if pairs = kept; len(pairs) == 0 {
			bw.WriteString("No denied cells among the selected sources and destinations.\n")
			for _, n := range m.Notes {
				fmt.Fprintf(bw, "Note: %s\n", n)
			}
			return bw.Flush()
		}
	}
	tw := tabwriter.NewWriter(bw, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tALLOWED\tDENIED\tPARTIAL\tN/A")
	var total [4]int
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", p.From, p.To, p.Counts[reach.Allowed], p.Counts[reach.Denied], p.Counts[reach.Partial], p.Counts[reach.NotApplicable])
		for v, n := range p.Counts {
			total[v] += n
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	cells := total[0] + total[1] + total[2] + total[3]
	fmt.Fprintf(bw, "\n%d cell%s: %d allowed, %d denied, %d partial, %d n/a (-o matrix for the matrix with reasons, -o json|csv for every cell)\n",
		cells, plural(cells), total[reach.Allowed], total[reach.Denied], total[reach.Partial], total[reach.NotApplicable])
	if v.OnlyDenied {
		bw.WriteString("--only denied: the namespace pairs with a denied cell\n")
	}
	for _, n := range m.Notes {
		fmt.Fprintf(bw, "Note: %s\n", n)
	}
	return bw.Flush()
}
