package linux

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/nft"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// calicoCluster is what every node's simplified Calico table shares.
type calicoCluster struct {
	cc       *clusterCtx
	allPools []netip.Prefix
	masq     []netip.Prefix
	nftables bool
}

// calicoNode is one node's Calico view.
type calicoNode struct {
	cal   *calicoCluster
	node  *nodeInfo
	notes []string
}

func newCalicoCluster(cc *clusterCtx) *calicoCluster {
	k := &calicoCluster{cc: cc, nftables: readNftables(cc.c)}
	for _, p := range cc.pools {
		k.allPools = append(k.allPools, p.cidr)
		if p.natOutgoing {
			k.masq = append(k.masq, p.cidr)
		}
	}
	return k
}

func (k *calicoCluster) forNode(ni *nodeInfo, n *Node) *calicoNode {
	if !k.nftables {
		n.note(areaCalico, "Calico's Linux dataplane is not Nftables: Felix programs iptables, which nft list does not show as table ip calico")
		return nil
	}
	return &calicoNode{cal: k, node: ni}
}

// PolicyAllows reports whether Calico on this node lets a new connection
// through for pod (felix.Calc.Decide, over the calculation the node's
// Calico table renders): port is the destination port, srcPort the
// source's (0 when unknown).
func (n *Node) PolicyAllows(pod *corev1.Pod, dir Direction, peerIP netip.Addr, proto string, port, srcPort int32) (bool, string) {
	d := n.PolicyDecide(pod, dir, felix.Flow{Peer: peerIP, Proto: proto, DstPort: port, SrcPort: srcPort})
	return d.Allowed, d.Reason
}

// PolicyDecide is Felix's decision for one direction of a new connection
// of pod (felix.Calc.Decide), from the calculation the node's Calico table
// is rendered from.
func (n *Node) PolicyDecide(pod *corev1.Pod, dir Direction, f felix.Flow) felix.Decision {
	if n.calc == nil || n.calc() == nil {
		return felix.Decision{Allowed: true, Reason: "no Felix calculation"}
	}
	return n.calc().Decide(pod, dir == Ingress, f)
}

