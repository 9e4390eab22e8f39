package trace

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
)

// Initial TTLs (Linux net.ipv4.ip_default_ttl, Windows DefaultTTL).
const (
	ttlLinux   = 64
	ttlWindows = 128
	// An address beyond the node network's gateway is taken to answer with
	// TTL 64 from eight routers away (a stand-in: the Internet is not
	// modeled).
	ttlExternal     = 64
	externalRouters = 8
	maxSteps        = 200
)

// Per-hop costs of the round-trip model, in milliseconds (see the package
// documentation). They are small, fixed and summed over both legs.
const (
	costStack    = 0.020 // a pod's or host's network stack
	costForward  = 0.030 // one Linux routing step
	costVFP      = 0.015 // one VFP layer
	costWire     = 0.110 // one crossing of the node network, with VXLAN work
	costInternet = 4.500 // one way beyond the gateway (seed 000: 9 ms to 1.1.1.1)
	// firstFlowWindows is the first packet of a new VFP flow leaving a
	// Windows pod through VXLAN (seed 000: the first reply from
	// 172.21.172.4 took 13 ms, the second <1 ms): flow setup in VFP.
	firstFlowWindows = 13.0
)

type packet struct {
	src, dst     netip.Addr
	sport, dport int
	proto        Proto
	ttl          int
	outer        *Outer
}

func (p packet) header() Header {
	h := Header{Src: p.src.String(), Dst: p.dst.String(), SrcPort: p.sport, DstPort: p.dport, Proto: p.proto, TTL: p.ttl}
	if p.outer != nil {
		o := *p.outer
		h.Outer = &o
	}
	return h
}

// natEntry is a translation the request made, undone on the reply.
type natEntry struct {
	node string
	dnat bool
	// client is the packet's source when it was translated.
	client     netip.Addr
	clientPort int
	// orig is what was replaced (the VIP for DNAT, the source for SNAT),
	// to what replaced it.
	orig     netip.Addr
	origPort int
	to       netip.Addr
	toPort   int
	comp     string
	// icmpLost: the reply is not translated back (ICMP through OutBoundNAT
	// on builds before Windows Server 2025).
	icmpLost string
}

// place is where a packet is sent from.
type place struct {
	kind string // linuxPod, winPod, linuxHost, winHost, external
	nd   *node
	pod  *corev1.Pod
	ep   *windows.Endpoint
	addr netip.Addr
}

// walker walks one leg of a trace.
type walker struct {
	e     *Engine
	leg   string
	depth int
	reply bool
	steps int
	hops  []Hop
	nats  []natEntry

	ended     bool
	outcome   Outcome
	reason    string
	atNode    string
	atComp    string
	atPoint   Point
	arrived   packet
	arrivedAt place
	responder string

	assumed      bool
	firstFlow    bool
	warnings     []string
	translations []Translation
	acls         []ACLInfo
	// client is where a reply must arrive.
	client netip.Addr
}

func (w *walker) add(nd, comp, action string, before packet, after *packet, v Verdict, reason string, cost float64) {
	h := Hop{Leg: w.leg, Node: nd, Component: comp, Action: action, Before: before.header(), Verdict: v, Reason: reason, Depth: w.depth}
	if after != nil {
		a := after.header()
		h.After = &a
	}
	h.cost = cost
	w.hops = append(w.hops, h)
}

// mark says where on the path the last hop acts (and so the walk's end,
// when that hop ended it).
func (w *walker) mark(p Point) {
	w.hops[len(w.hops)-1].Point = p
	if w.ended {
		w.atPoint = p
	}
}

// end stops the walk with an outcome decided at a hop.
func (w *walker) end(o Outcome, nd, comp, action string, pkt packet, v Verdict, reason string) {
	w.add(nd, comp, action, pkt, nil, v, reason, 0)
	w.ended, w.outcome, w.reason, w.atNode, w.atComp = true, o, reason, nd, comp
}

func (w *walker) warn(s string) {
	for _, x := range w.warnings {
		if x == s {
			return
		}
	}
	w.warnings = append(w.warnings, s)
}

