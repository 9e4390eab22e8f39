package trace

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

// Windows Server 2025's build: ICMP through OutBoundNAT comes back from
// here on (seed 000).
const buildWS2025 = 26100

// calicoNetwork is the node's Calico HNS network (the one with a
// distributed router).
func calicoNetwork(nd *node) *windows.Network {
	if nd.w() == nil {
		return nil
	}
	for _, n := range nd.w().Networks() {
		if n.DrMacAddress != "" && len(n.Subnets) > 0 {
			return n
		}
	}
	return nil
}

func epPrefix(ep *windows.Endpoint) netip.Prefix {
	a, err := netip.ParseAddr(ep.IPAddress)
	if err != nil {
		return netip.Prefix{}
	}
	p, _ := a.Prefix(ep.PrefixLength)
	return p
}

func (w *walker) portName(ep *windows.Endpoint) string {
	if ep.Pod != "" {
		return "port of " + ep.Pod
	}
	return "port " + shortID(ep.ID)
}

// winPodOut is a packet leaving a Windows pod: the distributed router when
// it leaves the pod's subnet, then VFP's layers on the pod's port in the
// order the unified flow applies them (load balancing, ACL, NAT,
// encapsulation), then the vSwitch.
func (w *walker) winPodOut(nd *node, ep *windows.Endpoint, pod *corev1.Pod, pkt packet) {
	if !w.tick(nd.name, pkt) {
		return
	}
	w.recordACL(nd, ep)
	if sub := epPrefix(ep); sub.IsValid() && !sub.Contains(pkt.dst) {
		after := pkt
		after.ttl--
		w.add(nd.name, "HNS distributed router (gateway "+ep.GatewayAddress+")", "route", pkt, &after, Pass,
			fmt.Sprintf("%s is outside the pod's subnet %s: the pod sends to its gateway, the distributed router, which routes the packet out of the pod's network (one routing step)", pkt.dst, sub), costVFP)
		pkt = after
	}
	if w.reply {
		pkt, _ = w.unNAT(nd, pkt, "VFP unified flow ("+w.portName(ep)+")")
		if w.ended {
			return
		}
		w.winRoute(nd, pkt, ep, pod)
		return
	}
	if lb := findLB(nd, pkt); lb != nil {
		var ok bool
		pkt, ok = w.winLB(nd, lb, pkt, false)
		if !ok {
			return
		}
	} else if svc := w.e.p.ServiceByIP(pkt.dst); svc != nil {
		if pkt.proto == ICMP {
			w.end(Dropped, nd.name, "VFP load balancing ("+w.portName(ep)+")", "drop", pkt, Drop,
				fmt.Sprintf("%s is the ClusterIP of %s/%s: VFP load balancers match TCP and UDP ports only, and the VIP's remote endpoint (the host's MAC) answers nothing", pkt.dst, svc.Namespace, svc.Name))
			return
		}
		why := fmt.Sprintf("%s/%s has no such port (%s) or no usable endpoints, so kube-proxy applied no policy", svc.Namespace, svc.Name, servicePorts(svc))
		if proxy, other := model.ServiceProxyName(svc); other {
			why = notOurProxy(svc, proxy)
		} else if !nd.w().KubeProxy {
			why = nd.w().KubeProxyDown
		}
		w.end(Dropped, nd.name, "VFP load balancing ("+w.portName(ep)+")", "drop", pkt, Drop,
			fmt.Sprintf("no HNS load balancer on %s for %s:%d/%s: %s", nd.name, pkt.dst, pkt.dport, pkt.proto, why))
		return
	} else if w.e.inServiceCIDR(pkt.dst) {
		w.end(Dropped, nd.name, "VFP load balancing ("+w.portName(ep)+")", "drop", pkt, Drop,
			fmt.Sprintf("%s is in the service network but no Service has it", pkt.dst))
		return
	}
	if !w.winACL(nd, ep, pod, "Out", pkt) {
		return
	}
	pkt = w.winOutboundNAT(nd, ep, pkt)
	if w.ended {
		return
	}
	w.winRoute(nd, pkt, ep, pod)
}

