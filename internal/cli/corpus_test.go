package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// childEnv makes the test binary run as kubectl-hybrid itself (TestMain),
// so that each command of the corpus and the mutation tests runs in a
// process of its own: a hang is killed at the timeout, and a panic the
// top-level recover misses cannot take the tests down with it.
const childEnv = "KUBECTL_HYBRID_TEST_CHILD"

func TestMain(m *testing.M) {
	// describe prints times in the local zone, as kubectl describe does;
	// the goldens are written in UTC whatever TZ the tests run under.
	time.Local = time.UTC
	if os.Getenv(childEnv) == "1" {
		clock = func() time.Time { return seedNow }
		streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
		os.Exit(Execute(streams, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// commandTimeout bounds one command of the corpus or of a mutant.
const commandTimeout = 20 * time.Second

// childResult is what one command did.
type childResult struct {
	// command is the first argument (check, trace, …).
	command  string
	code     int
	stdout   string
	stderr   string
	timedOut bool
}

// runner runs one command line of kubectl-hybrid.
type runner func(t testing.TB, timeout time.Duration, args ...string) childResult

// runChild runs kubectl-hybrid args in a child process with no
// kubeconfig, so that a command never reaches a real cluster.
func runChild(t testing.TB, timeout time.Duration, args ...string) childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "KUBECONFIG="+filepath.Join(os.TempDir(), "kubectl-hybrid-no-kubeconfig"))
	cmd.Stdin = strings.NewReader("")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := childResult{command: args[0], stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.timedOut, r.code = true, -1
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running %v: %v", args, err)
	}
	return r
}

// crashed says what is wrong with a result whatever the input: a panic
// (recovered or not), a hang, or an exit code offline input never has.
func (r childResult) crashed() string {
	switch {
	case r.timedOut:
		return fmt.Sprintf("did not end within %s", commandTimeout)
	case strings.Contains(r.stderr, internalErrorPrefix), strings.Contains(r.stderr, "goroutine "), strings.Contains(r.stderr, "panic:"):
		return "panicked:\n" + r.stderr
	case r.code == ExitIncomplete && r.command == "check":
		return "" // a check that could not judge the input says so
	case r.code < 0 || r.code > ExitBadInput:
		return fmt.Sprintf("exit code %d (offline input may only give 0, 1 or 2, and check 4):\n%s", r.code, r.stderr)
	}
	return ""
}

// corpusDir holds the bad-input corpus; its README.md describes a case.
var corpusDir = filepath.Join("testdata", "corpus")

// stderrLines is how many lines of stderr a golden keeps per command.
const stderrLines = 6

// TestNoCommandPanicsOrHangsOnTheBadInputCorpus runs every command that
// reads a cluster on each case of the corpus and compares exit codes and
// messages with the case's want.golden.
func TestNoCommandPanicsOrHangsOnTheBadInputCorpus(t *testing.T) {
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(corpusDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			golden.Check(t, filepath.Join(dir, "want.golden"), runCase(t, dir))
		})
	}
	if n < 60 {
		t.Errorf("the corpus has %d cases, want at least 60", n)
	}
}

// runCase runs the standard commands and the case's own on a case
// directory and renders what they did.
func runCase(t *testing.T, dir string) string { return runCaseWith(t, dir, false) }

// runCaseWith is runCase; with mustRead a command that refuses the input
// (exit 2) fails the test: a case of real shapes must be read.
func runCaseWith(t *testing.T, dir string, mustRead bool) string {
	in := []string{"-f", dir}
	if _, err := os.Stat(filepath.Join(dir, "lab")); err == nil {
		in = []string{"--lab", "-f", dir}
	}
	var b strings.Builder
	for _, args := range caseCommands(t, runChild, dir, in) {
		r := runChild(t, commandTimeout, args...)
		if why := r.crashed(); why != "" {
			t.Errorf("kubectl-hybrid %s: %s", strings.Join(args, " "), why)
		}
		if mustRead && r.code == ExitBadInput {
			t.Errorf("kubectl-hybrid %s refuses a real shape:\n%s", strings.Join(args, " "), r.stderr)
		}
		fmt.Fprintf(&b, "$ kubectl-hybrid %s\n", normalize(strings.Join(args, " "), dir))
		fmt.Fprintf(&b, "exit %d\n", r.code)
		for _, l := range answerLines(args[0], r.stdout) {
			fmt.Fprintf(&b, "  > %s\n", normalize(l, dir))
		}
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.stderr == "" {
			lines = nil
		}
		for i, l := range lines {
			if i == stderrLines {
				fmt.Fprintf(&b, "  … %d more lines\n", len(lines)-stderrLines)
				break
			}
			fmt.Fprintf(&b, "  %s\n", normalize(l, dir))
		}
	}
	return b.String()
}

