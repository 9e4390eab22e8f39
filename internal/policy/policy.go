// Package policy holds the pure semantics of Kubernetes NetworkPolicy: which
// policies select a pod for a direction and whether a connection is allowed.
// It depends only on the Kubernetes API types; the Linux dataplane renders
// and enforces it (Calico's rules), the trace engine asks it at both ends of
// a path and compares it with what Calico programs on Windows.
//
// Semantics (k8s.io/api/networking/v1; the apiserver's defaulting in
// pkg/apis/networking/v1/defaults.go; Calico's conversion in
// libcalico-go/lib/backend/k8s/conversion/conversion.go, which keeps them):
//
//   - A pod no policy selects for a direction is not isolated in it.
//   - policyTypes defaults to Ingress, plus Egress when the policy has
//     egress rules.
//   - An isolated pod lets a new connection through iff some rule of some
//     selecting policy matches (policies add up; there is no deny rule).
//   - A rule with no peers matches every peer; with no ports every protocol
//     and port. A peer is an ipBlock (CIDR minus except), or pods: a
//     podSelector alone within the policy's namespace, a namespaceSelector
//     alone over namespaces (every pod in them), or both (pods matching in
//     matching namespaces). Selectors match workloads only: host-networked
//     pods and nodes are addresses, reachable only through ipBlock.
//   - A port's protocol defaults to TCP; a number, a range port..endPort, or
//     a name resolved on the destination pod's container ports (the
//     selected pod for ingress, the peer for egress). A rule with ports never
//     matches ICMP.
//   - Policies are evaluated on the translated packet: a connection to a
//     Service is judged by the backend's address and port (post-DNAT).
//
// Host-networked pods are not policed (Calico gives them no workload
// endpoint).
package policy

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Direction is the direction of traffic relative to the pod a policy
// selects.
type Direction string

// Directions.
const (
	Ingress Direction = "Ingress"
	Egress  Direction = "Egress"
)

// Index answers NetworkPolicy questions for one cluster: which policies
// select a pod and whether a flow is allowed.
type Index struct {
	byNS     map[string][]*networkingv1.NetworkPolicy
	nsLabels map[string]labels.Set
	podsByIP map[netip.Addr]*corev1.Pod
	ips      []netip.Addr // podsByIP's keys, ascending

	// members memoizes PeerMembers: the answer is the cluster's, the same
	// for every node whose rules ask (the index never changes once built).
	mu      sync.Mutex
	members map[peerKey][]netip.Addr
}

// peerKey names a selector peer by its selectors' identity.
type peerKey struct {
	ns       string
	pod, nss *metav1.LabelSelector
}

// NewIndex indexes the cluster's NetworkPolicies, namespaces and pods.
// Pods are looked up by address for peer selectors; host-networked pods are
// not workloads (Calico gives them no workload endpoint), so selectors never
// match them.
func NewIndex(policies []*networkingv1.NetworkPolicy, namespaces []*corev1.Namespace, pods []*corev1.Pod) *Index {
	x := &Index{byNS: map[string][]*networkingv1.NetworkPolicy{}, nsLabels: map[string]labels.Set{}, podsByIP: map[netip.Addr]*corev1.Pod{}}
	for _, p := range policies {
		x.byNS[p.Namespace] = append(x.byNS[p.Namespace], p)
	}
	for ns := range x.byNS {
		ps := x.byNS[ns]
		sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	}
	for _, ns := range namespaces {
		l := labels.Set{}
		for k, v := range ns.Labels {
			l[k] = v
		}
		// The apiserver labels every namespace with its name (GA in 1.22).
		l[corev1.LabelMetadataName] = ns.Name
		x.nsLabels[ns.Name] = l
	}
	for _, p := range pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, s := range podIPs(p) {
			if a, err := netip.ParseAddr(s); err == nil {
				if _, dup := x.podsByIP[a]; !dup {
					x.ips = append(x.ips, a)
				}
				x.podsByIP[a] = p
			}
		}
	}
	sort.Slice(x.ips, func(i, j int) bool { return x.ips[i].Less(x.ips[j]) })
	return x
}

func podIPs(p *corev1.Pod) []string {
	if len(p.Status.PodIPs) == 0 {
		return []string{p.Status.PodIP}
	}
	out := make([]string, 0, len(p.Status.PodIPs))
	for _, ip := range p.Status.PodIPs {
		out = append(out, ip.IP)
	}
	return out
}

// PodByIP is the workload (non-host-networked, not finished pod) with the
// address, or nil.
func (x *Index) PodByIP(ip netip.Addr) *corev1.Pod { return x.podsByIP[ip] }

// namespaceLabels returns the labels of a namespace, or just its name label
// when the namespace object is not known.
func (x *Index) namespaceLabels(ns string) labels.Set {
	if l, ok := x.nsLabels[ns]; ok {
		return l
	}
	return labels.Set{corev1.LabelMetadataName: ns}
}