// findLB is the HNS load balancer VFP matches for a packet on nd: a
// frontend VIP with the port and protocol, or a NodePort one (no VIP) for
// the node's own address.
func findLB(nd *node, pkt packet) *windows.LoadBalancer {
	if nd.w() == nil || pkt.proto == ICMP {
		return nil
	}
	for _, lb := range nd.winLBs[lbKey{pkt.proto.Number(), pkt.dport}] {
		if len(lb.FrontendVIPs) == 0 {
			if lb.Kind == windows.LBNodePort && pkt.dst == nd.ip {
				return lb
			}
			continue
		}
		if contains(lb.FrontendVIPs, pkt.dst.String()) {
			return lb
		}
	}
	return nil
}

func lbLayer(lb *windows.LoadBalancer) string {
	if lb.DSR() {
		return "VFP LB_DSR"
	}
	return "VFP SLB_LB_LAYER"
}

// winLB applies an HNS load balancer: DNAT to a backend, SNAT to the
// source VIP when the load balancer is not DSR and the traffic comes from
// outside, the ETP=Local and 64-backend limits.
func (w *walker) winLB(nd *node, lb *windows.LoadBalancer, pkt packet, fromOutside bool) (packet, bool) {
	comp := fmt.Sprintf("%s (%s load balancer %s)", lbLayer(lb), lb.Kind, shortID(lb.ID))
	svc := w.e.serviceByName(lb.Service)
	if svc != nil && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && lb.Kind != windows.LBClusterIP && !nd.w().DSR {
		w.end(Dropped, nd.name, comp, "drop", pkt, Drop,
			fmt.Sprintf("%s has externalTrafficPolicy Local, which works on Windows only with DSR, and kube-proxy on %s runs without --enable-dsr=true", lb.Service, nd.name))
		return pkt, false
	}
	for _, msg := range lb.Warnings {
		w.warn(nd.name + ": load balancer of " + lb.Service + ": " + msg)
	}
	var eps []netip.AddrPort
	for _, b := range lb.Backends {
		if a, err := netip.ParseAddr(b); err == nil {
			eps = append(eps, netip.AddrPortFrom(a, uint16(lb.InternalPort)))
		}
	}
	if len(eps) == 0 {
		w.end(Dropped, nd.name, comp, "drop", pkt, Drop, "the load balancer has no backends")
		return pkt, false
	}
	i := pick(len(eps), pkt.src, pkt.dst, pkt.dport, pkt.proto)
	after := pkt
	after.dst, after.dport = eps[i].Addr(), int(eps[i].Port())
	w.recordTranslation(nd.name, comp, lb.Service, pkt.dst, pkt.dport, eps, i)
	w.nats = append(w.nats, natEntry{node: nd.name, dnat: true, client: pkt.src, clientPort: pkt.sport, orig: pkt.dst, origPort: pkt.dport,
		to: after.dst, toPort: after.dport, comp: "the HNS load balancer on " + nd.name})
	var why []string
	if lb.Kind == windows.LBNodePort {
		why = append(why, fmt.Sprintf("NodePort %d of %s", lb.ExternalPort, lb.Service))
	} else {
		why = append(why, fmt.Sprintf("%s %s:%d of %s", lb.Kind, pkt.dst, lb.ExternalPort, lb.Service))
	}
	why = append(why, fmt.Sprintf("%d backend(s)", len(eps)))
	if lb.DistributionType == windows.DistributionSourceIP {
		why = append(why, "session affinity (distribution SourceIP)")
	}
	if lb.DSR() {
		why = append(why, "DSR: the source stays the client's, the reply goes straight back and VFP's flow on the client side restores the VIP")
	}
	w.add(nd.name, comp, "dnat", pkt, &after, Pass, strings.Join(why, "; "), costVFP)
	remote := true
	if ep := nd.eps()[after.dst]; ep != nil && !ep.IsRemoteEndpoint {
		remote = false
	}
	if fromOutside && !lb.DSR() && remote && lb.SourceVIP != "" {
		svip := addr(lb.SourceVIP)
		sn := after
		sn.src = svip
		w.nats = append(w.nats, natEntry{node: nd.name, client: after.src, clientPort: after.sport, orig: after.src, origPort: after.sport,
			to: svip, comp: "the HNS load balancer's source VIP on " + nd.name})
		w.add(nd.name, comp, "snat", after, &sn, Pass,
			fmt.Sprintf("not DSR and the backend is on another node: the source becomes kube-proxy's source VIP %s so the reply comes back here", svip), 0)
		after = sn
	}
	return after, true
}

func (e *Engine) serviceByName(nsName string) *corev1.Service {
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		return nil
	}
	return e.service(ns, name)
}

