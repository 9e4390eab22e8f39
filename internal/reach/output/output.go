// Package output prints a reachability matrix (internal/reach): the text
// matrix with its key and numbered reasons, the per-namespace summary, and
// every cell as JSON or CSV. It reads the matrix only through its exported
// readers (EachRow, Entries, Why, Counts).
package output

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// Symbols of the text matrix, and their ASCII forms (Matrix.ASCII).
const (
	symAllowed = "✓"
	symDenied  = "✗"
	symPartial = "~"
	symNA      = "·"

	asciiAllowed = "+"
	asciiDenied  = "x"
	asciiNA      = "."
)

// syms are the matrix's symbols: allowed, denied, partial, n/a.
func syms(m *reach.Matrix) (allowed, denied, partial, na string) {
	if m.ASCII {
		return asciiAllowed, asciiDenied, symPartial, asciiNA
	}
	return symAllowed, symDenied, symPartial, symNA
}

// legend numbers the reasons of the cells that are not allowed, in the
// order they first appear (row by row).
func legend(m *reach.Matrix, sel *selection) (num map[int32]int, order []int32) {
	num = map[int32]int{}
	sel.eachRow(m, func(_ int, cells []reach.Cell) {
		for _, j := range sel.cols {
			c := cells[j]
			if c.Verdict == reach.Allowed || c.Reason < 0 {
				continue
			}
			if _, ok := num[c.Reason]; !ok {
				order = append(order, c.Reason)
				num[c.Reason] = len(order)
			}
		}
	})
	return num, order
}

// symbols makes each cell's symbol once per verdict and reason number,
// so that printing a large matrix allocates nothing per cell.
type symbols struct {
	m   *reach.Matrix
	num []int // reason id → legend number, 0 for none
	tab [4][]string
}

func symbolTable(m *reach.Matrix, num map[int32]int) *symbols {
	st := &symbols{m: m, num: make([]int, len(m.Reasons))}
	for id, n := range num {
		if int(id) < len(st.num) {
			st.num[id] = n
		}
	}
	return st
}

func (st *symbols) of(c reach.Cell) string {
	n := 0
	if c.Verdict != reach.Allowed && c.Reason >= 0 && int(c.Reason) < len(st.num) {
		n = st.num[c.Reason]
	}
	v := int(c.Verdict) & 3
	if st.tab[v] == nil {
		st.tab[v] = make([]string, len(st.num)+1)
	}
	if s := st.tab[v][n]; s != "" {
		return s
	}
	var nm map[int32]int
	if n > 0 {
		nm = map[int32]int{c.Reason: n}
	}
	s := symbol(st.m, c, nm)
	st.tab[v][n] = s
	return s
}

func symbol(m *reach.Matrix, c reach.Cell, num map[int32]int) string {
	var s string
	allowed, denied, partial, na := syms(m)
	switch c.Verdict {
	case reach.Allowed:
		return allowed
	case reach.Denied:
		s = denied
	case reach.Partial:
		s = partial
	default:
		s = na
	}
	if n, ok := num[c.Reason]; ok {
		s += strconv.Itoa(n)
	}
	return s
}

