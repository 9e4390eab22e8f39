package cli

import (
	"strings"
	"testing"
)

// A node's description holds durations measured from the real clock
// (kubectl's describers use time.Now), so it is held to lines, not a golden.
func TestDescribeNodeListsItsPodsAndLease(t *testing.T) {
	cases := []struct {
		name string
		node string
		want []string
	}{
		{"the windows node", "k8s-lab-win-1", []string{
			"Name:               k8s-lab-win-1",
			"Taints:             os=windows:NoSchedule",
			"  HolderIdentity:  k8s-lab-win-1",
			"Non-terminated Pods:          (4 in total)",
			"  win-demo                    aspnetapp-769559d8ff-vk445 ",
			"Events:              <none>",
		}},
		{"a linux worker", "k8s-lab-node-1", []string{
			"Name:               k8s-lab-node-1",
			"kubernetes.io/os=linux",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", "describe", "node", tc.node, "--lab")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no line %q in:\n%s", w, out)
				}
			}
		})
	}
}
