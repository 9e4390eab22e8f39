package trace

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// Proto is a transport protocol the engine walks.
type Proto string

// Protocols.
const (
	TCP  Proto = "tcp"
	UDP  Proto = "udp"
	ICMP Proto = "icmp"
)

// ParseProto reads tcp, udp or icmp (any case).
func ParseProto(s string) (Proto, bool) {
	switch strings.ToLower(s) {
	case "tcp":
		return TCP, true
	case "udp":
		return UDP, true
	case "icmp":
		return ICMP, true
	}
	return "", false
}

// Number is the IP protocol number (HNS load balancers and ACLs use it).
func (p Proto) Number() int {
	switch p {
	case TCP:
		return 6
	case UDP:
		return 17
	case ICMP:
		return 1
	}
	return 0
}

// Upper is the protocol as NetworkPolicy and container ports spell it;
// the known ones without allocating (reach asks per cell).
func (p Proto) Upper() string {
	switch p {
	case TCP:
		return "TCP"
	case UDP:
		return "UDP"
	case ICMP:
		return "ICMP"
	}
	return strings.ToUpper(string(p))
}

// Outcome is how a trace ends.
type Outcome string

// Outcomes.
const (
	// Delivered: the packet reached the destination and it answered (or,
	// for UDP, accepted it).
	Delivered Outcome = "delivered"
	// Refused: the destination exists but nothing listens (TCP RST, ICMP
	// port unreachable).
	Refused Outcome = "refused"
	// Rejected: a rule on the way answered with a reject (kube-proxy's
	// reject for a service without endpoints or a ClusterIP's wrong port).
	Rejected Outcome = "rejected"
	// Dropped: silently dropped; the client times out.
	Dropped Outcome = "dropped"
	// Unresolved: the destination name did not resolve.
	Unresolved Outcome = "unresolved"
	// NotModeled: the twin cannot say.
	NotModeled Outcome = "not modeled"
)

// Verdict of one hop.
type Verdict string

// Hop verdicts.
const (
	Pass    Verdict = "pass"    // the hop let the packet on (possibly changed)
	Deliver Verdict = "deliver" // the packet reached its destination
	Drop    Verdict = "drop"    // dropped here
	Reject  Verdict = "reject"  // rejected here (RST or ICMP error back)
	Warn    Verdict = "warn"    // passed, with a warning
	Info    Verdict = "info"    // a statement about the path, not a packet step
)

// Leg of a trace a hop belongs to.
const (
	LegDNS     = "dns"
	LegRequest = "request"
	LegReply   = "reply"
)

// TargetKind is what a trace's source or destination is.
type TargetKind string

// Target and endpoint kinds.
const (
	KindPod      TargetKind = "pod"
	KindNode     TargetKind = "node"
	KindService  TargetKind = "service"
	KindIP       TargetKind = "ip"       // a destination given as an address
	KindName     TargetKind = "name"     // a destination given as a DNS name
	KindExternal TargetKind = "external" // an address the twin does not know
)

// Point is where on the path a hop acts, in the terms a program reading a
// trace needs (reach): the endpoints' policy and the destination's
// listener. Most hops act elsewhere (PointPath).
type Point uint8

// Points of a path.
const (
	PointPath Point = iota
	// PointEgressPolicy: the source workload's egress policy (Felix's
	// cali-fw-* chain, felix/rules/endpoints.go; VFP's
	// ACL_ENDPOINT_GROUP_IPV4_OUT on Windows).
	PointEgressPolicy
	// PointIngressPolicy: the destination workload's ingress policy
	// (cali-tw-*; ACL_ENDPOINT_GROUP_IPV4_IN).
	PointIngressPolicy
	// PointListener: the destination pod's socket.
	PointListener
	// PointHostListener: a node's own socket.
	PointHostListener
)

var pointNames = [...]string{"path", "egress-policy", "ingress-policy", "listener", "host-listener"}

func (p Point) String() string { return enumName(pointNames[:], int(p), "Point") }

// DropReason says in one word why a trace did not deliver, for programs
// that read it (reach), in the manner of Hubble's drop reasons
// (cilium api/v1/flow/flow.proto DropReason); Result.Reason says it for
// people.
type DropReason uint8

