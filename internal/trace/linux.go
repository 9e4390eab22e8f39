package trace

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

func vethName(ns, name string) string { return linux.VethName(ns, name) }

// isLocal reports whether a is one of the Linux node's own addresses.
func (nd *node) isLocal(a netip.Addr) bool {
	if a == nd.ip || (nd.vtep.IsValid() && a == nd.vtep) || (nd.tunl.IsValid() && a == nd.tunl) || a.IsLoopback() {
		return true
	}
	return false
}

// kpComponent names kube-proxy's NAT chain for a hook.
func kpHook(local bool) string {
	if local {
		return "nat-output"
	}
	return "nat-prerouting"
}

// linuxIn is a packet entering the Linux stack of nd: from a pod's veth
// (fromPod set), from vxlan.calico, from the NIC, or generated locally
// (in == ""). It follows netfilter's order: PREROUTING/OUTPUT (kube-proxy's
// DNAT), the routing decision, FORWARD/OUTPUT filtering (kube-proxy's
// checks, Calico's workload chains), POSTROUTING (masquerade), and the
// output device.
func (w *walker) linuxIn(nd *node, pkt packet, in string, fromPod *corev1.Pod) {
	if !w.tick(nd.name, pkt) {
		return
	}
	n := nd.l()
	if n == nil {
		w.end(NotModeled, nd.name, "dataplane", "stop", pkt, Drop, "no Linux dataplane compiled for the node")
		return
	}
	local := in == ""
	masq := ""
	if w.reply {
		var changed bool
		pkt, changed = w.unNAT(nd, pkt, "conntrack")
		if w.ended {
			return
		}
		_ = changed
	} else {
		pkt, masq = w.kubeProxyNAT(nd, pkt, local, fromPod)
		if w.ended {
			return
		}
	}
	// The routing decision.
	if nd.isLocal(pkt.dst) {
		w.add(nd.name, "kernel routing", "local", pkt, nil, Pass, fmt.Sprintf("%s is an address of this node: input", pkt.dst), 0)
		if !w.reply && fromPod != nil && !fromPod.Spec.HostNetwork {
			// Felix's INPUT chain sends workload traffic to the host
			// through the workload's egress policy, then
			// DefaultEndpointToHostAction (Accept).
			comp := "Calico filter-cali-fw-" + vethOf(fromPod) + " (INPUT, egress of " + podName(fromPod) + ")"
			ok, why := nd.l().PolicyAllows(fromPod, policy.Egress, pkt.dst, pkt.proto.Upper(), int32(pkt.dport), int32(pkt.sport))
			if !ok {
				w.end(Dropped, nd.name, comp, "drop", pkt, Drop, why)
				w.mark(PointEgressPolicy)
				return
			}
			w.add(nd.name, comp, "accept", pkt, nil, Pass, why+"; then DefaultEndpointToHostAction Accept", 0)
			w.mark(PointEgressPolicy)
		}
		w.deliverHost(nd, pkt, local)
		return
	}
	r, ok := n.RouteTo(pkt.dst)
	if !ok {
		w.end(Dropped, nd.name, "kernel routing", "unreachable", pkt, Reject, fmt.Sprintf("no route to %s", pkt.dst))
		return
	}
	route := strings.TrimSpace(r.String())
	if r.Type == linux.RouteBlackhole {
		w.end(Dropped, nd.name, "kernel routing", "blackhole", pkt, Drop,
			fmt.Sprintf("route %q: %s is in this node's IPAM block but no pod here has it", route, pkt.dst))
		return
	}
	if local {
		// The source address of a locally generated packet is the
		// preferred source of the route's device.
		w.add(nd.name, "kernel routing", "route", pkt, nil, Pass, "route "+route, 0)
	} else {
		after := pkt
		after.ttl--
		if after.ttl <= 0 {
			w.end(Dropped, nd.name, "kernel routing", "time exceeded", pkt, Drop, "ttl reached 0")
			return
		}
		w.add(nd.name, "kernel routing (ip_forward)", "forward", pkt, &after, Pass, "route "+route+"; forwarding decrements the ttl", costForward)
		pkt = after
	}
	outPod := w.e.p.PodByIP(pkt.dst)
	if r.Pod == "" {
		outPod = nil
	}
	if !w.reply {
		if !w.linuxFilter(nd, pkt, local, fromPod, outPod, r) {
			return
		}
		pkt = w.linuxPostrouting(nd, pkt, masq, r, fromPod)
	}
	// The output device.
	switch {
	case r.Pod != "":
		if outPod == nil {
			w.end(Dropped, nd.name, "kernel routing", "drop", pkt, Drop, "the workload route's pod is gone")
			return
		}
		w.add(nd.name, "veth "+r.Dev, "transmit", pkt, nil, Pass, "to eth0 of "+podName(outPod), 0)
		w.deliverPod(nd, outPod, pkt, "")
	case r.Dev == "vxlan.calico":
		w.vxlanOut(nd, pkt, r)
	case r.Dev == "tunl0":
		w.ipipOut(nd, pkt, r)
	default:
		next := pkt.dst
		if r.Via.IsValid() {
			next = r.Via
		}
		w.add(nd.name, r.Dev, "transmit", pkt, nil, Pass, "to "+next.String()+" on the node network", costWire)
		w.arriveNodeNet(nd.name, next, pkt)
	}
}

