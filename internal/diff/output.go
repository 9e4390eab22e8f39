package diff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxPodsShown bounds the pods a text line names for a class; JSON lists
// them all.
const maxPodsShown = 5

// WriteJSON prints the result as one indented JSON object: the bytes of
// one json.Encoder with a two-space indent, the nodes written one at a
// time (NodeJSON), which at 1,000 nodes are most of the output and which
// one encoding would hold in memory twice (compact, then indented).
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	shell := *r
	shell.Nodes = nil
	var rest bytes.Buffer
	enc := json.NewEncoder(&rest)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&shell); err != nil {
		return err
	}
	if len(r.Nodes) == 0 {
		bw.Write(rest.Bytes())
		return bw.Flush()
	}
	// nodes is the result's first key.
	bw.WriteString("{\n  \"nodes\": [\n    ")
	x := NewNodeJSON(true) // json.Encoder's default
	for i := range r.Nodes {
		if i > 0 {
			bw.WriteString(",\n    ")
		}
		if err := x.Write(bw, &r.Nodes[i], "    "); err != nil {
			return err
		}
	}
	bw.WriteString("\n  ]")
	if after, ok := bytes.CutPrefix(rest.Bytes(), []byte("{\n")); ok {
		bw.WriteString(",\n")
		bw.Write(after)
	} else {
		bw.WriteString("\n}\n") // the rest was {}
	}
	return bw.Flush()
}