// recordACL notes the ACL count of a Windows pod endpoint on the path.
func (w *walker) recordACL(nd *node, ep *windows.Endpoint) {
	if ep == nil || ep.Kind != windows.KindPod {
		return
	}
	for _, a := range w.acls {
		if a.Endpoint == ep.ID {
			return
		}
	}
	w.acls = append(w.acls, ACLInfo{Node: nd.name, Endpoint: ep.ID, Pod: ep.Pod, IP: ep.IPAddress, Count: ep.ACLCount, Sources: ep.ACLReport})
}

// winACL evaluates the endpoint's VFP ACL layer (the HNS Switch ACLs Felix
// programmed) for a new connection in dir ("In" or "Out"), compares it with
// Kubernetes semantics, and reports whether the packet goes on.
func (w *walker) winACL(nd *node, ep *windows.Endpoint, pod *corev1.Pod, dir string, pkt packet) bool {
	w.recordACL(nd, ep)
	group := "ACL_ENDPOINT_GROUP_IPV4_IN"
	local, remote, localPort, remotePort := pkt.dst, pkt.src, pkt.dport, pkt.sport
	pdir := policy.Ingress
	if dir == "Out" {
		group = "ACL_ENDPOINT_GROUP_IPV4_OUT"
		local, remote, localPort, remotePort = pkt.src, pkt.dst, pkt.sport, pkt.dport
		pdir = policy.Egress
	}
	comp := fmt.Sprintf("VFP ACL_ENDPOINT_LAYER %s (%s)", group, w.portName(ep))
	acl, n := nd.matchACL(ep, dir, local, remote, pkt.proto, localPort, remotePort)
	allowed := acl == nil || acl.Action == "Allow"
	var why string
	if acl == nil {
		why = fmt.Sprintf("no ACL of the %d matches: VFP lets the packet through", n)
	} else {
		id := acl.ID
		if id == "" {
			id = "end-of-tier"
			if acl.Action == "Allow" {
				id = "allow"
			}
		}
		why = fmt.Sprintf("first matching ACL: %s %s priority %d (%s)", acl.Action, strings.ToLower(acl.Direction), acl.Priority, id)
	}
	hostRule := acl != nil && acl.ID == "allow-host-to-endpoint"
	if !hostRule && pod != nil {
		peer := remote
		port := int32(localPort)
		if dir == "Out" {
			port = int32(remotePort)
		}
		srcPort := int32(remotePort)
		if dir == "Out" {
			srcPort = int32(localPort)
		}
		d := w.e.felix.Decide(pod, pdir == policy.Ingress, felix.Flow{Peer: peer, Proto: pkt.proto.Upper(), DstPort: port, SrcPort: srcPort})
		if d.Allowed != allowed {
			say := "deny"
			if d.Allowed {
				say = "allow"
			}
			sem := "Kubernetes semantics"
			if d.Calico {
				sem = "Calico's policy semantics (as Felix programs Linux)"
			}
			why += fmt.Sprintf("; %s %s it (%s)", sem, say, d.Reason)
			var skipped []string
			for _, s := range ep.ACLReport {
				if s.Direction == dir && s.Skipped > 0 {
					skipped = append(skipped, fmt.Sprintf("%s: %s", s.Source, strings.Join(s.Reasons, "; ")))
				}
			}
			if len(skipped) > 0 {
				why += ", but Calico on Windows does not program every rule (it skips negative matches, named ports, ICMP type matches, IPv6 and empty selectors): " + strings.Join(skipped, " | ")
			} else {
				why += ", but the HNS ACLs Calico programmed decide otherwise"
			}
			w.warn(fmt.Sprintf("%s on %s: the Windows ACLs and Kubernetes semantics disagree for %s", podName(pod), nd.name, dir+"bound"))
		} else if d.Reason != "" {
			why += "; " + d.Reason
		}
	} else if hostRule {
		why += "; the host's own traffic to its pods"
	}
	point := PointIngressPolicy
	if dir == "Out" {
		point = PointEgressPolicy
	}
	if !allowed {
		w.end(Dropped, nd.name, comp, "block", pkt, Drop, why)
		w.mark(point)
		return false
	}
	w.add(nd.name, comp, "allow", pkt, nil, Pass, why, costVFP)
	w.mark(point)
	return true
}

