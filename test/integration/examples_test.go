package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// exampleLine is a command line of the help (from `kubectl-hybrid docs`)
// or of the README's sh blocks.
var exampleLine = regexp.MustCompile(`^\s*(kubectl-hybrid|kubectl hybrid) `)

// liveExampleLines are the examples with neither --lab nor -f: those the
// unit tests skip (internal/cli liveExamples) because they read the
// current context's cluster.
func liveExampleLines(t *testing.T) []string {
	t.Helper()
	docs := hybrid(context.Background(), "docs")
	if docs.code != 0 {
		t.Fatalf("docs: %s", docs)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("docs: %d bytes", len(docs.stdout))
	var out []string
	for _, text := range []string{docs.stdout, string(readme)} {
		for _, line := range strings.Split(text, "\n") {
			line = strings.Replace(line, "kubectl hybrid ", "kubectl-hybrid ", 1)
			if !exampleLine.MatchString(line) || strings.HasSuffix(line, "[flags]") {
				continue
			}
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "  # "); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			fields := strings.Fields(line)
			live := len(fields) > 1
			for _, w := range fields {
				if w == "--lab" || w == "-f" || w == "--filename" || w == "|" || strings.HasSuffix(w, "\\") {
					live = false
				}
			}
			switch fields[1] {
			case "get", "describe", "exec", "trace", "reach", "check", "dump", "plan", "diff":
			default:
				live = false
			}
			// A line that reads what a live one wrote (dump > cluster.yaml)
			// runs after it.
			if live || strings.Contains(line, "-f cluster.yaml") {
				out = append(out, line)
			}
		}
	}
	return out
}

// TestLiveExamples runs the examples that read a live cluster against the
// lab cluster, as the admin (also as the context "prod", and with the
// kubeconfig files the check example names), and fails on an exit their
// command does not document for an example: 0, or 1 for check's findings.
func TestLiveExamples(t *testing.T) {
	lines := liveExampleLines(t)
	if len(lines) == 0 {
		t.Fatal("no live examples found")
	}
	home := t.TempDir()
	admin, err := os.ReadFile(env.admin)
	if err != nil {
		t.Fatal(err)
	}
	// The context the dump example names, and the files of the check one.
	prod := strings.ReplaceAll(string(admin), "name: lab\n", "name: prod\n")
	prod = strings.ReplaceAll(prod, "cluster: lab,", "cluster: prod,")
	prod = strings.ReplaceAll(prod, "current-context: lab", "current-context: prod")
	kubeconfig := filepath.Join(home, ".kube", "config")
	if err := os.MkdirAll(filepath.Dir(kubeconfig), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, admin, 0o600); err != nil {
		t.Fatal(err)
	}
	prodFile := filepath.Join(home, "prod.kubeconfig")
	if err := os.WriteFile(prodFile, []byte(prod), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "lab-admin.conf"), admin, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(env.bins.hybrid, filepath.Join(bin, "kubectl-hybrid")); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", line)
			cmd.Dir = home
			cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+kubeconfig+string(os.PathListSeparator)+prodFile,
				"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			allowed := code == 0 || code == 1 && strings.Contains(line, " check ")
			if !allowed {
				t.Errorf("exit %d:\n%s", code, stderr.String())
			}
		})
	}
}
