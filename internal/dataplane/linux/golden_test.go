package linux

import (
	"sort"
	"strings"
	"testing"
)

// goldenCommands are the emulated commands, each printed on every lab
// Linux node into testdata/golden/<node>/<file>.golden.
var goldenCommands = []struct{ file, cmd string }{
	{"ip-route", "ip route"},
	{"ip-addr", "ip addr"},
	{"ip-link", "ip link"},
	{"ip-d-link-show-vxlan.calico", "ip -d link show vxlan.calico"},
	{"ip-neigh-show-dev-vxlan.calico", "ip neigh show dev vxlan.calico"},
	{"bridge-fdb-show-dev-vxlan.calico", "bridge fdb show dev vxlan.calico"},
	{"nft-list-ruleset", "nft list ruleset"},
	{"nft-list-table-ip-kube-proxy", "nft list table ip kube-proxy"},
}

func TestGoldenEveryEmulatedCommandOnEveryLabLinuxNode(t *testing.T) {
	_, nodes := lab(t)
	var names []string
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "k8s-lab-master-1,k8s-lab-node-1,k8s-lab-node-2" {
		t.Fatalf("lab Linux nodes = %v", names)
	}
	for _, name := range names {
		for _, g := range goldenCommands {
			t.Run(name+"/"+g.file, func(t *testing.T) {
				checkGolden(t, name+"/"+g.file, run(t, nodes[name], g.cmd))
			})
		}
	}
}

// The notes say what each node's view had to assume.
func TestGoldenNotesOfEveryLabLinuxNode(t *testing.T) {
	_, nodes := lab(t)
	var b strings.Builder
	var names []string
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.WriteString(name + ":\n")
		for _, n := range nodes[name].Notes() {
			b.WriteString("  " + n + "\n")
		}
	}
	checkGolden(t, "notes", b.String())
}