// PolicyTypes returns the directions a policy applies to: spec.policyTypes,
// or when empty, Ingress and, if it has egress rules, Egress (the
// apiserver's SetDefaults_NetworkPolicy; Calico's converter does the same).
func PolicyTypes(p *networkingv1.NetworkPolicy) []Direction {
	if len(p.Spec.PolicyTypes) > 0 {
		out := make([]Direction, 0, len(p.Spec.PolicyTypes))
		for _, t := range p.Spec.PolicyTypes {
			out = append(out, Direction(t))
		}
		return out
	}
	out := []Direction{Ingress}
	if len(p.Spec.Egress) > 0 {
		out = append(out, Egress)
	}
	return out
}

func appliesTo(p *networkingv1.NetworkPolicy, dir Direction) bool {
	for _, t := range PolicyTypes(p) {
		if t == dir {
			return true
		}
	}
	return false
}

// Selecting returns the policies that select pod for dir, by name.
func (x *Index) Selecting(pod *corev1.Pod, dir Direction) []*networkingv1.NetworkPolicy {
	var out []*networkingv1.NetworkPolicy
	for _, p := range x.byNS[pod.Namespace] {
		if appliesTo(p, dir) && selectorMatches(&p.Spec.PodSelector, labels.Set(pod.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// selectorMatches evaluates a label selector; nil matches nothing here
// (callers treat a nil selector themselves), an invalid one matches nothing.
func selectorMatches(s *metav1.LabelSelector, l labels.Set) bool {
	if s == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false
	}
	return sel.Matches(l)
}

// Decision is the answer for one direction of one connection.
type Decision struct {
	Allowed bool
	// Isolated: some policy selects the pod for the direction.
	Isolated bool
	// Policy ("namespace/name") and Rule (index in its ingress or egress
	// list) that allowed the connection; empty when none did.
	Policy string
	Rule   int
	// Selecting names the policies that select the pod for the direction.
	Selecting []string
	// Reason is one sentence saying why.
	Reason string
}

// Allows reports whether Calico lets a new connection through for pod:
// ingress from peerIP or egress to peerIP, with proto (TCP, UDP, SCTP or
// anything else, such as ICMP) and port (the destination port: pod's port
// for ingress, peer's port for egress). The reason names the deciding
// policy and rule.
func (x *Index) Allows(pod *corev1.Pod, dir Direction, peerIP netip.Addr, proto string, port int32) (bool, string) {
	d := x.Decide(pod, dir, peerIP, proto, port)
	return d.Allowed, d.Reason
}

// Decide is Allows with the details.
func (x *Index) Decide(pod *corev1.Pod, dir Direction, peerIP netip.Addr, proto string, port int32) Decision {
	if pod == nil {
		return Decision{Reason: "no pod given"}
	}
	if pod.Spec.HostNetwork {
		return Decision{Allowed: true, Reason: fmt.Sprintf("%s/%s is host-networked: Calico enforces no NetworkPolicy on it", pod.Namespace, pod.Name)}
	}
	proto = strings.ToUpper(proto)
	sel := x.Selecting(pod, dir)
	if len(sel) == 0 {
		return Decision{Allowed: true, Reason: fmt.Sprintf("no NetworkPolicy selects %s/%s for %s", pod.Namespace, pod.Name, strings.ToLower(string(dir)))}
	}
	peer := x.podsByIP[peerIP]
	// The pod whose container ports name the destination port.
	dstPod := pod
	if dir == Egress {
		dstPod = peer
	}
	d := Decision{Isolated: true}
	for _, p := range sel {
		d.Selecting = append(d.Selecting, p.Namespace+"/"+p.Name)
	}
	for _, p := range sel {
		if dir == Ingress {
			for i, r := range p.Spec.Ingress {
				if x.peersMatch(p.Namespace, r.From, peerIP, peer) && portsMatch(r.Ports, proto, port, dstPod) {
					d.Allowed, d.Policy, d.Rule = true, p.Namespace+"/"+p.Name, i
					d.Reason = fmt.Sprintf("allowed by NetworkPolicy %s/%s ingress rule %d", p.Namespace, p.Name, i)
					return d
				}
			}
			continue
		}
		for i, r := range p.Spec.Egress {
			if x.peersMatch(p.Namespace, r.To, peerIP, peer) && portsMatch(r.Ports, proto, port, dstPod) {
				d.Allowed, d.Policy, d.Rule = true, p.Namespace+"/"+p.Name, i
				d.Reason = fmt.Sprintf("allowed by NetworkPolicy %s/%s egress rule %d", p.Namespace, p.Name, i)
				return d
			}
		}
	}
	what := "from"
	if dir == Egress {
		what = "to"
	}
	d.Reason = fmt.Sprintf("denied: %s/%s is selected for %s by %s and no rule allows %s %s %s",
		pod.Namespace, pod.Name, strings.ToLower(string(dir)), strings.Join(d.Selecting, ", "), what, describePeer(peerIP, peer), flowString(proto, port))
	return d
}

func flowString(proto string, port int32) string {
	if port == 0 && proto != "TCP" && proto != "UDP" && proto != "SCTP" {
		return proto
	}
	return fmt.Sprintf("%s/%d", proto, port)
}

func describePeer(ip netip.Addr, p *corev1.Pod) string {
	if p == nil {
		return ip.String()
	}
	return fmt.Sprintf("%s (%s/%s)", ip, p.Namespace, p.Name)
}

// peersMatch: an empty peer list matches every address.
func (x *Index) peersMatch(policyNS string, peers []networkingv1.NetworkPolicyPeer, ip netip.Addr, pod *corev1.Pod) bool {
	if len(peers) == 0 {
		return true
	}
	for _, pr := range peers {
		if x.PeerMatches(policyNS, pr, ip, pod) {
			return true
		}
	}
	return false
}

// PeerMatches reports whether one peer of a policy in namespace policyNS
// matches the address ip, which belongs to the workload pod (nil for an
// address that is no workload).
func (x *Index) PeerMatches(policyNS string, pr networkingv1.NetworkPolicyPeer, ip netip.Addr, pod *corev1.Pod) bool {
	if pr.IPBlock != nil {
		return IPBlockMatches(pr.IPBlock, ip)
	}
	if pod == nil {
		return false // selectors only match workloads
	}
	if pr.NamespaceSelector == nil {
		if pod.Namespace != policyNS {
			return false
		}
	} else if !selectorMatches(pr.NamespaceSelector, x.namespaceLabels(pod.Namespace)) {
		return false
	}
	if pr.PodSelector == nil {
		return true
	}
	return selectorMatches(pr.PodSelector, labels.Set(pod.Labels))
}

// PeerMembers are the workload addresses a selector peer matches today, in
// ascending order (what Calico's IP set for it holds); nil for an ipBlock.
// The slice is shared: callers must not change it.
func (x *Index) PeerMembers(policyNS string, pr networkingv1.NetworkPolicyPeer) []netip.Addr {
	if pr.IPBlock != nil {
		return nil
	}
	key := peerKey{policyNS, pr.PodSelector, pr.NamespaceSelector}
	x.mu.Lock()
	defer x.mu.Unlock()
	if m, ok := x.members[key]; ok {
		return m
	}
	if x.members == nil {
		x.members = map[peerKey][]netip.Addr{}
	}
	// PeerMatches for every address, with each selector parsed once
	// rather than once per address.
	match := func(s *metav1.LabelSelector) func(labels.Set) bool {
		sel, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return func(labels.Set) bool { return false }
		}
		return func(l labels.Set) bool { return sel.Matches(l) }
	}
	var nsMatch, podMatch func(labels.Set) bool
	if pr.NamespaceSelector != nil {
		nsMatch = match(pr.NamespaceSelector)
	}
	if pr.PodSelector != nil {
		podMatch = match(pr.PodSelector)
	}
	var out []netip.Addr
	for _, ip := range x.ips {
		pod := x.podsByIP[ip]
		switch {
		case pod == nil:
			continue
		case nsMatch == nil && pod.Namespace != policyNS:
			continue
		case nsMatch != nil && !nsMatch(x.namespaceLabels(pod.Namespace)):
			continue
		case podMatch != nil && !podMatch(labels.Set(pod.Labels)):
			continue
		}
		out = append(out, ip)
	}
	x.members[key] = out
	return out
}

// IPBlockMatches reports whether ip is in the block's CIDR and in none of
// its except ranges.
func IPBlockMatches(b *networkingv1.IPBlock, ip netip.Addr) bool {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !cidr.Contains(ip) {
		return false
	}
	for _, e := range b.Except {
		if ex, err := netip.ParsePrefix(e); err == nil && ex.Contains(ip) {
			return false
		}
	}
	return true
}

// portsMatch: an empty port list matches every protocol and port.
func portsMatch(ports []networkingv1.NetworkPolicyPort, proto string, port int32, dstPod *corev1.Pod) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if PortMatches(p, proto, port, dstPod) {
			return true
		}
	}
	return false
}

// PortMatches reports whether a NetworkPolicyPort matches a connection with
// proto to port on dstPod (whose container ports name named ports).
func PortMatches(p networkingv1.NetworkPolicyPort, proto string, port int32, dstPod *corev1.Pod) bool {
	pp := corev1.ProtocolTCP
	if p.Protocol != nil {
		pp = *p.Protocol
	}
	if !strings.EqualFold(string(pp), proto) {
		return false
	}
	if p.Port == nil {
		return true
	}
	if p.Port.Type == intstr.Int {
		lo := p.Port.IntVal
		if p.EndPort != nil {
			return port >= lo && port <= *p.EndPort
		}
		return port == lo
	}
	return NamedPort(dstPod, p.Port.StrVal, pp) == port && port != 0
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
				if cp.Name == name && cpProto == proto && cp.ContainerPort != 0 {
					return cp.ContainerPort
				}
			}
		}
	}
	return 0
}