// table is a simplified "table ip calico": Felix's real table holds many
// more chains (raw, mangle, failsafes, host endpoints, ...) and matches
// selectors through IP sets; this view keeps what decides pod traffic:
// the workload dispatch from the forward and input hooks, one chain per
// workload and direction with the policies' rules resolved to today's
// member addresses (tiers as chains of their own, a Pass as a return to
// the next tier; host endpoints are not modeled), and the natOutgoing
// masquerade (felix/rules: cali-to-wl-dispatch, cali-wl-to-host,
// cali-tw-<iface>, cali-fw-<iface>, cali-nat-outgoing; nftables table
// "calico", chains named "<table>-<chain>").
func (cn *calicoNode) table(calcOf func() *felix.Calc) (*nft.Table, []string) {
	calc := calcOf()
	k := cn.cal
	var notes []string
	t := &nft.Table{Family: "ip", Name: "calico", Comment: "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"}
	if calc.HasCalicoPolicies() {
		t.Comment += "; workload endpoints only, Calico HostEndpoints are not modeled"
	}
	if len(k.allPools) > 0 {
		all := &nft.Set{Name: "cali40all-ipam-pools", KeyType: "ipv4_addr", Flags: []string{"interval"}}
		for _, p := range k.allPools {
			all.Add(nft.Elem{Key: p.String(), SortKey: nft.KeyAddr(p.Addr())})
		}
		t.Sets = append(t.Sets, all)
	}
	if len(k.masq) > 0 {
		m := &nft.Set{Name: "cali40masq-ipam-pools", KeyType: "ipv4_addr", Flags: []string{"interval"}}
		for _, p := range k.masq {
			m.Add(nft.Elem{Key: p.String(), SortKey: nft.KeyAddr(p.Addr())})
		}
		t.Sets = append(t.Sets, m)
	}
	// Policy allows by setting the accept mark and returning, so that a
	// packet between two pods of this node passes the source's egress
	// policy, then the destination's ingress policy, and is accepted at the
	// end of cali-FORWARD (felix/rules/static.go filterForwardChain,
	// felix/rules/endpoints.go). A pod's traffic to this node goes through
	// its egress policy from the input hook, then
	// DefaultEndpointToHostAction, which the operator sets to Accept
	// (felix/rules/static.go filterInputChain, filterWorkloadToHostChain).
	fwd := &nft.Chain{Name: "filter-FORWARD", Type: "filter", Hook: "forward", Priority: nft.Priority("forward", 0)}
	fwd.Rules = []string{"jump filter-cali-FORWARD"}
	calFwd := &nft.Chain{Name: "filter-cali-FORWARD"}
	in := &nft.Chain{Name: "filter-INPUT", Type: "filter", Hook: "input", Priority: nft.Priority("input", 0)}
	in.Rules = []string{"jump filter-cali-INPUT"}
	calIn := &nft.Chain{Name: "filter-cali-INPUT"}
	t.Chains = append(t.Chains, fwd, calFwd, in, calIn)
	pods := cn.node.pods
	if len(pods) > 0 {
		calFwd.Rules = append(calFwd.Rules, "iifname \"cali*\" jump filter-cali-from-wl-dispatch", "oifname \"cali*\" jump filter-cali-to-wl-dispatch")
		calIn.Rules = append(calIn.Rules, "iifname \"cali*\" goto filter-cali-wl-to-host")
		t.Chains = append(t.Chains, &nft.Chain{Name: "filter-cali-wl-to-host", Rules: []string{"jump filter-cali-from-wl-dispatch",
			fmt.Sprintf("accept comment %q", "Configured DefaultEndpointToHostAction")}})
		var from, to []string
		// A policy's rule side is matched the same way in the chain of
		// every workload on this node it selects: each IP set's members
		// are listed once.
		sets := memberLists{}
		names := make([]string, len(pods))
		for i, p := range pods {
			names[i] = VethName(p.Namespace, p.Name)
		}
		order := make([]int, len(pods))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
		for _, i := range order {
			from = append(from, fmt.Sprintf("%q : goto filter-cali-fw-%s", names[i], names[i]))
			to = append(to, fmt.Sprintf("%q : goto filter-cali-tw-%s", names[i], names[i]))
		}
		t.Chains = append(t.Chains,
			&nft.Chain{Name: "filter-cali-from-wl-dispatch", Rules: []string{"iifname vmap { " + strings.Join(from, ", ") + " }"}},
			&nft.Chain{Name: "filter-cali-to-wl-dispatch", Rules: []string{"oifname vmap { " + strings.Join(to, ", ") + " }"}})
		for i, p := range pods {
			tw, n1 := cn.workloadChain("filter-cali-tw-"+names[i], p, Ingress, calc, sets)
			fw, n2 := cn.workloadChain("filter-cali-fw-"+names[i], p, Egress, calc, sets)
			notes = append(notes, n1...)
			notes = append(notes, n2...)
			t.Chains = append(t.Chains, tw...)
			t.Chains = append(t.Chains, fw...)
		}
	}
	calFwd.Rules = append(calFwd.Rules, nftMarkAccepted+" accept comment \"Policy explicitly accepted packet.\"")
	post := &nft.Chain{Name: "nat-POSTROUTING", Type: "nat", Hook: "postrouting", Priority: nft.Priority("postrouting", 100)}
	t.Chains = append(t.Chains, post)
	if len(k.masq) > 0 {
		post.Rules = []string{"jump nat-cali-nat-outgoing"}
		t.Chains = append(t.Chains, &nft.Chain{Name: "nat-cali-nat-outgoing",
			Rules: []string{"ip saddr @cali40masq-ipam-pools ip daddr != @cali40all-ipam-pools masquerade fully-random"}})
	}
	return t, notes
}