// tick guards against a loop in the model.
func (w *walker) tick(nd string, pkt packet) bool {
	w.steps++
	if w.steps > maxSteps {
		w.end(NotModeled, nd, "trace", "stop", pkt, Drop, "the walk did not end after 200 steps (a loop in the model)")
		return false
	}
	return !w.ended
}

// send starts a leg at a place.
func (w *walker) send(pl place, pkt packet) {
	switch pl.kind {
	case "linuxPod":
		w.add(pl.nd.name, "pod "+podName(pl.pod)+" eth0", "send", pkt, nil, Pass,
			"the pod's route: default via 169.254.1.1 dev eth0 (Calico's proxy-ARP gateway) to the host end "+vethOf(pl.pod), costStack)
		w.linuxIn(pl.nd, pkt, vethOf(pl.pod), pl.pod)
	case "winPod":
		if pl.ep == nil {
			w.end(Dropped, pl.nd.name, "pod "+podName(pl.pod)+" vNIC", "drop", pkt, Drop, noEndpoint(pl.nd, pl.pod))
			return
		}
		w.add(pl.nd.name, "pod "+podName(pl.pod)+" vNIC", "send", pkt, nil, Pass,
			fmt.Sprintf("HNS endpoint %s (%s/%d, gateway %s)", shortID(pl.ep.ID), pl.ep.IPAddress, pl.ep.PrefixLength, pl.ep.GatewayAddress), costStack)
		w.winPodOut(pl.nd, pl.ep, pl.pod, pkt)
	case "linuxHost":
		w.add(pl.nd.name, "host "+pl.nd.name, "send", pkt, nil, Pass, "a process in the node's network namespace", costStack)
		w.linuxIn(pl.nd, pkt, "", nil)
	case "winHost":
		w.add(pl.nd.name, "host "+pl.nd.name, "send", pkt, nil, Pass, "a process on the Windows host (compartment 1)", costStack)
		w.winHostOut(pl.nd, pkt)
	case "external":
		w.externalIn(pkt)
	}
}

// noEndpoint says why a Windows pod has no HNS endpoint to send from: the
// node's first warning when the Calico network is missing (no block, no
// calico-node-windows), else that the CNI gave none the pod's address.
func noEndpoint(nd *node, p *corev1.Pod) string {
	why := "the Calico CNI created none with the pod's address " + p.Status.PodIP
	if win := nd.w(); win != nil && len(win.Warnings) > 0 {
		why = win.Warnings[0]
	} else if win == nil {
		why = "the node's HNS state could not be compiled"
	}
	return fmt.Sprintf("%s has no HNS endpoint on %s: %s", podName(p), nd.name, why)
}

