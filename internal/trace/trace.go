package trace

import (
	"fmt"
	"math"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Trace walks a connection from src to dst (port for TCP and UDP; ignored
// for ICMP): the source's resolver when dst is a name, the request through
// every component on the way, and the reply back with the translations
// undone.
func (e *Engine) Trace(src Source, dst Target, proto Proto, port int) *Result {
	if proto == ICMP {
		port = 0
	}
	res := &Result{From: e.describeSource(src), Proto: proto, Port: port}
	daddr := dst.Addr
	if dst.Kind == KindName {
		r := e.resolve(src, dst.Name)
		res.Hops = append(res.Hops, r.hops...)
		res.Warnings = append(res.Warnings, r.warnings...)
		if !r.ok {
			res.To = Endpoint{Kind: KindName, Given: dst.Given, Port: port}
			res.Outcome, res.Reason, res.AtNode, res.AtComp = r.outcome, r.reason, r.atNode, r.atComp
			res.Drop = ReasonOther
			res.ResolverTimeout = r.timeout
			res.Fix = r.fix
			if res.Fix == "" {
				res.Fix = fixFor(res)
			}
			return res
		}
		daddr, res.Resolved, res.Canonical = r.addr, r.addr.String(), r.canonical
	}
	res.To = e.describeTarget(dst, daddr, port)
	if dst.Service != nil {
		res.To.Kind, res.To.Name, res.To.Namespace = KindService, dst.Service.Name, dst.Service.Namespace
	}
	if why := e.limitation(src, daddr); why != "" {
		res.Outcome, res.Reason, res.Drop = Dropped, why, ReasonOther
		res.Hops = append(res.Hops, Hop{Leg: LegRequest, Node: src.Node, Component: "Windows networking", Action: "refuse", Verdict: Drop, Reason: why})
		res.Fix = fixFor(res)
		return res
	}
	w := &walker{e: e, leg: LegRequest}
	pl, pkt := e.start(src, daddr, port, proto)
	w.send(pl, pkt)
	res.Hops = append(res.Hops, w.hops...)
	res.Translations = w.translations
	res.Warnings = append(res.Warnings, w.warnings...)
	res.ACLs = w.acls
	res.Assumed = w.assumed
	res.Outcome, res.Reason, res.AtNode, res.AtComp = w.outcome, w.reason, w.atNode, w.atComp
	res.At, res.Drop = w.atPoint, dropReason(w.outcome, w.atPoint)
	if w.outcome == Delivered {
		res.RequestTTL = w.arrived.ttl
		res.Responder = w.responder
		d := e.describeTarget(Target{}, w.arrived.dst, w.arrived.dport)
		res.DeliveredTo = &d
		rw := &walker{e: e, leg: LegReply, reply: true, nats: w.nats, client: pkt.src, acls: w.acls}
		rpkt := packet{src: w.arrived.dst, dst: w.arrived.src, sport: w.arrived.dport, dport: w.arrived.sport, proto: proto, ttl: e.initialTTL(w.arrivedAt)}
		rw.send(w.arrivedAt, rpkt)
		res.Hops = append(res.Hops, rw.hops...)
		res.ACLs = rw.acls
		for _, x := range rw.warnings {
			res.Warnings = appendOnce(res.Warnings, x)
		}
		if rw.outcome == Delivered {
			res.ReplyTTL = rw.arrived.ttl
		} else {
			res.Outcome = rw.outcome
			if res.Outcome == "" {
				res.Outcome = NotModeled
			}
			res.Reason = "the request arrives but the reply is lost: " + rw.reason
			res.AtNode, res.AtComp = rw.atNode, rw.atComp
			res.At, res.Drop = rw.atPoint, ReasonReplyLost
		}
		var ms float64
		for _, h := range w.hops {
			ms += h.cost
		}
		for _, h := range rw.hops {
			ms += h.cost
		}
		res.RTTMillis = math.Round(ms*1000) / 1000
		if w.firstFlow {
			res.FirstPacketMillis = firstFlowWindows
		}
	}
	res.Delivered = res.Outcome == Delivered
	if !res.Delivered {
		res.Fix = fixFor(res)
	}
	return res
}

// dropReason is the DropReason of a walk that ended with outcome at point.
func dropReason(o Outcome, at Point) DropReason {
	switch {
	case o == Delivered:
		return ReasonNone
	case o == Refused:
		return ReasonNoListener
	case o == Dropped && (at == PointEgressPolicy || at == PointIngressPolicy):
		return ReasonPolicyDenied
	}
	return ReasonOther
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// initialTTL is the TTL the responder's OS starts its reply with.
func (e *Engine) initialTTL(pl place) int {
	switch pl.kind {
	case "winPod", "winHost":
		return ttlWindows
	case "external":
		if e.nodeNet.Contains(pl.addr) {
			return ttlExternal
		}
		return ttlExternal - externalRouters
	}
	return ttlLinux
}

// start is the place a source sends from and its first packet.
func (e *Engine) start(src Source, dst netip.Addr, port int, proto Proto) (place, packet) {
	pkt := packet{src: src.Addr, dst: dst, dport: port, proto: proto, ttl: ttlLinux}
	switch src.Kind {
	case KindPod:
		nd := e.nodes[src.Node]
		if src.Pod.Spec.HostNetwork {
			return e.hostPlace(nd, pkt)
		}
		if nd.windows {
			pkt.ttl = ttlWindows
			return place{kind: "winPod", nd: nd, pod: src.Pod, ep: nd.eps()[src.Addr]}, pkt
		}
		return place{kind: "linuxPod", nd: nd, pod: src.Pod}, pkt
	case KindNode:
		return e.hostPlace(e.nodes[src.Node], pkt)
	}
	return place{kind: "external", addr: src.Addr}, pkt
}

// hostPlace: a node sends; a Linux node's source address is the preferred
// source of the route's device (vxlan.calico's or tunl0's address toward
// other nodes' pods, which is why host traffic to pods comes from the
// tunnel address).
func (e *Engine) hostPlace(nd *node, pkt packet) (place, packet) {
	if nd.windows {
		pkt.ttl = ttlWindows
		pkt.src = nd.ip
		return place{kind: "winHost", nd: nd}, pkt
	}
	pkt.src = nd.ip
	if nd.l() != nil {
		if r, ok := nd.l().RouteTo(pkt.dst); ok {
			switch {
			case r.Dev == "vxlan.calico" && nd.vtep.IsValid():
				pkt.src = nd.vtep
			case r.Dev == "tunl0" && nd.tunl.IsValid():
				pkt.src = nd.tunl
			case r.Src.IsValid():
				pkt.src = r.Src
			}
		}
	}
	return place{kind: "linuxHost", nd: nd}, pkt
}

// limitation is a Windows networking limitation that decides the trace
// before any packet moves.
func (e *Engine) limitation(src Source, dst netip.Addr) string {
	if dst.IsValid() && !dst.Is4() {
		return "no IPv6: the cluster's pods and Services are IPv4 only (Calico VXLAN on Windows supports IPv4 only)"
	}
	check := func(p *corev1.Pod) string {
		if p == nil || !p.Spec.HostNetwork {
			return ""
		}
		nd := e.nodes[p.Spec.NodeName]
		if nd == nil || !nd.windows || hostProcess(p) {
			return ""
		}
		return fmt.Sprintf("%s is a Windows pod with hostNetwork: ordinary Windows pods cannot use the node's network (only HostProcess pods run there; the WindowsHostNetwork alpha was withdrawn)", podName(p))
	}
	if why := check(src.Pod); why != "" {
		return why
	}
	for _, p := range e.p.HostNetworkPods(dst.String()) {
		if p.Spec.HostNetwork && p.Status.PodIP == dst.String() {
			if why := check(p); why != "" {
				return why
			}
		}
	}
	return ""
}

func hostProcess(p *corev1.Pod) bool {
	if sc := p.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
		return true
	}
	for _, c := range p.Spec.Containers {
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil && *sc.WindowsOptions.HostProcess {
			return true
		}
	}
	return false
}

// resolution is the DNS leg's result.
type resolution struct {
	hops      []Hop
	ok        bool
	addr      netip.Addr
	canonical string
	outcome   Outcome
	reason    string
	atNode    string
	atComp    string
	timeout   int
	fix       string
	warnings  []string
	// result is the resolver's trace.
	result dns.Result
}

// dnsSource is the internal/dns view of a source.
func (e *Engine) dnsSource(src Source) (dns.Source, bool) {
	switch src.Kind {
	case KindPod:
		return dns.PodSource(src.Pod), true
	case KindNode:
		return dns.NodeSource(src.Node), true
	}
	return dns.Source{}, false
}

// resolve resolves a name from a source the way its stub resolver does,
// with the DNS query's own path to the nameserver walked first.
func (e *Engine) resolve(src Source, name string) resolution {
	var out resolution
	dsrc, ok := e.dnsSource(src)
	if !ok {
		out.outcome, out.reason = NotModeled, "an address outside the cluster has no resolver the twin knows; give an address"
		return out
	}
	r := e.server().Resolve(e.c, dsrc, name)
	out.result = r
	srcAddr := src.Addr
	cfg := r.Config
	var cands []string
	for _, s := range r.Steps {
		cands = append(cands, s.Name)
	}
	ns := ""
	if len(cfg.Nameservers) > 0 {
		ns = cfg.Nameservers[0]
	}
	resolverWhy := fmt.Sprintf("%s; nameserver %s; search %s", cfg.Origin, strings.Join(cfg.Nameservers, " "), orNoneList(cfg.Searches))
	if r.Resolver != dns.ResolverWindows {
		resolverWhy += fmt.Sprintf("; ndots %d", cfg.Ndots)
	} else {
		resolverWhy += "; suffixes are appended only to names without a dot"
	}
	if len(cands) > 0 {
		resolverWhy += "; tries " + strings.Join(cands, ", ")
	}
	h := Hop{Leg: LegDNS, Node: src.Node, Component: "resolver (" + orStr(r.Resolver, "unknown") + ")", Action: "resolve " + name,
		Before: Header{Src: srcAddr.String(), Dst: ns, DstPort: 53, Proto: UDP}, Verdict: Pass, Reason: resolverWhy}
	out.hops = append(out.hops, h)
	if r.Outcome == dns.Unknown {
		out.outcome, out.reason = NotModeled, r.Reason
		return out
	}
	// The query's own path to the nameserver.
	nsAddr, err := netip.ParseAddr(ns)
	var server string
	if err == nil && len(r.Steps) > 0 {
		dw := &walker{e: e, leg: LegDNS, depth: 1}
		pl, pkt := e.start(src, nsAddr, 53, UDP)
		dw.send(pl, pkt)
		out.hops = append(out.hops, dw.hops...)
		out.warnings = append(out.warnings, dw.warnings...)
		if dw.outcome != Delivered {
			out.outcome = Unresolved
			out.atNode, out.atComp = dw.atNode, dw.atComp
			out.reason = fmt.Sprintf("the DNS query to %s:53/udp does not get through (%s at %s %s: %s), so the resolver times out", ns, dw.outcome, orStr(dw.atNode, "the network"), dw.atComp, dw.reason)
			out.timeout = resolverTimeout(r.Resolver, len(r.Steps))
			out.fix = fixFor(&Result{Outcome: dw.outcome, Reason: dw.reason, AtComp: dw.atComp, AtNode: dw.atNode})
			if out.fix != "" {
				out.fix += " (DNS: UDP and TCP 53 to the cluster DNS)"
			}
			return out
		}
		server = dw.responder
		if p := e.p.PodByIP(dw.arrived.dst); p != nil {
			server = podName(p)
		}
		out.atNode = nodeOf(dw.arrivedAt)
	}
	for _, s := range r.Steps {
		comp := "DNS server " + s.Server
		switch s.Answer.Path {
		case dns.PathKubernetes:
			comp = "CoreDNS " + server + " (kubernetes plugin)"
		case dns.PathForward:
			comp = "CoreDNS " + server + " (forward to the node network's DNS)"
		}
		ans := s.Answer.Rcode.String()
		if addrs := s.Answer.Addresses(); len(addrs) > 0 {
			ans += " " + strings.Join(addrs, " ")
		} else if s.Answer.Rcode == dns.NoError {
			ans += " (no address)"
		}
		out.hops = append(out.hops, Hop{Leg: LegDNS, Node: out.atNode, Component: comp, Action: "A " + s.Name,
			Before: Header{Src: srcAddr.String(), Dst: s.Server, DstPort: 53, Proto: UDP}, Verdict: Info, Reason: ans + " — " + s.Answer.Why})
	}
	if !r.Resolved() {
		out.outcome, out.reason = Unresolved, fmt.Sprintf("%s does not resolve: %s", name, r.Reason)
		if r.Outcome == dns.Unknown {
			out.outcome = NotModeled
		}
		if r.Resolver == dns.ResolverWindows && strings.Contains(strings.TrimSuffix(name, "."), ".") && !strings.HasSuffix(name, ".") {
			for _, sfx := range cfg.Searches {
				full := strings.TrimSuffix(name, ".") + "." + strings.TrimSuffix(sfx, ".")
				if a := e.server().Query(full, dns.TypeA); a.Rcode == dns.NoError && len(a.Addresses()) > 0 {
					out.reason += fmt.Sprintf("; the Windows DNS client sends a name with a dot as is and never appends the search suffixes (dotted short names are not resolved on Windows), while %s would resolve", full)
					out.fix = "use the full name " + full + " (or a single-label name from the same namespace)"
					break
				}
			}
		}
		return out
	}
	a, err := netip.ParseAddr(r.Addresses[0])
	if err != nil {
		out.outcome, out.reason = NotModeled, "the answer is not an address: "+r.Addresses[0]
		return out
	}
	out.ok, out.addr, out.canonical = true, a, r.Canonical
	return out
}

// resolverTimeout is how long a resolver tries before giving up on
// unanswered queries (seconds): glibc's timeout:5 attempts:2 per name; the
// Windows DNS client's 1+1+2+4+4 s per name.
func resolverTimeout(resolver string, names int) int {
	if names == 0 {
		names = 1
	}
	if resolver == dns.ResolverWindows {
		return 12 * names
	}
	return 10 * names
}

func orNoneList(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, " ")
}

// fixFor says what would make a failed trace work.
func fixFor(res *Result) string {
	r, comp := res.Reason, res.AtComp
	switch {
	case strings.Contains(r, "a Windows host cannot reach ClusterIPs"):
		return "from the Windows host, use a pod's address or a NodePort on another node; or run the client in a pod"
	case strings.Contains(r, "not reachable from the Windows node itself"):
		return "use the NodePort on another node's address, or the ClusterIP from a pod"
	case strings.Contains(r, "hostNetwork"):
		return "run the Windows pod without hostNetwork (or as a HostProcess pod, which needs a privileged namespace)"
	case strings.Contains(r, "no IPv6"):
		return "use the IPv4 address"
	case strings.Contains(r, "ICMP leaving through OutBoundNAT"):
		return "test outward connectivity over TCP (curl.exe, Test-NetConnection -Port)"
	case strings.Contains(r, "externalTrafficPolicy Local, which works on Windows only with DSR"):
		return "run kube-proxy on the Windows node with --enable-dsr=true, or use externalTrafficPolicy: Cluster"
	case strings.Contains(comp, "ACL_ENDPOINT_LAYER") && strings.Contains(r, "does not program every rule"):
		return "rewrite the NetworkPolicy rule in a form Calico programs on Windows: plain CIDRs without except, numeric ports"
	case strings.Contains(r, "the VTEP MAC the sender"):
		return "have calico-node on the destination node record its VTEP MAC (projectcalico.org/VXLANTunnelMACAddr: the DrPort adapter's MAC on Windows), or give the observed one; kubectl-hybrid check reports it as HYB071"
	case strings.Contains(comp, "egress") || strings.Contains(comp, "_OUT"):
		return "allow the connection in an egress rule of a NetworkPolicy selecting the source pod (" + firstDenied(r) + ")"
	case strings.Contains(comp, "ingress") || strings.Contains(comp, "_IN"):
		return "allow the connection in an ingress rule of a NetworkPolicy selecting the destination pod (" + firstDenied(r) + ")"
	case strings.Contains(comp, "firewall") || strings.Contains(comp, "Firewall"):
		return "add an Allow rule for this traffic before the blocking rule in the Cluster kind's spec.network.firewall (and on the host)"
	case strings.Contains(r, "network-flag not initialized"):
		return "give kube-proxy on the node its HNS network (KUBE_NETWORK=Calico or --network-name=Calico), or run it through start.ps1; kubectl-hybrid check reports it as HYB043"
	case strings.Contains(r, "is terminating or not serving"):
		return "wait for ready endpoints of the Service; run hnsdiag list loadbalancers on the node to see whether an earlier kube-proxy sync left a load balancer that still serves"
	case strings.Contains(r, "kube-proxy's informers never see it"):
		return "remove the label " + model.LabelServiceProxyName + " if kube-proxy is to serve the Service, or run the service proxy it names"
	case strings.Contains(r, "no ready endpoints") || strings.Contains(r, "no usable endpoints"):
		return "give the Service ready endpoints: check its selector, the pods' readiness and targetPort"
	case strings.Contains(r, "answers only on its service ports") || strings.Contains(r, "VFP load balancers match TCP and UDP ports only"):
		return "a ClusterIP answers only on its Service ports: use a Service port, or ping a pod's address"
	case strings.Contains(r, "does not route"):
		return "reach pods from outside through a NodePort or LoadBalancer Service; the node network has no routes to pods"
	case res.Outcome == Refused:
		return "connect to a port the destination listens on"
	case res.Outcome == Unresolved:
		return "check the name: a Service is <service>.<namespace>.svc.<cluster domain>"
	}
	return ""
}

func firstDenied(r string) string {
	if i := strings.Index(r, "denied: "); i >= 0 {
		return strings.TrimPrefix(r[i:], "denied: ")
	}
	return r
}