// kubeProxyNAT applies kube-proxy's nat chains (services, NodePorts) to a
// new connection and says whether it marked the connection for masquerade.
func (w *walker) kubeProxyNAT(nd *node, pkt packet, local bool, fromPod *corev1.Pod) (packet, string) {
	n := nd.l()
	if pkt.proto == ICMP || pkt.dport == 0 {
		return pkt, ""
	}
	// The node's service ports are looked up by address and by node port:
	// building all of them (ServicePorts) per packet was O(services ×
	// endpoints).
	if !n.HasServicePorts() {
		return pkt, ""
	}
	hook := kpHook(local)
	eps, verdict, ok := n.ServiceDNAT(netip.AddrPortFrom(pkt.dst, uint16(pkt.dport)), string(pkt.proto))
	if ok {
		var sp linux.ServicePort
		if sps := n.ServicePortsFor(pkt.dst, pkt.dport, string(pkt.proto)); len(sps) > 0 {
			sp = sps[len(sps)-1] // the last match, as the scan kept it
		}
		svc := sp.Namespace + "/" + sp.Name
		comp := fmt.Sprintf("nftables ip kube-proxy %s → services", hook)
		switch verdict {
		case "reject":
			w.end(Rejected, nd.name, "nftables ip kube-proxy service-endpoints-check", "reject", pkt, Reject,
				fmt.Sprintf("service %s has no ready endpoints: @no-endpoint-services rejects the connection", svc))
			return pkt, ""
		case "drop":
			w.end(Dropped, nd.name, "nftables ip kube-proxy service-endpoints-check", "drop", pkt, Drop,
				fmt.Sprintf("service %s has internalTrafficPolicy Local and no endpoint on %s", svc, nd.name))
			return pkt, ""
		}
		i := pick(len(eps), pkt.src, pkt.dst, pkt.dport, pkt.proto)
		after := pkt
		after.dst, after.dport = eps[i].Addr(), int(eps[i].Port())
		w.recordTranslation(nd.name, comp+" → "+sp.Chain, svc, pkt.dst, pkt.dport, eps, i)
		w.nats = append(w.nats, natEntry{node: nd.name, dnat: true, client: pkt.src, clientPort: pkt.sport,
			orig: pkt.dst, origPort: pkt.dport, to: after.dst, toPort: after.dport, comp: "kube-proxy on " + nd.name})
		rule := "dnat to " + eps[0].String()
		if len(eps) > 1 {
			rule = fmt.Sprintf("dnat ip to numgen random mod %d map (candidate %d of %d chosen, see translations)", len(eps), i+1, len(eps))
		}
		w.add(nd.name, comp+" → "+sp.Chain, "dnat", pkt, &after, Pass, "@service-ips: "+rule, 0)
		mark := ""
		if w.e.clusterCIDR.IsValid() && !w.e.clusterCIDR.Contains(pkt.src) {
			mark = fmt.Sprintf("masquerade clusterIP traffic from outside cluster (source %s is not in %s)", pkt.src, w.e.clusterCIDR)
		}
		if after.dst == pkt.src {
			mark = "hairpin: the connection comes back to its own source (@hairpin-connections)"
		}
		return after, mark
	}
	// NodePorts: kube-proxy's @nodeport-ips holds the node's primary address.
	if pkt.dst != nd.ip {
		return pkt, ""
	}
	for _, sp := range n.ServicePortsByNodePort(pkt.dport, string(pkt.proto)) {
		svc := w.e.service(sp.Namespace, sp.Name)
		svcName := sp.Namespace + "/" + sp.Name
		etpLocal := svc != nil && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		comp := fmt.Sprintf("nftables ip kube-proxy %s → services → @service-nodeports", hook)
		if len(sp.Endpoints) == 0 {
			w.end(Rejected, nd.name, "nftables ip kube-proxy nodeport-endpoints-check", "reject", pkt, Reject,
				fmt.Sprintf("NodePort %d of %s has no ready endpoints: @no-endpoint-nodeports rejects it", sp.NodePort, svcName))
			return pkt, ""
		}
		var eps []netip.AddrPort
		podTraffic := fromPod != nil && w.e.clusterCIDR.IsValid() && w.e.clusterCIDR.Contains(pkt.src)
		mark := ""
		for _, ep := range sp.Endpoints {
			if !etpLocal || ep.Local || podTraffic || local {
				eps = append(eps, ep.Addr)
			}
		}
		switch {
		case !etpLocal:
			mark = "external traffic to a NodePort is masqueraded (externalTrafficPolicy Cluster)"
		case local:
			mark = "masquerade local traffic (externalTrafficPolicy Local, fib saddr type local)"
		}
		if len(eps) == 0 {
			w.end(Dropped, nd.name, "nftables ip kube-proxy external chain", "drop", pkt, Drop,
				fmt.Sprintf("%s has externalTrafficPolicy Local and no endpoint on %s: NodePort %d drops", svcName, nd.name, sp.NodePort))
			return pkt, ""
		}
		i := pick(len(eps), pkt.src, pkt.dst, pkt.dport, pkt.proto)
		after := pkt
		after.dst, after.dport = eps[i].Addr(), int(eps[i].Port())
		w.recordTranslation(nd.name, comp, svcName, pkt.dst, pkt.dport, eps, i)
		w.nats = append(w.nats, natEntry{node: nd.name, dnat: true, client: pkt.src, clientPort: pkt.sport,
			orig: pkt.dst, origPort: pkt.dport, to: after.dst, toPort: after.dport, comp: "kube-proxy's NodePort on " + nd.name})
		w.add(nd.name, comp, "dnat", pkt, &after, Pass, fmt.Sprintf("NodePort %d of %s (%d candidate(s))", sp.NodePort, svcName, len(eps)), 0)
		return after, mark
	}
	return pkt, ""
}