// Drop reasons.
const (
	// ReasonNone: delivered.
	ReasonNone DropReason = iota
	// ReasonPolicyDenied: an endpoint's policy dropped the request.
	ReasonPolicyDenied
	// ReasonNoListener: the destination exists but nothing listens.
	ReasonNoListener
	// ReasonReplyLost: the request arrived, its reply did not.
	ReasonReplyLost
	// ReasonOther: anything else on the path (routing, firewall,
	// encapsulation, Service translation, name resolution).
	ReasonOther
)

var dropReasonNames = [...]string{"NONE", "POLICY_DENIED", "NO_LISTENER", "REPLY_LOST", "OTHER"}

func (r DropReason) String() string { return enumName(dropReasonNames[:], int(r), "DropReason") }

// enumName is the name of value i of a small enum, or typ(i) past its end.
func enumName(names []string, i int, typ string) string {
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// Header is an IPv4 header with its transport ports, and the VXLAN outer
// header when the packet is encapsulated.
type Header struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	SrcPort int    `json:"srcPort,omitempty"`
	DstPort int    `json:"dstPort,omitempty"`
	Proto   Proto  `json:"proto"`
	TTL     int    `json:"ttl"`
	Outer   *Outer `json:"outer,omitempty"`
}

// Outer is a tunnel's outer header, node to node: VXLAN's, UDP to DstPort
// with the VNI (VSID on Windows), or, with IPIP set, IP in IP's (IP
// protocol 4, no port); and the MTU left for the inner packet.
type Outer struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	IPIP     bool   `json:"ipip,omitempty"`
	DstPort  int    `json:"dstPort,omitempty"`
	VNI      int    `json:"vni,omitempty"`
	InnerMTU int    `json:"innerMTU,omitempty"`
	// vtepMAC is the inner frame's destination MAC, the peer VTEP's as the
	// sender knows it (lower case, colons); "" when the trace does not know
	// it (VFP's remote-endpoint encapsulation).
	vtepMAC string
}

func (h Header) String() string {
	var b strings.Builder
	switch {
	case h.Outer != nil && h.Outer.IPIP:
		fmt.Fprintf(&b, "[%s → %s ipip] ", h.Outer.Src, h.Outer.Dst)
	case h.Outer != nil:
		fmt.Fprintf(&b, "[%s → %s:%d/udp vni %d] ", h.Outer.Src, h.Outer.Dst, h.Outer.DstPort, h.Outer.VNI)
	}
	b.WriteString(hostPort(h.Src, h.SrcPort))
	b.WriteString(" → ")
	b.WriteString(hostPort(h.Dst, h.DstPort))
	fmt.Fprintf(&b, " %s", h.Proto)
	if h.TTL > 0 {
		fmt.Fprintf(&b, " ttl=%d", h.TTL)
	}
	return b.String()
}

func hostPort(a string, p int) string {
	if p == 0 {
		return a
	}
	return fmt.Sprintf("%s:%d", a, p)
}

// Hop is one step of a packet (or of a name) through the twin.
type Hop struct {
	Leg string `json:"leg"`
	// Node the hop happens on ("" for the node network or outside).
	Node string `json:"node,omitempty"`
	// Component is what acts: "resolver", "CoreDNS", an nftables chain,
	// a VFP layer, "vxlan.calico", "HNS distributed router", …
	Component string `json:"component"`
	// Action in a few words ("dnat", "encapsulate", "forward", "allow").
	Action  string  `json:"action"`
	Before  Header  `json:"before"`
	After   *Header `json:"after,omitempty"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Depth nests hops (the DNS query's own path under the resolver).
	Depth int `json:"depth,omitempty"`
	// Point is where on the path the hop acts.
	Point Point `json:"-"`
	// cost is the hop's share of the round-trip model (milliseconds).
	cost float64
}

// Endpoint describes one end of a trace.
type Endpoint struct {
	// Kind: pod, node, service, external (name when a name did not
	// resolve).
	Kind      TargetKind `json:"kind"`
	Name      string     `json:"name,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
	Node      string     `json:"node,omitempty"`
	OS        string     `json:"os,omitempty"`
	IP        string     `json:"ip,omitempty"`
	Port      int        `json:"port,omitempty"`
	// Given is the destination as the user wrote it.
	Given string `json:"given,omitempty"`
}

