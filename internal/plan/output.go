package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// WriteJSON prints the bundle as JSON.
func WriteJSON(w io.Writer, b *Bundle) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(b)
}

// WriteYAML prints every object of the plan as one multi-document stream,
// each preceded by a comment naming where it goes.
func WriteYAML(w io.Writer, b *Bundle) error {
	if b.Refused {
		for _, f := range b.Findings {
			if _, err := fmt.Fprintf(w, "# refused: %s %s\n", f.ID, f.Message); err != nil {
				return err
			}
		}
		return nil
	}
	var docs []string
	for _, f := range b.Cluster {
		docs = append(docs, fmt.Sprintf("# %s: kubectl apply -f cluster/%s\n%s", f.Where, f.Path, f.Body))
	}
	for _, n := range b.Nodes {
		for _, f := range n.Files {
			if f.Object {
				docs = append(docs, fmt.Sprintf("# %s %s: %s\n%s", f.Where, n.Name, f.Path, f.Body))
			}
		}
	}
	_, err := io.WriteString(w, strings.Join(docs, "---\n"))
	return err
}

// Files lays the bundle out as it goes onto machines: cluster/ for the
// manifests, NODE/C/… for each host's files, and RUNBOOK.md.
func Files(b *Bundle) map[string]string {
	out := map[string]string{}
	for _, f := range b.Cluster {
		out[path.Join("cluster", f.Path)] = f.Body
	}
	for _, n := range b.Nodes {
		for _, f := range n.Files {
			out[path.Join(n.Name, windowsRel(f.Path))] = f.Body
		}
	}
	var md strings.Builder
	_ = WriteMarkdown(&md, b)
	out["RUNBOOK.md"] = md.String()
	return out
}

// windowsRel turns C:\k\join.yaml into C/k/join.yaml.
func windowsRel(p string) string {
	p = strings.Replace(p, ":", "", 1)
	return strings.ReplaceAll(p, `\`, "/")
}

// WriteText prints the plan for a terminal.
func WriteText(w io.Writer, b *Bundle) error { return write(w, b, false) }

// WriteMarkdown prints the plan as RUNBOOK.md.
func WriteMarkdown(w io.Writer, b *Bundle) error { return write(w, b, true) }

// Printer prints a runbook for a terminal or as Markdown; the first write
// error stops it and Err returns it.
type Printer struct {
	w   io.Writer
	md  bool
	err error
}

// NewPrinter prints to w, as Markdown when md.
func NewPrinter(w io.Writer, md bool) *Printer { return &Printer{w: w, md: md} }

// Err is the first write error.
func (p *Printer) Err() error { return p.err }

// F prints like fmt.Fprintf.

func (p *Printer) F(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// Head prints a section heading.
func (p *Printer) Head(s string) {
	if p.md {
		p.F("\n## %s\n\n", s)
	} else {
		p.F("\n%s\n%s\n", s, strings.Repeat("=", len(s)))
	}
}

// CodeBlock returns a writer whose text, once closed, p has printed as
// Code prints the lines of that text with its trailing newlines dropped;
// it streams, so a long text (a plan's node differences) is never held
// whole.
func (p *Printer) CodeBlock() *CodeBlock {
	b := &CodeBlock{p: p}
	if p.md {
		p.F("```\n")
	}
	return b
}

// CodeBlock is a code block being written (Printer.CodeBlock).
type CodeBlock struct {
	p       *Printer
	started bool
	pending int // newlines read and not yet printed
}

// Write takes more of the block's text.
func (b *CodeBlock) Write(q []byte) (int, error) {
	n := len(q)
	for len(q) > 0 {
		if q[0] == '\n' {
			b.pending++
			q = q[1:]
			continue
		}
		run := q
		if i := bytes.IndexByte(q, '\n'); i >= 0 {
			run = q[:i]
		}
		if !b.started {
			b.started = true
			b.indent()
		}
		for ; b.pending > 0; b.pending-- {
			b.p.write("\n")
			b.indent()
		}
		b.p.writeBytes(run)
		q = q[len(run):]
	}
	return n, b.p.err
}

// indent starts a line: four spaces for a terminal, nothing in Markdown's
// fenced block.
func (b *CodeBlock) indent() {
	if !b.p.md {
		b.p.write("    ")
	}
}

// Close ends the block.
func (b *CodeBlock) Close() error {
	switch {
	case b.p.md:
		b.p.write("\n```\n")
	case !b.started:
		b.p.write("    \n") // an empty text is one empty line, as Code prints it
	default:
		b.p.write("\n")
	}
	return b.p.err
}

func (p *Printer) write(s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, s)
	}
}

func (p *Printer) writeBytes(q []byte) {
	if p.err == nil {
		_, p.err = p.w.Write(q)
	}
}

