package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteMigrationJSON prints the migration as JSON.
func WriteMigrationJSON(w io.Writer, m *Migration) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

// WriteMigrationText prints the migration for a terminal.
func WriteMigrationText(w io.Writer, m *Migration) error { return writeMigration(w, m, false) }

// WriteMigrationMarkdown prints the migration as RUNBOOK.md.
func WriteMigrationMarkdown(w io.Writer, m *Migration) error { return writeMigration(w, m, true) }

// MigrationFiles are --output-dir's files: RUNBOOK.md and one what-if
// file per step, NN-<id>.yaml, which stack on the input with -f.
func MigrationFiles(m *Migration) map[string]string {
	out := map[string]string{}
	for _, s := range m.Steps {
		if s.File == "" {
			continue // a step on the nodes, not a change of objects
		}
		out[s.File] = fmt.Sprintf("# Step %s: %s\n# What-if: the cluster after this step is -f <input> -f every NN-*.yaml up to this one.\n%s", s.File[:2], s.Title, s.Body)
	}
	var md strings.Builder
	_ = WriteMigrationMarkdown(&md, m)
	out["RUNBOOK.md"] = md.String()
	return out
}

func writeMigration(w io.Writer, m *Migration, md bool) error {
	p := &printer{w: w, md: md}
	if md {
		p.f("# Migrate the cluster for Windows nodes: runbook\n\n")
	}
	p.f("Target: %s. Every expected output is the twin's answer after the step (simulated).\n", m.Target)
	if len(m.Steps) == 0 {
		p.f("\nNothing to do: the cluster already has what the target asks.\n")
	}
	if len(m.Preflight) > 0 {
		p.head("Preflight")
		for _, f := range m.Preflight {
			p.item("%s %s %s: %s", f.ID, f.Severity, f.Object, f.Message)
			if f.WayOut != "" {
				p.f("  way out: %s\n", f.WayOut)
			}
		}
	}
	for i, s := range m.Steps {
		p.head(fmt.Sprintf("Step %d: %s", i+1, s.Title))
		if s.File != "" {
			p.f("What-if file: %s\n", s.File)
		} else {
			p.f("What-if file: none (commands on the nodes; no object changes)\n")
		}
		if s.Why != "" {
			p.f("Why: %s\n", s.Why)
		}
		p.f("\nRun:\n")
		p.code(s.Commands...)
		p.f("\nDisruption: %s\n", s.Disruption)
		if s.Changes != nil {
			var b strings.Builder
			if err := s.Changes.WriteText(&b); err != nil {
				return err
			}
			p.f("\nChanges (the twin before and after the step):\n")
			p.code(strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
		}
		for _, v := range s.Verify {
			p.f("\nVerify:\n")
			p.code("$ " + v.Command)
			p.f("Expect:\n")
			p.code(strings.Split(strings.TrimRight(v.Expect, "\n"), "\n")...)
		}
	}
	p.head("Point of no return")
	p.f("%s\n", m.PointOfNoReturn)
	if len(m.Rollback) > 0 {
		p.head("Rollback (while no Windows node has joined)")
		for i, r := range m.Rollback {
			p.f("%d. undo %s:\n", i+1, r.Undoes)
			p.code(r.Commands...)
		}
	}
	p.head("After the migration")
	if len(m.After) == 0 {
		p.f("check --expect-windows finds no error on the migrated twin: plan join-windows can proceed.\n")
	} else {
		for _, f := range m.After {
			p.item("%s %s: %s", f.ID, f.Object, f.Message)
		}
	}
	return p.err
}
