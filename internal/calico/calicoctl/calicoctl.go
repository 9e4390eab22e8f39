// Package calicoctl answers the calicoctl commands the migration runbook
// runs, from the built twin (simulated): `calicoctl node status` on a node
// and `calicoctl ipam show --show-configuration` anywhere. The output
// follows calicoctl's own (calicoctl/commands/node/status.go,
// calicoctl/commands/ipam/show.go) and its tablewriter tables.
package calicoctl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Emulated lists the commands Exec answers.
var Emulated = []string{"calicoctl node status", "calicoctl ipam show --show-configuration"}

// IsCalicoctl reports whether argv runs calicoctl (directly or with sudo).
func IsCalicoctl(argv []string) bool {
	argv = unsudo(argv)
	return len(argv) > 0 && argv[0] == "calicoctl"
}

func unsudo(argv []string) []string {
	if len(argv) > 0 && argv[0] == "sudo" {
		return argv[1:]
	}
	return argv
}

// Exec answers a calicoctl command on node (empty: a workstation, where
// only the datastore commands work). It returns stdout, stderr and the exit
// status; a command outside Emulated exits 127.
func Exec(c *model.Cluster, node string, argv []string) (string, string, int) {
	args := unsudo(argv)
	line := strings.Join(args, " ")
	switch line {
	case "calicoctl node status":
		if node == "" {
			return "", "calicoctl node status runs on a node: it reads the local calico-node and BIRD processes\n", 1
		}
		return NodeStatus(c, node)
	case "calicoctl ipam show --show-configuration":
		return IPAMConfiguration(c), "", 0
	}
	return "", fmt.Sprintf("kubectl-hybrid: %q is not emulated; emulated: %s\n", strings.Join(argv, " "), strings.Join(Emulated, ", ")), 127
}

// calicoNodePod is the calico-node pod on the node, if any.
func calicoNodePod(c *model.Cluster, node string) *corev1.Pod {
	for _, p := range c.Pods {
		if p.Namespace == "calico-system" && p.Spec.NodeName == node && strings.HasPrefix(p.Name, "calico-node-") && !strings.HasPrefix(p.Name, "calico-node-windows") {
			return p
		}
	}
	return nil
}

func running(p *corev1.Pod) bool { return p != nil && p.Status.Phase == corev1.PodRunning }

// backend is CALICO_NETWORKING_BACKEND of the calico-node DaemonSet's
// template: bird starts BIRD and confd, vxlan and none start neither
// (node/pkg/lifecycle/startup and the runit services of calico/node).
func backend(c *model.Cluster) string {
	var ds *appsv1.DaemonSet
	for _, d := range c.DaemonSets {
		if d.Namespace == "calico-system" && d.Name == "calico-node" {
			ds = d
		}
	}
	if ds == nil {
		return ""
	}
	for _, ctr := range ds.Spec.Template.Spec.Containers {
		if ctr.Name != "calico-node" {
			continue
		}
		for _, e := range ctr.Env {
			if e.Name == "CALICO_NETWORKING_BACKEND" {
				return e.Value
			}
		}
	}
	return "bird" // calico/node's default
}

