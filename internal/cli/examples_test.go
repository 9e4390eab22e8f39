package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// example is one command line of a help text or of the README, in a block
// of lines that run one after the other (a dump, then a get of the dump).
type example struct {
	source string // "help of get", "README.md:74"
	block  []string
}

// helpExamples are the examples of every command's help.
func helpExamples(root *cobra.Command) []example {
	var out []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example != "" {
			for _, b := range exampleBlocks(c.Example) {
				out = append(out, example{source: "help of " + strings.TrimPrefix(c.CommandPath(), root.Name()+" "), block: b})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// exampleBlocks splits an Example text into blocks: lines between blank
// or comment lines, with backslash continuations joined.
func exampleBlocks(text string) [][]string {
	var blocks [][]string
	var cur []string
	pending := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, "\\") {
			pending += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		line = pending + line
		pending = ""
		if line == "" || strings.HasPrefix(line, "#") {
			if len(cur) > 0 {
				blocks = append(blocks, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}
	return blocks
}

var (
	readmeTool    = regexp.MustCompile(`^(kubectl-hybrid|kubectl hybrid|go run \./cmd/kubectl-hybrid) `)
	readmeComment = regexp.MustCompile(`\s+# .*$`)
)

// readmeExamples are the tool's command lines in the README's sh blocks,
// one block each.
func readmeExamples(t *testing.T) []example {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	in := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in && strings.TrimPrefix(line, "```") == "sh"
			continue
		}
		if !in || !readmeTool.MatchString(line) {
			continue
		}
		line = strings.TrimSpace(readmeComment.ReplaceAllString(line, ""))
		line = strings.Replace(line, "go run ./cmd/kubectl-hybrid ", "kubectl-hybrid ", 1)
		out = append(out, example{source: "README.md:" + strconv.Itoa(i+1), block: []string{line}})
	}
	return out
}

// commandOf is the command the line's last kubectl-hybrid runs ("get",
// "plan join-windows"), whose exit code the line ends with.
func commandOf(line string) string {
	line = strings.ReplaceAll(line, "kubectl hybrid ", "kubectl-hybrid ")
	i := strings.LastIndex(line, "kubectl-hybrid ")
	words := strings.Fields(line[i+len("kubectl-hybrid "):])
	if len(words) == 0 {
		return ""
	}
	if (words[0] == "plan" || words[0] == "sandbox") && len(words) > 1 {
		return words[0] + " " + words[1]
	}
	return words[0]
}

// readsCluster are the commands that read the current kubeconfig
// context's cluster unless given -f or --lab.
var readsCluster = []string{"get", "describe", "exec", "logs", "trace", "reach", "check", "dump", "plan join-windows", "plan migrate", "diff", "report", "sandbox up", "sandbox test", "verify", "collect", "serve"}

// needsLive says whether a line needs a live cluster.
func needsLive(line string) bool {
	if !slices.Contains(readsCluster, commandOf(line)) {
		return false
	}
	for _, w := range strings.Fields(line) {
		if w == "--lab" || w == "-f" || w == "--filename" || strings.HasPrefix(w, "-f=") || strings.HasPrefix(w, "--filename=") {
			return false
		}
	}
	return true
}

// liveExamples are the examples that need a live cluster: the unit tests
// skip them, test/integration (TestLiveExamples) runs them against its API
// server. A new live example must be listed here.
var liveExamples = []string{
	"kubectl-hybrid check --kubeconfig-files ~/.kube/config,lab-admin.conf",
	"kubectl-hybrid dump > cluster.yaml",
	"kubectl-hybrid dump --context prod -o json > prod.json",
	"kubectl-hybrid collect --output-dir actual/ --yes",
	"kubectl-hybrid collect --output-dir actual/ --node k8s-lab-win-1 --timeout 2m",
}

// TestEveryExampleExitsWithADocumentedCode runs every example of every
// command's help and of the README as a shell runs it, with the test
// binary as kubectl-hybrid (and a kubectl that runs it as a plugin), in a
// directory where examples/ is the repository's. An example may exit 0,
// or 1 or 4 where its command documents them (exitTable); 2 (bad input,
// such as a file that does not exist) and 3 mean the example is wrong.
func TestEveryExampleExitsWithADocumentedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	examples := append(helpExamples(NewRootCmd(streams)), readmeExamples(t)...)
	if len(examples) < 20 {
		t.Fatalf("found only %d examples", len(examples))
	}
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "kubectl-hybrid")); err != nil {
		t.Fatal(err)
	}
	// kubectl runs a plugin as kubectl-<name> from PATH.
	shim := "#!/bin/sh\n[ \"$1\" = hybrid ] || exit 127\nshift\nexec kubectl-hybrid \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	examplesDir, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, ex := range examples {
		name := ex.source + ": " + ex.block[0]
		t.Run(name, func(t *testing.T) {
			for _, line := range ex.block {
				if commandOf(line) == "serve" {
					t.Skipf("serves until stopped (TestServeAnswersAsTheCommandsDo runs it): %s", line)
				}
				if strings.HasPrefix(commandOf(line), "sandbox ") {
					t.Skipf("creates network namespaces as root (internal/sandbox's tests run up, test and down): %s", line)
				}
				if needsLive(line) {
					if !slices.Contains(liveExamples, line) {
						t.Fatalf("%q needs a live cluster and is not in liveExamples", line)
					}
					skipped = append(skipped, line)
					t.Skipf("needs a live cluster (test/integration runs it): %s", line)
				}
			}
			dir := t.TempDir()
			if err := os.Symlink(examplesDir, filepath.Join(dir, "examples")); err != nil {
				t.Fatal(err)
			}
			for _, line := range ex.block {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				cmd := exec.CommandContext(ctx, bash, "-o", "pipefail", "-c", line)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), childEnv+"=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
					"KUBECONFIG="+filepath.Join(dir, "no-kubeconfig"), "HOME="+dir)
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = nil, &stderr
				err := cmd.Run()
				cancel()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				command := commandOf(line)
				if code == ExitBadInput || code == ExitInternal || !exitAllowed(command, code) {
					t.Fatalf("%s: exit %d, which `%s` does not document for an example:\n%s", line, code, command, stderr.String())
				}
				if strings.Contains(stderr.String(), internalErrorPrefix) {
					t.Fatalf("%s: %s", line, stderr.String())
				}
			}
		})
	}
	if len(skipped) > 0 {
		t.Logf("skipped (live cluster): %s", strings.Join(skipped, "; "))
	}
}

