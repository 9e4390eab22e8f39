package picture

import (
	"bytes"
	"fmt"
	"strings"
)

// dotQuote makes s one Graphviz quoted string (the DOT language's ID):
// quotes and backslashes escaped, a line break as \n (Graphviz's centred
// line), other control characters dropped.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxMeshPairs: a mesh with more members than this is drawn as a hub the
// VTEPs connect to, not as every pair.
const maxMeshPairs = 12

// DOT writes one view as a Graphviz graph.
func DOT(r *Report, v View) ([]byte, error) {
	var b bytes.Buffer
	switch v {
	case ViewTopology:
		dotTopology(&b, &r.Topology)
	case ViewReach:
		if r.Reach == nil {
			return nil, fmt.Errorf("no reachability matrix was computed")
		}
		dotHeat(&b, r.Reach)
	case ViewTrace:
		if len(r.Traces) == 0 {
			return nil, fmt.Errorf("no trace was given (--trace)")
		}
		dotTraces(&b, r.Traces)
	default:
		return nil, fmt.Errorf("unknown view %q: use topology, reach or trace", v)
	}
	return b.Bytes(), nil
}

func dotTopology(b *bytes.Buffer, t *Topology) {
	b.WriteString("graph topology {\n  graph [fontname=\"monospace\", compound=true];\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n")
	os := ""
	for i, n := range t.Nodes {
		if n.OS != os {
			if os != "" {
				b.WriteString("  }\n")
			}
			os = n.OS
			fmt.Fprintf(b, "  subgraph %s {\n    label=%s;\n", dotQuote("cluster_"+os), dotQuote(osTitle(os)))
		}
		lines, _ := nodeLines(&t.Nodes[i])
		fmt.Fprintf(b, "    %s [label=%s];\n", dotQuote("node/"+n.Name), dotQuote(n.Name+"\n"+strings.Join(lines, "\n")))
	}
	if os != "" {
		b.WriteString("  }\n")
	}
	m := t.Mesh
	attrs := fmt.Sprintf("color=\"#8250df\", penwidth=2, tooltip=%s", dotQuote(fmt.Sprintf("VXLAN VNI %d, UDP %d", m.VNI, m.Port)))
	if len(m.Members) <= maxMeshPairs {
		for i, a := range m.Members {
			for _, bn := range m.Members[i+1:] {
				fmt.Fprintf(b, "  %s -- %s [%s];\n", dotQuote("node/"+a), dotQuote("node/"+bn), attrs)
			}
		}
	} else {
		fmt.Fprintf(b, "  %s [shape=ellipse, label=%s];\n", dotQuote("vxlan"), dotQuote(meshLabel(t)))
		for _, a := range m.Members {
			fmt.Fprintf(b, "  %s -- %s [%s];\n", dotQuote("node/"+a), dotQuote("vxlan"), attrs)
		}
	}
	for _, s := range t.Services {
		id := "svc/" + s.Namespace + "/" + s.Name
		fmt.Fprintf(b, "  %s [shape=note, label=%s];\n", dotQuote(id),
			dotQuote(fmt.Sprintf("%s/%s\n%s %s\n%s", s.Namespace, s.Name, s.Type, orDash(s.ClusterIP), strings.Join(s.Ports, ","))))
		count := 0
		for i, be := range s.Backends {
			count++
			if i == len(s.Backends)-1 || s.Backends[i+1].Node != be.Node {
				if be.Node != "" {
					fmt.Fprintf(b, "  %s -- %s [style=dashed, label=%s];\n", dotQuote(id), dotQuote("node/"+be.Node), dotQuote(fmt.Sprintf("%d endpoints", count)))
				}
				count = 0
			}
		}
	}
	b.WriteString("}\n")
}

// heatColour is a cell class's colour in DOT (the SVG's palette).
var heatColour = map[string]string{
	"allowed": "#2da44e", "denied": "#cf222e", "partial": "#bf8700", "na": "#eaeef2",
	"mix0": "#e5534b", "mix1": "#f0883e", "mix2": "#d4a72c", "mix3": "#8ddb8c", "mix4": "#57ab5a",
}

// dotHeat draws the matrix as a bipartite graph: an edge from each source
// to each destination it is not n/a for, coloured as the heat map's cell.
func dotHeat(b *bytes.Buffer, h *Heat) {
	b.WriteString("digraph reach {\n  graph [rankdir=LR, fontname=\"monospace\"];\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n")
	for _, r := range h.Rows {
		fmt.Fprintf(b, "  %s [label=%s];\n", dotQuote("from/"+r), dotQuote(r))
	}
	for _, col := range h.Cols {
		fmt.Fprintf(b, "  %s [label=%s, shape=box3d];\n", dotQuote("to/"+col), dotQuote(col))
	}
	for i, r := range h.Rows {
		for j, col := range h.Cols {
			hc := &h.Cells[i][j]
			if hc.Class == "na" {
				continue
			}
			label := ""
			if h.Aggregated {
				label = fmt.Sprintf(", label=%s", dotQuote(fmt.Sprintf("%d/%d/%d", hc.Allowed, hc.Denied, hc.Partial)))
			}
			fmt.Fprintf(b, "  %s -> %s [color=%s%s, tooltip=%s];\n", dotQuote("from/"+r), dotQuote("to/"+col), dotQuote(heatColour[hc.Class]), label, dotQuote(hc.Why))
		}
	}
	b.WriteString("}\n")
}

// hopColour is a hop verdict's border colour in DOT.
var hopColour = map[string]string{"deliver": "#2da44e", "drop": "#cf222e", "reject": "#cf222e", "warn": "#9a6700"}

func dotTraces(b *bytes.Buffer, ts []Trace) {
	b.WriteString("digraph traces {\n  graph [fontname=\"monospace\", newrank=true];\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n")
	for ti := range ts {
		t := &ts[ti]
		prefix := fmt.Sprintf("t%d/", ti+1)
		fmt.Fprintf(b, "  subgraph %s {\n    label=%s;\n", dotQuote(fmt.Sprintf("cluster_trace_%d", ti+1)),
			dotQuote(fmt.Sprintf("%d. %s: %s", ti+1, t.Title, t.Outcome)))
		for li, lane := range t.Lanes {
			fmt.Fprintf(b, "    subgraph %s {\n      label=%s;\n", dotQuote(fmt.Sprintf("cluster_trace_%d_lane_%d", ti+1, li)), dotQuote(lane))
			for hi, h := range t.Hops {
				if h.Lane != li {
					continue
				}
				colour := ""
				if c, ok := hopColour[h.Verdict]; ok {
					colour = ", color=" + dotQuote(c) + ", penwidth=2"
				}
				fmt.Fprintf(b, "      %s [label=%s, tooltip=%s%s];\n", dotQuote(fmt.Sprintf("%s%d", prefix, hi+1)),
					dotQuote(fmt.Sprintf("%d %s\n%s: %s\n%s", hi+1, h.Leg, h.Component, h.Action, h.Verdict)), dotQuote(hopTitle(&h)), colour)
			}
			b.WriteString("    }\n")
		}
		for hi := 1; hi < len(t.Hops); hi++ {
			fmt.Fprintf(b, "    %s -> %s;\n", dotQuote(fmt.Sprintf("%s%d", prefix, hi)), dotQuote(fmt.Sprintf("%s%d", prefix, hi+1)))
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
}