// matchACL finds the first Switch ACL of the direction matching the
// packet (windows.ACLMatcher, compiled once per endpoint and kept with the
// node's HNS state) and counts the direction's Switch ACLs.
func (nd *node) matchACL(ep *windows.Endpoint, dir string, local, remote netip.Addr, proto Proto, localPort, remotePort int) (*windows.ACL, int) {
	var m *windows.ACLMatcher
	if win := nd.w(); win != nil {
		m = win.ACLs(ep)
	} else {
		m = windows.CompileACLs(ep, nil)
	}
	acl, _ := m.Match(dir, local, remote, proto.Number(), localPort, remotePort)
	return acl, len(m.Rules(dir))
}

// winOutboundNAT is the port's SLB_NAT_LAYER: OutBoundNAT to the node's
// address for everything outside the exceptions (natOutgoing).
func (w *walker) winOutboundNAT(nd *node, ep *windows.Endpoint, pkt packet) packet {
	comp := "VFP SLB_NAT_LAYER (" + w.portName(ep) + ")"
	for _, p := range ep.Policies {
		if p.Type != windows.PolicyOutBoundNAT {
			continue
		}
		if len(p.Destinations) > 0 {
			if contains(p.Destinations, pkt.dst.String()) {
				w.add(nd.name, comp, "loopback DSR", pkt, nil, Pass, "OutBoundNAT {Destinations: ["+pkt.dst.String()+"]}: the pod reaches itself through a Service", costVFP)
			}
			continue
		}
		for _, ex := range p.ExceptionList {
			if pr, err := netip.ParsePrefix(ex); err == nil && pr.Contains(pkt.dst) {
				w.add(nd.name, comp, "no nat", pkt, nil, Pass, fmt.Sprintf("%s is in the OutBoundNAT exception %s", pkt.dst, ex), 0)
				return pkt
			}
		}
		after := pkt
		after.src = nd.ip
		entry := natEntry{node: nd.name, client: pkt.src, clientPort: pkt.sport, orig: pkt.src, origPort: pkt.sport, to: nd.ip,
			comp: "OutBoundNAT on " + nd.name}
		why := fmt.Sprintf("OutBoundNAT: %s is outside the exceptions (%s), the source becomes the node's address", pkt.dst, strings.Join(p.ExceptionList, ", "))
		if pkt.proto == ICMP {
			if nd.build > 0 && nd.build < buildWS2025 {
				entry.icmpLost = fmt.Sprintf("ICMP leaving through OutBoundNAT may not come back on Windows (Kubernetes docs, Windows networking limitations): on build %d the echo reply is not translated back to the pod; TCP works", nd.build)
			} else {
				w.warn(fmt.Sprintf("ICMP from a Windows pod through OutBoundNAT may not come back (Kubernetes docs); on Windows Server 2025 (build %d) it has been seen to work — test outward connectivity over TCP (curl.exe)", orBuild(nd.build)))
			}
		}
		w.nats = append(w.nats, entry)
		w.add(nd.name, comp, "snat", pkt, &after, Pass, why, costVFP)
		return after
	}
	return pkt
}

func orBuild(b int) int {
	if b == 0 {
		return buildWS2025
	}
	return b
}