func TestTheReadmeHoldsTheExitCodeTable(t *testing.T) {
	path := "../../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := exitTableMarkdown()
	start := bytes.Index(data, []byte("| command | 1 | 4 |"))
	if start < 0 {
		start = bytes.Index(data, []byte("EXITTABLE\n"))
	}
	if start < 0 {
		t.Fatal("README.md has no exit code table by command")
	}
	end := bytes.Index(data[start:], []byte("\n\n"))
	if end < 0 {
		t.Fatal("the table does not end")
	}
	end += start + 1
	if *update {
		out := append(append(append([]byte(nil), data[:start]...), table...), data[end:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(data[start:end]); got != table {
		t.Errorf("README.md's exit code table is not the code's (go test ./internal/cli -run %s -args -update):\n%s", t.Name(), lineDiff(table, got))
	}
}

func TestExitCodesAreDocumentedPerCommand(t *testing.T) {
	cases := []struct {
		name    string
		command string
		code    int
		want    bool
	}{
		{"get answers not found with 1", "get", ExitNegative, true},
		{"trace answers not found with 1", "trace", ExitNegative, true},
		{"exec passes the command's own code on", "exec", 7, true},
		{"only check is incomplete", "reach", ExitIncomplete, false},
		{"check is incomplete with 4", "check", ExitIncomplete, true},
		{"gen has no negative answer", "gen", ExitNegative, false},
		{"an unknown command documents nothing", "nope", ExitOK, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitAllowed(tc.command, tc.code); got != tc.want {
				t.Errorf("exitAllowed(%q, %d) = %v, want %v", tc.command, tc.code, got, tc.want)
			}
		})
	}
}