// NodeStatus is `calicoctl node status` on the node: whether calico-node
// runs, and with BIRD the node-to-node mesh peers (every other Linux node
// with calico-node and an IPv4 address; BGPPeer resources are not
// modelled). The twin holds no session start time: SINCE is <unknown>.
func NodeStatus(c *model.Cluster, node string) (string, string, int) {
	known := false
	for _, n := range c.Nodes {
		if n.Name == node {
			known = true
		}
	}
	if !known {
		return "", fmt.Sprintf("node %s is not in the cluster\n", node), 1
	}
	if !running(calicoNodePod(c, node)) {
		// status.go: no calico-node process.
		return "Calico process is not running.\n", "", 1
	}
	var b strings.Builder
	b.WriteString("Calico process is running.\n")
	if backend(c) != "bird" {
		b.WriteString("\nNone of the BGP backend processes (BIRD or GoBGP) are running.\n")
		return b.String(), "", 0
	}
	b.WriteString("\nIPv4 BGP status\n")
	var rows [][]cell
	if meshEnabled(c) {
		for _, n := range c.Nodes {
			if n.Name == node || n.Labels[corev1.LabelOSStable] == "windows" {
				continue
			}
			a := nodeIPv4(n)
			if !a.IsValid() {
				continue
			}
			state, info := "up", "Established"
			if !running(calicoNodePod(c, n.Name)) {
				// BIRD keeps trying to connect to a peer without BIRD.
				state, info = "start", "Connect"
			}
			rows = append(rows, []cell{{s: a.String()}, {s: "node-to-node mesh"}, {s: state}, {s: "<unknown>"}, {s: info}})
		}
	}
	if len(rows) == 0 {
		b.WriteString("No IPv4 peers found.\n")
	} else {
		b.WriteString(table([]string{"PEER ADDRESS", "PEER TYPE", "STATE", "SINCE", "INFO"}, rows))
	}
	b.WriteString("\nIPv6 BGP status\nNo IPv6 peers found.\n\n")
	return b.String(), "", 0
}

// meshEnabled: BGPConfiguration default's nodeToNodeMeshEnabled, true
// when unset (libcalico-go api BGPConfigurationSpec).
func meshEnabled(c *model.Cluster) bool {
	for _, bc := range c.BGPConfigs {
		if bc.Name == "default" && bc.Spec.NodeToNodeMeshEnabled != nil {
			return *bc.Spec.NodeToNodeMeshEnabled
		}
	}
	return true
}

func nodeIPv4(n *corev1.Node) netip.Addr {
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip
		}
	}
	return netip.Addr{}
}

// IPAMConfiguration is `calicoctl ipam show --show-configuration`: the
// IPAMConfiguration with libcalico-go's defaults (GetIPAMConfig:
// strictAffinity false, autoAllocateBlocks true, maxBlocksPerHost 0).
func IPAMConfiguration(c *model.Cluster) string {
	strict, auto, max := false, true, int32(0)
	if cfg := c.IPAMConfig; cfg != nil {
		strict, max = cfg.Spec.StrictAffinity, cfg.Spec.MaxBlocksPerHost
		if cfg.Spec.AutoAllocateBlocks != nil {
			auto = *cfg.Spec.AutoAllocateBlocks
		}
	}
	return table([]string{"PROPERTY", "VALUE"}, [][]cell{
		{{s: "StrictAffinity"}, {s: strconv.FormatBool(strict)}},
		{{s: "AutoAllocateBlocks"}, {s: strconv.FormatBool(auto)}},
		{{s: "MaxBlocksPerHost"}, {s: strconv.Itoa(int(max)), num: true}},
	})
}

// cell is one table cell; tablewriter aligns numbers right, text left.
type cell struct {
	s   string
	num bool
}

// table renders olekukonko/tablewriter's default table as calicoctl uses
// it: a border, headers centred (extra space on the right).
func table(head []string, rows [][]cell) string {
	w := make([]int, len(head))
	for i, h := range head {
		w[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c.s))
		}
	}
	var b strings.Builder
	sep := func() {
		b.WriteString("+")
		for _, n := range w {
			b.WriteString(strings.Repeat("-", n+2) + "+")
		}
		b.WriteString("\n")
	}
	sep()
	b.WriteString("|")
	for i, h := range head {
		pad := w[i] - len(h)
		b.WriteString(" " + strings.Repeat(" ", pad/2) + h + strings.Repeat(" ", pad-pad/2) + " |")
	}
	b.WriteString("\n")
	sep()
	for _, r := range rows {
		b.WriteString("|")
		for i, c := range r {
			pad := strings.Repeat(" ", w[i]-len(c.s))
			if c.num {
				b.WriteString(" " + pad + c.s + " |")
			} else {
				b.WriteString(" " + c.s + pad + " |")
			}
		}
		b.WriteString("\n")
	}
	sep()
	return b.String()
}
