package console

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// labNode is a Linux node of the lab, compiled.
func labNode(t testing.TB, name string) *linux.Node {
	t.Helper()
	n, err := FromCluster(labWith(t)).LinuxNode(name)
	if err != nil || n == nil {
		t.Fatalf("no Linux node %s in the lab: %v", name, err)
	}
	return n
}

// run runs a command line on a Linux node and fails on a non-zero exit.
func run(t testing.TB, n *linux.Node, cmd string) string {
	t.Helper()
	out, errOut, code := execLinux(n, strings.Fields(cmd))
	if code != 0 {
		t.Fatalf("%s on %s: exit %d: %s", cmd, n.Name, code, errOut)
	}
	return out
}

func lineDiff(want, got string) string { return golden.Diff(want, got) }

func TestALinuxNodeAnswersIproute2AndNftAsTheyDo(t *testing.T) {
	n := labNode(t, "k8s-lab-node-2")
	notEmulated := func(cmd string) string {
		return `kubectl-hybrid: "` + cmd + `" is not emulated on Linux nodes; emulated: ip route, ip addr, ip link, ip -d link show vxlan.calico, ip neigh [show dev vxlan.calico], bridge fdb [show [dev vxlan.calico]], nft list ruleset, nft list table ip kube-proxy` + "\n"
	}
	// The lab records no NIC MACs: the output with the NIC says its MAC is
	// a stand-in.
	nicMAC := "kubectl-hybrid: the MAC of ens18 is not given; " + n.Links()[1].MAC.String() + " is a locally administered stand-in\n"
	for _, tc := range []struct {
		name     string
		cmd      string
		same     string // same stdout as this command
		contains string // stdout contains
		stderr   string
		exit     int
	}{
		{name: "ip a is ip addr", cmd: "ip a", same: "ip addr", stderr: nicMAC},
		{name: "ip addr show is ip addr", cmd: "ip addr show", same: "ip addr", stderr: nicMAC},
		{name: "ip l is ip link", cmd: "ip l", same: "ip link", stderr: nicMAC},
		{name: "ip -details link show dev vxlan.calico is ip -d link show vxlan.calico", cmd: "ip -details link show dev vxlan.calico", same: "ip -d link show vxlan.calico"},
		{name: "ip addr show one device prints only it", cmd: "ip addr show dev ens18", contains: "2: ens18: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc fq_codel state UP group default qlen 1000\n", stderr: nicMAC},
		{name: "ip link show of a pod veth names its peer and namespace", cmd: "ip link show calid60012519f0", contains: "6: calid60012519f0@if2: "},
		{name: "the tunnel address shows on vxlan.calico", cmd: "ip addr show vxlan.calico", contains: "    inet 172.21.172.0/32 scope global vxlan.calico\n"},
		{name: "nft list table without a family means ip", cmd: "nft list table kube-proxy", same: "nft list table ip kube-proxy"},
		{name: "kube-proxy's ip6 table exists and holds no services", cmd: "nft list table ip6 kube-proxy", contains: "table ip6 kube-proxy {\n"},
		{name: "the simplified Calico table says what it is", cmd: "nft list table ip calico", contains: `comment "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"`},
		{name: "a device that does not exist gets iproute2's error", cmd: "ip link show eth9", stderr: "Device \"eth9\" does not exist.\n", exit: 1},
		{name: "a table that does not exist gets nft's error", cmd: "nft list table ip nat", stderr: "Error: No such file or directory\nlist table ip nat\n              ^^^\n", exit: 1},
		{name: "ip rule is not emulated", cmd: "ip rule", stderr: notEmulated("ip rule"), exit: 127},
		{name: "ip neigh without a device names each entry's device and says the ARP cache is left out", cmd: "ip neigh",
			contains: " dev vxlan.calico lladdr ", stderr: linux.UnmodelledNeigh},
		{name: "ip neigh show is ip neigh", cmd: "ip neigh show", same: "ip neigh", stderr: linux.UnmodelledNeigh},
		{name: "bridge fdb show without a device names each entry's device and says the multicast entries are left out", cmd: "bridge fdb show",
			contains: " dev vxlan.calico dst 192.168.10.", stderr: linux.UnmodelledFDB},
		{name: "bridge fdb is bridge fdb show", cmd: "bridge fdb", same: "bridge fdb show", stderr: linux.UnmodelledFDB},
		{name: "ip -d for another device is not emulated", cmd: "ip -d link show ens18", stderr: notEmulated("ip -d link show ens18"), exit: 127},
		{name: "iptables is not emulated", cmd: "iptables -S", stderr: notEmulated("iptables -S"), exit: 127},
		{name: "ip route add does not change anything", cmd: "ip route add 10.0.0.0/8 dev ens18", stderr: notEmulated("ip route add 10.0.0.0/8 dev ens18"), exit: 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := execLinux(n, strings.Fields(tc.cmd))
			if code != tc.exit || errOut != tc.stderr {
				t.Fatalf("exit %d stderr %q, want %d %q", code, errOut, tc.exit, tc.stderr)
			}
			if tc.same != "" {
				if want := run(t, n, tc.same); out != want {
					t.Errorf("differs from %s:\n%s", tc.same, lineDiff(want, out))
				}
			}
			if tc.contains != "" && !strings.Contains(out, tc.contains) {
				t.Errorf("output lacks %q:\n%s", tc.contains, out)
			}
		})
	}
	t.Run("an empty command is not emulated", func(t *testing.T) {
		if _, _, code := execLinux(n, nil); code != 127 {
			t.Errorf("exit %d", code)
		}
	})
}

