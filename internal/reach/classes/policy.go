package classes

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

type CalicoRule = calico.Rule

// The class-level NetworkPolicy evaluator: the Felix calculation's
// semantics for Kubernetes NetworkPolicies (internal/felix; the tests
// compare every class pair with felix.Calc.Decide) with selectors compiled once and every peer of every
// rule resolved to the set of classes it matches, so that a class pair is
// a few bit tests instead of a selector evaluation per pod pair.

// Npol is one NetworkPolicy, compiled.
type Npol struct {
	Name    string // namespace/name
	NS      string
	Sel     labels.Selector // nil: an invalid selector, which matches nothing
	In, Eg  bool
	InRules []*Rule
	EgRules []*Rule
}

// Rule is one ingress or egress rule.
type Rule struct {
	Pol    *Npol
	Egress bool
	Index  int
	// All: the rule has no peers and matches every address.
	All   bool
	Peers []PeerSel
	Ports []networkingv1.NetworkPolicyPort
	// Bits are the classes some peer matches.
	Bits Bitset
	// Reason is "allowed by …".
	Reason int32
}

type PeerSel struct {
	IpBlock *networkingv1.IPBlock
	// NsSel nil: the policy's namespace; podSel nil: every pod.
	NsSel, PodSel labels.Selector
	Invalid       bool
}

// Policies compiles the NetworkPolicies and resolves their peers over the
// classes.
type Policies struct {
	ByNS     map[string][]*Npol
	NsLabels map[string]labels.Set
	// Workloads are the pods selectors can match (not host-networked,
	// not finished, with an address), by address.
	Workloads map[netip.Addr]*corev1.Pod
}

func CompileSelector(s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, false
	}
	return sel, true
}

func (an *Prep) CompilePolicies() {
	ps := &Policies{ByNS: map[string][]*Npol{}, NsLabels: map[string]labels.Set{}, Workloads: make(map[netip.Addr]*corev1.Pod, len(an.C.Pods))}
	for _, ns := range an.C.Namespaces {
		l := labels.Set{}
		for k, v := range ns.Labels {
			l[k] = v
		}
		l[corev1.LabelMetadataName] = ns.Name
		ps.NsLabels[ns.Name] = l
	}
	for _, p := range an.C.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		ips := []string{p.Status.PodIP}
		if len(p.Status.PodIPs) > 0 {
			ips = ips[:0]
			for _, x := range p.Status.PodIPs {
				ips = append(ips, x.IP)
			}
		}
		for _, s := range ips {
			if a, err := netip.ParseAddr(s); err == nil {
				ps.Workloads[a] = p
			}
		}
	}
	for _, np := range an.C.NetworkPolicies {
		p := &Npol{Name: np.Namespace + "/" + np.Name, NS: np.Namespace}
		if sel, ok := CompileSelector(&np.Spec.PodSelector); ok {
			p.Sel = sel
		}
		for _, t := range policy.PolicyTypes(np) {
			switch t {
			case policy.Ingress:
				p.In = true
			case policy.Egress:
				p.Eg = true
			}
		}
		for i, r := range np.Spec.Ingress {
			p.InRules = append(p.InRules, CompileRule(p, false, i, r.From, r.Ports))
		}
		for i, r := range np.Spec.Egress {
			p.EgRules = append(p.EgRules, CompileRule(p, true, i, r.To, r.Ports))
		}
		ps.ByNS[np.Namespace] = append(ps.ByNS[np.Namespace], p)
	}
	for ns := range ps.ByNS {
		l := ps.ByNS[ns]
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
	}
	an.Pol = ps
}