// winRoute switches a packet after VFP: to a local pod's port, to the
// host, into VXLAN toward a remote block or remote endpoint, or out of the
// host NIC.
func (w *walker) winRoute(nd *node, pkt packet, from *windows.Endpoint, fromPod *corev1.Pod) {
	if !w.tick(nd.name, pkt) {
		return
	}
	if pkt.dst == nd.ip {
		w.add(nd.name, "vSwitch", "to host", pkt, nil, Pass, "the node's own address: the host vNIC vEthernet ("+nicName(w.e, nd)+")", 0)
		if w.reply {
			w.arrive(place{kind: "winHost", nd: nd}, pkt, "host "+nd.name)
			return
		}
		w.deliverHost(nd, pkt, false)
		return
	}
	if ep := nd.eps()[pkt.dst]; ep != nil {
		switch {
		case !ep.IsRemoteEndpoint && ep.Kind == windows.KindPod:
			w.add(nd.name, "vSwitch", "switch", pkt, nil, Pass, "local HNS endpoint "+shortID(ep.ID)+" ("+ep.Pod+")", 0)
			w.winToPod(nd, ep, pkt)
			return
		case ep.Kind == windows.KindHost:
			w.add(nd.name, "vSwitch", "to host", pkt, nil, Pass, ep.IPAddress+" is "+orStr(ep.Name, "kube-proxy's source VIP endpoint")+", the host's", 0)
			w.winHostIn(nd, pkt)
			return
		case ep.Kind == windows.KindRemote && (w.e.inPools(pkt.dst) || w.e.inPools(pkt.src)):
			// A backend on another node; a node-address backend only for
			// pod traffic (the host's own packets leave through its NIC).
			pa := paOf(ep)
			if pa.IsValid() && pa != nd.ip {
				// The remote endpoint maps the address to its PA; the frame
				// still goes to the remote subnet's distributed router.
				drMAC := ""
				if r := remoteRoute(nd, pkt.dst); r != nil {
					drMAC = r.DistributedRouterMacAddress
				}
				w.winEncap(nd, pkt, pa, drMAC, fmt.Sprintf("kube-proxy's remote endpoint %s (PA %s)", shortID(ep.ID), pa), fromPod != nil)
				return
			}
		}
	}
	if net := calicoNetwork(nd); net != nil {
		if p := remoteRoute(nd, pkt.dst); p != nil {
			w.winEncap(nd, pkt, addr(p.ProviderAddress), p.DistributedRouterMacAddress,
				fmt.Sprintf("RemoteSubnetRoute %s → PA %s, DR MAC %s (%s)", p.DestinationPrefix, p.ProviderAddress, p.DistributedRouterMacAddress, p.Node), fromPod != nil)
			return
		}
		if pr, err := netip.ParsePrefix(net.Subnets[0].AddressPrefix); err == nil && pr.Contains(pkt.dst) {
			w.end(Dropped, nd.name, "vSwitch", "drop", pkt, Drop, fmt.Sprintf("%s is in this node's subnet %s but no HNS endpoint has it", pkt.dst, pr))
			return
		}
	}
	if w.e.inPools(pkt.dst) {
		w.end(Dropped, nd.name, "VFP VNET_ENCAP_LAYER", "drop", pkt, Drop, fmt.Sprintf("no RemoteSubnetRoute covers %s: Felix has no VTEP for its block", pkt.dst))
		return
	}
	next := w.e.gateway
	if w.e.nodeNet.Contains(pkt.dst) {
		next = pkt.dst
	}
	w.add(nd.name, "vSwitch external port ("+nicName(w.e, nd)+")", "transmit", pkt, nil, Pass, "out of the host's NIC to "+next.String(), costWire)
	w.arriveNodeNet(nd.name, next, pkt)
}