func (e *Engine) service(ns, name string) *corev1.Service { return e.p.Service(ns, name) }

func (w *walker) recordTranslation(nd, comp, svc string, vip netip.Addr, port int, eps []netip.AddrPort, chosen int) {
	t := Translation{Node: nd, Component: comp, Service: svc, VIP: netip.AddrPortFrom(vip, uint16(port)).String(), Chosen: chosen,
		Rule: "FNV-1a of client address, VIP, port and protocol modulo the number of candidates (the real choice is random per connection)"}
	for _, ep := range eps {
		b := w.backendOf(ep.Addr())
		b.Addr = ep.String()
		t.Candidates = append(t.Candidates, b)
	}
	w.translations = append(w.translations, t)
}

// linuxFilter is the filter hooks after routing: kube-proxy's ClusterIP
// checks and Calico's workload chains. It reports whether the packet goes
// on.
func (w *walker) linuxFilter(nd *node, pkt packet, local bool, fromPod, outPod *corev1.Pod, r linux.Route) bool {
	e := w.e
	hook := "filter-forward"
	if local {
		hook = "filter-output"
	}
	svc := e.p.ServiceByIP(pkt.dst)
	if svc != nil {
		if proxy, other := model.ServiceProxyName(svc); other {
			// Not in @cluster-ips: the service network's drop rule, if the
			// address is in it, takes the packet.
			if e.inServiceCIDR(pkt.dst) {
				w.end(Dropped, nd.name, "nftables ip kube-proxy "+hook+" → cluster-ips-check", "drop", pkt, Drop,
					fmt.Sprintf("%s is in the service network and not in @cluster-ips (\"Drop traffic to unallocated ClusterIPs\"): %s", pkt.dst, notOurProxy(svc, proxy)))
				return false
			}
			svc = nil
		}
	}
	if svc != nil {
		w.end(Rejected, nd.name, "nftables ip kube-proxy "+hook+" → cluster-ips-check", "reject", pkt, Reject,
			fmt.Sprintf("%s is the ClusterIP of %s/%s, which answers only on its service ports (%s): \"Reject traffic to invalid ports of ClusterIPs\"",
				pkt.dst, svc.Namespace, svc.Name, servicePorts(svc)))
		return false
	}
	if e.inServiceCIDR(pkt.dst) {
		w.end(Dropped, nd.name, "nftables ip kube-proxy "+hook+" → cluster-ips-check", "drop", pkt, Drop,
			fmt.Sprintf("%s is in the service network but no Service has it: \"Drop traffic to unallocated ClusterIPs\"", pkt.dst))
		return false
	}
	if fromPod != nil && !fromPod.Spec.HostNetwork {
		veth := vethOf(fromPod)
		comp := "Calico filter-cali-fw-" + veth + " (egress of " + podName(fromPod) + ")"
		ok, why := nd.l().PolicyAllows(fromPod, policy.Egress, pkt.dst, pkt.proto.Upper(), int32(pkt.dport), int32(pkt.sport))
		if !ok {
			w.end(Dropped, nd.name, comp, "drop", pkt, Drop, why)
			w.mark(PointEgressPolicy)
			return false
		}
		w.add(nd.name, comp, "accept", pkt, nil, Pass, why, 0)
		w.mark(PointEgressPolicy)
	}
	if outPod != nil {
		veth := r.Dev
		comp := "Calico filter-cali-tw-" + veth + " (ingress of " + podName(outPod) + ")"
		if local {
			w.add(nd.name, comp, "accept", pkt, nil, Pass, "traffic from the host to its own workloads is always allowed (kubelet probes; NetworkPolicy does not apply)", 0)
			w.mark(PointIngressPolicy)
			return true
		}
		ok, why := nd.l().PolicyAllows(outPod, policy.Ingress, pkt.src, pkt.proto.Upper(), int32(pkt.dport), int32(pkt.sport))
		if !ok {
			w.end(Dropped, nd.name, comp, "drop", pkt, Drop, why)
			w.mark(PointIngressPolicy)
			return false
		}
		w.add(nd.name, comp, "accept", pkt, nil, Pass, why, 0)
		w.mark(PointIngressPolicy)
	}
	return true
}