func podName(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

func vethOf(p *corev1.Pod) string {
	if p == nil {
		return ""
	}
	return vethName(p.Namespace, p.Name)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// pick chooses a backend deterministically: FNV-1a of client address, VIP,
// port and protocol, modulo the number of candidates (see the package
// documentation).
func pick(n int, client, vip netip.Addr, port int, proto Proto) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s|%d|%s", client, vip, port, proto)
	return int(h.Sum32() % uint32(n))
}

func (w *walker) backendOf(a netip.Addr) Backend {
	b := Backend{}
	if p := w.e.p.PodByIP(a); p != nil {
		b.Pod, b.Node = podName(p), p.Spec.NodeName
	} else if nd := w.e.byIP[a]; nd != nil {
		b.Node = nd.name
	}
	return b
}

// unNAT undoes the request's translations recorded on nd for a reply
// packet, and reports whether it changed anything.
func (w *walker) unNAT(nd *node, pkt packet, comp string) (packet, bool) {
	out := pkt
	changed := false
	var undone []string
	for i := len(w.nats) - 1; i >= 0; i-- {
		n := w.nats[i]
		if n.node != nd.name || n.dnat {
			continue
		}
		if out.dst == n.to && (n.toPort == 0 || out.dport == n.toPort) {
			if n.icmpLost != "" {
				w.end(Dropped, nd.name, n.comp, "drop reply", out, Drop, n.icmpLost)
				return out, false
			}
			out.dst, out.dport = n.orig, orPort(n.origPort, out.dport)
			changed = true
			undone = append(undone, "SNAT of "+n.comp)
		}
	}
	for i := len(w.nats) - 1; i >= 0; i-- {
		n := w.nats[i]
		if n.node != nd.name || !n.dnat {
			continue
		}
		if out.src == n.to && (n.toPort == 0 || out.sport == n.toPort) && out.dst == n.client {
			out.src, out.sport = n.orig, orPort(n.origPort, out.sport)
			changed = true
			undone = append(undone, "DNAT of "+n.comp)
		}
	}
	if changed {
		w.add(nd.name, comp, "reverse NAT", pkt, &out, Pass, "reply of a translated connection: undoes the "+strings.Join(undone, " and the "), 0)
	}
	return out, changed
}

func orPort(p, def int) int {
	if p == 0 {
		return def
	}
	return p
}

// arriveNodeNet hands a packet on the node network to whoever owns the
// next hop.
func (w *walker) arriveNodeNet(from string, next netip.Addr, pkt packet) {
	if !w.tick(from, pkt) {
		return
	}
	if nd := w.e.byIP[next]; nd != nil && next == nd.ip {
		switch {
		case pkt.outer != nil && pkt.outer.IPIP:
			w.ipipIn(nd, pkt)
			return
		case pkt.outer != nil:
			w.vxlanIn(nd, pkt)
			return
		}
		if nd.windows {
			w.winHostIn(nd, pkt)
		} else {
			w.linuxIn(nd, pkt, nicName(w.e, nd), nil)
		}
		return
	}
	if pkt.outer != nil {
		kind := "VXLAN"
		if pkt.outer.IPIP {
			kind = "IP-in-IP"
		}
		w.end(Dropped, from, "node network", "drop", pkt, Drop, fmt.Sprintf("the %s packet's outer destination %s is no node", kind, next))
		return
	}
	if next == w.e.gateway && !w.e.nodeNet.Contains(pkt.dst) {
		w.externalOut(from, pkt)
		return
	}
	w.nodeNetHost(from, pkt)
}

func nicName(e *Engine, nd *node) string {
	if n := e.p.NIC(nd.name); n != "" {
		return n
	}
	if nd.windows {
		return "Ethernet"
	}
	return "eth0"
}

// externalOut: the packet leaves the cluster through the node network's
// gateway.
func (w *walker) externalOut(from string, pkt packet) {
	if w.reply {
		w.add("", "gateway "+w.e.gateway.String(), "route out", pkt, nil, Pass, "the reply leaves the cluster toward the client", costInternet)
		w.arrive(place{kind: "external", addr: pkt.dst}, pkt, "the client outside the cluster")
		return
	}
	after := pkt
	after.ttl--
	w.add("", "gateway "+w.e.gateway.String(), "forward", pkt, &after, Pass, "the node network's router forwards the packet out of the cluster (one routing step)", costInternet)
	w.assumed = true
	w.deliverAssumed(place{kind: "external", addr: pkt.dst}, after,
		fmt.Sprintf("%s is outside the cluster: beyond the gateway the twin does not model the network and assumes the destination answers", pkt.dst))
}

// nodeNetHost: a host of the node network that is no node (the router, a
// workstation).
func (w *walker) nodeNetHost(from string, pkt packet) {
	if w.reply {
		w.arrive(place{kind: "external", addr: pkt.dst}, pkt, "the client on the node network")
		return
	}
	w.assumed = true
	what := "a host of the node network that is not a node"
	if pkt.dst == w.e.gateway {
		what = "the node network's gateway (router)"
	}
	w.deliverAssumed(place{kind: "external", addr: pkt.dst}, pkt, fmt.Sprintf("%s is %s: the twin assumes it answers", pkt.dst, what))
}

// deliverAssumed ends a request at a host the twin does not model.
func (w *walker) deliverAssumed(pl place, pkt packet, why string) {
	w.add("", "host "+pkt.dst.String(), "deliver", pkt, nil, Deliver, why, 0)
	w.ended, w.outcome, w.reason = true, Delivered, why
	w.arrived, w.arrivedAt, w.responder = pkt, pl, "a host outside the cluster (assumed)"
}

// arrive ends a reply leg.
func (w *walker) arrive(pl place, pkt packet, what string) {
	w.add(nodeOf(pl), what, "receive reply", pkt, nil, Deliver, fmt.Sprintf("the reply arrives with ttl %d", pkt.ttl), costStack)
	w.ended, w.outcome = true, Delivered
	w.arrived, w.arrivedAt = pkt, pl
	if pkt.dst != w.client && w.client.IsValid() {
		w.outcome = NotModeled
		w.reason = fmt.Sprintf("the reply arrived at %s, not at the client %s", pkt.dst, w.client)
	}
}

func nodeOf(pl place) string {
	if pl.nd != nil {
		return pl.nd.name
	}
	return ""
}

// externalIn: a packet from an address outside the cluster.
func (w *walker) externalIn(pkt packet) {
	e := w.e
	start := pkt
	if !e.nodeNet.Contains(pkt.src) {
		after := pkt
		after.ttl--
		w.add("", "gateway "+e.gateway.String(), "forward", pkt, &after, Pass, "the node network's router forwards the packet in (one routing step)", costInternet)
		pkt = after
	} else {
		w.add("", "host "+pkt.src.String(), "send", pkt, nil, Pass, "a host on the node network", costStack)
	}
	nd := e.byIP[pkt.dst]
	if nd == nil || pkt.dst != nd.ip {
		what := "the pod network"
		if e.inServiceCIDR(pkt.dst) {
			what = "the service network"
		}
		if !e.inPools(pkt.dst) && !e.inServiceCIDR(pkt.dst) {
			w.end(NotModeled, "", "node network", "drop", start, Drop, fmt.Sprintf("both %s and %s are outside the cluster: nothing to trace", pkt.src, pkt.dst))
			return
		}
		why := "with BGP disabled only the nodes know the VXLAN routes"
		if linux.BGPEnabled(e.c) {
			// BGPPeer objects are not modelled: the mesh is the twin's BGP.
			why = "BGP runs between the nodes (the node-to-node mesh); the twin models no peering with the node network's router"
		}
		w.end(Dropped, "", "node network", "no route", pkt, Drop,
			fmt.Sprintf("%s is in %s, which the node network does not route: %s", pkt.dst, what, why))
		return
	}
	w.arriveNodeNet("", pkt.dst, pkt)
}

// firewall evaluates the Cluster kind's firewall for traffic into host nd
// (first match wins, unmatched traffic is allowed), with HNS's
// OverlayTraffic4789UDP rule on Windows after the listed rules.
func (w *walker) firewall(nd *node, src netip.Addr, proto Proto, port int) (bool, string) {
	rules := w.e.c.Network.Firewall
	if i := hybrid.FirstFirewallMatch(rules, nd.name, src, proto.Upper(), int32(port)); i >= 0 {
		r := rules[i]
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		if r.Blocks() {
			return false, fmt.Sprintf("blocked by spec.network.firewall[%d] %q", i, name)
		}
		return true, fmt.Sprintf("allowed by spec.network.firewall[%d] %q", i, name)
	}
	if nd.windows && nd.w() != nil && proto == UDP {
		for _, r := range nd.w().FirewallRules {
			if r.Source != "Cluster spec.network.firewall" && strings.EqualFold(r.Protocol, "UDP") {
				for _, p := range r.LocalPorts {
					if int(p) == port && strings.EqualFold(r.Action, "Allow") && r.Enabled {
						return true, fmt.Sprintf("allowed by Windows Firewall rule %s (%s)", r.Name, r.Source)
					}
				}
			}
		}
	}
	if len(w.e.c.Network.Firewall) == 0 {
		return true, "no input states firewall rules (a Cluster kind's spec.network.firewall): the traffic is assumed to pass"
	}
	return true, "no firewall rule matches; the Cluster kind lets unmatched traffic through"
}

// vxlanIn: a VXLAN datagram arrives at a node.
func (w *walker) vxlanIn(nd *node, pkt packet) {
	o := pkt.outer
	outer := packet{src: addr(o.Src), dst: addr(o.Dst), dport: o.DstPort, proto: UDP, ttl: pkt.ttl}
	ok, why := w.firewall(nd, outer.src, UDP, o.DstPort)
	comp := "host firewall"
	if nd.windows {
		comp = "Windows Firewall"
	}
	if !ok {
		w.end(Dropped, nd.name, comp, "drop", pkt, Drop, fmt.Sprintf("the VXLAN datagram from %s to UDP %d is %s", o.Src, o.DstPort, why))
		return
	}
	w.add(nd.name, comp, "allow", pkt, nil, Pass, fmt.Sprintf("VXLAN UDP %d from %s: %s", o.DstPort, o.Src, why), 0)
	inner := pkt
	inner.outer = nil
	if nd.windows {
		net := calicoNetwork(nd)
		if net == nil {
			w.end(Dropped, nd.name, "HNS", "drop", pkt, Drop, "the node has no Calico HNS network")
			return
		}
		vsid := net.Subnets[0].VSID
		if vsid != o.VNI {
			w.end(Dropped, nd.name, "VFP external port", "drop", pkt, Drop, fmt.Sprintf("VNI %d does not match the network's VSID %d", o.VNI, vsid))
			return
		}
		// The vSwitch delivers the inner frame to the port with its
		// destination MAC: the DrPort routes into the network; a MAC no
		// port has goes nowhere.
		if dr := strings.ToLower(strings.ReplaceAll(net.DrMacAddress, "-", ":")); o.vtepMAC != "" && dr != "" && o.vtepMAC != dr {
			w.end(Dropped, nd.name, "VFP external port", "drop", pkt, Drop, fmt.Sprintf("the inner frame is addressed to %s, the VTEP MAC the sender %s has for this node, but the DrPort's MAC is %s: the node's VTEP (projectcalico.org/VXLANTunnelMACAddr) is not the one published", o.vtepMAC, o.Src, dr))
			return
		}
		w.add(nd.name, "VFP external port (vSwitch "+externalSwitch(nd)+")", "decapsulate", pkt, &inner, Pass,
			fmt.Sprintf("VNET decapsulation: VSID %d is the HNS network %q (%s)", vsid, net.Name, net.Subnets[0].AddressPrefix), costWire+costVFP)
		w.winFromNetwork(nd, inner)
		return
	}
	l, ok := nd.l().Link("vxlan.calico")
	if !ok || l.VXLAN == nil {
		w.end(Dropped, nd.name, "kernel", "drop", pkt, Drop, "no vxlan.calico on the node: nothing takes UDP 4789")
		return
	}
	if l.VXLAN.VNI != o.VNI || l.VXLAN.DstPort != o.DstPort {
		w.end(Dropped, nd.name, "vxlan.calico", "drop", pkt, Drop, fmt.Sprintf("vxlan.calico is VNI %d port %d; the datagram is VNI %d port %d", l.VXLAN.VNI, l.VXLAN.DstPort, o.VNI, o.DstPort))
		return
	}
	// The kernel marks a frame for another MAC PACKET_OTHERHOST
	// (eth_type_trans) and IP drops it (net/ipv4/ip_input.c ip_rcv_core).
	if own := fmtMAC(l.MAC); o.vtepMAC != "" && len(l.MAC) > 0 && o.vtepMAC != own {
		w.end(Dropped, nd.name, "vxlan.calico", "drop", pkt, Drop, fmt.Sprintf("the inner frame is addressed to %s, the VTEP MAC the sender %s has for this node, but vxlan.calico's MAC is %s", o.vtepMAC, o.Src, own))
		return
	}
	w.add(nd.name, "vxlan.calico", "decapsulate", pkt, &inner, Pass, fmt.Sprintf("VNI %d; the inner packet enters the host from vxlan.calico", o.VNI), costWire)
	w.linuxIn(nd, inner, "vxlan.calico", nil)
}

// ipipIn: an IP-in-IP packet arrives at a node. Linux decapsulates it on
// tunl0, which takes IP protocol 4 from any source (net/ipv4/ipip.c
// ipip_rcv, the fallback tunnel); Felix accepts it only from the cluster's
// hosts, its all-hosts set (felix/rules/static.go, "Drop IPIP packets
// from non-Calico hosts"). Windows has no IP-in-IP decapsulation: an HNS
// overlay network carries VXLAN only.
func (w *walker) ipipIn(nd *node, pkt packet) {
	o := pkt.outer
	src := addr(o.Src)
	comp := "host firewall"
	if nd.windows {
		comp = "Windows Firewall"
	}
	ok, why := w.firewall(nd, src, "IPIP", 0)
	if !ok {
		w.end(Dropped, nd.name, comp, "drop", pkt, Drop, fmt.Sprintf("the IP-in-IP packet from %s is %s", o.Src, why))
		return
	}
	w.add(nd.name, comp, "allow", pkt, nil, Pass, fmt.Sprintf("IP protocol 4 from %s: %s", o.Src, why), 0)
	if nd.windows {
		w.end(Dropped, nd.name, "Windows TCP/IP", "drop", pkt, Drop, "Windows has no IP-in-IP decapsulation: the Calico HNS network carries VXLAN only, so IPIP pools cannot reach Windows nodes")
		return
	}
	if _, ok := nd.l().Link("tunl0"); !ok {
		w.end(Dropped, nd.name, "kernel", "drop", pkt, Drop, "no tunl0 on the node: nothing takes IP protocol 4")
		return
	}
	if from := w.e.byIP[src]; from == nil || from.ip != src {
		w.end(Dropped, nd.name, "nftables ip calico filter-INPUT", "drop", pkt, Drop, fmt.Sprintf("%s is not a node's address: Felix drops IP in IP from hosts outside its all-hosts set", o.Src))
		return
	}
	inner := pkt
	inner.outer = nil
	w.add(nd.name, "tunl0", "decapsulate", pkt, &inner, Pass, fmt.Sprintf("IP in IP from %s, a cluster host (Felix's all-hosts set); the inner packet enters the host from tunl0", o.Src), costWire)
	w.linuxIn(nd, inner, "tunl0", nil)
}

func externalSwitch(nd *node) string {
	if nd.w() != nil && len(nd.w().Networks()) > 0 {
		return nd.w().Networks()[0].Name
	}
	return "External"
}

// deliverPod ends a request (or a reply) at a pod.
func (w *walker) deliverPod(nd *node, pod *corev1.Pod, pkt packet, comp string) {
	if w.reply {
		w.arrive(place{kind: placeKind(nd, true), nd: nd, pod: pod}, pkt, "pod "+podName(pod))
		return
	}
	os := w.e.nodeOS(nd)
	pl := place{kind: placeKind(nd, true), nd: nd, pod: pod}
	if nd.windows {
		pl.ep = nd.eps()[pkt.dst]
	}
	if pkt.proto == ICMP {
		w.add(nd.name, "pod "+podName(pod), "echo reply", pkt, nil, Deliver, "the pod's network stack answers the echo request", costStack)
		w.ended, w.outcome, w.reason = true, Delivered, "the pod answers ICMP echo"
		w.arrived, w.arrivedAt, w.responder = pkt, pl, "the pod's network stack"
		return
	}
	l, ok := imagecatalog.Listen(pod, os, corev1.Protocol(pkt.proto.Upper()), int32(pkt.dport))
	if !ok {
		ports := imagecatalog.Ports(pod, os)
		listens := "nothing"
		if len(ports) > 0 {
			listens = strings.Join(ports, ", ")
		}
		why := fmt.Sprintf("nothing listens on %s:%d/%s in %s (it listens on %s)", pkt.dst, pkt.dport, pkt.proto, podName(pod), listens)
		if pkt.proto == TCP {
			w.end(Refused, nd.name, "pod "+podName(pod), "RST", pkt, Reject, why+": the connection is refused")
			w.mark(PointListener)
		} else {
			w.end(Refused, nd.name, "pod "+podName(pod), "port unreachable", pkt, Reject, why+": ICMP port unreachable")
			w.mark(PointListener)
		}
		w.arrived, w.arrivedAt = pkt, pl
		return
	}
	w.add(nd.name, "pod "+podName(pod), "accept", pkt, nil, Deliver, fmt.Sprintf("%s listens on %d/%s", l.What, pkt.dport, pkt.proto), costStack)
	w.ended, w.outcome, w.reason = true, Delivered, l.What+" accepts the connection"
	w.arrived, w.arrivedAt, w.responder = pkt, pl, l.What
}

func placeKind(nd *node, pod bool) string {
	switch {
	case nd.windows && pod:
		return "winPod"
	case nd.windows:
		return "winHost"
	case pod:
		return "linuxPod"
	}
	return "linuxHost"
}

// hostListeners are what listens on a node's own address.
func (w *walker) hostListener(nd *node, proto Proto, port int) (string, bool) {
	if proto == TCP {
		switch port {
		case 10250:
			return "the kubelet", true
		case 10256:
			if kubeProxyRuns(nd) {
				return "kube-proxy's health server", true
			}
		case 6443:
			if nd.controlPlane {
				return "kube-apiserver", true
			}
		case 2379, 2380:
			if nd.controlPlane {
				return "etcd", true
			}
		}
	}
	if proto == TCP && kubeProxyRuns(nd) {
		if what, ok := w.healthCheckListener(nd, port); ok {
			return what, true
		}
	}
	for _, p := range w.e.p.PodsOnNode(nd.name) {
		if p.Spec.NodeName != nd.name || !p.Spec.HostNetwork || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if strings.EqualFold(string(orTCP(cp.Protocol)), string(proto)) && int(cp.ContainerPort) == port {
					return "host-network pod " + podName(p), true
				}
			}
		}
	}
	return "", false
}

