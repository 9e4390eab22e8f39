package migrate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// WriteJSON prints the migration as JSON.
func WriteJSON(w io.Writer, m *Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
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
	p := plan.NewPrinter(w, md)
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
			var b strings.Builder
			if err := s.Changes.WriteText(&b); err != nil {
				return err
			}
			p.F("\nChanges (the twin before and after the step):\n")
			p.Code(strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
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
