package linux

import (
	"fmt"
	"net/netip"
	"strings"
)

// Emulated lists the commands Exec answers.
var Emulated = []string{
	"ip route", "ip addr", "ip link", "ip -d link show vxlan.calico",
	"ip neigh [show dev vxlan.calico]", "bridge fdb [show [dev vxlan.calico]]",
	"nft list ruleset", "nft list table ip kube-proxy",
}

// Exec runs an emulated command on the node and returns what it prints and
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
func (n *Node) Exec(argv []string) (stdout, stderr string, exit int) {
	if len(argv) == 0 {
		return n.notEmulated(argv)
	}
	switch argv[0] {
	case "ip":
		return n.execIP(argv)
	case "bridge":
		return n.execBridge(argv)
	case "nft":
		return n.execNFT(argv)
	}
	return n.notEmulated(argv)
}

func (n *Node) notEmulated(argv []string) (string, string, int) {
	return "", fmt.Sprintf("kubectl-hybrid: %q is not emulated on Linux nodes; emulated: %s\n", strings.Join(argv, " "), strings.Join(Emulated, ", ")), 127
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

func (n *Node) execIP(argv []string) (string, string, int) {
	args := argv[1:]
	details := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-d" || (len(args[0]) > 2 && matches(args[0][1:], "details")):
			details = true
		default:
			return n.notEmulated(argv)
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return n.notEmulated(argv)
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
		return n.notEmulated(argv)
	}
	switch obj {
	case "route":
		if details || len(rest) > 0 {
			return n.notEmulated(argv)
		}
		return n.ipRoute(), "", 0
	case "address", "link":
		dev := ""
		switch {
		case len(rest) == 2 && rest[0] == "dev":
			dev = rest[1]
		case len(rest) == 1 && rest[0] != "dev":
			dev = rest[0]
		case len(rest) != 0:
			return n.notEmulated(argv)
		}
		if dev != "" {
			if _, ok := n.Link(dev); !ok {
				return "", fmt.Sprintf("Device %q does not exist.\n", dev), 1
			}
		}
		if details && (obj != "link" || dev != vxlanDevice) {
			return n.notEmulated(argv)
		}
		if obj == "link" {
			return n.ipLink(dev, details), "", 0
		}
		return n.ipAddr(dev), "", 0
	case "neighbor", "neighbour":
		if details {
			return n.notEmulated(argv)
		}
		if len(rest) == 0 {
			// Every device: ip prints each entry's device (ip/ipneigh.c
			// print_neigh). Of the table the twin knows only what Felix
			// writes; the kernel's ARP cache comes from traffic.
			return n.ipNeighAll(), unmodelledNeigh, 0
		}
		if len(rest) != 2 || rest[0] != "dev" || rest[1] != vxlanDevice {
			return n.notEmulated(argv)
		}
		if _, ok := n.Link(vxlanDevice); !ok {
			return "", fmt.Sprintf("Cannot find device %q\n", vxlanDevice), 1
		}
		return n.ipNeigh(), "", 0
	}
	return n.notEmulated(argv)
}

func (n *Node) execBridge(argv []string) (string, string, int) {
	a := argv[1:]
	if (len(a) == 1 || len(a) == 2) && matches(a[0], "fdb") && (len(a) == 1 || matches(a[1], "show") || matches(a[1], "list")) {
		// Every device: bridge prints each entry's device (bridge/fdb.c).
		return n.bridgeFDBAll(), unmodelledFDB, 0
	}
	if len(a) == 4 && matches(a[0], "fdb") && (matches(a[1], "show") || matches(a[1], "list")) && a[2] == "dev" && a[3] == vxlanDevice {
		if _, ok := n.Link(vxlanDevice); !ok {
			return "", fmt.Sprintf("Cannot find device %q\n", vxlanDevice), 1
		}
		return n.bridgeFDB(), "", 0
	}
	return n.notEmulated(argv)
}

func (n *Node) execNFT(argv []string) (string, string, int) {
	a := argv[1:]
	if len(a) == 2 && a[0] == "list" && a[1] == "ruleset" {
		var b strings.Builder
		for _, t := range n.nftTables() {
			b.WriteString(t.String())
		}
		return b.String(), "", 0
	}
	if len(a) >= 3 && a[0] == "list" && a[1] == "table" && len(a) <= 4 {
		family, name := "ip", a[2]
		if len(a) == 4 {
			family, name = a[2], a[3]
		}
		for _, t := range n.nftTables() {
			if t.family == family && t.name == name {
				return t.String(), "", 0
			}
		}
		cmd := strings.Join(a, " ")
		if len(a) == 3 {
			cmd = "list table ip " + name
		}
		caret := strings.Repeat(" ", len(cmd)-len(name)) + strings.Repeat("^", len(name))
		return "", "Error: No such file or directory\n" + cmd + "\n" + caret + "\n", 1
	}
	return n.notEmulated(argv)
}

