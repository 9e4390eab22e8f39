package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// runReach runs `kubectl-hybrid reach ARGS` the way Execute does, with the
// command registered on the root when root.go does not register it yet.
func runReach(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	root := NewRootCmd(streams)
	if c, _, err := root.Find([]string{"reach"}); err != nil || c == root {
		root.AddCommand(NewCmdReach(streams))
	}
	root.SetArgs(append([]string{"reach"}, args...))
	if err := root.Execute(); err != nil {
		code = exitCode(err)
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(&errOut, "error: "+msg)
		}
	}
	return out.String(), errOut.String(), code
}

func TestReachMatchesItsGoldenFiles(t *testing.T) {
	dir := t.TempDir()
	denyAll := "../../examples/what-if/deny-win-demo-ingress.yaml"
	badExpect := filepath.Join(dir, "bad-expect.yaml")
	if err := os.WriteFile(badExpect, []byte("- from: demo/hello\n  to: win-demo/aspnetapp\n  verdict: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"reach across the lab", []string{"-A", "--lab"}, ExitOK},
		{"reach across the lab as a matrix", []string{"-A", "-o", "matrix", "--lab"}, ExitOK},
		{"reach into win-demo with nodes after a deny-all", []string{"-A", "--to", "ns/win-demo", "--nodes", "-o", "matrix", "--lab", "-f", denyAll}, ExitOK},
		{"reach summary after a deny-all", []string{"-A", "--nodes", "--lab", "-f", denyAll}, ExitOK},
		{"reach meets the expected matrix", []string{"-A", "--lab", "--expect", "../../examples/expect/lab-reach.yaml"}, ExitOK},
		{"reach after a deny-all differs from the expected matrix", []string{"-A", "--lab", "-f", denyAll, "--expect", "../../examples/expect/lab-reach.yaml"}, ExitNegative},
		{"reach with an expectation of no known verdict", []string{"-A", "--lab", "--expect", badExpect}, ExitBadInput},
		{"reach with a missing expectation file", []string{"-A", "--lab", "--expect", filepath.Join(dir, "nope.yaml")}, ExitBadInput},
		{"reach from demo as json", []string{"-n", "demo", "--to", "ns/win-demo", "-o", "json", "--lab", "-f", denyAll}, ExitOK},
		{"reach on port 53 as csv", []string{"-A", "--port", "53", "--proto", "udp", "-o", "csv", "--lab"}, ExitOK},
		{"reach from the windows node", []string{"--from", "node/k8s-lab-win-1", "--to", "ns/demo", "-o", "matrix", "--lab"}, ExitOK},
		{"reach by namespace with nodes after a deny-all", []string{"-A", "--by", "namespace", "--nodes", "--lab", "-f", denyAll}, ExitOK},
		{"reach by namespace as a grid after a deny-all", []string{"-A", "--by", "namespace", "-o", "matrix", "--lab", "-f", denyAll}, ExitOK},
		{"reach by namespace as json after a deny-all", []string{"-A", "--by", "namespace", "-o", "json", "--lab", "-f", denyAll}, ExitOK},
		{"reach by workload after a deny-all", []string{"-A", "--by", "workload", "--lab", "-f", denyAll}, ExitOK},
		{"reach by workload with nodes as a grid after a deny-all", []string{"-A", "--by", "workload", "--nodes", "-o", "matrix", "--lab", "-f", denyAll}, ExitOK},
		{"reach by workload only denied as json after a deny-all", []string{"-A", "--by", "workload", "--only", "denied", "-o", "json", "--lab", "-f", denyAll}, ExitOK},
		{"reach by workload only denied as csv after a deny-all", []string{"-A", "--by", "workload", "--only", "denied", "-o", "csv", "--lab", "-f", denyAll}, ExitOK},
		{"reach only denied after a deny-all", []string{"-A", "--nodes", "--only", "denied", "--lab", "-f", denyAll}, ExitOK},
		{"reach only denied as a matrix after a deny-all", []string{"-A", "--nodes", "--only", "denied", "-o", "matrix", "--lab", "-f", denyAll}, ExitOK},
		{"reach only denied as json after a deny-all", []string{"-n", "demo", "--to", "ns/win-demo", "--only", "denied", "-o", "json", "--lab", "-f", denyAll}, ExitOK},
		{"reach by namespace across the lab", []string{"-A", "--by", "namespace", "--lab"}, ExitOK},
		{"reach by namespace only denied across the lab", []string{"-A", "--by", "namespace", "--only", "denied", "--lab"}, ExitOK},
		{"reach by namespace on the main cluster", []string{"-A", "--by", "namespace", "--nodes", "-f", "../../examples/main-cluster"}, ExitOK},
		{"reach by namespace on the main cluster as a grid", []string{"-A", "--by", "namespace", "-o", "matrix", "-f", "../../examples/main-cluster"}, ExitOK},
		{"reach by workload on the main cluster", []string{"-A", "--by", "workload", "-f", "../../examples/main-cluster"}, ExitOK},
		{"reach by workload on the main cluster as json", []string{"-A", "--by", "workload", "-o", "json", "-f", "../../examples/main-cluster"}, ExitOK},
		{"reach only denied on the main cluster", []string{"-A", "--only", "denied", "-o", "matrix", "-f", "../../examples/main-cluster"}, ExitOK},
		{"reach by an unknown grouping", []string{"-A", "--by", "node", "--lab"}, ExitBadInput},
		{"reach only what is allowed", []string{"-A", "--only", "allowed", "--lab"}, ExitBadInput},
		{"reach by namespace against an expected matrix", []string{"-A", "--by", "namespace", "--lab", "--expect", "../../examples/expect/lab-reach.yaml"}, ExitBadInput},
		{"reach with an unknown output", []string{"-o", "yaml", "--lab"}, ExitBadInput},
		{"reach to a node", []string{"--to", "node/k8s-lab-win-1", "--lab"}, ExitBadInput},
		{"reach with a bad selector", []string{"--from", "app=(", "--lab"}, ExitBadInput},
		{"reach with a port and icmp", []string{"--port", "80", "--proto", "icmp", "--lab"}, ExitBadInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runReach(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			args := strings.ReplaceAll(strings.Join(tc.args, " "), dir+string(filepath.Separator), "")
			errOut = strings.ReplaceAll(errOut, dir+string(filepath.Separator), "")
			got := fmt.Sprintf("$ kubectl-hybrid reach %s\n%s--- stderr\n%s--- exit %d\n", args, out, errOut, code)
			goldenFile(t, strings.ReplaceAll(tc.name, " ", "-")+".txt", got)
		})
	}
}
