package felix

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Flow is a new connection as a workload endpoint's policy sees it: the
// other end's address, the protocol (TCP, UDP, SCTP, ICMP, …) and the
// destination port (the endpoint's for ingress, the peer's for egress);
// SrcPort 0 when unknown, which no source port list matches. Policy is
// judged on the translated packet (post-DNAT).
type Flow struct {
	Peer    netip.Addr
	Proto   string
	DstPort int32
	SrcPort int32
	// PeerName, when set, names the peer in reasons instead of its
	// address (reach's "the source").
	PeerName string
}

// HostEndpointsNote says, where Calico policies exist, what the twin
// leaves out: HostEndpoints (which Calico policies can select to police a
// node's own interfaces) are not modeled.
const HostEndpointsNote = " (the twin models workload endpoints only: Calico HostEndpoints, which a Calico policy could police the host with, are not modeled)"

// Decision is one direction's verdict for one connection.
type Decision struct {
	Allowed bool
	// Isolated: some policy applies to the endpoint in the direction.
	Isolated bool
	// Policy and Rule name the rule that decided (Rule is its index in the
	// policy's list); Policy is nil when a tier's end or a profile did.
	Policy *Policy
	Rule   int
	// Selecting names the applying policies ("ns/name" for Kubernetes
	// ones when only those apply).
	Selecting []string
	Reason    string
	// Calico: a projectcalico.org policy applies in the direction.
	Calico bool
}

// Decide evaluates the endpoint's policy chain for a direction as Felix's
// Linux chains do (felix/rules/endpoints.go endpointIptablesChain and
// policy.go): tier by tier, each applying policy's rules in order; Allow
// accepts, Deny drops, Pass leaves the tier, Log logs and goes on; a tier
// with applying policies and no Allow, Deny or Pass for the packet drops it
// (end of tier); a packet no tier decided goes to the profiles, and
// kns.<namespace> allows everything. Host-networked pods have no workload
// endpoint.
func (x *Calc) Decide(pod *corev1.Pod, ingress bool, f Flow) Decision {
	if pod == nil {
		return Decision{Reason: "no pod given"}
	}
	if pod.Spec.HostNetwork {
		why := fmt.Sprintf("%s/%s is host-networked: Calico enforces no NetworkPolicy on it", pod.Namespace, pod.Name)
		if x.HasCalicoPolicies() {
			why += HostEndpointsNote
		}
		return Decision{Allowed: true, Reason: why}
	}
	ep := x.EndpointOf(pod)
	return x.DecideEndpoint(ep, x.Active(ep, ingress), ingress, f)
}

// DecideEndpoint is Decide over tiers already resolved (Active).
func (x *Calc) DecideEndpoint(ep *Endpoint, tiers []Tier, ingress bool, f Flow) Decision {
	dir := "egress"
	if ingress {
		dir = "ingress"
	}
	f.Proto = strings.ToUpper(f.Proto)
	if len(tiers) == 0 {
		return Decision{Allowed: true, Reason: fmt.Sprintf("no NetworkPolicy selects %s/%s for %s", ep.Namespace, ep.Pod.Name, dir)}
	}
	k8sOnly := true
	for _, t := range tiers {
		for _, p := range t.Policies {
			k8sOnly = k8sOnly && p.Kind == KindKubernetes
		}
	}
	d := Decision{Isolated: true, Calico: !k8sOnly}
	for _, t := range tiers {
		for _, p := range t.Policies {
			if k8sOnly {
				d.Selecting = append(d.Selecting, p.Namespace+"/"+p.Name)
			} else {
				d.Selecting = append(d.Selecting, p.Display())
			}
		}
	}
	peer := x.EndpointAt(f.Peer)
	var passed []string
	var logged []string
	for _, t := range tiers {
		action, p, r, logs := x.evalTier(t, ep, peer, ingress, f)
		logged = append(logged, logs...)
		switch action {
		case ActionAllow, ActionDeny:
			d.Allowed, d.Policy, d.Rule = action == ActionAllow, p, r.Index
			verb := "allowed"
			if action == ActionDeny {
				verb = "denied"
			}
			d.Reason = fmt.Sprintf("%s by %s %s rule %d", verb, p.Display(), dir, r.Index)
			if !k8sOnly {
				d.Reason += " (tier " + t.Name + ")"
			}
			d.Reason = prefix(logged, passed) + d.Reason
			return d
		case ActionPass:
			passed = append(passed, fmt.Sprintf("%s %s rule %d passed it to the next tier", p.Display(), dir, r.Index))
			continue
		}
		what := "from"
		if !ingress {
			what = "to"
		}
		var names []string
		for _, p := range t.Policies {
			if k8sOnly {
				names = append(names, p.Namespace+"/"+p.Name)
			} else {
				names = append(names, p.Display())
			}
		}
		if k8sOnly {
			d.Reason = fmt.Sprintf("denied: %s/%s is selected for %s by %s and no rule allows %s %s %s",
				ep.Namespace, ep.Pod.Name, dir, strings.Join(names, ", "), what, x.describePeer(f, peer), flowString(f.Proto, f.DstPort))
		} else {
			d.Reason = fmt.Sprintf("denied at the end of tier %s: %s/%s is selected for %s by %s and no rule allows or passes %s %s %s",
				t.Name, ep.Namespace, ep.Pod.Name, dir, strings.Join(names, ", "), what, x.describePeer(f, peer), flowString(f.Proto, f.DstPort))
		}
		d.Reason = prefix(logged, passed) + d.Reason
		return d
	}
	d.Allowed = true
	d.Reason = prefix(logged, passed) + fmt.Sprintf("no tier decided: profile kns.%s allows it", ep.Namespace)
	return d
}