func TestIPRouteAbbreviationsPrintTheSameTable(t *testing.T) {
	n := labNode(t, "k8s-lab-node-2")
	want := run(t, n, "ip route")
	for _, cmd := range []string{"ip r", "ip route show", "ip ro list", "ip r s"} {
		if got := run(t, n, cmd); got != want {
			t.Errorf("%s differs from ip route:\n%s", cmd, lineDiff(want, got))
		}
	}
}

// nft's own error for a table the node lacks, here kube-proxy's on a node
// whose proxier is iptables (no nftables table at all).
func TestNftListOfATableTheNodeLacksGetsNftsError(t *testing.T) {
	c := labWith(t)
	c.Kubeadm.KubeProxy.Mode = ""
	n, err := FromCluster(c).LinuxNode("k8s-lab-node-1")
	if err != nil || n == nil {
		t.Fatalf("node: %v", err)
	}
	out, errOut, code := execLinux(n, []string{"nft", "list", "table", "ip", "kube-proxy"})
	want := "Error: No such file or directory\nlist table ip kube-proxy\n              ^^^^^^^^^^\n" +
		"kubectl-hybrid: kube-proxy runs in \"iptables\" mode, not nftables: table ip kube-proxy is not programmed\n"
	if out != "" || errOut != want || code != 1 {
		t.Errorf("got %q %q %d, want nft's error and why the table is missing", out, errOut, code)
	}
}

// A command line typed whole on a Linux node runs its later pipeline stages
// as text filters over the first stage's output, as the shell would.
func TestALinuxNodePipelineFiltersTheFirstCommandsOutput(t *testing.T) {
	tw := FromCluster(labWith(t))
	n := labNode(t, "k8s-lab-node-1")
	full := run(t, n, "ip -d link show vxlan.calico")
	cases := []struct {
		name, line string
		want       string
		code       int
	}{
		{"head keeps the first lines", "ip -d link show vxlan.calico | head -2",
			strings.Join(strings.SplitAfter(full, "\n")[:2], ""), 0},
		{"grep -o keeps only the matching part", "ip -d link show vxlan.calico | grep -o 'vxlan id [0-9]*'",
			"vxlan id 4096\n", 0},
		{"grep without a match prints nothing and exits 1", "ip route | grep 203.0.113.", "", 1},
		{"a stage that is no filter is refused", "ip route | sort", "", 127},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Exec(tw, Target{Kind: KindNode, Name: "k8s-lab-node-1"}, []string{tc.line})
			if err != nil {
				t.Fatal(err)
			}
			if out.Stdout != tc.want || out.Code != tc.code {
				t.Errorf("got %q exit %d (%s), want %q exit %d", out.Stdout, out.Code, out.Stderr, tc.want, tc.code)
			}
		})
	}
}