func servicePorts(svc *corev1.Service) string {
	var out []string
	for _, p := range svc.Spec.Ports {
		out = append(out, fmt.Sprintf("%d/%s", p.Port, orTCP(p.Protocol)))
	}
	return strings.Join(out, ", ")
}

// linuxPostrouting applies kube-proxy's masquerade and Calico's
// natOutgoing.
func (w *walker) linuxPostrouting(nd *node, pkt packet, mark string, r linux.Route, fromPod *corev1.Pod) packet {
	e := w.e
	outAddr := nd.ip
	switch {
	case r.Dev == "vxlan.calico" && nd.vtep.IsValid():
		outAddr = nd.vtep
	case r.Dev == "tunl0" && nd.tunl.IsValid():
		outAddr = nd.tunl
	}
	snat := func(comp, why string) packet {
		after := pkt
		after.src = outAddr
		w.nats = append(w.nats, natEntry{node: nd.name, client: pkt.src, clientPort: pkt.sport, orig: pkt.src, origPort: pkt.sport,
			to: outAddr, comp: comp + " on " + nd.name})
		w.add(nd.name, comp, "masquerade", pkt, &after, Pass, why+fmt.Sprintf("; the source becomes %s, the address of %s", outAddr, r.Dev), 0)
		return after
	}
	if mark != "" {
		return snat("nftables ip kube-proxy nat-postrouting → masquerading", mark)
	}
	if fromPod != nil && e.natPool(pkt.src) && !e.inPools(pkt.dst) && pkt.src != outAddr {
		return snat("nftables ip calico nat-cali-nat-outgoing",
			fmt.Sprintf("natOutgoing: %s is in a natOutgoing pool and %s is outside every pool", pkt.src, pkt.dst))
	}
	return pkt
}

