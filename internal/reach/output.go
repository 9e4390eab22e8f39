package reach

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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
func (m *Matrix) syms() (allowed, denied, partial, na string) {
	if m.ASCII {
		return asciiAllowed, asciiDenied, symPartial, asciiNA
	}
	return symAllowed, symDenied, symPartial, symNA
}

// legend numbers the reasons of the cells that are not allowed, in the
// order they first appear (row by row).
func (m *Matrix) legend() (num map[int32]int, order []int32) {
	num = map[int32]int{}
	m.eachRow(func(_ int, cells []Cell) {
		for _, c := range cells {
			if c.Verdict == Allowed || c.Reason < 0 {
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

// eachRow visits every source's cells in order (Row, with one buffer).
func (m *Matrix) eachRow(visit func(i int, cells []Cell)) {
	var buf []Cell
	for i := range m.Sources {
		cells := m.Row(i, buf)
		visit(i, cells)
		if m.rows[i].cells == nil {
			buf = cells
		}
	}
}

// symbols makes each cell's symbol once per verdict and reason number,
// so that printing a large matrix allocates nothing per cell.
type symbols struct {
	m   *Matrix
	num []int // reason id → legend number, 0 for none
	tab [4][]string
}

func (m *Matrix) symbolTable(num map[int32]int) *symbols {
	st := &symbols{m: m, num: make([]int, len(m.Reasons))}
	for id, n := range num {
		if int(id) < len(st.num) {
			st.num[id] = n
		}
	}
	return st
}

func (st *symbols) of(c Cell) string {
	n := 0
	if c.Verdict != Allowed && c.Reason >= 0 && int(c.Reason) < len(st.num) {
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
	s := st.m.symbol(c, nm)
	st.tab[v][n] = s
	return s
}

func (m *Matrix) symbol(c Cell, num map[int32]int) string {
	var s string
	allowed, denied, partial, na := m.syms()
	switch c.Verdict {
	case Allowed:
		return allowed
	case Denied:
		s = denied
	case Partial:
		s = partial
	default:
		s = na
	}
	if n, ok := num[c.Reason]; ok {
		s += strconv.Itoa(n)
	}
	return s
}

// Counts tallies the cells by verdict.
func (m *Matrix) Counts() map[Verdict]int {
	var n [4]int
	m.eachRow(func(_ int, cells []Cell) {
		for _, c := range cells {
			n[c.Verdict&3]++
		}
	})
	out := map[Verdict]int{}
	for v, k := range n {
		if k > 0 {
			out[Verdict(v)] = k
		}
	}
	return out
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

// DestLabel is a destination as a column key shows it.
func (d Destination) portLabel() string {
	switch {
	case d.Kind == "pods" && d.noListen:
		return "(listens on nothing)"
	case d.Proto == "icmp" || d.Proto == "ICMP":
		return "ICMP"
	case d.Kind == "service":
		return fmt.Sprintf("%d/%s → %s", d.Port, d.Proto.Upper(), d.TargetPort)
	}
	return fmt.Sprintf("%d/%s", d.Port, d.Proto.Upper())
}

// WriteText prints the matrix: sources as rows, numbered destinations as
// columns, a key of the destinations and sources, and the numbered
// reasons of every cell that is not allowed.
func (m *Matrix) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if len(m.Sources) == 0 || len(m.Destinations) == 0 {
		fmt.Fprintf(bw, "No sources or no destinations selected (%d source%s, %d destination%s): -n and -A choose the namespaces, --from and --to filter them.\n",
			len(m.Sources), plural(len(m.Sources)), len(m.Destinations), plural(len(m.Destinations)))
		return bw.Flush()
	}
	num, order := m.legend()
	syms := m.symbolTable(num)
	lw := len("SOURCE \\ DESTINATION")
	for _, s := range m.Sources {
		lw = max(lw, utf8.RuneCountInString(s.Label))
	}
	cw := make([]int, len(m.Destinations))
	for j := range m.Destinations {
		cw[j] = len(strconv.Itoa(j + 1))
	}
	// Widths first, then the rows: a symbol per cell is made twice rather
	// than held (a whole cluster's matrix has a hundred million cells).
	m.eachRow(func(_ int, cells []Cell) {
		for j, c := range cells {
			cw[j] = max(cw[j], utf8.RuneCountInString(syms.of(c)))
		}
	})
	head := pad("SOURCE \\ DESTINATION", lw)
	for j := range m.Destinations {
		head += "  " + pad(strconv.Itoa(j+1), cw[j])
	}
	bw.WriteString(strings.TrimRight(head, " ") + "\n")
	var line strings.Builder
	m.eachRow(func(i int, cells []Cell) {
		line.Reset()
		line.WriteString(pad(m.Sources[i].Label, lw))
		for j, c := range cells {
			line.WriteString("  ")
			line.WriteString(pad(syms.of(c), cw[j]))
		}
		bw.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	})
	c := m.Counts()
	allowed, denied, partial, na := m.syms()
	dash := "—"
	if m.ASCII {
		dash = "-"
	}
	fmt.Fprintf(bw, "\n%s allowed  %sN denied  %sN partial (some pairs only)  %sN not applicable  %s N: reason below\n", allowed, denied, partial, na, dash)
	fmt.Fprintf(bw, "%d cells: %d allowed, %d denied, %d partial, %d n/a\n", m.NumCells(), c[Allowed], c[Denied], c[Partial], c[NotApplicable])

	bw.WriteString("\nDESTINATIONS\n")
	nw := len(strconv.Itoa(len(m.Destinations)))
	dl, pl := 0, 0
	for _, d := range m.Destinations {
		dl = max(dl, utf8.RuneCountInString(d.Label))
		pl = max(pl, utf8.RuneCountInString(d.portLabel()))
	}
	for j, d := range m.Destinations {
		extra := fmt.Sprintf("%d pod%s, %s", len(d.Pods), plural(len(d.Pods)), d.OS)
		if d.Kind == "service" {
			extra = "ClusterIP " + d.vipAddr.String()
		}
		fmt.Fprintf(bw, "  %s  %s  %s  %s\n", padLeft(strconv.Itoa(j+1), nw), pad(d.Label, dl), pad(d.portLabel(), pl), extra)
	}
	bw.WriteString("\nSOURCES\n")
	sw := 0
	for _, s := range m.Sources {
		sw = max(sw, utf8.RuneCountInString(s.Label))
	}
	for _, s := range m.Sources {
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

// Entry is one cell as JSON and CSV print it.
type Entry struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Port    int    `json:"port"`
	Proto   string `json:"proto,omitempty"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	Hop     string `json:"hop,omitempty"`
}

// Entries lists every cell, row by row.
func (m *Matrix) Entries(visit func(Entry) error) error {
	var err error
	m.eachRow(func(i int, cells []Cell) {
		s := &m.Sources[i]
		for j, c := range cells {
			if err != nil {
				return
			}
			d := &m.Destinations[j]
			e := Entry{From: s.Label, To: d.Label, Port: d.Port, Proto: string(d.Proto), Verdict: c.Verdict.String()}
			e.Reason, e.Hop = m.Why(c)
			err = visit(e)
		}
	})
	return err
}

// Why is a cell's reason and failing hop: for an allowed cell, "delivered"
// and the decisions that let it through.
func (m *Matrix) Why(c Cell) (reason, hop string) {
	if c.Reason >= 0 && int(c.Reason) < len(m.Reasons) {
		r := m.Reasons[c.Reason]
		reason = r.Text
		if c.Verdict != Allowed {
			hop = r.Hop
		}
	}
	if c.Verdict == Allowed {
		reason = "delivered; " + reason
		if c.Also >= 0 && int(c.Also) < len(m.Reasons) {
			reason += "; " + m.Reasons[c.Also].Text
		}
	}
	return reason, hop
}

// WriteJSON prints the cells as a JSON list of {from, to, port, proto,
// verdict, reason, hop}, one per line.
func (m *Matrix) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	first := true
	err := m.Entries(func(e Entry) error {
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
func (m *Matrix) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"from", "to", "port", "proto", "verdict", "reason", "hop"}); err != nil {
		return err
	}
	err := m.Entries(func(e Entry) error {
		return cw.Write([]string{e.From, e.To, strconv.Itoa(e.Port), e.Proto, e.Verdict, e.Reason, e.Hop})
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
