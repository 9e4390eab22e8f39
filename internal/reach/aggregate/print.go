package aggregate

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// numbering numbers the denied connections' reasons in the order they
// first appear, cell by cell.
func (v *View) numbering() (num map[int32]int, order []ReasonCount) {
	num = map[int32]int{}
	total := map[int32]int64{}
	for _, c := range v.Cells {
		for _, r := range c.Reasons {
			if _, ok := num[r.ID]; !ok {
				order = append(order, r)
				num[r.ID] = len(order)
			}
			total[r.ID] += r.Pairs
		}
	}
	for k := range order {
		order[k].Pairs = total[order[k].ID]
	}
	return num, order
}

func refs(c Cell, num map[int32]int) string {
	ns := make([]string, 0, len(c.Reasons))
	for _, r := range c.Reasons {
		ns = append(ns, strconv.Itoa(num[r.ID]))
	}
	return strings.Join(ns, ",")
}

// symbol is a grid cell: each verdict's connections after its symbol,
// and the denied ones' reason numbers.
func (v *View) symbol(c Cell, num map[int32]int) string {
	allowed, denied, partial, na := "✓", "✗", "~", "·"
	if v.ASCII {
		allowed, denied, na = "+", "x", "."
	}
	var parts []string
	if c.Allowed > 0 {
		parts = append(parts, allowed+strconv.FormatInt(c.Allowed, 10))
	}
	if c.Denied > 0 {
		parts = append(parts, denied+strconv.FormatInt(c.Denied, 10)+" r"+refs(c, num))
	}
	if c.Partial > 0 {
		parts = append(parts, partial+strconv.FormatInt(c.Partial, 10))
	}
	if c.NA > 0 {
		parts = append(parts, na+strconv.FormatInt(c.NA, 10))
	}
	return strings.Join(parts, " ")
}