func pad(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func padLeft(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// WriteText prints the matrix: sources as rows, numbered destinations as
// columns, a key of the destinations and sources, and the numbered
// reasons of every cell that is not allowed.
func WriteText(w io.Writer, m *reach.Matrix) error { return View{}.Text(w, m) }

// Text is WriteText of the view's rows and columns.
func (v View) Text(w io.Writer, m *reach.Matrix) error {
	bw := bufio.NewWriter(w)
	if len(m.Sources) == 0 || len(m.Destinations) == 0 {
		fmt.Fprintf(bw, "No sources or no destinations selected (%d source%s, %d destination%s): -n and -A choose the namespaces, --from and --to filter them.\n",
			len(m.Sources), plural(len(m.Sources)), len(m.Destinations), plural(len(m.Destinations)))
		return bw.Flush()
	}
	sel := v.selection(m)
	if len(sel.rows) == 0 {
		bw.WriteString("No denied cells among the selected sources and destinations.\n")
		return bw.Flush()
	}
	num, order := legend(m, sel)
	tab := symbolTable(m, num)
	lw := len("SOURCE \\ DESTINATION")
	for _, i := range sel.rows {
		lw = max(lw, utf8.RuneCountInString(m.Sources[i].Label))
	}
	cw := make([]int, len(sel.cols))
	for k := range sel.cols {
		cw[k] = len(strconv.Itoa(k + 1))
	}
	// Widths first, then the rows: a symbol per cell is made twice rather
	// than held (a whole cluster's matrix has a hundred million cells).
	sel.eachRow(m, func(_ int, cells []reach.Cell) {
		for k, j := range sel.cols {
			cw[k] = max(cw[k], utf8.RuneCountInString(tab.of(cells[j])))
		}
	})
	head := pad("SOURCE \\ DESTINATION", lw)
	for k := range sel.cols {
		head += "  " + pad(strconv.Itoa(k+1), cw[k])
	}
	bw.WriteString(strings.TrimRight(head, " ") + "\n")
	var line strings.Builder
	var c [4]int
	sel.eachRow(m, func(i int, cells []reach.Cell) {
		line.Reset()
		line.WriteString(pad(m.Sources[i].Label, lw))
		for k, j := range sel.cols {
			line.WriteString("  ")
			line.WriteString(pad(tab.of(cells[j]), cw[k]))
			c[cells[j].Verdict&3]++
		}
		bw.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	})
	allowed, denied, partial, na := syms(m)
	dash := "—"
	if m.ASCII {
		dash = "-"
	}
	fmt.Fprintf(bw, "\n%s allowed  %sN denied  %sN partial (some pairs only)  %sN not applicable  %s N: reason below\n", allowed, denied, partial, na, dash)
	fmt.Fprintf(bw, "%d cells: %d allowed, %d denied, %d partial, %d n/a\n", len(sel.rows)*len(sel.cols), c[reach.Allowed], c[reach.Denied], c[reach.Partial], c[reach.NotApplicable])
	if v.OnlyDenied {
		fmt.Fprintf(bw, "--only denied: the %d of %d sources and %d of %d destinations with a denied cell\n", len(sel.rows), len(m.Sources), len(sel.cols), len(m.Destinations))
	}

	bw.WriteString("\nDESTINATIONS\n")
	nw := len(strconv.Itoa(len(sel.cols)))
	dl, pl := 0, 0
	for _, j := range sel.cols {
		d := &m.Destinations[j]
		dl = max(dl, utf8.RuneCountInString(d.Label))
		pl = max(pl, utf8.RuneCountInString(d.PortLabel()))
	}
	for k, j := range sel.cols {
		d := m.Destinations[j]
		extra := fmt.Sprintf("%d pod%s, %s", len(d.Pods), plural(len(d.Pods)), d.OS)
		if d.Kind == "service" {
			extra = "ClusterIP " + d.ClusterIP().String()
		}
		fmt.Fprintf(bw, "  %s  %s  %s  %s\n", padLeft(strconv.Itoa(k+1), nw), pad(d.Label, dl), pad(d.PortLabel(), pl), extra)
	}
	bw.WriteString("\nSOURCES\n")
	sw := 0
	for _, i := range sel.rows {
		sw = max(sw, utf8.RuneCountInString(m.Sources[i].Label))
	}
	for _, i := range sel.rows {
		s := m.Sources[i]
		if s.Kind == "node" {
			fmt.Fprintf(bw, "  %s  node, %s (its host network and host-network pods)\n", pad(s.Label, sw), s.OS)
			continue
		}
		fmt.Fprintf(bw, "  %s  %d pod%s, %s, on %s\n", pad(s.Label, sw), len(s.Pods), plural(len(s.Pods)), s.OS, strings.Join(s.Nodes, ", "))
	}
	if len(order) > 0 {
		bw.WriteString("\nREASONS\n")
		rw := len(strconv.Itoa(len(order)))
		for i, id := range order {
			r := m.Reasons[id]
			if r.Hop != "" {
				fmt.Fprintf(bw, "  %s  at %s: %s\n", padLeft(strconv.Itoa(i+1), rw), r.Hop, r.Text)
			} else {
				fmt.Fprintf(bw, "  %s  %s\n", padLeft(strconv.Itoa(i+1), rw), r.Text)
			}
		}
	}
	st := m.Stats
	fmt.Fprintf(bw, "\n%d pods in %d classes on %d node group%s; %d representative trace%s\n",
		st.Pods, st.Classes, st.NodeGroups, plural(st.NodeGroups), st.Traces, plural(st.Traces))
	if len(st.SplitGroups) > 0 {
		fmt.Fprintf(bw, "split by node (same-node and cross-node paths differ): %s\n", strings.Join(st.SplitGroups, ", "))
	}
	for _, n := range m.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	for _, x := range st.Mismatches {
		fmt.Fprintf(bw, "warning: a representative trace disagrees with the composed answer: %s\n", x)
	}
	return bw.Flush()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// WriteJSON prints the cells as a JSON list of {from, to, port, proto,
// verdict, reason, hop}, one per line.
func WriteJSON(w io.Writer, m *reach.Matrix) error { return View{}.JSON(w, m) }

// JSON is WriteJSON of the view's cells.
func (v View) JSON(w io.Writer, m *reach.Matrix) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	first := true
	err := m.Entries(func(e reach.Entry) error {
		if !v.keep(e) {
			return nil
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		bw.WriteString("\n  ")
		bw.Write(b)
		return nil
	})
	if err != nil {
		return err
	}
	if !first {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}

// WriteCSV prints a header and one row per cell.
func WriteCSV(w io.Writer, m *reach.Matrix) error { return View{}.CSV(w, m) }

// CSV is WriteCSV of the view's cells.
func (v View) CSV(w io.Writer, m *reach.Matrix) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"from", "to", "port", "proto", "verdict", "reason", "hop"}); err != nil {
		return err
	}
	err := m.Entries(func(e reach.Entry) error {
		if !v.keep(e) {
			return nil
		}
		return cw.Write([]string{e.From, e.To, strconv.Itoa(e.Port), e.Proto, e.Verdict, e.Reason, e.Hop})
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