// answerLines are the lines of stdout that hold a command's answer when it
// is not on stderr: the rules check found, trace's verdict and diff's
// section headings.
func answerLines(command, stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case command == "check" && checkRuleLine.MatchString(l) && len(out) < stderrLines:
			out = append(out, strings.TrimSpace(l))
		case command == "trace" && strings.HasPrefix(l, "verdict:"):
			out = append(out, l)
		case command == "diff" && l != "" && !strings.HasPrefix(l, " ") && len(out) < stderrLines:
			// The section headings: what differs, and how much.
			out = append(out, l)
		}
	}
	return out
}

var checkRuleLine = regexp.MustCompile(`^\s+HYB\d+\s`)

// normalize replaces the case directory with {case}, so goldens do not
// depend on where the tests run.
func normalize(s, dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		s = strings.ReplaceAll(s, abs, "{case}")
	}
	return strings.ReplaceAll(s, dir, "{case}")
}

// caseCommands is the standard set — every command that reads a cluster:
// get of Kubernetes, Calico and dataplane kinds and events, describe, the
// kube-proxy-windows logs, exec on a Linux
// and a Windows node, check, plan migrate, trace between two pods, reach,
// report (with that trace), lab and diff — then the
// case's own lines from its `commands` file. Nodes and pods to exec on and
// trace between are read from the case with get -o json; without them
// those commands are left out. dump reads a live cluster only, so it has no
// place here.
func caseCommands(t *testing.T, run runner, dir string, in []string) [][]string {
	with := func(args ...string) []string { return append(args, in...) }
	cmds := [][]string{
		with("get", "nodes", "-o", "json"),
		with("get", "pods", "-A", "-o", "json"),
		with("get", "pods,svc,endpointslices", "-A", "-o", "wide"),
		with("get", "ippools,ipamblocks,blockaffinities,tigerastatus"),
		with("get", "routes"),
		with("get", "hnsendpoints"),
		with("get", "loadbalancers"),
		with("describe", "nodes,pods,ippools", "-A"),
		with("get", "events", "-A"),
		with("logs", "-n", "kube-system", "-l", "k8s-app=kube-proxy-windows"),
	}
	linux, win := pickNodes(t, run, in)
	if linux != "" {
		cmds = append(cmds, append(with("exec", "node/"+linux), "--", "ip", "route"))
	}
	if win != "" {
		cmds = append(cmds, append(with("exec", "node/"+win), "--", "hnsdiag", "list", "endpoints"))
	}
	cmds = append(cmds, with("check"), with("plan", "migrate", "--no-reach"))
	report := with("report")
	if src, dst := pickPods(t, run, in, win); src != "" {
		cmds = append(cmds, with("trace", src, dst))
		cmds = append(cmds, with("trace", src, "kubernetes.default"))
		report = with("report", "--trace", src+" "+dst)
	}
	cmds = append(cmds, with("reach", "-A"), report, []string{"lab", "-f", dir})
	// The case as a what-if layered on the lab: the base and the layering.
	cmds = append(cmds, []string{"diff", "--lab", "--what-if", dir})
	extra, err := os.ReadFile(filepath.Join(dir, "commands"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(extra), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var args []string
		for _, f := range strings.Fields(line) {
			if f == "{in}" {
				args = append(args, in...)
				continue
			}
			args = append(args, f)
		}
		cmds = append(cmds, args)
	}
	return cmds
}

// listOf reads the items of a get -o json the child printed; nil when the
// command failed.
func listOf(t *testing.T, run runner, args ...string) []map[string]any {
	r := run(t, commandTimeout, args...)
	if r.code != 0 {
		return nil
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("kubectl-hybrid %v printed no List: %v", args, err)
	}
	return list.Items
}

func str(m map[string]any, path ...string) string {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	s, _ := v.(string)
	return s
}

// pickNodes is the first Linux and the first Windows node by name.
func pickNodes(t *testing.T, run runner, in []string) (linux, win string) {
	var names []string
	osOf := map[string]string{}
	for _, n := range listOf(t, run, append([]string{"get", "nodes", "-o", "json"}, in...)...) {
		name := str(n, "metadata", "name")
		names = append(names, name)
		labels, _ := n["metadata"].(map[string]any)["labels"].(map[string]any)
		osOf[name], _ = labels["kubernetes.io/os"].(string)
	}
	sort.Strings(names)
	for _, n := range names {
		if osOf[n] == "windows" && win == "" {
			win = n
		}
		if osOf[n] != "windows" && linux == "" {
			linux = n
		}
	}
	return linux, win
}

// pickPods is a source and a destination for trace: the first pod (by
// namespace and name) on the pod network with an address on a node, a
// Windows one first — the Windows walk has more to go wrong — and the next
// such pod.
func pickPods(t *testing.T, run runner, in []string, win string) (src, dst string) {
	type pod struct{ ref, node string }
	var pods []pod
	for _, p := range listOf(t, run, append([]string{"get", "pods", "-A", "-o", "json"}, in...)...) {
		spec, _ := p["spec"].(map[string]any)
		if str(p, "status", "podIP") == "" || str(p, "spec", "nodeName") == "" || spec["hostNetwork"] == true {
			continue
		}
		pods = append(pods, pod{"pod/" + str(p, "metadata", "namespace") + "/" + str(p, "metadata", "name"), str(p, "spec", "nodeName")})
	}
	if len(pods) < 2 {
		return "", ""
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].ref < pods[j].ref })
	first := 0
	for i, p := range pods {
		if p.node == win && win != "" {
			first = i
			break
		}
	}
	src = pods[first].ref
	for i, p := range pods {
		if i != first {
			return src, p.ref
		}
	}
	return "", ""
}

