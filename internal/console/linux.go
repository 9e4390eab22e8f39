package console

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
)

// linuxEmulated lists the commands a Linux node answers.
var linuxEmulated = []string{
	"ip route", "ip addr", "ip link", "ip -d link show vxlan.calico",
	"ip neigh [show dev vxlan.calico]", "bridge fdb [show [dev vxlan.calico]]",
	"nft list ruleset", "nft list table ip kube-proxy",
}

// execLinux runs an emulated command on a Linux node and returns what it prints and
// its exit status. It answers:
//
//	ip route | ip r | ip route show | ip route list
//	ip addr | ip a | ip addr show [[dev] IFACE]
//	ip link | ip l | ip link show [[dev] IFACE]
//	ip -d link show [dev] vxlan.calico
//	ip neigh [show [dev vxlan.calico]]
//	bridge fdb [show [dev vxlan.calico]]
//	nft list ruleset
//	nft list table [ip|ip6] kube-proxy | nft list table ip calico
//
// Object names may be abbreviated as iproute2 allows (ip r, ip a s, ip l).
// Anything else exits 127 with
// `kubectl-hybrid: "<cmd>" is not emulated on Linux nodes; emulated: ...`
// on stderr. A device that does not exist gets iproute2's own error
// (`Device "x" does not exist.`, exit 1), a missing table nft's (exit 1).
func execLinux(n *linux.Node, argv []string) (stdout, stderr string, exit int) {
	if len(argv) == 0 {
		return linuxNotEmulated(argv)
	}
	switch argv[0] {
	case "ip":
		return execIP(n, argv)
	case "bridge":
		return execBridge(n, argv)
	case "nft":
		return execNFT(n, argv)
	}
	return linuxNotEmulated(argv)
}

// withNotes adds to a command's stderr, after what the tool prints, the
// node's notes that explain its output: what the twin does not model
// there, or had to assume.
func withNotes(stdout, stderr string, exit int, notes []string) (string, string, int) {
	for _, n := range notes {
		stderr += "kubectl-hybrid: " + n + "\n"
	}
	return stdout, stderr, exit
}

func linuxNotEmulated(argv []string) (string, string, int) {
	return "", fmt.Sprintf("kubectl-hybrid: %q is not emulated on Linux nodes; emulated: %s\n", strings.Join(argv, " "), strings.Join(linuxEmulated, ", ")), 127
}

// matches is iproute2's matches(): cmd is a prefix of the keyword.
func matches(cmd, keyword string) bool {
	return cmd != "" && strings.HasPrefix(keyword, cmd)
}

// ipObject resolves an ip object name the way ip/ip.c does: the first
// command in its table that the argument prefixes. Only the objects before
// and including the emulated ones matter for the resolution.
func ipObject(arg string) string {
	for _, o := range []string{"address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable", "ntbl", "link"} {
		if matches(arg, o) {
			return o
		}
	}
	return ""
}

func execIP(n *linux.Node, argv []string) (string, string, int) {
	args := argv[1:]
	details := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-d" || (len(args[0]) > 2 && matches(args[0][1:], "details")):
			details = true
		default:
			return linuxNotEmulated(argv)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return linuxNotEmulated(argv)
	}
	obj := ipObject(args[0])
	rest := args[1:]
	verb := ""
	if len(rest) > 0 {
		verb = rest[0]
		rest = rest[1:]
	}
	isShow := verb == "" || matches(verb, "show") || matches(verb, "list") || verb == "lst"
	if !isShow {
		return linuxNotEmulated(argv)
	}
	switch obj {
	case "route":
		if details || len(rest) > 0 {
			return linuxNotEmulated(argv)
		}
		return withNotes(n.IPRoute(), "", 0, n.RouteNotes())
	case "address", "link":
		dev := ""
		switch {
		case len(rest) == 2 && rest[0] == "dev":
			dev = rest[1]
		case len(rest) == 1 && rest[0] != "dev":
			dev = rest[0]
		case len(rest) != 0:
			return linuxNotEmulated(argv)
		}
		if details && (obj != "link" || dev != linux.VXLANDevice) {
			return linuxNotEmulated(argv)
		}
		if dev != "" {
			if _, ok := n.Link(dev); !ok {
				return withNotes("", fmt.Sprintf("Device %q does not exist.\n", dev), 1, n.LinkNotes(dev))
			}
		}
		if obj == "link" {
			return withNotes(n.IPLink(dev, details), "", 0, n.LinkNotes(dev))
		}
		return withNotes(n.IPAddr(dev), "", 0, n.LinkNotes(dev))
	case "neighbor", "neighbour":
		if details {
			return linuxNotEmulated(argv)
		}
		if len(rest) == 0 {
			// Every device: ip prints each entry's device (ip/ipneigh.c
			// print_neigh). Of the table the twin knows only what Felix
			// writes; the kernel's ARP cache comes from traffic.
			return withNotes(n.IPNeighAll(), linux.UnmodelledNeigh, 0, n.L2Notes())
		}
		if len(rest) != 2 || rest[0] != "dev" || rest[1] != linux.VXLANDevice {
			return linuxNotEmulated(argv)
		}
		if _, ok := n.Link(linux.VXLANDevice); !ok {
			return withNotes("", fmt.Sprintf("Cannot find device %q\n", linux.VXLANDevice), 1, n.L2Notes())
		}
		return withNotes(n.IPNeigh(), "", 0, n.L2Notes())
	}
	return linuxNotEmulated(argv)
}

func execBridge(n *linux.Node, argv []string) (string, string, int) {
	a := argv[1:]
	if (len(a) == 1 || len(a) == 2) && matches(a[0], "fdb") && (len(a) == 1 || matches(a[1], "show") || matches(a[1], "list")) {
		// Every device: bridge prints each entry's device (bridge/fdb.c).
		return withNotes(n.BridgeFDBAll(), linux.UnmodelledFDB, 0, n.L2Notes())
	}
	if len(a) == 4 && matches(a[0], "fdb") && (matches(a[1], "show") || matches(a[1], "list")) && a[2] == "dev" && a[3] == linux.VXLANDevice {
		if _, ok := n.Link(linux.VXLANDevice); !ok {
			return withNotes("", fmt.Sprintf("Cannot find device %q\n", linux.VXLANDevice), 1, n.L2Notes())
		}
		return withNotes(n.BridgeFDB(), "", 0, n.L2Notes())
	}
	return linuxNotEmulated(argv)
}

func execNFT(n *linux.Node, argv []string) (string, string, int) {
	a := argv[1:]
	if len(a) == 2 && a[0] == "list" && a[1] == "ruleset" {
		return withNotes(n.NFTRuleset(), "", 0, n.NFTNotes(""))
	}
	if len(a) >= 3 && a[0] == "list" && a[1] == "table" && len(a) <= 4 {
		family, name := "ip", a[2]
		if len(a) == 4 {
			family, name = a[2], a[3]
		}
		var notes []string
		if family == "ip" && (name == "calico" || name == "kube-proxy") {
			notes = n.NFTNotes(name)
		}
		if t, ok := n.NFTTable(family, name); ok {
			return withNotes(t.Text, "", 0, notes)
		}
		cmd := strings.Join(a, " ")
		if len(a) == 3 {
			cmd = "list table ip " + name
		}
		caret := strings.Repeat(" ", len(cmd)-len(name)) + strings.Repeat("^", len(name))
		return withNotes("", "Error: No such file or directory\n"+cmd+"\n"+caret+"\n", 1, notes)
	}
	return linuxNotEmulated(argv)
}