// Felix's accept mark bit (felix/config: the first bit of
// IptablesMarkMask, 0x10000 by default) as nft list prints its uses: an
// endpoint chain clears it, an allow sets it and returns, cali-FORWARD
// accepts what carries it (felix/rules/endpoints.go, static.go).
const (
	nftClearAccept  = "meta mark set meta mark & 0xfffeffff"
	nftAllow        = "meta mark set meta mark | 0x00010000 return"
	nftMarkAccepted = "meta mark & 0x00010000 == 0x00010000"
)

// workloadChain renders one workload's policy for one direction: the
// Kubernetes NetworkPolicies' rules as before when only they apply, else
// one chain per tier (felix/rules/endpoints.go: start of tier, policies in
// order, end of tier drop) and the profile after the tiers.
func (cn *calicoNode) workloadChain(name string, pod *corev1.Pod, dir Direction, calc *felix.Calc, sets memberLists) ([]*nft.Chain, []string) {
	c := &nft.Chain{Name: name, Rules: []string{"ct state established,related accept", "ct state invalid drop", nftClearAccept}}
	ep := calc.EndpointOf(pod)
	tiers := calc.Active(ep, dir == Ingress)
	profile := fmt.Sprintf("%s comment %q", nftAllow, "profile kns."+pod.Namespace+": no NetworkPolicy selects the pod")
	if len(tiers) == 0 {
		c.Rules = append(c.Rules, profile)
		return []*nft.Chain{c}, nil
	}
	if len(tiers) == 1 && kubernetesOnly(tiers[0]) {
		notes := cn.kubernetesRules(c, name, tiers[0].Policies, pod, dir, calc, sets)
		c.Rules = append(c.Rules, fmt.Sprintf("drop comment %q", "no NetworkPolicy rule allowed the packet"))
		return []*nft.Chain{c}, notes
	}
	out := []*nft.Chain{c}
	var notes []string
	for _, t := range tiers {
		tc := &nft.Chain{Name: name + "-tier-" + t.Name}
		c.Rules = append(c.Rules, fmt.Sprintf("jump %s comment %q", tc.Name, "tier "+t.Name),
			fmt.Sprintf("%s return comment %q", nftMarkAccepted, "Return if policy accepted"))
		for _, p := range t.Policies {
			if p.Kind == felix.KindKubernetes {
				notes = append(notes, cn.kubernetesRules(tc, name, []*felix.Policy{p}, pod, dir, calc, sets)...)
				continue
			}
			rules := p.Out
			if dir == Ingress {
				rules = p.In
			}
			for i := range rules {
				line, why := cn.calicoRule(p, &rules[i], ep, dir, calc, sets)
				if why != "" {
					notes = append(notes, fmt.Sprintf("%s: %s %s rule %d %s; not rendered", name, p.Display(), strings.ToLower(string(dir)), rules[i].Index, why))
					continue
				}
				tc.Rules = append(tc.Rules, line)
			}
		}
		tc.Rules = append(tc.Rules, fmt.Sprintf("drop comment %q", "end of tier "+t.Name+": no policy allowed or passed the packet"))
		out = append(out, tc)
	}
	c.Rules = append(c.Rules, fmt.Sprintf("%s comment %q", nftAllow, "profile kns."+pod.Namespace+": every tier passed the packet"))
	return out, notes
}

func kubernetesOnly(t felix.Tier) bool {
	for _, p := range t.Policies {
		if p.Kind != felix.KindKubernetes {
			return false
		}
	}
	return true
}