// WriteText prints the result for a reader, section by section: nodes,
// workloads, TigeraStatus, reachability, objects; "+" marks what only the
// after twin has, "-" what only the before twin has. It prints "No
// differences." for an empty result.
func (r *Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if r.Empty() {
		fmt.Fprintln(bw, "No differences.")
		return bw.Flush()
	}
	if len(r.Nodes) > 0 {
		fmt.Fprintf(bw, "Nodes (%d with dataplane changes):\n", len(r.Nodes))
		for _, n := range r.NodeNotes {
			fmt.Fprintf(bw, "  Note: %s\n", n)
		}
		fs := folds(r.Nodes)
		for _, f := range fs {
			f.writeShared(bw, r.Nodes[0].Sections())
		}
		for i := range r.Nodes {
			n := &r.Nodes[i]
			if f := foldOf(fs, n); f != nil {
				f.writeNode(bw, n)
			} else {
				head := fmt.Sprintf("  node/%s (%s)", n.Node, n.OS)
				if n.Change != Changed {
					head += ": " + string(n.Change)
				}
				fmt.Fprintln(bw, head)
				for _, s := range n.Sections() {
					if s.Lines.Empty() {
						continue
					}
					fmt.Fprintf(bw, "    %s: +%d -%d\n", s.Title, len(s.Lines.Added), len(s.Lines.Removed))
					writeLines(bw, "      - ", s.Lines.Removed)
					writeLines(bw, "      + ", s.Lines.Added)
				}
			}
			for _, c := range n.RulesReordered {
				fmt.Fprintf(bw, "    nftables: the rules of %s are reordered\n", c)
			}
		}
	}
	if len(r.Workloads) > 0 {
		fmt.Fprintf(bw, "Workloads (%d):\n", len(r.Workloads))
		for _, wd := range r.Workloads {
			fmt.Fprintf(bw, "  %s: %s\n", wd.Workload, wd.Change)
			for _, f := range wd.Template {
				fmt.Fprintf(bw, "    %s\n", fieldLine(f))
			}
			if wd.Rollout != "" {
				fmt.Fprintf(bw, "    rollout: %s\n", wd.Rollout)
			}
			if wd.Change == Changed {
				if len(wd.Restarts) == 0 {
					fmt.Fprintln(bw, "    restarts: no pod")
				} else {
					fmt.Fprintf(bw, "    restarts (%d): %s\n", len(wd.Restarts), strings.Join(wd.Restarts, ", "))
				}
			}
		}
	}
	if len(r.TigeraStatus) > 0 {
		fmt.Fprintf(bw, "TigeraStatus (%d):\n", len(r.TigeraStatus))
		for _, s := range r.TigeraStatus {
			fmt.Fprintf(bw, "  tigerastatus/%s\n", s.Name)
			for _, c := range s.Before {
				fmt.Fprintf(bw, "    - %s\n", c)
			}
			for _, c := range s.After {
				fmt.Fprintf(bw, "    + %s\n", c)
			}
		}
	}
	if r.Reach != nil && (len(r.Reach.Changes) > 0 || len(r.Reach.Notes) > 0) {
		fmt.Fprintf(bw, "Reachability (%d changed):\n", len(r.Reach.Changes))
		for _, c := range r.Reach.Changes {
			to := c.To
			if c.Port > 0 {
				to += fmt.Sprintf(" %d/%s", c.Port, c.Proto)
			}
			fmt.Fprintf(bw, "  %s: %s -> %s\n", c.Effect, c.From, to)
			if len(c.FromPods) > 0 {
				fmt.Fprintf(bw, "    from pods: %s\n", pods(c.FromPods))
			}
			if len(c.ToPods) > 0 {
				fmt.Fprintf(bw, "    to pods: %s\n", pods(c.ToPods))
			}
			fmt.Fprintf(bw, "    before: %s\n", verdictLine(c.Before))
			fmt.Fprintf(bw, "    after:  %s\n", verdictLine(c.After))
		}
		for _, n := range r.Reach.Notes {
			fmt.Fprintf(bw, "  Note: %s\n", n)
		}
	}
	if len(r.Deferred) > 0 {
		fmt.Fprintf(bw, "Not applied to existing Windows endpoints or HNS networks (%d):\n", len(r.Deferred))
		fmt.Fprintln(bw, "  (modelled for natOutgoing in the node sections: existing Windows endpoints keep their OutBoundNAT, new ones get the new setting; not modelled for a VNI or port change, nor in reachability: those show the state after the procedure, simulated)")
		for _, d := range r.Deferred {
			fmt.Fprintf(bw, "  %s: %s\n", d.Object, fieldLine(FieldChange{Path: d.Field, Before: d.Before, After: d.After}))
			fmt.Fprintf(bw, "    applies to: %s\n", d.Applies)
			fmt.Fprintf(bw, "    Windows nodes (%d): %s\n", len(d.Nodes), strings.Join(d.Nodes, ", "))
			fmt.Fprintln(bw, "    procedure, node by node:")
			for i, p := range d.Procedure {
				fmt.Fprintf(bw, "      %d. %s\n", i+1, p)
			}
		}
	}
	if len(r.Objects) > 0 {
		fmt.Fprintf(bw, "Objects (%d):\n", len(r.Objects))
		for _, o := range r.Objects {
			fmt.Fprintf(bw, "  %s: %s\n", o.Object, o.Change)
			for _, f := range o.Fields {
				fmt.Fprintf(bw, "    %s\n", fieldLine(f))
			}
		}
	}
	return bw.Flush()
}

func fieldLine(f FieldChange) string {
	// A value of several lines (a ConfigMap's file) stays on the line.
	for _, v := range []*string{&f.Before, &f.After} {
		if strings.Contains(*v, "\n") {
			*v = strconv.Quote(*v)
		}
	}
	switch {
	case f.Before == "":
		return fmt.Sprintf("%s: + %s", f.Path, f.After)
	case f.After == "":
		return fmt.Sprintf("%s: - %s", f.Path, f.Before)
	}
	return fmt.Sprintf("%s: %s -> %s", f.Path, f.Before, f.After)
}

func verdictLine(v Verdict) string {
	s := v.Verdict
	if v.Reason != "" {
		s += ": " + v.Reason
	}
	if v.Hop != "" {
		s += " (at " + v.Hop + ")"
	}
	return s
}

func pods(ps []string) string {
	if len(ps) <= maxPodsShown {
		return strings.Join(ps, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ps[:maxPodsShown], ", "), len(ps)-maxPodsShown)
}