func TestTheHarnessCountsPanicsHangsAndExitThreeAsCrashes(t *testing.T) {
	cases := []struct {
		name    string
		r       childResult
		crashed bool
	}{
		{"a clean answer", childResult{code: 0}, false},
		{"a negative answer", childResult{code: 1, stdout: "verdict: not delivered"}, false},
		{"bad input", childResult{code: 2, stderr: "error: x.yaml:1 (document 1): kind is missing\n"}, false},
		{"a recovered panic", childResult{code: 3, stderr: "error: " + internalErrorPrefix + "boom; please report this bug\n"}, true},
		{"a panic the recover missed", childResult{code: 2, stderr: "panic: boom\n\ngoroutine 1 [running]:\n"}, true},
		{"a hang", childResult{code: -1, timedOut: true}, true},
		{"exit three without a panic", childResult{code: 3, stderr: "error: the server is unreachable\n"}, true},
		{"an incomplete check", childResult{command: "check", code: 4, stderr: "error: check incomplete: the input holds no cluster\n"}, false},
		{"exit four from another command", childResult{command: "get", code: 4}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.crashed() != ""; got != tc.crashed {
				t.Errorf("crashed() = %q, want a crash: %v", tc.r.crashed(), tc.crashed)
			}
		})
	}
}

func TestAChildRunsAsTheBinaryWithNoKubeconfig(t *testing.T) {
	r := runChild(t, commandTimeout, "get", "pods")
	if r.code != ExitBadInput || !strings.Contains(r.stderr, "no cluster given") {
		t.Errorf("exit %d, stderr %q: want the message for no input at all", r.code, r.stderr)
	}
	r = runChild(t, commandTimeout, "version")
	if r.code != 0 || r.stdout == "" {
		t.Errorf("version: exit %d, stdout %q", r.code, r.stdout)
	}
}
