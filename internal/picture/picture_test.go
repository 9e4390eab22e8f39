package picture

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// hostile is a string a cluster could hold in an annotation, a message or
// a label value, meant to break out of wherever it is printed.
const hostile = `x"><script>alert(1)</script><img src=http://127.0.0.1/ onerror=alert(2)>'&\"; label=evil`

// hostileReport puts the hostile string in every field a cluster gives.
func hostileReport() *Report {
	return &Report{
		Topology: Topology{
			Nodes: []Node{{Name: hostile, OS: "linux", Role: hostile, IP: hostile, Blocks: []string{hostile},
				VTEP: &VTEP{Addr: hostile, MAC: hostile}, Pods: []Pod{{Namespace: hostile, Name: hostile, IP: hostile}}, Findings: 1}},
			Mesh:     Mesh{VNI: 4096, Port: 4789, Members: []string{hostile}},
			Services: []Service{{Namespace: hostile, Name: hostile, Type: hostile, ClusterIP: hostile, Ports: []string{hostile}, Backends: []Backend{{Pod: hostile, Node: hostile, IP: hostile}}}},
		},
		Checked:  true,
		Findings: []Finding{{Severity: "error", RuleID: hostile, Title: hostile, Object: hostile, Field: hostile, Message: hostile, Fix: hostile, Location: hostile}},
		NotRun:   []string{hostile},
		Reach: &Heat{Rows: []string{hostile}, Cols: []string{hostile}, Cells: [][]HeatCell{{{Allowed: 1, Class: "allowed", Why: hostile}}},
			Allowed: 1, Notes: []string{hostile}},
		Traces: []Trace{{Title: hostile, Outcome: hostile, Reason: hostile, AtNode: hostile, Fix: hostile, Lanes: []string{hostile},
			Hops: []Hop{{Leg: hostile, Component: hostile, Action: hostile, Verdict: hostile, Before: hostile, After: hostile, Reason: hostile}}}},
		Notes: []string{hostile},
	}
}

