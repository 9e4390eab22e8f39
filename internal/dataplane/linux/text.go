package linux

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/kubeproxy"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/nft"
)

// The node's state as the Linux tools print it: iproute2's and nft's
// text forms of the compiled data. Which command line asks for which is
// internal/console's.

// VXLANDevice is the device Felix programs for VXLAN.
const VXLANDevice = vxlanDevice

// NFTTable is one nftables table as `nft list table` prints it.
type NFTTable struct {
	Family, Name string
	Text         string
}

// NFTTables are the node's tables as nft prints them, in creation order.
func (n *Node) NFTTables() []NFTTable {
	var out []NFTTable
	for _, t := range n.nftTables() {
		out = append(out, NFTTable{Family: t.Family, Name: t.Name, Text: t.String()})
	}
	return out
}

// NFTTable renders one table, as `nft list table FAMILY NAME` prints it;
// only that table is built (Felix's is the costly one on a large node).
func (n *Node) NFTTable(family, name string) (NFTTable, bool) {
	var t *nft.Table
	switch {
	case n.kp != nil && name == kubeproxy.TableName && (family == "ip" || family == "ip6"):
		t = n.kp.Table(family)
	case n.cal != nil && family == "ip" && name == "calico":
		t, _ = n.cal.table(n.calc)
	}
	if t == nil {
		return NFTTable{}, false
	}
	return NFTTable{Family: t.Family, Name: t.Name, Text: t.String()}, true
}

// NFTRuleset is the node's whole ruleset as nft list ruleset prints it:
// every table, in creation order.
func (n *Node) NFTRuleset() string {
	var b strings.Builder
	for _, t := range n.NFTTables() {
		b.WriteString(t.Text)
	}
	return b.String()
}

// nftTables are the node's tables in creation order: kube-proxy's two
// (its dual-stack proxier creates both families on an IPv6-capable kernel,
// cmd/kube-proxy/app/server_linux.go), then Felix's.
func (n *Node) nftTables() []*nft.Table {
	var ts []*nft.Table
	if n.kp != nil {
		ts = append(ts, n.kp.Table("ip"), n.kp.Table("ip6"))
	}
	if n.cal != nil {
		t, _ := n.cal.table(n.calc)
		ts = append(ts, t)
	}
	return ts
}

// IPRoute prints the main table as ip route does (ip/iproute.c
// print_route): each field "%s ", the route's flags after the metric,
// then the metrics (mtu).
func (n *Node) IPRoute() string {
	n.derive()
	var b strings.Builder
	for _, r := range n.routes {
		b.WriteString(r.line())
		b.WriteString(" \n")
	}
	return b.String()
}

// line is the ip route line without the trailing blank: Fields joined
// by blanks, written into one buffer (a comparison renders every node's
// routes, so the words are not made one string each).
func (r Route) line() string {
	var buf [96]byte
	b := buf[:0]
	sep := func() {
		if len(b) > 0 {
			b = append(b, ' ')
		}
	}
	word := func(s string) { sep(); b = append(b, s...) }
	addr := func(a netip.Addr) { sep(); b = a.AppendTo(b) }
	num := func(n int) { sep(); b = strconv.AppendInt(b, int64(n), 10) }
	if r.Type == RouteBlackhole {
		word("blackhole")
	}
	switch {
	case !r.Dst.IsValid():
		word(r.Dst.String())
	case r.Dst.Bits() == 0:
		word("default")
	case r.Dst.IsSingleIP():
		addr(r.Dst.Addr())
	default:
		sep()
		b = r.Dst.AppendTo(b)
	}
	if r.Via.IsValid() {
		word("via")
		addr(r.Via)
	}
	if r.Dev != "" {
		word("dev")
		word(r.Dev)
	}
	if r.Proto != "" {
		word("proto")
		word(r.Proto)
	}
	if r.Scope != "" {
		word("scope")
		word(r.Scope)
	}
	if r.Src.IsValid() {
		word("src")
		addr(r.Src)
	}
	if r.Metric != 0 {
		word("metric")
		num(r.Metric)
	}
	if r.OnLink {
		word("onlink")
	}
	if r.MTU != 0 {
		word("mtu")
		num(r.MTU)
	}
	return string(b)
}

