package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/gencmd"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// runGen runs the gen command on its own (the root registers it separately).
func runGen(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := gencmd.NewCmdGen(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err != nil {
		return out.String(), err.Error(), exitCode(err)
	}
	return out.String(), errOut.String(), ExitOK
}

func TestGenWritesTheSameStreamForASeed(t *testing.T) {
	args := []string{"--nodes", "6", "--windows-nodes", "1", "--pods", "80", "--plain-nodes", "--observed-ips", "--seed", "42"}
	a, summary, code := runGen(t, args...)
	b, _, _ := runGen(t, args...)
	if code != ExitOK || a != b || a == "" {
		t.Fatalf("exit %d, equal %t, %d bytes", code, a == b, len(a))
	}
	if !strings.Contains(summary, "6 nodes (1 Windows)") || !strings.Contains(summary, "80 pods") {
		t.Errorf("summary: %q", summary)
	}
}

func TestGenOutputIsReadBackByGet(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runGen(t, "--nodes", "5", "--windows-nodes", "1", "--pods", "60", "--output-dir", dir); code != ExitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := run(t, "", "get", "nodes", "-f", dir)
	if code != ExitOK || strings.Count(stdout, "\n") != 6 || stderr != "" {
		t.Fatalf("get nodes: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// On stdout the nodes are Node objects unless asked otherwise.
	stream, _, _ := runGen(t, "--nodes", "5", "--windows-nodes", "1", "--pods", "60", "-o", "json")
	stdout, stderr, code = run(t, stream, "get", "pods", "-A", "-f", "-")
	// Plain Nodes state no node network: the twin says what it assumed.
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if line != "" && !strings.HasPrefix(line, "Note: ") {
			t.Errorf("stderr line %q is not a note", line)
		}
	}
	if code != ExitOK || !strings.Contains(stdout, "Running") || !strings.Contains(stderr, "--node-gateway") {
		t.Fatalf("get pods from a JSON stream: exit %d\n%s", code, stderr)
	}
}

func TestGenRefusesFlagsThatCannotWork(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"both node forms", []string{"--cluster-kind", "--plain-nodes"}, "mutually exclusive"},
		{"the Cluster kind with Windows hosts on stdout", []string{"--windows-nodes", "1", "--cluster-kind"}, "--output-dir"},
		{"an unknown format", []string{"-o", "toml"}, "output format"},
		{"more pods than the nodes hold", []string{"--nodes", "2", "--windows-nodes", "0", "--pods", "101"}, "do not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runGen(t, tt.args...)
			if code != ExitBadInput || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, %q; want %d and %q", code, stderr, ExitBadInput, tt.want)
			}
		})
	}
}