// TestAClusterStringIsShownNeverInterpreted: markup in any field the
// cluster provides comes out escaped in the page and the SVG (which stays
// well-formed XML), and as one quoted string in DOT.
func TestAClusterStringIsShownNeverInterpreted(t *testing.T) {
	r := hostileReport()
	page, err := HTML(r, hostile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<script") || strings.Contains(string(page), "<img") {
		t.Errorf("the page holds markup from the cluster")
	}
	if !strings.Contains(string(page), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the page does not show the hostile string escaped")
	}
	for _, v := range Views {
		svg, err := SVG(r, v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(svg), "<script") || strings.Contains(string(svg), "<img") {
			t.Errorf("%s: the SVG holds markup from the cluster", v)
		}
		if err := wellFormed(svg); err != nil {
			t.Errorf("%s: the SVG is not well-formed XML: %v", v, err)
		}
		dot, err := DOT(r, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := dotStringsClose(string(dot)); err != nil {
			t.Errorf("%s: %v\n%s", v, err, dot)
		}
		if strings.Contains(string(dot), "label=evil") && !strings.Contains(string(dot), `\"; label=evil`) {
			t.Errorf("%s: the hostile string's quote ended a DOT string", v)
		}
	}
}

// dotStringsClose checks that every DOT line's quoted strings close on
// it: an unescaped quote inside a name would leave one open.
func dotStringsClose(dot string) error {
	for i, line := range strings.Split(dot, "\n") {
		open := false
		for j := 0; j < len(line); j++ {
			switch {
			case open && line[j] == '\\':
				j++
			case line[j] == '"':
				open = !open
			}
		}
		if open {
			return &lineError{i + 1, line}
		}
	}
	return nil
}

type lineError struct {
	n    int
	line string
}

func (e *lineError) Error() string {
	return "unclosed quoted string on line " + strconv.Itoa(e.n) + ": " + e.line
}

func TestDotQuoteEscapesQuotesBackslashesAndLineBreaks(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a plain name stays as it is", "k8s-node-1", `"k8s-node-1"`},
		{"a quote is escaped", `a"b`, `"a\"b"`},
		{"a backslash is escaped", `a\b`, `"a\\b"`},
		{"a line break becomes Graphviz's", "a\nb", `"a\nb"`},
		{"other control characters are dropped", "a\x00\tb\x7f", `"ab"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dotQuote(tc.in); got != tc.want {
				t.Errorf("dotQuote(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestALargeMatrixIsDrawnPerNamespace: the generator's default cluster
// has more rows than a heat map draws cell by cell; the aggregated map's
// rows are the source namespaces and its counts add up to the matrix's.
func TestALargeMatrixIsDrawnPerNamespace(t *testing.T) {
	o := gen.Options{Nodes: 10, WindowsNodes: 2, Namespaces: 3, Pods: 100, Services: 20, Policies: 10, Seed: 1}
	c, err := engine.Build(gentest.Snapshot(t, o, load.Options{DropRaw: true}))
	if err != nil {
		t.Fatal(err)
	}
	e, err := trace.New(c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := reach.Compute(e, reach.Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Sources) <= maxHeatRows && len(m.Destinations) <= maxHeatCols {
		t.Fatalf("the generated matrix is %d×%d, small enough to draw cell by cell; the test needs a larger one", len(m.Sources), len(m.Destinations))
	}
	h := heat(m)
	if !h.Aggregated {
		t.Fatal("a large matrix is drawn cell by cell")
	}
	namespaces := map[string]bool{}
	for _, src := range m.Sources {
		namespaces[sourceGroup(src)] = true
	}
	if len(h.Rows) != len(namespaces) {
		t.Errorf("%d rows, want one per source namespace (%d): %v", len(h.Rows), len(namespaces), h.Rows)
	}
	sum := map[reach.Verdict]int{}
	for _, row := range h.Cells {
		for _, hc := range row {
			sum[reach.Allowed] += hc.Allowed
			sum[reach.Denied] += hc.Denied
			sum[reach.Partial] += hc.Partial
			sum[reach.NotApplicable] += hc.NA
		}
	}
	want := m.Counts()
	for _, v := range []reach.Verdict{reach.Allowed, reach.Denied, reach.Partial, reach.NotApplicable} {
		if sum[v] != want[v] {
			t.Errorf("%s: the heat map holds %d cells, the matrix %d", v, sum[v], want[v])
		}
	}
	if h.Allowed != want[reach.Allowed] || h.Denied != want[reach.Denied] {
		t.Errorf("totals %d allowed %d denied, the matrix %v", h.Allowed, h.Denied, want)
	}
}

func TestAMixedCellIsColouredByItsShareAllowed(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell HeatCell
		want string
	}{
		{"only n/a cells are n/a", HeatCell{NA: 3}, "na"},
		{"all allowed is allowed", HeatCell{Allowed: 2, NA: 1}, "allowed"},
		{"all denied is denied", HeatCell{Denied: 5}, "denied"},
		{"all partial is partial", HeatCell{Partial: 1}, "partial"},
		{"one allowed of four is the second step", HeatCell{Allowed: 1, Denied: 3}, "mix1"},
		{"half allowed is the middle", HeatCell{Allowed: 2, Denied: 2}, "mix2"},
		{"nearly all allowed is the top step", HeatCell{Allowed: 9, Partial: 1}, "mix4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := heatClass(&tc.cell); got != tc.want {
				t.Errorf("heatClass(%+v) = %s, want %s", tc.cell, got, tc.want)
			}
		})
	}
}

func TestAViewWithoutItsDataIsAnError(t *testing.T) {
	r := &Report{}
	for _, tc := range []struct {
		name string
		view View
		want string
	}{
		{"reach without a matrix", ViewReach, "no reachability matrix"},
		{"trace without a trace", ViewTrace, "no trace was given"},
		{"an unknown view", View("cells"), `unknown view "cells"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := SVG(r, tc.view); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SVG: %v, want %q", err, tc.want)
			}
			if _, err := DOT(r, tc.view); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DOT: %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzAnyClusterStringKeepsEveryOutputSound puts one string in every
// field a cluster gives: the page holds no markup of it, the SVG stays
// well-formed XML and every DOT string closes.
func FuzzAnyClusterStringKeepsEveryOutputSound(f *testing.F) {
	for _, s := range []string{hostile, "k8s-lab-win-1", "a\x00b\x01\"\\\n", "\ufffe</svg>", "]]><!--", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := hostileReport()
		replaceAll(r, s)
		page, err := HTML(r, s)
		if err != nil {
			t.Fatal(err)
		}
		// s unescaped in the page would show as s itself, where a page
		// of a plain string has no such text of its own.
		if strings.Contains(s, "<") && strings.Contains(string(page), s) && !strings.Contains(plainPage(t), s) {
			t.Errorf("the page holds %q unescaped", s)
		}
		for _, v := range Views {
			svg, err := SVG(r, v)
			if err != nil {
				t.Fatal(err)
			}
			if err := wellFormed(svg); err != nil {
				t.Errorf("%s: %v", v, err)
			}
			dot, err := DOT(r, v)
			if err != nil {
				t.Fatal(err)
			}
			if err := dotStringsClose(string(dot)); err != nil {
				t.Errorf("%s: %v", v, err)
			}
		}
	})
}

// plainPage is the hostile report's page with every string "x".
func plainPage(t *testing.T) string {
	r := hostileReport()
	replaceAll(r, "x")
	page, err := HTML(r, "x")
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

// replaceAll sets every string of the hostile report to s.
func replaceAll(r *Report, s string) {
	n := &r.Topology.Nodes[0]
	n.Name, n.Role, n.IP, n.Blocks[0], n.VTEP.Addr, n.VTEP.MAC = s, s, s, s, s, s
	n.Pods[0] = Pod{Namespace: s, Name: s, IP: s}
	r.Topology.Mesh.Members[0] = s
	r.Topology.Services[0] = Service{Namespace: s, Name: s, Type: s, ClusterIP: s, Ports: []string{s}, Backends: []Backend{{Pod: s, Node: s, IP: s}}}
	r.Findings[0] = Finding{Severity: s, RuleID: s, Title: s, Object: s, Field: s, Message: s, Fix: s, Location: s}
	r.NotRun[0], r.Notes[0] = s, s
	r.Reach.Rows[0], r.Reach.Cols[0], r.Reach.Notes[0], r.Reach.Cells[0][0].Why = s, s, s, s
	tr := &r.Traces[0]
	tr.Title, tr.Outcome, tr.Reason, tr.AtNode, tr.Fix, tr.Lanes[0] = s, s, s, s, s, s
	tr.Hops[0] = Hop{Leg: s, Component: s, Action: s, Verdict: s, Before: s, After: s, Reason: s}
}
