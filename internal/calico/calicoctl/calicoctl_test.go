package calicoctl

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func build(t *testing.T, lab bool, files ...string) *model.Cluster {
	t.Helper()
	snap, err := load.Load(load.Options{Filenames: files, Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The lab runs with strictAffinity on: calicoctl prints the table the
// seed shows after its patch (kept beside the test).
func TestIPAMShowConfigurationPrintsTheTableCalicoctlPrints(t *testing.T) {
	want, err := os.ReadFile("testdata/seed-ipam-show-configuration.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := IPAMConfiguration(build(t, true)); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	main := IPAMConfiguration(build(t, false, "../../../examples/main-cluster"))
	if !strings.Contains(main, "| StrictAffinity     | false |") {
		t.Errorf("the main cluster before its migration:\n%s", main)
	}
}

func TestNodeStatusFollowsTheNetworkingBackend(t *testing.T) {
	cases := []struct {
		name  string
		c     *model.Cluster
		node  string
		code  int
		lines []string
		not   []string
	}{
		{"with BGP a node lists its mesh peers", build(t, false, "../../../examples/main-cluster"), "k8s-node-1", 0,
			[]string{"Calico process is running.", "IPv4 BGP status",
				"| 192.168.10.17 | node-to-node mesh | up    | <unknown> | Established |",
				"| 192.168.10.21 | node-to-node mesh | up    | <unknown> | Established |",
				"IPv6 BGP status", "No IPv6 peers found."},
			[]string{"192.168.10.20 |"}},
		{"without BGP no backend process runs", build(t, true), "k8s-lab-node-1", 0,
			[]string{"Calico process is running.", "None of the BGP backend processes (BIRD or GoBGP) are running."},
			[]string{"IPv4 BGP status"}},
		{"an unknown node is an error", build(t, true), "nope", 1, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, code := Exec(tc.c, tc.node, []string{"sudo", "calicoctl", "node", "status"})
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, l := range tc.lines {
				if !strings.Contains(out, l+"\n") {
					t.Errorf("no line %q in\n%s", l, out)
				}
			}
			for _, l := range tc.not {
				if strings.Contains(out, l) {
					t.Errorf("%q in\n%s", l, out)
				}
			}
		})
	}
}

func TestACalicoctlCommandNotEmulatedSaysWhatIs(t *testing.T) {
	_, errOut, code := Exec(build(t, true), "k8s-lab-node-1", []string{"calicoctl", "get", "nodes"})
	if code != 127 || !strings.Contains(errOut, "calicoctl node status") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
