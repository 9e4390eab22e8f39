package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	whatIfDir   = "../../examples/what-if/"
	actionsDir  = "../../examples/actions/"
	mainCluster = "../../examples/main-cluster"
)

// diffCase is one diff command line with the exit code it must give.
type diffCase struct {
	name string
	args []string
	code int
}

// diffCases are diff on the lab with each what-if of examples/what-if
// (files and directories) and each action of examples/actions, in text and
// as JSON, and the usage and input errors.
func diffCases(t *testing.T) []diffCase {
	t.Helper()
	var cases []diffCase
	add := func(name string, base, whatIf []string) {
		args := append(append([]string{"diff"}, base...), whatIf...)
		cases = append(cases,
			diffCase{name, args, ExitNegative},
			diffCase{name + " as json", append(append([]string(nil), args...), "-o", "json"), ExitNegative})
	}
	entries, err := os.ReadDir(whatIfDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		if name == "main-cluster-migrated" {
			// A what-if of the main cluster, not of the lab.
			add("the main cluster with "+name, []string{"-f", mainCluster}, []string{"--what-if", filepath.Join(whatIfDir, e.Name())})
			continue
		}
		add("the lab with "+name, []string{"--lab"}, []string{"--what-if", filepath.Join(whatIfDir, e.Name())})
	}
	actions, err := os.ReadDir(actionsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range actions {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		base := []string{"--lab"}
		if strings.Contains(name, "win-2") {
			base = []string{"--lab", "-f", secondWindows}
		}
		add("the action "+name, base, []string{"--what-if", filepath.Join(actionsDir, e.Name())})
	}
	return append(cases,
		diffCase{"the lab without strict affinity with nodes as sources", []string{"diff", "--lab", "--what-if", whatIfDir + "no-strict-affinity.yaml", "--nodes"}, ExitNegative},
		diffCase{"the main cluster to itself", []string{"diff", "-f", mainCluster, "--to", mainCluster}, ExitOK},
		diffCase{"the main cluster to the migrated one without reach", []string{"diff", "-f", mainCluster, "--to", mainCluster, "--to", whatIfDir + "main-cluster-migrated.yaml", "--no-reach"}, ExitNegative},
		diffCase{"diff without an after twin", []string{"diff", "--lab"}, ExitBadInput},
		diffCase{"diff with both what-if and to", []string{"diff", "--lab", "--what-if", whatIfDir + "aspnetapp-60.yaml", "--to", mainCluster}, ExitBadInput},
		diffCase{"diff with an argument", []string{"diff", "--lab", "node-1", "--what-if", whatIfDir + "aspnetapp-60.yaml"}, ExitBadInput},
		diffCase{"diff with an unknown output", []string{"diff", "--lab", "--what-if", whatIfDir + "aspnetapp-60.yaml", "-o", "yaml"}, ExitBadInput},
		diffCase{"diff with a what-if that does not exist", []string{"diff", "--lab", "--what-if", "no-such-file.yaml"}, ExitBadInput},
		diffCase{"diff deleting what the lab does not hold", []string{"diff", "-f", mainCluster, "--what-if", actionsDir + "delete-hello-service.yaml"}, ExitBadInput},
		diffCase{"diff approving a csr the lab does not hold", []string{"diff", "--lab", "--what-if", actionsDir + "approve-k8s-lab-win-2-serving-csr.yaml"}, ExitBadInput},
	)
}

func TestDiffMatchesItsGoldenFiles(t *testing.T) {
	for _, tc := range diffCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
				t.Errorf("stack trace on stderr: %q", errOut)
			}
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(tc.args, " "), out, errOut, code)
			goldenFile(t, filepath.Join("diff", strings.ReplaceAll(tc.name, " ", "-")+".txt"), got)
		})
	}
}
