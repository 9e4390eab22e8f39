package reach

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

type calicoRule = calico.Rule

// The class-level NetworkPolicy evaluator: the Felix calculation's
// semantics for Kubernetes NetworkPolicies (internal/felix; the tests
// compare every class pair with felix.Calc.Decide) with selectors compiled once and every peer of every
// rule resolved to the set of classes it matches, so that a class pair is
// a few bit tests instead of a selector evaluation per pod pair.

// npol is one NetworkPolicy, compiled.
type npol struct {
	name    string // namespace/name
	ns      string
	sel     labels.Selector // nil: an invalid selector, which matches nothing
	in, eg  bool
	inRules []*rule
	egRules []*rule
}

// rule is one ingress or egress rule.
type rule struct {
	pol    *npol
	egress bool
	index  int
	// all: the rule has no peers and matches every address.
	all   bool
	peers []peerSel
	ports []networkingv1.NetworkPolicyPort
	// bits are the classes some peer matches.
	bits bitset
	// reason is "allowed by …".
	reason int32
}

type peerSel struct {
	ipBlock *networkingv1.IPBlock
	// nsSel nil: the policy's namespace; podSel nil: every pod.
	nsSel, podSel labels.Selector
	invalid       bool
}

// policies compiles the NetworkPolicies and resolves their peers over the
// classes.
type policies struct {
	byNS     map[string][]*npol
	nsLabels map[string]labels.Set
	// workloads are the pods selectors can match (not host-networked,
	// not finished, with an address), by address.
	workloads map[netip.Addr]*corev1.Pod
}

func compileSelector(s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, false
	}
	return sel, true
}

func (an *analyzer) compilePolicies() {
	ps := &policies{byNS: map[string][]*npol{}, nsLabels: map[string]labels.Set{}, workloads: map[netip.Addr]*corev1.Pod{}}
	for _, ns := range an.c.Namespaces {
		l := labels.Set{}
		for k, v := range ns.Labels {
			l[k] = v
		}
		l[corev1.LabelMetadataName] = ns.Name
		ps.nsLabels[ns.Name] = l
	}
	for _, p := range an.c.Pods {
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
				ps.workloads[a] = p
			}
		}
	}
	for _, np := range an.c.NetworkPolicies {
		p := &npol{name: np.Namespace + "/" + np.Name, ns: np.Namespace}
		if sel, ok := compileSelector(&np.Spec.PodSelector); ok {
			p.sel = sel
		}
		for _, t := range policy.PolicyTypes(np) {
			switch t {
			case policy.Ingress:
				p.in = true
			case policy.Egress:
				p.eg = true
			}
		}
		for i, r := range np.Spec.Ingress {
			p.inRules = append(p.inRules, compileRule(p, false, i, r.From, r.Ports))
		}
		for i, r := range np.Spec.Egress {
			p.egRules = append(p.egRules, compileRule(p, true, i, r.To, r.Ports))
		}
		ps.byNS[np.Namespace] = append(ps.byNS[np.Namespace], p)
	}
	for ns := range ps.byNS {
		l := ps.byNS[ns]
		sort.Slice(l, func(i, j int) bool { return l[i].name < l[j].name })
	}
	an.pol = ps
}

func compileRule(p *npol, egress bool, i int, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) *rule {
	r := &rule{pol: p, egress: egress, index: i, all: len(peers) == 0, ports: ports}
	for _, pr := range peers {
		var s peerSel
		switch {
		case pr.IPBlock != nil:
			s.ipBlock = pr.IPBlock
		default:
			if pr.NamespaceSelector != nil {
				sel, ok := compileSelector(pr.NamespaceSelector)
				s.nsSel, s.invalid = sel, !ok
			}
			if pr.PodSelector != nil {
				sel, ok := compileSelector(pr.PodSelector)
				s.podSel = sel
				s.invalid = s.invalid || !ok
			}
		}
		r.peers = append(r.peers, s)
	}
	return r
}

func (ps *policies) namespaceLabels(ns string) labels.Set {
	if l, ok := ps.nsLabels[ns]; ok {
		return l
	}
	return labels.Set{corev1.LabelMetadataName: ns}
}

// matchesPod reports whether a peer matches a workload.
func (ps *policies) matchesPod(s *peerSel, policyNS, ns string, l map[string]string, ip netip.Addr) bool {
	if s.ipBlock != nil {
		return policy.IPBlockMatches(s.ipBlock, ip)
	}
	if s.invalid {
		return false
	}
	if s.nsSel == nil {
		if ns != policyNS {
			return false
		}
	} else if !s.nsSel.Matches(ps.namespaceLabels(ns)) {
		return false
	}
	return s.podSel == nil || s.podSel.Matches(labels.Set(l))
}

// matchesIP reports whether a peer matches an address.
func (ps *policies) matchesIP(s *peerSel, policyNS string, ip netip.Addr) bool {
	if s.ipBlock != nil {
		return policy.IPBlockMatches(s.ipBlock, ip)
	}
	p := ps.workloads[ip]
	if p == nil {
		return false
	}
	return ps.matchesPod(s, policyNS, p.Namespace, p.Labels, ip)
}

