package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/docscmd"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// manTestVersion stands in for the build's version in the pages' header,
// which differs between go test, go build and a release.
const manTestVersion = "v0.0.0-test"

func renderManPages(t *testing.T) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &buf, ErrOut: &buf}
	pages := map[string]string{}
	for _, p := range docscmd.ManPages(NewRootCmd(streams), manTestVersion) {
		if _, dup := pages[p.File]; dup {
			t.Errorf("two pages are named %s", p.File)
		}
		pages[p.File] = p.Text
	}
	return pages
}

// visibleCommands are the commands a user can run, as "kubectl-hybrid plan migrate".
func visibleCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || (c.Name() == "help" && c.Parent() == root) {
			return
		}
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

func TestEveryCommandHasAManPageWithNameAndSynopsis(t *testing.T) {
	pages := renderManPages(t)
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	commands := visibleCommands(NewRootCmd(streams))
	if len(commands) < 15 {
		t.Fatalf("found only %d commands", len(commands))
	}
	for _, c := range commands {
		t.Run(c.CommandPath(), func(t *testing.T) {
			file := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
			page, ok := pages[file]
			if !ok {
				t.Fatalf("no page %s", file)
			}
			delete(pages, file)
			c.InheritedFlags() // as renderMan does before UseLine
			name := docscmd.RoffEscape(strings.ReplaceAll(c.CommandPath(), " ", "-"))
			for _, want := range []string{
				".TH \"" + strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")) + "\" \"1\" ",
				".SH NAME\n" + name + ` \- ` + docscmd.RoffEscape(c.Short) + "\n",
				".SH SYNOPSIS\n.B " + docscmd.RoffEscape(c.UseLine()) + "\n",
				".SH DESCRIPTION\n",
			} {
				if !strings.Contains(page, want) {
					t.Errorf("%s lacks %q:\n%s", file, want, page)
				}
			}
			if c.Example != "" && !strings.Contains(page, ".SH EXAMPLES\n") {
				t.Errorf("%s has no EXAMPLES though the command has examples", file)
			}
			c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(page, `\fB\-\-`+docscmd.RoffEscape(f.Name)+`\fR`) {
					t.Errorf("%s does not list --%s", file, f.Name)
				}
			})
		})
	}
	for file := range pages {
		t.Errorf("page %s is for no visible command", file)
	}
}

func TestManPagesAreTheSameWhateverTheHomeDirectory(t *testing.T) {
	var first map[string]string
	for _, home := range []string{"/root", "/home/someone", t.TempDir()} {
		t.Run(home, func(t *testing.T) {
			t.Setenv("HOME", home)
			pages := renderManPages(t)
			for file, page := range pages {
				if strings.Contains(page, docscmd.RoffEscape(home)+"/") {
					t.Errorf("%s names the home directory %s", file, home)
				}
			}
			if !strings.Contains(pages["kubectl-hybrid-get.1"], `(default "$HOME/.kube/cache")`) {
				t.Errorf("the get page does not show --cache-dir's default as $HOME/.kube/cache")
			}
			if first == nil {
				first = pages
				return
			}
			for file, page := range pages {
				if page != first[file] {
					t.Errorf("%s differs from the one rendered with another HOME:\n%s", file, lineDiff(first[file], page))
				}
			}
		})
	}
}

// The pages everyone reads most: root and get, held as golden files.
func TestManPagesMatchTheirGoldenFiles(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	pages := renderManPages(t)
	for _, file := range []string{"kubectl-hybrid.1", "kubectl-hybrid-version.1", "kubectl-hybrid-plan.1"} {
		t.Run(file, func(t *testing.T) {
			goldenFile(t, filepath.Join("man", file), pages[file])
		})
	}
}

// groff reads every page without a warning (-ww: all warnings), if it is
// installed.
func TestManPagesRenderWithoutGroffWarnings(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff on PATH")
	}
	for file, page := range renderManPages(t) {
		t.Run(file, func(t *testing.T) {
			cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
			cmd.Stdin = strings.NewReader(page)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil || stderr.Len() > 0 {
				t.Errorf("groff: %v\n%s", err, stderr.String())
			}
		})
	}
}

func TestDocsManWritesAPageForEveryCommand(t *testing.T) {
	cases := []struct {
		name  string
		args  func(dir string) []string
		code  int
		pages bool
	}{
		{"a directory gets the pages", func(dir string) []string { return []string{"docs", "man", filepath.Join(dir, "man1")} }, ExitOK, true},
		{"no directory is a usage error", func(string) []string { return []string{"docs", "man"} }, ExitBadInput, false},
		{"an empty directory name is a usage error", func(string) []string { return []string{"docs", "man", " "} }, ExitBadInput, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, stderr, code := run(t, "", tc.args(dir)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			if !tc.pages {
				if !strings.HasPrefix(stderr, "error: ") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("want one error line, got %q", stderr)
				}
				return
			}
			for _, want := range []string{"kubectl-hybrid.1", "kubectl-hybrid-get.1", "kubectl-hybrid-plan-migrate.1"} {
				path := filepath.Join(dir, "man1", want)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("no %s: %v", want, err)
				}
				if !strings.Contains(out, path+"\n") {
					t.Errorf("the output does not name %s:\n%s", path, out)
				}
			}
		})
	}
}
