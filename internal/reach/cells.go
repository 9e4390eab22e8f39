package reach

import (
	"fmt"
	"net/netip"
)

// EachRow visits every source's cells in order (Row, with one buffer); the
// visitor must not keep or change them.
func (m *Matrix) EachRow(visit func(i int, cells []Cell)) {
	var buf []Cell
	for i := range m.Sources {
		cells := m.Row(i, buf)
		visit(i, cells)
		if m.rows[i].cells == nil {
			buf = cells
		}
	}
}

// Counts tallies the cells by verdict.
func (m *Matrix) Counts() map[Verdict]int {
	var n [4]int
	m.EachRow(func(_ int, cells []Cell) {
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

// PortLabel is a destination's port as the matrix's key shows it.
func (d Destination) PortLabel() string {
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

// ClusterIP is a Service column's ClusterIP.
func (d Destination) ClusterIP() netip.Addr { return d.vipAddr }

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
	m.EachRow(func(i int, cells []Cell) {
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

// NotModeled reports whether a reason of the cell comes from a trace that
// stopped where the twin does not model what happens: its verdict is not
// known.
func (m *Matrix) NotModeled(c Cell) bool {
	for _, i := range []int32{c.Reason, c.Also} {
		if i >= 0 && int(i) < len(m.Reasons) && m.Reasons[i].NotModeled {
			return true
		}
	}
	return false
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