// kubernetesRules renders Kubernetes NetworkPolicies' rules (each peer and
// port of a rule as a line, allowing by the accept mark) into c.
func (cn *calicoNode) kubernetesRules(c *nft.Chain, name string, pols []*felix.Policy, pod *corev1.Pod, dir Direction, calc *felix.Calc, sets memberLists) []string {
	var notes []string
	peerDir, portDir := "saddr", "dport"
	if dir == Egress {
		peerDir = "daddr"
	}
	for _, fp := range pols {
		p := fp.K8s
		rules := p.Spec.Ingress
		peersOf := func(i int) []networkingv1.NetworkPolicyPeer { return rules[i].From }
		portsOf := func(i int) []networkingv1.NetworkPolicyPort { return rules[i].Ports }
		n := len(rules)
		if dir == Egress {
			peersOf = func(i int) []networkingv1.NetworkPolicyPeer { return p.Spec.Egress[i].To }
			portsOf = func(i int) []networkingv1.NetworkPolicyPort { return p.Spec.Egress[i].Ports }
			n = len(p.Spec.Egress)
		}
		for i := 0; i < n; i++ {
			comment := fmt.Sprintf("knp.default.%s/%s %s rule %d", p.Namespace, p.Name, strings.ToLower(string(dir)), i)
			peers := []string{""}
			if ps := peersOf(i); len(ps) > 0 {
				peers = nil
				for _, pr := range ps {
					m, ok := peerMatch(fp, pr, peerDir, calc, sets)
					if !ok {
						notes = append(notes, fmt.Sprintf("%s: %s matches no address today; not rendered", name, comment))
						continue
					}
					peers = append(peers, m)
				}
			}
			ports := []string{""}
			var named []networkingv1.NetworkPolicyPort
			if pp := portsOf(i); len(pp) > 0 {
				ports = nil
				for _, np := range pp {
					if dir == Egress && np.Port != nil && np.Port.Type == intstr.String {
						named = append(named, np)
						continue
					}
					m, ok := portMatchNFT(np, portDir, pod, dir)
					if !ok {
						notes = append(notes, fmt.Sprintf("%s: %s has a port the view cannot express (named egress port)", name, comment))
						continue
					}
					ports = append(ports, m)
				}
			}
			if len(ports) > 0 {
				for _, pm := range peers {
					for _, po := range ports {
						c.Rules = append(c.Rules, strings.TrimSpace(strings.Join(nonEmpty(pm, po), " ")+fmt.Sprintf(" %s comment %q", nftAllow, comment)))
					}
				}
			}
			for _, np := range named {
				line, ok := namedEgressPort(fp, peersOf(i), np, calc)
				if !ok {
					notes = append(notes, fmt.Sprintf("%s: %s: named port %s matches no address today; not rendered", name, comment, np.Port.StrVal))
					continue
				}
				c.Rules = append(c.Rules, line+fmt.Sprintf(" %s comment %q", nftAllow, comment))
			}
		}
	}
	return notes
}

// calicoRule renders one rule of a Calico policy as nft matches on today's
// IP set members and a verdict: Allow sets the accept mark and returns,
// Deny drops, Pass returns to the endpoint chain (the next tier), Log
// logs. why is set when the view cannot express the rule.
func (cn *calicoNode) calicoRule(p *felix.Policy, r *felix.Rule, ep *felix.Endpoint, dir Direction, calc *felix.Calc, sets memberLists) (string, string) {
	if r.IPVersion == 6 {
		return "", "is for IPv6 (this table is IPv4)"
	}
	var m []string
	l4 := ""
	if r.Protocol != nil {
		l4 = nftProto(*r.Protocol)
		m = append(m, "meta l4proto "+l4)
	}
	if r.NotProtocol != nil {
		m = append(m, "meta l4proto != "+nftProto(*r.NotProtocol))
	}
	if r.ICMP != nil {
		m = append(m, icmpMatch(r.ICMP, "")...)
	}
	if r.NotICMP != nil {
		m = append(m, icmpMatch(r.NotICMP, "!= ")...)
	}
	for _, side := range []struct {
		e     felix.Entity
		field string
		port  string
		local bool
	}{{r.Src, "saddr", "sport", dir == Egress}, {r.Dst, "daddr", "dport", dir == Ingress}} {
		e := side.e
		if nets := v4Prefixes(e.Nets); len(e.Nets) > 0 {
			if len(nets) == 0 {
				return "", "has only IPv6 nets"
			}
			m = append(m, fmt.Sprintf("ip %s %s", side.field, nft.PrefixList(nets)))
		}
		if nets := v4Prefixes(e.NotNets); len(nets) > 0 {
			m = append(m, fmt.Sprintf("ip %s != %s", side.field, nft.PrefixList(nets)))
		}
		if e.HasSelector() {
			list, ok := sets.list(p, e, calc)
			if !ok {
				return "", "has a selector that does not parse"
			}
			if list == "" {
				return "", "matches no address today"
			}
			m = append(m, "ip "+side.field+" "+list)
		}
		if e.NotSelector != "" {
			list, ok := sets.list(p, felix.Entity{Selector: e.NotSelector, NamespaceSelector: e.NamespaceSelector}, calc)
			if !ok {
				return "", "has a notSelector that does not parse"
			}
			if list != "" {
				m = append(m, "ip "+side.field+" != "+list)
			}
		}
		proto := l4
		if proto == "" {
			proto = "th"
		}
		for _, ports := range []struct {
			list []intstr.IntOrString
			neg  string
		}{{e.Ports, ""}, {e.NotPorts, "!= "}} {
			if len(ports.list) == 0 {
				continue
			}
			var s []string
			for _, pt := range ports.list {
				v, ok := calicoPort(pt, side.local, ep, l4)
				if !ok {
					return "", "has a named port the view cannot resolve"
				}
				s = append(s, v)
			}
			m = append(m, fmt.Sprintf("%s %s %s%s", proto, side.port, ports.neg, nftList(s)))
		}
	}
	verdict := map[string]string{"": nftAllow, felix.ActionAllow: nftAllow, felix.ActionDeny: "drop", felix.ActionPass: "return", "next-tier": "return",
		felix.ActionLog: "log prefix \"calico-packet: \""}[r.Action]
	if verdict == "" {
		return "", "has an unknown action " + r.Action
	}
	comment := fmt.Sprintf("%s %s %s rule %d", strings.TrimPrefix(p.ID, "policy-"), r.Action, strings.ToLower(string(dir)), r.Index)
	return strings.TrimSpace(strings.Join(m, " ")+" "+verdict) + fmt.Sprintf(" comment %q", comment), ""
}