// felixTiers reads the Felix calculation for class c's representative:
// the tiers of policies applying per direction, and whether a
// projectcalico.org policy is among them (its side of a connection is then
// Felix's decision, not the Kubernetes evaluator's).
func (an *analyzer) felixTiers(c *class) {
	c.fep, c.fIn, c.fOut, c.calicoIn, c.calicoOut = nil, nil, nil, false, false
	if !an.hasCalico && c.os != "windows" {
		return
	}
	fc := an.e.Felix()
	c.fep = fc.EndpointOf(c.rep)
	cands := fc.Candidates(c.ns)
	c.fIn, c.fOut = fc.ActiveAmong(c.fep, cands, true), fc.ActiveAmong(c.fep, cands, false)
	c.calicoIn, c.calicoOut = calicoIn(c.fIn), calicoIn(c.fOut)
}

func calicoIn(tiers []felix.Tier) bool {
	for _, t := range tiers {
		for _, p := range t.Policies {
			if p.Kind != felix.KindKubernetes {
				return true
			}
		}
	}
	return false
}

// windowsMayDiffer reports whether Felix's HNS ACLs on class c's pods may
// decide a direction otherwise than Kubernetes semantics: a Calico policy
// applies to them, or a policy that does has a rule Felix on Windows does
// not program (windows.WindowsSkip, the compiler's own test).
func (an *analyzer) windowsMayDiffer(c *class, egress bool) bool {
	tiers, calico := c.fIn, c.calicoIn
	if egress {
		tiers, calico = c.fOut, c.calicoOut
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
func (an *analyzer) resolvePolicies() {
	ps := an.pol
	byNS := map[string][]*class{}
	for _, c := range an.classes {
		byNS[c.ns] = append(byNS[c.ns], c)
		c.inPols, c.egPols = nil, nil
		for _, p := range ps.byNS[c.ns] {
			if p.sel == nil || !p.sel.Matches(labels.Set(c.labels)) {
				continue
			}
			if p.in {
				c.inPols = append(c.inPols, p)
			}
			if p.eg {
				c.egPols = append(c.egPols, p)
			}
		}
		an.felixTiers(c)
		if c.os == "windows" {
			c.aclIn, c.aclOut = an.windowsMayDiffer(c, false), an.windowsMayDiffer(c, true)
		}
	}
	nss := make([]string, 0, len(byNS))
	for ns := range byNS {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, list := range ps.byNS {
		for _, p := range list {
			for _, r := range append(append([]*rule(nil), p.inRules...), p.egRules...) {
				r.bits = newBitset(len(an.classes))
				if r.all {
					for _, c := range an.classes {
						r.bits.set(c.id)
					}
					continue
				}
				for i := range r.peers {
					s := &r.peers[i]
					var cands []*class
					switch {
					case s.ipBlock != nil:
						cands = an.classes
					case s.invalid:
					case s.nsSel == nil:
						cands = byNS[p.ns]
					default:
						for _, ns := range nss {
							if s.nsSel.Matches(ps.namespaceLabels(ns)) {
								cands = append(cands, byNS[ns]...)
							}
						}
					}
					for _, c := range cands {
						if !r.bits.has(c.id) && ps.matchesPod(s, p.ns, c.ns, c.labels, c.repIP) {
							r.bits.set(c.id)
						}
					}
				}
			}
		}
	}
}

// portsMatch: an empty list matches every protocol and port.
func portsMatch(ports []networkingv1.NetworkPolicyPort, proto string, port int32, dstPod *corev1.Pod) bool {
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

// peer is the other end of a connection for a policy decision: a class
// (by its representative address) or an address.
type peer struct {
	cls *class
	ip  netip.Addr
}

func (ps *policies) ruleMatches(r *rule, p peer) bool {
	if r.all {
		return true
	}
	if p.cls != nil {
		return r.bits.has(p.cls.id)
	}
	for i := range r.peers {
		if ps.matchesIP(&r.peers[i], r.pol.ns, p.ip) {
			return true
		}
	}
	return false
}

// ingress decides a new connection into class c from p: allowed, and the
// rule that allowed it (nil when c is not isolated for ingress).
func (ps *policies) ingress(c *class, p peer, proto string, port int32) (bool, *rule) {
	for _, pol := range c.inPols {
		for _, r := range pol.inRules {
			if ps.ruleMatches(r, p) && portsMatch(r.ports, proto, port, c.rep) {
				return true, r
			}
		}
	}
	return len(c.inPols) == 0, nil
}

// egress decides a new connection from class c to p (dstPod names the
// destination's named ports; nil for an address that is no pod).
func (ps *policies) egress(c *class, p peer, proto string, port int32) (bool, *rule) {
	var dstPod *corev1.Pod
	if p.cls != nil {
		dstPod = p.cls.rep
	} else {
		dstPod = ps.workloads[p.ip]
	}
	for _, pol := range c.egPols {
		for _, r := range pol.egRules {
			if ps.ruleMatches(r, p) && portsMatch(r.ports, proto, port, dstPod) {
				return true, r
			}
		}
	}
	return len(c.egPols) == 0, nil
}

func polNames(ps []*npol) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

func (r *rule) String() string {
	dir := "ingress"
	if r.egress {
		dir = "egress"
	}
	return fmt.Sprintf("NetworkPolicy %s %s rule %d", r.pol.name, dir, r.index)
}
