package migrate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
)

func TestAStepWhoseChangesWindowsDefersIsFollowedByTheRecreationOnEachWindowsNode(t *testing.T) {
	for _, tc := range []struct {
		name, doc   string
		want, title string
		notWant     string
	}{
		{"a natOutgoing change on the lab is followed by re-creating the Windows node's pods",
			"apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata:\n  name: default-ipv4-ippool\nspec:\n  cidr: 172.21.0.0/16\n  blockSize: 26\n  vxlanMode: Always\n  natOutgoing: false\n  nodeSelector: all()\n",
			"kubectl drain k8s-lab-win-1", "Re-create the pods", "Remove-HnsNetwork"},
		{"a VNI change on the lab is followed by deleting and re-creating the Calico HNS network",
			"apiVersion: projectcalico.org/v3\nkind: FelixConfiguration\nmetadata:\n  name: default\nspec:\n  vxlanVNI: 4100\n",
			"Remove-HnsNetwork", "Delete and re-create the Calico HNS network", ""},
		{"a change Windows applies at once adds no step",
			"apiVersion: projectcalico.org/v3\nkind: FelixConfiguration\nmetadata:\n  name: default\nspec:\n  logSeverityScreen: Debug\n",
			"", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "what-if.yaml")
			if err := os.WriteFile(f, []byte(tc.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			ch, err := diff.Compare(input(t, true).Cluster, input(t, true, f).Cluster, diff.Options{NoReach: true, NoDataplane: true})
			if err != nil {
				t.Fatal(err)
			}
			steps := withWindowsFollowUps([]Step{{ID: "pool", File: "01-pool.yaml", Changes: ch}})
			if tc.want == "" {
				if len(steps) != 1 {
					t.Fatalf("steps %+v, want the step alone", steps)
				}
				return
			}
			if len(steps) != 2 || steps[1].ID != StepWindowsRecreate || steps[1].File != "" {
				t.Fatalf("steps %+v, want the step then %s", steps, StepWindowsRecreate)
			}
			s := steps[1]
			cmds := strings.Join(s.Commands, "\n")
			if !strings.Contains(cmds, tc.want) || (tc.notWant != "" && strings.Contains(cmds, tc.notWant)) ||
				!strings.HasPrefix(s.Title, tc.title) || !strings.Contains(s.Why, "odelled") {
				t.Errorf("step %q (why %q):\n%s\nwant %q and not %q", s.Title, s.Why, cmds, tc.want, tc.notWant)
			}
			if slices.ContainsFunc(s.Commands, func(c string) bool { return strings.Contains(c, "<node>") }) {
				t.Errorf("commands still name <node>:\n%s", cmds)
			}
		})
	}
}