func prefix(logged, passed []string) string {
	var s string
	for _, l := range logged {
		s += l + "; "
	}
	for _, p := range passed {
		s += p + "; "
	}
	return s
}

// evalTier returns the first Allow, Deny or Pass rule of the tier's
// policies that matches ("" when none does), and the Log rules that
// matched before it (they log and go on).
func (x *Calc) evalTier(t Tier, ep, peer *Endpoint, ingress bool, f Flow) (string, *Policy, *Rule, []string) {
	dir := "egress"
	if ingress {
		dir = "ingress"
	}
	var logged []string
	for _, p := range t.Policies {
		rules := p.Out
		if ingress {
			rules = p.In
		}
		for i := range rules {
			r := &rules[i]
			if !x.RuleMatches(p, r, ep, peer, ingress, f) {
				continue
			}
			switch r.Action {
			case ActionLog:
				logged = append(logged, fmt.Sprintf("logged by %s %s rule %d", p.Display(), dir, r.Index))
			case "", ActionAllow:
				return ActionAllow, p, r, logged
			case ActionDeny:
				return ActionDeny, p, r, logged
			case ActionPass, "next-tier":
				return ActionPass, p, r, logged
			}
		}
	}
	return "", nil, nil, logged
}

// RuleMatches reports whether the rule of policy p matches the flow at
// endpoint ep (peer: the workload endpoint at the flow's peer address, or
// nil), as Felix's rendered rule matches it (felix/rules/rule_defs.go,
// policy.go): IP version, protocol and its negation, ICMP type and code
// (an ICMP flow is taken as an echo request, type 8 code 0), then each side:
// nets, notNets, the selector's IP set, notSelector's, ports and notPorts.
func (x *Calc) RuleMatches(p *Policy, r *Rule, ep, peer *Endpoint, ingress bool, f Flow) bool {
	switch r.IPVersion {
	case 4:
		if !f.Peer.Is4() {
			return false
		}
	case 6:
		if f.Peer.Is4() {
			return false
		}
	}
	num := protoNumber(f.Proto)
	if r.Protocol != nil && ProtocolNumber(*r.Protocol) != num {
		return false
	}
	if r.NotProtocol != nil && ProtocolNumber(*r.NotProtocol) == num {
		return false
	}
	echo := num == 1
	if r.ICMP != nil && (!echo || r.ICMP.Type != nil && *r.ICMP.Type != 8 || r.ICMP.Code != nil && *r.ICMP.Code != 0) {
		return false
	}
	if r.NotICMP != nil && echo && (r.NotICMP.Type == nil || *r.NotICMP.Type == 8) && (r.NotICMP.Code == nil || *r.NotICMP.Code == 0) {
		return false
	}
	local := ep.Addr
	src, dst := entityEnd{f.Peer, peer, f.SrcPort}, entityEnd{local, ep, f.DstPort}
	if !ingress {
		src, dst = entityEnd{local, ep, f.SrcPort}, entityEnd{f.Peer, peer, f.DstPort}
	}
	return x.entityMatches(p, r, r.Src, src, f.Proto) && x.entityMatches(p, r, r.Dst, dst, f.Proto)
}

// entityEnd is one end of a flow: its address, its endpoint (or nil) and
// its port.
type entityEnd struct {
	addr netip.Addr
	ep   *Endpoint
	port int32
}