func CompileRule(p *Npol, egress bool, i int, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) *Rule {
	r := &Rule{Pol: p, Egress: egress, Index: i, All: len(peers) == 0, Ports: ports}
	for _, pr := range peers {
		var s PeerSel
		switch {
		case pr.IPBlock != nil:
			s.IpBlock = pr.IPBlock
		default:
			if pr.NamespaceSelector != nil {
				sel, ok := CompileSelector(pr.NamespaceSelector)
				s.NsSel, s.Invalid = sel, !ok
			}
			if pr.PodSelector != nil {
				sel, ok := CompileSelector(pr.PodSelector)
				s.PodSel = sel
				s.Invalid = s.Invalid || !ok
			}
		}
		r.Peers = append(r.Peers, s)
	}
	return r
}

func (ps *Policies) NamespaceLabels(ns string) labels.Set {
	if l, ok := ps.NsLabels[ns]; ok {
		return l
	}
	return labels.Set{corev1.LabelMetadataName: ns}
}

// MatchesPod reports whether a peer matches a workload.
func (ps *Policies) MatchesPod(s *PeerSel, policyNS, ns string, l map[string]string, ip netip.Addr) bool {
	if s.IpBlock != nil {
		return policy.IPBlockMatches(s.IpBlock, ip)
	}
	if s.Invalid {
		return false
	}
	if s.NsSel == nil {
		if ns != policyNS {
			return false
		}
	} else if !s.NsSel.Matches(ps.NamespaceLabels(ns)) {
		return false
	}
	return s.PodSel == nil || s.PodSel.Matches(labels.Set(l))
}

// MatchesIP reports whether a peer matches an address.
func (ps *Policies) MatchesIP(s *PeerSel, policyNS string, ip netip.Addr) bool {
	if s.IpBlock != nil {
		return policy.IPBlockMatches(s.IpBlock, ip)
	}
	p := ps.Workloads[ip]
	if p == nil {
		return false
	}
	return ps.MatchesPod(s, policyNS, p.Namespace, p.Labels, ip)
}

// FelixTiers reads the Felix calculation for class c's representative:
// the tiers of policies applying per direction, and whether a
// projectcalico.org policy is among them (its side of a connection is then
// Felix's decision, not the Kubernetes evaluator's).
func (an *Prep) FelixTiers(c *Class) {
	c.FEP, c.FIn, c.FOut, c.CalicoIn, c.CalicoOut = nil, nil, nil, false, false
	if !an.HasCalico && c.OS != "windows" {
		return
	}
	fc := an.E.Felix()
	c.FEP = fc.EndpointOf(c.Rep)
	cands := fc.Candidates(c.NS)
	c.FIn, c.FOut = fc.ActiveAmong(c.FEP, cands, true), fc.ActiveAmong(c.FEP, cands, false)
	c.CalicoIn, c.CalicoOut = CalicoIn(c.FIn), CalicoIn(c.FOut)
}

func CalicoIn(tiers []felix.Tier) bool {
	for _, t := range tiers {
		for _, p := range t.Policies {
			if p.Kind != felix.KindKubernetes {
				return true
			}
		}
	}
	return false
}

// WindowsMayDiffer reports whether Felix's HNS ACLs on class c's pods may
// decide a direction otherwise than Kubernetes semantics: a Calico policy
// applies to them, or a policy that does has a rule Felix on Windows does
// not program (windows.WindowsSkip, the compiler's own test).
func (an *Prep) WindowsMayDiffer(c *Class, egress bool) bool {
	tiers, calico := c.FIn, c.CalicoIn
	if egress {
		tiers, calico = c.FOut, c.CalicoOut
	}
	if calico {
		return true
	}
	for _, t := range tiers {
		for _, p := range t.Policies {
			rules := p.In
			if egress {
				rules = p.Out
			}
			for i := range rules {
				if windows.WindowsSkip(&rules[i]) != "" {
					return true
				}
			}
		}
	}
	return false
}