// vxlanOut encapsulates through vxlan.calico: the route's gateway is the
// peer VTEP, its MAC is a static neighbour, the FDB maps the MAC to the
// peer node's address.
func (w *walker) vxlanOut(nd *node, pkt packet, r linux.Route) {
	n := nd.l()
	l, ok := n.Link("vxlan.calico")
	if !ok || l.VXLAN == nil {
		w.end(Dropped, nd.name, "vxlan.calico", "drop", pkt, Drop, "vxlan.calico does not exist")
		return
	}
	// The last entry for the gateway and for its MAC, as scans of the
	// lists kept them, found without building the lists.
	var mac []byte
	if ne, ok := n.NeighborFor(r.Via); ok {
		mac = ne.MAC
	}
	if mac == nil {
		w.end(Dropped, nd.name, "vxlan.calico", "drop", pkt, Drop, fmt.Sprintf("no neighbour entry for the VTEP %s (ip neigh show dev vxlan.calico)", r.Via))
		return
	}
	var dst netip.Addr
	peer := ""
	if f, ok := n.FDBFor(mac); ok {
		dst, peer = f.Dst, f.Node
	}
	if !dst.IsValid() {
		w.end(Dropped, nd.name, "vxlan.calico", "drop", pkt, Drop, fmt.Sprintf("no FDB entry for %s (bridge fdb show dev vxlan.calico)", fmtMAC(mac)))
		return
	}
	after := pkt
	after.outer = &Outer{Src: l.VXLAN.Local.String(), Dst: dst.String(), DstPort: l.VXLAN.DstPort, VNI: l.VXLAN.VNI, InnerMTU: l.MTU, vtepMAC: fmtMAC(mac)}
	w.add(nd.name, "vxlan.calico", "encapsulate", pkt, &after, Pass,
		fmt.Sprintf("gateway %s has lladdr %s (ip neigh), which the FDB sends to %s (%s); VNI %d, UDP %d, MTU %d for the inner packet",
			r.Via, fmtMAC(mac), dst, peer, l.VXLAN.VNI, l.VXLAN.DstPort, l.MTU), 0)
	w.add(nd.name, l.VXLAN.Parent, "transmit", after, nil, Pass, "the VXLAN datagram goes out on the node network", 0)
	w.arriveNodeNet(nd.name, dst, after)
}

// ipipOut encapsulates through tunl0, the kernel's fallback IP-in-IP
// device, which has no remote of its own: the outer destination is the
// route's gateway, the owner node's address (net/ipv4/ip_tunnel.c
// ip_tunnel_xmit takes the next hop for a tunnel without a remote), the
// outer source this node's address toward it, and the outer ttl the
// inner one (the fallback device's ttl is inherit).
func (w *walker) ipipOut(nd *node, pkt packet, r linux.Route) {
	n := nd.l()
	l, ok := n.Link("tunl0")
	if !ok {
		w.end(Dropped, nd.name, "tunl0", "drop", pkt, Drop, "tunl0 does not exist")
		return
	}
	if !r.Via.IsValid() {
		w.end(Dropped, nd.name, "tunl0", "drop", pkt, Drop, "the route through tunl0 names no gateway: an IP-in-IP packet without a remote has no outer destination")
		return
	}
	after := pkt
	after.outer = &Outer{Src: nd.ip.String(), Dst: r.Via.String(), IPIP: true, InnerMTU: l.MTU}
	w.add(nd.name, "tunl0", "encapsulate", pkt, &after, Pass,
		fmt.Sprintf("IP in IP (protocol 4) to the gateway %s, the owner's address; MTU %d for the inner packet", r.Via, l.MTU), 0)
	w.add(nd.name, nicName(w.e, nd), "transmit", after, nil, Pass, "the IP-in-IP packet goes out on the node network", 0)
	w.arriveNodeNet(nd.name, r.Via, after)
}

func fmtMAC(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}