// nftTables are the node's tables in creation order: kube-proxy's two
// (its dual-stack proxier creates both families on an IPv6-capable kernel,
// cmd/kube-proxy/app/server_linux.go), then Felix's.
func (n *Node) nftTables() []*nftTable {
	var ts []*nftTable
	if n.kp != nil {
		ts = append(ts, n.kp.table("ip"), n.kp.table("ip6"))
	}
	if n.cal != nil {
		t, _ := n.cal.table(n.calc)
		ts = append(ts, t)
	}
	return ts
}

// ipRoute prints the main table as ip route does (ip/iproute.c
// print_route): each field "%s ", the route's flags after the metric,
// then the metrics (mtu).
func (n *Node) ipRoute() string {
	n.derive()
	var b strings.Builder
	for _, r := range n.routes {
		b.WriteString(r.line())
		b.WriteString(" \n")
	}
	return b.String()
}

// line is the ip route line without the trailing blank.
func (r Route) line() string {
	var f []string
	if r.Type == RouteBlackhole {
		f = append(f, "blackhole")
	}
	f = append(f, r.Destination())
	if r.Via.IsValid() {
		f = append(f, "via", r.Via.String())
	}
	if r.Dev != "" {
		f = append(f, "dev", r.Dev)
	}
	if r.Proto != "" {
		f = append(f, "proto", r.Proto)
	}
	if r.Scope != "" {
		f = append(f, "scope", r.Scope)
	}
	if r.Src.IsValid() {
		f = append(f, "src", r.Src.String())
	}
	if r.Metric != 0 {
		f = append(f, "metric", fmt.Sprint(r.Metric))
	}
	if r.OnLink {
		f = append(f, "onlink")
	}
	if r.MTU != 0 {
		f = append(f, "mtu", fmt.Sprint(r.MTU))
	}
	return strings.Join(f, " ")
}

// String is the route as ip route prints it (without the trailing blank).
func (r Route) String() string { return r.line() }

func (n *Node) ipNeigh() string {
	n.derive()
	var b strings.Builder
	for _, e := range n.neigh {
		fmt.Fprintf(&b, "%s lladdr %s %s \n", e.IP, e.MAC, e.State)
	}
	return b.String()
}

// Said on stderr when the whole table is asked for: what the twin leaves
// out of it.
const (
	unmodelledNeigh = "kubectl-hybrid: only the entries Felix programs on " + vxlanDevice + " are modelled; the kernel's ARP cache for the node network and the pods' interfaces fills from traffic and is not shown\n"
	unmodelledFDB   = "kubectl-hybrid: only the entries Felix programs on " + vxlanDevice + " are modelled; the multicast entries the kernel adds on every interface are not shown\n"
)

// ipNeighAll is `ip neigh` without a device: the entries with their device.
func (n *Node) ipNeighAll() string {
	n.derive()
	if _, ok := n.Link(vxlanDevice); !ok {
		return ""
	}
	var b strings.Builder
	for _, e := range n.neigh {
		fmt.Fprintf(&b, "%s dev %s lladdr %s %s \n", e.IP, vxlanDevice, e.MAC, e.State)
	}
	return b.String()
}

// bridgeFDBAll is `bridge fdb show` without a device.
func (n *Node) bridgeFDBAll() string {
	n.derive()
	if _, ok := n.Link(vxlanDevice); !ok {
		return ""
	}
	var b strings.Builder
	for _, e := range n.fdb {
		fmt.Fprintf(&b, "%s dev %s dst %s self permanent\n", e.MAC, vxlanDevice, e.Dst)
	}
	return b.String()
}

func (n *Node) bridgeFDB() string {
	n.derive()
	var b strings.Builder
	for _, e := range n.fdb {
		fmt.Fprintf(&b, "%s dst %s self permanent\n", e.MAC, e.Dst)
	}
	return b.String()
}