func pad(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (v *View) noun() string {
	if v.By == ByWorkload {
		return "workload"
	}
	return "namespace"
}

func (v *View) empty(bw *bufio.Writer) error {
	if v.OnlyDenied {
		fmt.Fprintf(bw, "No denied connections between the selected %ss.\n", v.noun())
	} else {
		fmt.Fprintf(bw, "No connections selected: -n and -A choose the namespaces, --from and --to filter them.\n")
	}
	for _, n := range v.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
	return bw.Flush()
}

// totals is the line that counts every connection of the view.
func (v *View) totals() string {
	t := v.Total
	s := fmt.Sprintf("%d connection%s in %d cell%s: %d allowed, %d denied, %d partial, %d n/a",
		t.Pairs(), plural(t.Pairs()), len(v.Cells), plural(int64(len(v.Cells))), t.Allowed, t.Denied, t.Partial, t.NA)
	if v.OnlyDenied {
		s += "\n--only denied: the cells with denied connections"
	}
	return s
}

func (v *View) tail(bw *bufio.Writer, order []ReasonCount) {
	if len(order) > 0 {
		bw.WriteString("\nREASONS (of the denied connections)\n")
		rw := len(strconv.Itoa(len(order)))
		for k, r := range order {
			n := strconv.Itoa(k + 1)
			n = strings.Repeat(" ", rw-len(n)) + n
			if r.Hop != "" {
				fmt.Fprintf(bw, "  %s  at %s: %s (%d connection%s)\n", n, r.Hop, r.Reason, r.Pairs, plural(r.Pairs))
			} else {
				fmt.Fprintf(bw, "  %s  %s (%d connection%s)\n", n, r.Reason, r.Pairs, plural(r.Pairs))
			}
		}
	}
	for _, n := range v.Notes {
		fmt.Fprintf(bw, "note: %s\n", n)
	}
}

// WriteGrid prints the view as a grid: rows are the source groups,
// numbered columns the destination groups, a key of the columns and the
// numbered reasons.
func WriteGrid(w io.Writer, v *View) error {
	bw := bufio.NewWriter(w)
	if len(v.Cells) == 0 {
		return v.empty(bw)
	}
	num, order := v.numbering()
	col := map[string]int{}
	for j, c := range v.Columns {
		col[c] = j
	}
	corner := "FROM \\ TO"
	lw := len(corner)
	for _, r := range v.Rows {
		lw = max(lw, utf8.RuneCountInString(r))
	}
	cw := make([]int, len(v.Columns))
	for j := range v.Columns {
		cw[j] = len(strconv.Itoa(j + 1))
	}
	syms := make([]string, len(v.Cells))
	for k, c := range v.Cells {
		syms[k] = v.symbol(c, num)
		j := col[c.To]
		cw[j] = max(cw[j], utf8.RuneCountInString(syms[k]))
	}
	line := pad(corner, lw)
	for j := range v.Columns {
		line += "  " + pad(strconv.Itoa(j+1), cw[j])
	}
	bw.WriteString(strings.TrimRight(line, " ") + "\n")
	for k := 0; k < len(v.Cells); {
		from := v.Cells[k].From
		cells := make([]string, len(v.Columns))
		for ; k < len(v.Cells) && v.Cells[k].From == from; k++ {
			cells[col[v.Cells[k].To]] = syms[k]
		}
		line := pad(from, lw)
		for j, s := range cells {
			if s == "" {
				s = "-"
			}
			line += "  " + pad(s, cw[j])
		}
		bw.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	allowed, denied, na := "✓", "✗", "·"
	if v.ASCII {
		allowed, denied, na = "+", "x", "."
	}
	fmt.Fprintf(bw, "\n%sN allowed  %sN rK denied (reasons K)  ~N partial  %sN not applicable  - none: N connections, each a source pod or node and a destination pod at one port, or a Service port\n", allowed, denied, na)
	bw.WriteString(v.totals() + "\n")
	fmt.Fprintf(bw, "\nCOLUMNS (%ss)\n", v.noun())
	nw := len(strconv.Itoa(len(v.Columns)))
	for j, c := range v.Columns {
		n := strconv.Itoa(j + 1)
		fmt.Fprintf(bw, "  %s%s  %s\n", strings.Repeat(" ", nw-len(n)), n, c)
	}
	v.tail(bw, order)
	return bw.Flush()
}

// WriteTable prints one line per cell: its groups, verdict, connections
// by verdict and the numbers of the denied ones' reasons, listed below.
func WriteTable(w io.Writer, v *View) error {
	bw := bufio.NewWriter(w)
	if len(v.Cells) == 0 {
		return v.empty(bw)
	}
	num, order := v.numbering()
	var tab bytes.Buffer
	tw := tabwriter.NewWriter(&tab, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tVERDICT\tCONNECTIONS\tALLOWED\tDENIED\tPARTIAL\tN/A\tREASONS")
	for _, c := range v.Cells {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", c.From, c.To, c.Verdict, c.Pairs, c.Allowed, c.Denied, c.Partial, c.NA, refs(c, num))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A cell without denied connections leaves the last column empty.
	for _, l := range strings.SplitAfter(tab.String(), "\n") {
		if l != "" {
			bw.WriteString(strings.TrimRight(l, " \n") + "\n")
		}
	}
	bw.WriteString("\n" + v.totals() + "\n(-o matrix for the grid, -o json for every cell with its reasons)\n")
	v.tail(bw, order)
	return bw.Flush()
}

// WriteJSON prints the view as one JSON object (the View type's fields:
// by, onlyDenied, rows, columns, cells, total, notes).
func WriteJSON(w io.Writer, v *View) error {
	out := *v
	if out.Cells == nil {
		out.Cells = []Cell{}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteCSV prints a header and one row per cell; reasons are "hop:
// reason (N)" joined by "; ".
func WriteCSV(w io.Writer, v *View) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"from", "to", "verdict", "connections", "allowed", "denied", "partial", "na", "reasons"}); err != nil {
		return err
	}
	for _, c := range v.Cells {
		var rs []string
		for _, r := range c.Reasons {
			s := r.Reason
			if r.Hop != "" {
				s = r.Hop + ": " + s
			}
			rs = append(rs, fmt.Sprintf("%s (%d)", s, r.Pairs))
		}
		i := func(n int64) string { return strconv.FormatInt(n, 10) }
		if err := cw.Write([]string{c.From, c.To, c.Verdict, i(c.Pairs), i(c.Allowed), i(c.Denied), i(c.Partial), i(c.NA), strings.Join(rs, "; ")}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