func (e Endpoint) String() string {
	switch e.Kind {
	case KindPod:
		return fmt.Sprintf("pod %s/%s (%s, %s)", e.Namespace, e.Name, e.IP, e.Node)
	case KindNode:
		return fmt.Sprintf("node %s (%s)", e.Name, e.IP)
	case KindService:
		return fmt.Sprintf("service %s/%s (%s)", e.Namespace, e.Name, e.IP)
	}
	if e.Given != "" && e.Given != e.IP {
		return fmt.Sprintf("%s (%s)", e.Given, e.IP)
	}
	return e.IP
}

// Backend is one candidate a Service translation could pick.
type Backend struct {
	Addr string `json:"addr"`
	Pod  string `json:"pod,omitempty"`
	Node string `json:"node,omitempty"`
}

// Translation is a Service translation on the path.
type Translation struct {
	Node       string    `json:"node"`
	Component  string    `json:"component"`
	Service    string    `json:"service,omitempty"`
	VIP        string    `json:"vip"`
	Candidates []Backend `json:"candidates"`
	Chosen     int       `json:"chosen"`
	// Rule says how the twin chose (see the package documentation).
	Rule string `json:"rule"`
}

// ACLInfo is the HNS ACL rule count of a Windows endpoint on the path.
type ACLInfo struct {
	Node     string              `json:"node"`
	Endpoint string              `json:"endpoint"`
	Pod      string              `json:"pod"`
	IP       string              `json:"ip"`
	Count    int                 `json:"aclCount"`
	Sources  []windows.ACLSource `json:"sources"`
}

// Result is a whole trace.
type Result struct {
	From      Endpoint `json:"from"`
	To        Endpoint `json:"to"`
	Proto     Proto    `json:"proto"`
	Port      int      `json:"port,omitempty"`
	Outcome   Outcome  `json:"outcome"`
	Delivered bool     `json:"delivered"`
	// Reason for the outcome, and where it was decided.
	Reason string `json:"reason"`
	AtNode string `json:"atNode,omitempty"`
	AtComp string `json:"atComponent,omitempty"`
	// Drop is Reason as a program reads it, and At the point of the hop
	// that decided.
	Drop DropReason `json:"-"`
	At   Point      `json:"-"`
	// Fix says what would make it work, when it does not.
	Fix string `json:"fix,omitempty"`
	// Resolved is the address a name resolved to (as the client connects
	// to it); Canonical the name that held it.
	Resolved  string `json:"resolved,omitempty"`
	Canonical string `json:"canonical,omitempty"`
	// ResolverTimeout is, when the DNS queries were dropped, how long the
	// client's resolver waits before giving up (seconds).
	ResolverTimeout int           `json:"resolverTimeout,omitempty"`
	Hops            []Hop         `json:"hops"`
	Translations    []Translation `json:"translations,omitempty"`
	// Responder is what answered at the destination (the pod's server, the
	// kernel for ICMP).
	Responder string `json:"responder,omitempty"`
	// DeliveredTo is the endpoint that received the request (a backend pod
	// for a Service).
	DeliveredTo *Endpoint `json:"deliveredTo,omitempty"`
	// RequestTTL is the TTL the request arrives with; ReplyTTL the TTL the
	// reply arrives at the client with (0 when there is no reply or it is
	// not knowable).
	RequestTTL int `json:"requestTTL,omitempty"`
	ReplyTTL   int `json:"replyTTL,omitempty"`
	// RTTMillis is the twin's deterministic round-trip model (see the
	// package documentation); FirstPacketMillis the extra cost of the first
	// packet of a new flow.
	RTTMillis         float64 `json:"rttMillis,omitempty"`
	FirstPacketMillis float64 `json:"firstPacketMillis,omitempty"`
	// Assumed is set when the answer rests on an assumption (a host outside
	// the cluster is taken to answer).
	Assumed  bool      `json:"assumed,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	ACLs     []ACLInfo `json:"acls,omitempty"`
}

// addr parses what the engine itself wrote.
func addr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}