func (x *Calc) entityMatches(p *Policy, r *Rule, e Entity, end entityEnd, proto string) bool {
	if len(e.Nets) > 0 && !inNets(e.Nets, end.addr) {
		return false
	}
	if len(e.NotNets) > 0 && inNets(e.NotNets, end.addr) {
		return false
	}
	c := e.c
	if c == nil {
		c = x.compileEntity(e, true)
	}
	if c.hasSelector {
		if end.ep == nil {
			return false
		}
		if in, ok := c.inSet(p, end.ep); !ok || !in {
			return false
		}
	}
	if c.notSel && end.ep != nil {
		if in, ok := c.inNotSet(p, end.ep); !ok || in {
			return false
		}
	}
	if len(e.Ports) > 0 || len(e.NotPorts) > 0 {
		if !portProtocol(proto) {
			return false
		}
		ruleProto := proto
		if r.Protocol != nil {
			ruleProto = strings.ToUpper(r.Protocol.String())
		}
		if len(e.Ports) > 0 && !portsMatch(e.Ports, end, ruleProto) {
			return false
		}
		if len(e.NotPorts) > 0 && portsMatch(e.NotPorts, end, ruleProto) {
			return false
		}
	}
	return true
}

func portProtocol(proto string) bool {
	return proto == "TCP" || proto == "UDP" || proto == "SCTP"
}

// portsMatch: a number, a "lo:hi" range, or a name resolved on the
// endpoint at that end (Felix's named-port IP sets hold the endpoints'
// address, protocol and port for the name).
func portsMatch(ports []intstr.IntOrString, end entityEnd, proto string) bool {
	for _, p := range ports {
		if p.Type == intstr.Int {
			if end.port == p.IntVal {
				return true
			}
			continue
		}
		s := strings.ReplaceAll(p.StrVal, "-", ":")
		if lo, hi, ok := strings.Cut(s, ":"); ok {
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && int(end.port) >= l && int(end.port) <= h {
				return true
			}
			continue
		}
		if n, err := strconv.Atoi(s); err == nil {
			if int(end.port) == n {
				return true
			}
			continue
		}
		if end.ep != nil && end.port != 0 && NamedPort(end.ep.Pod, p.StrVal, corev1.Protocol(proto)) == end.port {
			return true
		}
	}
	return false
}

// NamedPort returns the number of the named container port of pod with the
// given protocol, or 0. Calico binds names over init containers too.
func NamedPort(pod *corev1.Pod, name string, proto corev1.Protocol) int32 {
	if pod == nil || name == "" {
		return 0
	}
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range cs {
			for _, cp := range c.Ports {
				cpProto := cp.Protocol
				if cpProto == "" {
					cpProto = corev1.ProtocolTCP
				}
				if cp.Name == name && strings.EqualFold(string(cpProto), string(proto)) && cp.ContainerPort != 0 {
					return cp.ContainerPort
				}
			}
		}
	}
	return 0
}

// InNets reports whether the address is in one of the CIDRs (or is one of
// the addresses) of a Calico nets list.
func InNets(nets []string, a netip.Addr) bool { return inNets(nets, a) }

func inNets(nets []string, a netip.Addr) bool {
	for _, n := range nets {
		if p, err := netip.ParsePrefix(n); err == nil {
			if p.Contains(a) {
				return true
			}
			continue
		}
		if b, err := netip.ParseAddr(n); err == nil && b == a {
			return true
		}
	}
	return false
}

func protoNumber(proto string) int {
	return ProtocolNumber(intstr.FromString(proto))
}

// ProtocolNumber is a Calico protocol as a number (Felix's
// numorstring.Protocol.NumValue; policysets.go protocolNameToNumber): 256
// for a name it does not know.
func ProtocolNumber(p intstr.IntOrString) int {
	if p.Type == intstr.Int {
		return int(p.IntVal)
	}
	switch strings.ToLower(p.StrVal) {
	case "tcp":
		return 6
	case "udp":
		return 17
	case "icmp":
		return 1
	case "icmpv6":
		return 58
	case "sctp":
		return 132
	case "udplite":
		return 136
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n
	}
	return 256
}

func flowString(proto string, port int32) string {
	if port == 0 && !portProtocol(proto) {
		return proto
	}
	return fmt.Sprintf("%s/%d", proto, port)
}

func (x *Calc) describePeer(f Flow, ep *Endpoint) string {
	if f.PeerName != "" {
		return f.PeerName
	}
	if ep == nil {
		return f.Peer.String()
	}
	return fmt.Sprintf("%s (%s/%s)", f.Peer, ep.Pod.Namespace, ep.Pod.Name)
}

// PeerSideMatches reports whether the peer's side of a rule (the source
// of an ingress rule, the destination of an egress one) matches the peer
// at addr (ep: its workload endpoint, or nil), ports left out: its nets,
// notNets, selector and notSelector. Two peers every rule of an
// endpoint's ingress policies answers alike get the same ingress decision
// for the same port.
func (x *Calc) PeerSideMatches(p *Policy, r *Rule, ingress bool, addr netip.Addr, ep *Endpoint) bool {
	e := r.Dst
	if ingress {
		e = r.Src
	}
	e.Ports, e.NotPorts = nil, nil
	return x.entityMatches(p, r, e, entityEnd{addr: addr, ep: ep}, "")
}