func members(p *felix.Policy, e felix.Entity, calc *felix.Calc) ([]netip.Prefix, bool) {
	idx, ok := calc.Members(p, e)
	if !ok {
		return nil, false
	}
	var out []netip.Prefix
	for _, i := range idx {
		for _, a := range calc.Endpoints[i].Addrs {
			if a.Is4() {
				out = append(out, netip.PrefixFrom(a, 32))
			}
		}
	}
	return out, true
}

func nftProto(p intstr.IntOrString) string {
	if p.Type == intstr.Int {
		return fmt.Sprint(p.IntVal)
	}
	return strings.ToLower(p.StrVal)
}

func icmpMatch(f *calicoapi.ICMPFields, neg string) []string {
	var out []string
	if f.Type != nil {
		out = append(out, fmt.Sprintf("icmp type %s%d", neg, *f.Type))
	}
	if f.Code != nil {
		out = append(out, fmt.Sprintf("icmp code %s%d", neg, *f.Code))
	}
	return out
}

func v4Prefixes(nets []string) []netip.Prefix {
	var out []netip.Prefix
	for _, n := range nets {
		if p, err := netip.ParsePrefix(n); err == nil && p.Addr().Is4() {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(n); err == nil && a.Is4() {
			out = append(out, netip.PrefixFrom(a, 32))
		}
	}
	return out
}

func nftList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return "{ " + strings.Join(s, ", ") + " }"
}