// resolve selects the policies of every class and each rule's classes.
func (an *Prep) ResolvePolicies() {
	ps := an.Pol
	byNS := map[string][]*Class{}
	for _, c := range an.Classes {
		byNS[c.NS] = append(byNS[c.NS], c)
		c.InPols, c.EgPols = nil, nil
		for _, p := range ps.ByNS[c.NS] {
			if p.Sel == nil || !p.Sel.Matches(labels.Set(c.Labels)) {
				continue
			}
			if p.In {
				c.InPols = append(c.InPols, p)
			}
			if p.Eg {
				c.EgPols = append(c.EgPols, p)
			}
		}
		an.FelixTiers(c)
		if c.OS == "windows" {
			c.ACLIn, c.ACLOut = an.WindowsMayDiffer(c, false), an.WindowsMayDiffer(c, true)
		}
	}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, list := range ps.ByNS {
		for _, p := range list {
			for _, r := range append(append([]*Rule(nil), p.InRules...), p.EgRules...) {
				r.Bits = NewBitset(len(an.Classes))
				if r.All {
					for _, c := range an.Classes {
						r.Bits.Set(c.ID)
					}
					continue
				}
				for i := range r.Peers {
					s := &r.Peers[i]
					var cands []*Class
					switch {
					case s.IpBlock != nil:
						cands = an.Classes
					case s.Invalid:
					case s.NsSel == nil:
						cands = byNS[p.NS]
					default:
						for _, ns := range nss {
							if s.NsSel.Matches(ps.NamespaceLabels(ns)) {
								cands = append(cands, byNS[ns]...)
							}
						}
					}
					for _, c := range cands {
						if !r.Bits.Has(c.ID) && ps.MatchesPod(s, p.NS, c.NS, c.Labels, c.RepIP) {
							r.Bits.Set(c.ID)
						}
					}
				}
			}
		}
	}
}

// PortsMatch: an empty list matches every protocol and port.
func PortsMatch(ports []networkingv1.NetworkPolicyPort, proto string, port int32, dstPod *corev1.Pod) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if policy.PortMatches(p, proto, port, dstPod) {
			return true
		}
	}
	return false
}

// Peer is the other end of a connection for a policy decision: a class
// (by its representative address) or an address.
type Peer struct {
	Cls *Class
	IP  netip.Addr
}

func (ps *Policies) RuleMatches(r *Rule, p Peer) bool {
	if r.All {
		return true
	}
	if p.Cls != nil {
		return r.Bits.Has(p.Cls.ID)
	}
	for i := range r.Peers {
		if ps.MatchesIP(&r.Peers[i], r.Pol.NS, p.IP) {
			return true
		}
	}
	return false
}

// Ingress decides a new connection into class c from p: allowed, and the
// rule that allowed it (nil when c is not isolated for ingress).
func (ps *Policies) Ingress(c *Class, p Peer, proto string, port int32) (bool, *Rule) {
	for _, pol := range c.InPols {
		for _, r := range pol.InRules {
			if ps.RuleMatches(r, p) && PortsMatch(r.Ports, proto, port, c.Rep) {
				return true, r
			}
		}
	}
	return len(c.InPols) == 0, nil
}

// Egress decides a new connection from class c to p (dstPod names the
// destination's named ports; nil for an address that is no pod).
func (ps *Policies) Egress(c *Class, p Peer, proto string, port int32) (bool, *Rule) {
	var dstPod *corev1.Pod
	if p.Cls != nil {
		dstPod = p.Cls.Rep
	} else {
		dstPod = ps.Workloads[p.IP]
	}
	for _, pol := range c.EgPols {
		for _, r := range pol.EgRules {
			if ps.RuleMatches(r, p) && PortsMatch(r.Ports, proto, port, dstPod) {
				return true, r
			}
		}
	}
	return len(c.EgPols) == 0, nil
}

func PolNames(ps []*Npol) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func (r *Rule) String() string {
	dir := "ingress"
	if r.Egress {
		dir = "egress"
	}
	return fmt.Sprintf("NetworkPolicy %s %s rule %d", r.Pol.Name, dir, r.Index)
}