// deliverHost ends a packet at a node's own address.
func (w *walker) deliverHost(nd *node, pkt packet, fromSelf bool) {
	pl := place{kind: placeKind(nd, false), nd: nd}
	if w.reply {
		w.arrive(pl, pkt, "host "+nd.name)
		return
	}
	if !fromSelf {
		comp := "host firewall"
		if nd.windows {
			comp = "Windows Firewall"
		}
		ok, why := w.firewall(nd, pkt.src, pkt.proto, pkt.dport)
		if !ok {
			w.end(Dropped, nd.name, comp, "drop", pkt, Drop, why)
			return
		}
		if len(w.e.c.Network.Firewall) > 0 || nd.windows {
			w.add(nd.name, comp, "allow", pkt, nil, Pass, why, 0)
		}
	}
	if pkt.proto == ICMP {
		w.add(nd.name, "host "+nd.name, "echo reply", pkt, nil, Deliver, "the node answers the echo request", costStack)
		w.ended, w.outcome, w.reason = true, Delivered, "the node answers ICMP echo"
		w.arrived, w.arrivedAt, w.responder = pkt, pl, "the node's network stack"
		return
	}
	what, ok := w.hostListener(nd, pkt.proto, pkt.dport)
	if !ok {
		why := fmt.Sprintf("nothing listens on %s:%d/%s on node %s", pkt.dst, pkt.dport, pkt.proto, nd.name)
		if np := w.missingNodePort(nd, pkt.proto, pkt.dport); np != "" {
			why += ": " + np
		}
		w.end(Refused, nd.name, "host "+nd.name, "RST", pkt, Reject, why)
		w.mark(PointHostListener)
		w.arrived, w.arrivedAt = pkt, pl
		return
	}
	w.add(nd.name, "host "+nd.name, "accept", pkt, nil, Deliver, what+" listens on "+fmt.Sprint(pkt.dport)+"/"+string(pkt.proto), costStack)
	w.ended, w.outcome, w.reason = true, Delivered, what+" accepts the connection"
	w.arrived, w.arrivedAt, w.responder = pkt, pl, what
}