// Fields are the route's words in the order ip route prints them, which
// is also an order ip route add reads.
func (r Route) Fields() []string {
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
		f = append(f, "metric", strconv.Itoa(r.Metric))
	}
	if r.OnLink {
		f = append(f, "onlink")
	}
	if r.MTU != 0 {
		f = append(f, "mtu", strconv.Itoa(r.MTU))
	}
	return f
}

// String is the route as ip route prints it (without the trailing blank).
func (r Route) String() string { return r.line() }

// IPNeigh is `ip neigh show dev vxlan.calico`.
func (n *Node) IPNeigh() string {
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
	UnmodelledNeigh = "kubectl-hybrid: only the entries Felix programs on " + vxlanDevice + " are modelled; the kernel's ARP cache for the node network and the pods' interfaces fills from traffic and is not shown\n"
	UnmodelledFDB   = "kubectl-hybrid: only the entries Felix programs on " + vxlanDevice + " are modelled; the multicast entries the kernel adds on every interface are not shown\n"
)

// IPNeighAll is `ip neigh` without a device: the entries with their device.
func (n *Node) IPNeighAll() string {
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

// BridgeFDBAll is `bridge fdb show` without a device.
func (n *Node) BridgeFDBAll() string {
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

// BridgeFDB is `bridge fdb show dev vxlan.calico`.
func (n *Node) BridgeFDB() string {
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
	switch l.Kind {
	case KindLoopback:
		return "LOOPBACK,UP,LOWER_UP"
	case KindIPIP:
		// An IP tunnel has no link-layer broadcast and no ARP
		// (net/ipv4/ip_tunnel.c ip_tunnel_setup sets IFF_NOARP).
		return "NOARP,UP,LOWER_UP"
	}
	return "BROADCAST,MULTICAST,UP,LOWER_UP"
}

func (l Link) ifname() string {
	switch {
	case l.Peer != nil:
		return fmt.Sprintf("%s@if%d", l.Name, l.Peer.Index)
	case l.Kind == KindIPIP:
		// iproute2 prints "@NONE" for a device whose IFLA_LINK is 0, as
		// the fallback tunnel's is (ip/ipaddress.c print_linkinfo).
		return l.Name + "@NONE"
	}
	return l.Name
}

func (l Link) linkType() string {
	switch l.Kind {
	case KindLoopback:
		return "loopback"
	case KindIPIP:
		return "ipip"
	}
	return "ether"
}

// addrs are the link-layer address and broadcast ip link prints: the
// tunnel's local and remote endpoints for tunl0, unset (any) on the
// fallback device.
func (l Link) addrs() (addr, brd string) {
	switch l.Kind {
	case KindLoopback:
		return l.MAC.String(), "00:00:00:00:00:00"
	case KindIPIP:
		return "0.0.0.0", "0.0.0.0"
	}
	return l.MAC.String(), "ff:ff:ff:ff:ff:ff"
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
	addr, brd := l.addrs()
	s := fmt.Sprintf("    link/%s %s brd %s", l.linkType(), addr, brd)
	if l.Peer != nil {
		s += " link-netns " + l.Peer.NetNS
	}
	return s
}

// IPLink is `ip link` (of one device when dev is set; details: ip -d).
func (n *Node) IPLink(dev string, details bool) string {
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

// IPAddr prints ip addr (ip/ipaddress.c print_addrinfo): the link header
// without "mode", the link/ether line, then each address with its
// lifetimes. Kernel-made IPv6 addresses carry IFA_PROTO (kernel_lo,
// kernel_ll), which iproute2 prints.
func (n *Node) IPAddr(dev string) string {
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