// remoteRoute is the Calico network's first RemoteSubnetRoute covering a,
// or nil.
func remoteRoute(nd *node, a netip.Addr) *windows.NetworkPolicy {
	net := calicoNetwork(nd)
	if net == nil {
		return nil
	}
	for i := range net.Policies {
		p := &net.Policies[i]
		if p.Type != windows.PolicyRemoteSubnetRoute {
			continue
		}
		if pr, err := netip.ParsePrefix(p.DestinationPrefix); err == nil && pr.Contains(a) {
			return p
		}
	}
	return nil
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func paOf(ep *windows.Endpoint) netip.Addr {
	for _, p := range ep.Policies {
		if p.Type == windows.PolicyPA {
			return addr(p.PA)
		}
	}
	return netip.Addr{}
}

// winEncap is VFP's VNET_ENCAP_LAYER: VXLAN to the provider address with
// the network's VSID; drMAC is the route's DistributedRouterMacAddress, the
// inner frame's destination ("" when not known).
func (w *walker) winEncap(nd *node, pkt packet, pa netip.Addr, drMAC, why string, fromPod bool) {
	net := calicoNetwork(nd)
	vsid := 4096
	if net != nil {
		vsid = net.Subnets[0].VSID
	}
	mtu := 1500
	if m, ok := w.e.p.MTU(nd.name); ok {
		mtu = m
	}
	after := pkt
	after.outer = &Outer{Src: nd.ip.String(), Dst: pa.String(), DstPort: 4789, VNI: vsid, InnerMTU: mtu - 50,
		vtepMAC: strings.ToLower(strings.ReplaceAll(drMAC, "-", ":"))}
	w.add(nd.name, "VFP VNET_ENCAP_LAYER", "encapsulate", pkt, &after, Pass,
		fmt.Sprintf("%s; VSID %d, UDP 4789 (the only VXLAN port Windows supports), encap overhead 50", why, vsid), costVFP)
	if fromPod && !w.reply {
		w.firstFlow = true
	}
	w.arriveNodeNet(nd.name, pa, after)
}

// winToPod is a packet switched to a local pod's port: the port's ACL
// layer inbound, then the pod.
func (w *walker) winToPod(nd *node, ep *windows.Endpoint, pkt packet) {
	pod := w.e.p.PodByIP(pkt.dst)
	if pod == nil {
		w.end(Dropped, nd.name, "vSwitch", "drop", pkt, Drop, "the endpoint's pod is gone")
		return
	}
	w.recordACL(nd, ep)
	if w.reply {
		pkt, _ = w.unNAT(nd, pkt, "VFP unified flow ("+w.portName(ep)+")")
		if w.ended {
			return
		}
		w.deliverPod(nd, pod, pkt, "")
		return
	}
	if !w.winACL(nd, ep, pod, "In", pkt) {
		return
	}
	w.deliverPod(nd, pod, pkt, "")
}

// winFromNetwork is an inner packet after VXLAN decapsulation on a Windows
// node.
func (w *walker) winFromNetwork(nd *node, pkt packet) {
	if w.reply {
		pkt, _ = w.unNAT(nd, pkt, "VFP unified flow")
		if w.ended {
			return
		}
	}
	ep := nd.eps()[pkt.dst]
	switch {
	case ep != nil && !ep.IsRemoteEndpoint && ep.Kind == windows.KindPod:
		w.winToPod(nd, ep, pkt)
	case pkt.dst == nd.ip || ep != nil && ep.Kind == windows.KindHost:
		w.winHostIn(nd, pkt)
	case w.reply:
		w.winRoute(nd, pkt, nil, nil)
	default:
		w.end(Dropped, nd.name, "vSwitch", "drop", pkt, Drop, fmt.Sprintf("no local HNS endpoint has %s", pkt.dst))
	}
}

// winHostIn is a packet for the Windows node's address from the network
// (or for kube-proxy's source VIP): a NodePort load balancer, the reverse
// of a translation, or the host itself.
func (w *walker) winHostIn(nd *node, pkt packet) {
	if !w.tick(nd.name, pkt) {
		return
	}
	if w.reply {
		var changed bool
		pkt, changed = w.unNAT(nd, pkt, "VFP unified flow (external port)")
		if w.ended {
			return
		}
		if pkt.dst == nd.ip || !changed {
			w.arrive(place{kind: "winHost", nd: nd}, pkt, "host "+nd.name)
			return
		}
		if ep := nd.eps()[pkt.dst]; ep != nil && ep.Kind == windows.KindPod && !ep.IsRemoteEndpoint {
			w.winToPod(nd, ep, pkt)
			return
		}
		w.winRoute(nd, pkt, nil, nil)
		return
	}
	if pkt.dst == nd.ip {
		if lb := findLB(nd, pkt); lb != nil {
			after, ok := w.winLB(nd, lb, pkt, true)
			if !ok {
				return
			}
			w.winRoute(nd, after, nil, nil)
			return
		}
	}
	w.deliverHost(nd, pkt, false)
}

// winHostOut is a packet the Windows host itself sends.
func (w *walker) winHostOut(nd *node, pkt packet) {
	if w.e.inServiceCIDR(pkt.dst) {
		w.end(Dropped, nd.name, "Windows host (HNS)", "drop", pkt, Drop, "a Windows host cannot reach ClusterIPs")
		return
	}
	if pkt.dst == nd.ip {
		if lb := findLB(nd, pkt); lb != nil && lb.Kind == windows.LBNodePort {
			w.end(Dropped, nd.name, "Windows host (HNS)", "drop", pkt, Drop,
				fmt.Sprintf("NodePort %d of %s is not reachable from the Windows node itself", pkt.dport, lb.Service))
			return
		}
		w.deliverHost(nd, pkt, true)
		return
	}
	if ep := nd.eps()[pkt.dst]; ep != nil && !ep.IsRemoteEndpoint && ep.Kind == windows.KindPod {
		w.add(nd.name, "host vNIC → vSwitch", "switch", pkt, nil, Pass, "the HNS network's HostRoute lets the host reach its pods", 0)
		w.winToPod(nd, ep, pkt)
		return
	}
	w.winRoute(nd, pkt, nil, nil)
}