// Code prints lines as a code block.
func (p *Printer) Code(lines ...string) {
	if p.md {
		p.F("```\n%s\n```\n", strings.Join(lines, "\n"))
		return
	}
	for _, l := range lines {
		p.F("    %s\n", l)
	}
}

func write(w io.Writer, b *Bundle, md bool) error {
	p := &Printer{w: w, md: md}
	if md {
		p.F("# Join Windows nodes: runbook\n")
	}
	if b.Refused {
		p.Head("Refused: the cluster cannot take Windows nodes")
		for _, f := range b.Findings {
			p.F("- %s %s %s: %s\n", f.ID, f.Severity, f.Object, f.Message)
			if f.WayOut != "" {
				p.F("  way out: %s\n", f.WayOut)
			}
		}
		return p.err
	}
	p.nodes(b)
	for _, f := range b.Findings {
		p.F("%s %s: %s\n", strings.ToUpper(f.Severity[:1])+f.Severity[1:], f.ID, f.Message)
	}
	p.values(b)
	p.steps(b)
	p.proof(b)
	return p.err
}

func (p *Printer) nodes(b *Bundle) {
	p.Head("Nodes (predicted by the twin, simulated)")
	for _, n := range b.Nodes {
		p.F("- %s %s (Windows %s, RuntimeClass %s): block %s, tunnel address %s, VTEP MAC %s, maxPods %d, Ready %v\n",
			n.Name, n.Address, n.WindowsBuild, n.RuntimeClass, n.Block, n.TunnelAddress, n.VTEPMAC, n.MaxPods, n.Ready)
	}
}

func (p *Printer) values(b *Bundle) {
	p.Head("Values read from the cluster")
	for _, v := range b.Values {
		p.F("- %s: %s (%s)", v.Name, v.Value, v.Source)
		if v.Fill != "" {
			p.F("; fill with: %s", v.Fill)
		}
		p.F("\n")
	}
}

func (p *Printer) steps(b *Bundle) {
	p.Head("Runbook")
	for i, s := range b.Steps {
		if p.md {
			p.F("\n### %d. %s (%s)\n\n", i+1, s.Title, s.Where)
		} else {
			p.F("\n%d. %s [%s] (%s)\n", i+1, s.Title, s.ID, s.Where)
		}
		if s.Why != "" {
			p.Item("Why: %s", s.Why)
		}
		if len(s.Commands) > 0 {
			p.Code(s.Commands...)
		}
		for _, e := range s.Expect {
			p.Item("Expect: %s", e)
		}
		for _, c := range s.Verify {
			p.Item("Verify: `%s` → %s", c.Command, c.Expect)
		}
		p.Item("Re-run: %s", s.Idempotent)
	}
}

// Item is one line of a step: a list item in Markdown, so that lines do
// not run into one paragraph.
func (p *Printer) Item(format string, args ...any) {
	if p.md {
		p.F("- ")
	}
	p.F(format+"\n", args...)
}

func (p *Printer) proof(b *Bundle) {
	pr := b.Proof
	if pr == nil {
		return
	}
	p.Head("Proof: the plan applied to the twin (simulated)")
	for _, n := range pr.Nodes {
		p.F("- %s: Ready %v, block %s, tunnel %s, VTEP MAC %s, allocatable pods %d, taints %s\n",
			n.Name, n.Ready, n.Block, n.TunnelAddress, n.VTEPMAC, n.AllocatablePods, strings.Join(n.Taints, ","))
		for _, pod := range n.Pods {
			p.F("  - %s\n", pod)
		}
	}
	for _, t := range pr.Traces {
		if t.From == "" {
			p.F("- trace: %s: %s\n", t.Outcome, t.Reason)
			continue
		}
		p.F("- trace %s → %s: %s", t.From, t.To, t.Outcome)
		if t.RequestTTL > 0 {
			p.F(", request TTL %d, reply TTL %d (%s)", t.RequestTTL, t.ReplyTTL, t.TTLSteps)
		}
		if !t.Delivered && t.Reason != "" {
			p.F(": %s", t.Reason)
		}
		p.F("\n")
	}
	counts := map[string]int{}
	for _, f := range pr.Check {
		counts[f.Severity]++
	}
	p.F("- check on the predicted cluster: %d error(s), %d warning(s), %d info\n", counts["error"], counts["warning"], counts["info"])
	sorted := append([]Finding(nil), pr.Check...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Severity < sorted[j].Severity })
	for _, f := range sorted {
		if f.Severity != "info" {
			p.F("  - %s %s %s: %s\n", f.ID, f.Severity, f.Object, f.Message)
		}
	}
	for _, r := range pr.Rejected {
		p.F("- rejected: %s\n", r)
	}
	for _, n := range pr.Notes {
		p.F("- note: %s\n", n)
	}
}