// calicoPort is one Calico port as nft writes it: a number, lo-hi, or a
// named port resolved on the local endpoint (the only end whose container
// ports a per-endpoint chain knows).
func calicoPort(p intstr.IntOrString, local bool, ep *felix.Endpoint, proto string) (string, bool) {
	if p.Type == intstr.Int {
		return fmt.Sprint(p.IntVal), true
	}
	s := strings.ReplaceAll(p.StrVal, ":", "-")
	lo, hi, isRange := strings.Cut(s, "-")
	if _, err := strconv.Atoi(lo); err == nil {
		if !isRange {
			return lo, true
		}
		if _, err := strconv.Atoi(hi); err == nil {
			return s, true
		}
	}
	if !local || ep == nil || proto == "" {
		return "", false
	}
	if n := felix.NamedPort(ep.Pod, p.StrVal, corev1.Protocol(strings.ToUpper(proto))); n != 0 {
		return fmt.Sprint(n), true
	}
	return "", false
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// peerMatch renders a NetworkPolicy peer as an address match on today's
// members of its IP set (felix.Calc.Members of the converted peer).
func peerMatch(p *felix.Policy, pr networkingv1.NetworkPolicyPeer, field string, calc *felix.Calc, sets memberLists) (string, bool) {
	if pr.IPBlock != nil {
		cidr, err := netip.ParsePrefix(pr.IPBlock.CIDR)
		if err != nil {
			return "", false
		}
		s := fmt.Sprintf("ip %s %s", field, nft.PrefixList([]netip.Prefix{cidr.Masked()}))
		var ex []netip.Prefix
		for _, e := range pr.IPBlock.Except {
			if p, err := netip.ParsePrefix(e); err == nil {
				ex = append(ex, p.Masked())
			}
		}
		if len(ex) > 0 {
			s += fmt.Sprintf(" ip %s != %s", field, nft.PrefixList(ex))
		}
		return s, true
	}
	list, _ := sets.list(p, felix.PeerEntity(pr), calc)
	if list == "" {
		return "", false
	}
	return "ip " + field + " " + list, true
}

// memberLists are IP sets' members as nft lists them, by the set's key
// (felix.KeyOf).
type memberLists map[felix.MemberKey]memberList

type memberList struct {
	list string // "" for a set with no IPv4 member
	ok   bool   // false when a selector does not parse
}

func (m memberLists) list(p *felix.Policy, e felix.Entity, calc *felix.Calc) (string, bool) {
	k := felix.KeyOf(p, e)
	if l, ok := m[k]; ok {
		return l.list, l.ok
	}
	members, ok := members(p, e, calc)
	l := memberList{ok: ok}
	if len(members) > 0 {
		l.list = nft.PrefixList(members)
	}
	m[k] = l
	return l.list, l.ok
}

// namedEgressPort renders a named port of an egress rule as Felix's
// named-port IP set: every (address, port) of the endpoints the rule's
// peers match whose container port of that name and protocol exists,
// matched as a concatenation of destination address and port.
func namedEgressPort(fp *felix.Policy, peers []networkingv1.NetworkPolicyPeer, np networkingv1.NetworkPolicyPort, calc *felix.Calc) (string, bool) {
	proto := corev1.ProtocolTCP
	if np.Protocol != nil {
		proto = *np.Protocol
	}
	seen := map[int]bool{}
	var idx []int
	if len(peers) == 0 {
		for i := range calc.Endpoints {
			idx = append(idx, i)
		}
	}
	for _, pr := range peers {
		var m []int
		if pr.IPBlock != nil {
			e := felix.PeerEntity(pr)
			for i := range calc.Endpoints {
				if felix.InNets(e.Nets, calc.Endpoints[i].Addr) && !felix.InNets(e.NotNets, calc.Endpoints[i].Addr) {
					m = append(m, i)
				}
			}
		} else {
			m, _ = calc.Members(fp, felix.PeerEntity(pr))
		}
		for _, i := range m {
			if !seen[i] {
				seen[i] = true
				idx = append(idx, i)
			}
		}
	}
	sort.Ints(idx)
	var elems []string
	for _, i := range idx {
		ep := &calc.Endpoints[i]
		n := felix.NamedPort(ep.Pod, np.Port.StrVal, proto)
		if n == 0 {
			continue
		}
		for _, a := range ep.Addrs {
			if a.Is4() {
				elems = append(elems, fmt.Sprintf("%s . %d", a, n))
			}
		}
	}
	if len(elems) == 0 {
		return "", false
	}
	return fmt.Sprintf("ip daddr . %s dport { %s }", strings.ToLower(string(proto)), strings.Join(elems, ", ")), true
}

// portMatchNFT renders a NetworkPolicyPort as nft prints the match.
func portMatchNFT(np networkingv1.NetworkPolicyPort, field string, pod *corev1.Pod, dir Direction) (string, bool) {
	proto := corev1.ProtocolTCP
	if np.Protocol != nil {
		proto = *np.Protocol
	}
	l4 := strings.ToLower(string(proto))
	if np.Port == nil {
		return "meta l4proto " + l4, true
	}
	if np.Port.Type == intstr.Int {
		if np.EndPort != nil && *np.EndPort != np.Port.IntVal {
			return fmt.Sprintf("%s %s %d-%d", l4, field, np.Port.IntVal, *np.EndPort), true
		}
		return fmt.Sprintf("%s %s %d", l4, field, np.Port.IntVal), true
	}
	if dir == Egress {
		return "", false
	}
	if n := felix.NamedPort(pod, np.Port.StrVal, proto); n != 0 {
		return fmt.Sprintf("%s %s %d", l4, field, n), true
	}
	return "", false
}

// PeerInputs is a hash of what every node's Felix table reads of pods
// that are not its own: for every policy rule peer the table resolves
// through the calculation (a rule's selector and notSelector, a
// NetworkPolicy peer; every endpoint for a named egress port whose rule
// has no peer or an ipBlock peer), the members' addresses and container
// ports, in member order. The rest a node's table reads is its own pods,
// the policy, namespace and service account objects and Settings.Policy:
// a caller comparing two twins (internal/diff) renders a node's table
// again only when one of those or this differs.
func PeerInputs(calc *felix.Calc) uint64 {
	facts := make([]uint64, len(calc.Endpoints))
	for i := range calc.Endpoints {
		facts[i] = endpointFacts(&calc.Endpoints[i])
	}
	var h uint64 = fnvOffset
	fold := func(v uint64) { h = (h ^ v) * fnvPrime }
	set := func(tag uint64, idx []int, ok bool) {
		fold(tag)
		if !ok {
			fold(^uint64(0))
		}
		fold(uint64(len(idx)))
		for _, i := range idx {
			fold(facts[i])
		}
	}
	all := func() []int {
		idx := make([]int, len(calc.Endpoints))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	for pi, p := range calc.Policies {
		fold(uint64(pi))
		for _, rules := range [][]felix.Rule{p.In, p.Out} {
			for _, r := range rules {
				for _, e := range []felix.Entity{r.Src, r.Dst} {
					if e.HasSelector() {
						m, ok := calc.Members(p, e)
						set(1, m, ok)
					}
					if e.NotSelector != "" {
						m, ok := calc.Members(p, felix.Entity{Selector: e.NotSelector, NamespaceSelector: e.NamespaceSelector})
						set(2, m, ok)
					}
				}
			}
		}
		np := p.K8s
		if np == nil {
			continue
		}
		for _, r := range np.Spec.Ingress {
			for _, pr := range r.From {
				m, ok := calc.Members(p, felix.PeerEntity(pr))
				set(3, m, ok)
			}
		}
		for _, r := range np.Spec.Egress {
			named, wide := false, len(r.To) == 0
			for _, pt := range r.Ports {
				named = named || pt.Port != nil && pt.Port.Type == intstr.String
			}
			for _, pr := range r.To {
				wide = wide || pr.IPBlock != nil
				m, ok := calc.Members(p, felix.PeerEntity(pr))
				set(4, m, ok)
			}
			if named && wide {
				set(5, all(), true)
			}
		}
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// endpointFacts hashes what a table reads of an endpoint it does not own:
// its addresses and its containers' ports (named ports resolve on them).
func endpointFacts(ep *felix.Endpoint) uint64 {
	var h uint64 = fnvOffset
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * fnvPrime
		}
		h = (h ^ 0xff) * fnvPrime
	}
	for _, a := range ep.Addrs {
		str(a.String())
	}
	str("|")
	if ep.Pod != nil {
		for _, cs := range [][]corev1.Container{ep.Pod.Spec.Containers, ep.Pod.Spec.InitContainers} {
			for _, c := range cs {
				for _, cp := range c.Ports {
					str(cp.Name)
					str(string(cp.Protocol))
					str(strconv.Itoa(int(cp.ContainerPort)))
				}
			}
		}
	}
	return h
}
