package sandbox

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
)

// peerVTEP is what the Linux nodes know of a node without a compiled Linux
// dataplane (a Windows node): its VTEP and its blocks.
type peerVTEP struct {
	node   string
	tunnel netip.Addr
	mac    net.HardwareAddr
	host   netip.Addr
	blocks []netip.Prefix
}

// standIns plays each Windows node the Linux nodes route to by a namespace
// that terminates VXLAN for the node's blocks: its address on the node
// network, a VXLAN device with the VTEP the Linux nodes have for it (VNI,
// port, MAC, tunnel address), the Linux VTEPs and blocks, and its pods.
func (b *builder) standIns(linuxNames []string) error {
	peers := map[string]*peerVTEP{}
	var vni, port, mtu int
	type lv struct {
		node   string
		link   linux.Link
		blocks []netip.Prefix
	}
	var linuxVTEPs []lv
	for _, name := range linuxNames {
		n := b.nodes[name]
		var own []netip.Prefix
		for _, r := range n.Routes() {
			if r.Type == linux.RouteBlackhole {
				own = append(own, r.Dst)
			}
		}
		if l, ok := n.Link("vxlan.calico"); ok && l.VXLAN != nil {
			vni, port, mtu = l.VXLAN.VNI, l.VXLAN.DstPort, l.MTU
			linuxVTEPs = append(linuxVTEPs, lv{node: name, link: l, blocks: own})
		}
		for _, nb := range n.Neighbors() {
			if b.nodes[nb.Node] != nil {
				continue
			}
			if peers[nb.Node] == nil {
				peers[nb.Node] = &peerVTEP{node: nb.Node, tunnel: nb.IP, mac: nb.MAC}
			}
		}
		for _, f := range n.FDB() {
			if pv := peers[f.Node]; pv != nil && !pv.host.IsValid() {
				pv.host = f.Dst
			}
		}
		for _, r := range n.Routes() {
			if pv := peers[r.Node]; pv != nil && r.Dev == "vxlan.calico" && !containsPrefix(pv.blocks, r.Dst) {
				pv.blocks = append(pv.blocks, r.Dst)
			}
		}
	}
	names := make([]string, 0, len(peers))
	for n := range peers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pv := peers[name]
		if !pv.host.IsValid() {
			b.p.Notes = append(b.p.Notes, fmt.Sprintf("no Linux node has an FDB entry for %s's VTEP: its stand-in is not created", name))
			continue
		}
		ns := b.nodeName(name)
		if err := b.ns(Namespace{Name: ns, Kind: KindStandIn, Node: name, Addr: pv.host}); err != nil {
			return err
		}
		b.p.Notes = append(b.p.Notes, fmt.Sprintf("%s is a stand-in for the Windows node %s: a Linux namespace terminating VXLAN for %s; HNS, VFP and the Windows host are not played", ns, name, prefixList(pv.blocks)))
		b.step("STAND-IN for Windows node "+name+": it forwards", "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		b.nic(ns, linux.Link{Name: "eth0", Addrs: []netip.Prefix{netip.PrefixFrom(pv.host, b.lanBits)}},
			"STAND-IN: the Windows node's address on the node network")
		b.step("STAND-IN: VXLAN with the VTEP the Linux nodes know for "+name, "ip", "-n", ns, "link", "add", standInDev,
			"address", pv.mac.String(), "mtu", strconv.Itoa(mtu), "type", "vxlan", "id", strconv.Itoa(vni),
			"local", pv.host.String(), "dev", "eth0", "dstport", strconv.Itoa(port), "nolearning")
		b.step("", "ip", "-n", ns, "link", "set", standInDev, "up")
		b.step("", "ip", "-n", ns, "addr", "add", netip.PrefixFrom(pv.tunnel, 32).String(), "dev", standInDev)
		for _, v := range linuxVTEPs {
			if len(v.link.Addrs) == 0 {
				continue
			}
			tun := v.link.Addrs[0].Addr()
			b.step("STAND-IN: "+v.node+"'s VTEP", "ip", "-n", ns, "neigh", "replace", tun.String(), "lladdr", v.link.MAC.String(), "dev", standInDev, "nud", "permanent")
			b.step("", "bridge", "-n", ns, "fdb", "append", v.link.MAC.String(), "dev", standInDev, "dst", v.link.VXLAN.Local.String(), "self", "permanent")
			for _, blk := range v.blocks {
				b.step("", "ip", "-n", ns, "route", "add", blk.String(), "via", tun.String(), "dev", standInDev, "onlink")
			}
		}
		if b.gateway.IsValid() {
			b.step("", "ip", "-n", ns, "route", "add", "default", "via", b.gateway.String(), "dev", "eth0")
		}
		var pods []*corev1.Pod
		for _, p := range b.pods {
			if p.Spec.NodeName == name {
				pods = append(pods, p)
			}
		}
		sort.Slice(pods, func(i, j int) bool { return podKey(pods[i]) < podKey(pods[j]) })
		for _, p := range pods {
			l := linux.Link{Name: "hns" + linux.VethName(p.Namespace, p.Name)[4:], MTU: mtu}
			if err := b.pod(ns, name, l, p, KindStandInPod, "STAND-IN: the Windows pod, joined to its stand-in node by a veth"); err != nil {
				return err
			}
			b.step("", "ip", "-n", ns, "route", "add", p.Status.PodIP, "dev", l.Name, "scope", "link")
		}
	}
	return nil
}

func containsPrefix(s []netip.Prefix, p netip.Prefix) bool {
	for _, x := range s {
		if x == p {
			return true
		}
	}
	return false
}

func prefixList(ps []netip.Prefix) string {
	s := ""
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}