// flags prints the interface flags as ip link does (ip/ipaddress.c
// print_link_flags): an up device with carrier shows UP and LOWER_UP.
func (l Link) flags() string {
	if l.Kind == KindLoopback {
		return "LOOPBACK,UP,LOWER_UP"
	}
	return "BROADCAST,MULTICAST,UP,LOWER_UP"
}

func (l Link) ifname() string {
	if l.Peer != nil {
		return fmt.Sprintf("%s@if%d", l.Name, l.Peer.Index)
	}
	return l.Name
}

func (l Link) linkType() string {
	if l.Kind == KindLoopback {
		return "loopback"
	}
	return "ether"
}

func (l Link) brd() string {
	if l.Kind == KindLoopback {
		return "00:00:00:00:00:00"
	}
	return "ff:ff:ff:ff:ff:ff"
}

// header is the first line of ip link / ip addr for the link.
func (l Link) header(mode bool) string {
	m := ""
	if mode {
		m = "mode DEFAULT "
	}
	return fmt.Sprintf("%d: %s: <%s> mtu %d qdisc %s state %s %sgroup default qlen 1000",
		l.Index, l.ifname(), l.flags(), l.MTU, l.Qdisc, l.State, m)
}

func (l Link) l2line() string {
	s := fmt.Sprintf("    link/%s %s brd %s", l.linkType(), l.MAC, l.brd())
	if l.Peer != nil {
		s += " link-netns " + l.Peer.NetNS
	}
	return s
}

func (n *Node) ipLink(dev string, details bool) string {
	var b strings.Builder
	for _, l := range n.links {
		if dev != "" && l.Name != dev {
			continue
		}
		b.WriteString(l.header(true) + "\n")
		if !details {
			b.WriteString(l.l2line() + "\n")
			continue
		}
		// ip -d: promiscuity..maxmtu on the link/ether line, then the
		// kind's options (ip/iplink_vxlan.c vxlan_print_opt: numbers and
		// addresses first, booleans only when not the default, so
		// "nolearning"; Linux >= 6.14 reports reserved_bits), then
		// addrgenmode and the queue/GSO limits.
		fmt.Fprintf(&b, "%s promiscuity 0 allmulti 0 minmtu 68 maxmtu 65535 \n", l.l2line())
		v := l.VXLAN
		fmt.Fprintf(&b, "    vxlan id %d local %s dev %s srcport 0 0 dstport %d ttl auto ageing 300 reserved_bits 0xf7ffffff000000ff ",
			v.VNI, v.Local, v.Parent, v.DstPort)
		if !v.Learning {
			b.WriteString("nolearning ")
		}
		b.WriteString("addrgenmode eui64 numtxqueues 1 numrxqueues 1 gso_max_size 65536 gso_max_segs 65535 tso_max_size 524280 tso_max_segs 65535 gro_max_size 65536 gso_ipv4_max_size 65536 gro_ipv4_max_size 65536 \n")
	}
	return b.String()
}

// ipAddr prints ip addr (ip/ipaddress.c print_addrinfo): the link header
// without "mode", the link/ether line, then each address with its
// lifetimes. Kernel-made IPv6 addresses carry IFA_PROTO (kernel_lo,
// kernel_ll), which iproute2 prints.
func (n *Node) ipAddr(dev string) string {
	var b strings.Builder
	for _, l := range n.links {
		if dev != "" && l.Name != dev {
			continue
		}
		b.WriteString(l.header(false) + "\n")
		b.WriteString(l.l2line() + "\n")
		for _, a := range l.Addrs {
			brd := ""
			if l.Kind == KindEthernet && a.Bits() < 31 {
				brd = "brd " + broadcast(a).String() + " "
			}
			scope := "global"
			if l.Kind == KindLoopback {
				scope = "host"
			}
			fmt.Fprintf(&b, "    inet %s %sscope %s %s\n", a, brd, scope, l.Name)
			b.WriteString("       valid_lft forever preferred_lft forever\n")
		}
		switch {
		case l.Kind == KindLoopback:
			b.WriteString("    inet6 ::1/128 scope host proto kernel_lo \n")
			b.WriteString("       valid_lft forever preferred_lft forever\n")
		case l.LinkLocal.IsValid():
			fmt.Fprintf(&b, "    inet6 %s scope link proto kernel_ll \n", l.LinkLocal)
			b.WriteString("       valid_lft forever preferred_lft forever\n")
		}
	}
	return b.String()
}

func broadcast(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}
