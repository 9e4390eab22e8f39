package migrate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// WriteJSON prints the migration as JSON: the bytes of one json.Encoder
// with a two-space indent, written a step and, within a step's changes, a
// node at a time. At 1,000 nodes the nodes' route changes are most of a
// plan's ~170 MB, which one encoding would hold in memory twice (compact,
// then indented).
func WriteJSON(w io.Writer, m *Plan) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	// One encoder for the plan, HTML left unescaped.
	x := diff.NewNodeJSON(false)
	if len(m.Steps) == 0 {
		if err := x.Encode(bw, m, ""); err != nil {
			return err
		}
		bw.WriteByte('\n')
		return bw.Flush()
	}
	shell := *m
	shell.Steps = []Step{}
	var head bytes.Buffer
	if err := x.Encode(&head, &shell, ""); err != nil {
		return err
	}
	// The steps are the top level's second key; a raw newline is never
	// inside a JSON string, so the line is the key's.
	const empty = "\n  \"steps\": [],\n"
	before, after, ok := bytes.Cut(head.Bytes(), []byte(empty))
	if !ok {
		return fmt.Errorf("plan JSON: no steps key in %.80q", head.Bytes())
	}
	bw.Write(before)
	bw.WriteString("\n  \"steps\": [\n    ")
	for i := range m.Steps {
		if i > 0 {
			bw.WriteString(",\n    ")
		}
		if err := writeStep(bw, x, &m.Steps[i]); err != nil {
			return err
		}
	}
	bw.WriteString("\n  ],\n")
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeStep writes one step at the steps' depth, its changes' nodes one
// at a time.
func writeStep(bw *bufio.Writer, x *diff.NodeJSON, s *Step) error {
	if s.Changes == nil || len(s.Changes.Nodes) == 0 {
		return x.Encode(bw, s, "    ")
	}
	st, ch := *s, *s.Changes
	ch.Nodes = nil
	st.Changes = &ch
	var body bytes.Buffer
	if err := x.Encode(&body, &st, "    "); err != nil {
		return err
	}
	// The step's own changes key is the only one at its depth.
	const key = "\n      \"changes\": {"
	before, after, ok := bytes.Cut(body.Bytes(), []byte(key))
	if !ok {
		return fmt.Errorf("plan JSON: step %s: no changes object", s.ID)
	}
	bw.Write(before)
	bw.WriteString(key)
	bw.WriteString("\n        \"nodes\": [\n          ")
	for i := range s.Changes.Nodes {
		if i > 0 {
			bw.WriteString(",\n          ")
		}
		if err := x.Write(bw, &s.Changes.Nodes[i], "          "); err != nil {
			return err
		}
	}
	bw.WriteString("\n        ]")
	// nodes is the first key of a diff.Result; with no other key the
	// object was "{}".
	if rest, ok := bytes.CutPrefix(after, []byte("}")); ok {
		bw.WriteString("\n      }")
		bw.Write(rest)
		return nil
	}
	bw.WriteByte(',')
	bw.Write(after)
	return nil
}

// WriteText prints the migration for a terminal.
func WriteText(w io.Writer, m *Plan) error { return writeMigration(w, m, false) }

// WriteMarkdown prints the migration as RUNBOOK.md.
func WriteMarkdown(w io.Writer, m *Plan) error { return writeMigration(w, m, true) }

// Files are --output-dir's files: RUNBOOK.md and one what-if
// file per step, NN-<id>.yaml, which stack on the input with -f.
func Files(m *Plan) map[string]string {
	out := map[string]string{}
	for _, s := range m.Steps {
		if s.File == "" {
			continue // a step on the nodes, not a change of objects
		}
		out[s.File] = fmt.Sprintf("# Step %s: %s\n# What-if: the cluster after this step is -f <input> -f every NN-*.yaml up to this one.\n%s", s.File[:2], s.Title, s.Body)
	}
	var md strings.Builder
	_ = WriteMarkdown(&md, m)
	out["RUNBOOK.md"] = md.String()
	return out
}

func writeMigration(w io.Writer, m *Plan, md bool) error {
	// One write per line of a large plan would be one system call each on
	// a terminal.
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := printMigration(plan.NewPrinter(bw, md), m, md); err != nil {
		return err
	}
	return bw.Flush()
}

func printMigration(p *plan.Printer, m *Plan, md bool) error {
	if md {
		p.F("# Migrate the cluster for Windows nodes: runbook\n\n")
	}
	p.F("Target: %s. Every expected output is the twin's answer after the step (simulated).\n", m.Target)
	if len(m.Steps) == 0 {
		p.F("\nNothing to do: the cluster already has what the target asks.\n")
	}
	if len(m.Preflight) > 0 {
		p.Head("Preflight")
		for _, f := range m.Preflight {
			p.Item("%s %s %s: %s", f.ID, f.Severity, f.Object, f.Message)
			if f.WayOut != "" {
				p.F("  way out: %s\n", f.WayOut)
			}
		}
	}
	for i, s := range m.Steps {
		p.Head(fmt.Sprintf("Step %d: %s", i+1, s.Title))
		if s.File != "" {
			p.F("What-if file: %s\n", s.File)
		} else {
			p.F("What-if file: none (commands on the nodes; no object changes)\n")
		}
		if s.Why != "" {
			p.F("Why: %s\n", s.Why)
		}
		p.F("\nRun:\n")
		p.Code(s.Commands...)
		p.F("\nDisruption: %s\n", s.Disruption)
		if s.Changes != nil {
			p.F("\nChanges (the twin before and after the step):\n")
			b := p.CodeBlock()
			if err := s.Changes.WriteText(b); err != nil {
				return err
			}
			if err := b.Close(); err != nil {
				return err
			}
		}
		for _, v := range s.Verify {
			p.F("\nVerify:\n")
			p.Code("$ " + v.Command)
			p.F("Expect:\n")
			p.Code(strings.Split(strings.TrimRight(v.Expect, "\n"), "\n")...)
		}
	}
	p.Head("Point of no return")
	p.F("%s\n", m.PointOfNoReturn)
	if len(m.Rollback) > 0 {
		p.Head("Rollback (while no Windows node has joined)")
		for i, r := range m.Rollback {
			p.F("%d. undo %s:\n", i+1, r.Undoes)
			p.Code(r.Commands...)
		}
	}
	p.Head("After the migration")
	if len(m.After) == 0 {
		p.F("check --expect-windows finds no error on the migrated twin: plan join-windows can proceed.\n")
	} else {
		for _, f := range m.After {
			p.Item("%s %s: %s", f.ID, f.Object, f.Message)
		}
	}
	return p.Err()
}
