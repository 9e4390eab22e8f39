package linux

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// calicoCluster is what every node's simplified Calico table shares.
type calicoCluster struct {
	cc       *clusterCtx
	allPools []netip.Prefix
	masq     []netip.Prefix
	nftables bool
	// peers memoizes peerMatch: a selector peer's members are the same on
	// every node (Felix's IP sets are cluster-wide), and resolving them
	// reads every pod, so each node's table would pay it again.
	peersMu sync.Mutex
	peers   map[peerKey]peerMatchResult
}

// peerKey is a selector peer of one policy: its selectors by identity.
type peerKey struct {
	pol          *PolicyIndex
	ns, field    string
	pods, nsSels *metav1.LabelSelector
}

type peerMatchResult struct {
	match string
	ok    bool
}

// calicoNode is one node's Calico view.
type calicoNode struct {
	cal   *calicoCluster
	node  *nodeInfo
	notes []string
}

func newCalicoCluster(cc *clusterCtx) *calicoCluster {
	k := &calicoCluster{cc: cc, nftables: true}
	for _, p := range cc.pools {
		k.allPools = append(k.allPools, p.cidr)
		if p.natOutgoing {
			k.masq = append(k.masq, p.cidr)
		}
	}
	if in := cc.c.Installation; in != nil && in.Spec.CalicoNetwork != nil && in.Spec.CalicoNetwork.LinuxDataplane != nil {
		k.nftables = *in.Spec.CalicoNetwork.LinuxDataplane == "Nftables"
	}
	return k
}

func (k *calicoCluster) forNode(ni *nodeInfo, n *Node) *calicoNode {
	if !k.nftables {
		n.note("Calico's Linux dataplane is not Nftables: Felix programs iptables, which nft list does not show as table ip calico")
		return nil
	}
	return &calicoNode{cal: k, node: ni}
}

// PolicyAllows reports whether Calico on this node lets a new connection
// through for pod (see PolicyIndex.Allows for the semantics).
func (n *Node) PolicyAllows(pod *corev1.Pod, dir Direction, peerIP netip.Addr, proto string, port int32) (bool, string) {
	if n.pol == nil {
		return true, "no NetworkPolicy index"
	}
	return n.pol.Allows(pod, dir, peerIP, proto, port)
}

// table is a simplified "table ip calico": Felix's real table holds many
// more chains (raw, mangle, failsafes, host endpoints, ...) and matches
// selectors through IP sets; this view keeps what decides pod traffic:
// the workload dispatch, one chain per workload and direction with the
// NetworkPolicy rules resolved to today's member addresses, and the
// natOutgoing masquerade (felix/rules: cali-to-wl-dispatch,
// cali-tw-<iface>, cali-fw-<iface>, cali-nat-outgoing; nftables table
// "calico", chains named "<table>-<chain>").
func (cn *calicoNode) table(pol *PolicyIndex) (*nftTable, []string) {
	k := cn.cal
	var notes []string
	t := &nftTable{family: "ip", name: "calico", comment: "kubectl-hybrid: simplified view of Felix policy and NAT, not byte-exact"}
	if len(k.allPools) > 0 {
		all := &nftSet{name: "cali40all-ipam-pools", keyType: "ipv4_addr", flags: []string{"interval"}}
		for _, p := range k.allPools {
			all.add(nftElem{key: p.String(), sortKey: skAddr(p.Addr())})
		}
		t.sets = append(t.sets, all)
	}
	if len(k.masq) > 0 {
		m := &nftSet{name: "cali40masq-ipam-pools", keyType: "ipv4_addr", flags: []string{"interval"}}
		for _, p := range k.masq {
			m.add(nftElem{key: p.String(), sortKey: skAddr(p.Addr())})
		}
		t.sets = append(t.sets, m)
	}
	fwd := &nftChain{name: "filter-FORWARD", typ: "filter", hook: "forward", priority: nftPriority("forward", 0)}
	fwd.rules = []string{"jump filter-cali-FORWARD"}
	calFwd := &nftChain{name: "filter-cali-FORWARD"}
	t.chains = append(t.chains, fwd, calFwd)
	pods := cn.node.pods
	if len(pods) > 0 {
		calFwd.rules = append(calFwd.rules, "iifname \"cali*\" jump filter-cali-from-wl-dispatch", "oifname \"cali*\" jump filter-cali-to-wl-dispatch")
		var from, to []string
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
		t.chains = append(t.chains,
			&nftChain{name: "filter-cali-from-wl-dispatch", rules: []string{"iifname vmap { " + strings.Join(from, ", ") + " }"}},
			&nftChain{name: "filter-cali-to-wl-dispatch", rules: []string{"oifname vmap { " + strings.Join(to, ", ") + " }"}})
		for i, p := range pods {
			tw, n1 := cn.workloadChain("filter-cali-tw-"+names[i], p, Ingress, pol)
			fw, n2 := cn.workloadChain("filter-cali-fw-"+names[i], p, Egress, pol)
			notes = append(notes, n1...)
			notes = append(notes, n2...)
			t.chains = append(t.chains, tw, fw)
		}
	}
	post := &nftChain{name: "nat-POSTROUTING", typ: "nat", hook: "postrouting", priority: nftPriority("postrouting", 100)}
	t.chains = append(t.chains, post)
	if len(k.masq) > 0 {
		post.rules = []string{"jump nat-cali-nat-outgoing"}
		t.chains = append(t.chains, &nftChain{name: "nat-cali-nat-outgoing",
			rules: []string{"ip saddr @cali40masq-ipam-pools ip daddr != @cali40all-ipam-pools masquerade fully-random"}})
	}
	return t, notes
}

// workloadChain renders one workload's policy for one direction.
func (cn *calicoNode) workloadChain(name string, pod *corev1.Pod, dir Direction, pol *PolicyIndex) (*nftChain, []string) {
	c := &nftChain{name: name, rules: []string{"ct state established,related accept", "ct state invalid drop"}}
	var notes []string
	sel := pol.Selecting(pod, dir)
	if len(sel) == 0 {
		c.rules = append(c.rules, fmt.Sprintf("accept comment %q", "profile kns."+pod.Namespace+": no NetworkPolicy selects the pod"))
		return c, nil
	}
	peerDir, portDir := "saddr", "dport"
	if dir == Egress {
		peerDir = "daddr"
	}
	for _, p := range sel {
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
					m, ok := cn.peerMatch(p.Namespace, pr, peerDir, pol)
					if !ok {
						notes = append(notes, fmt.Sprintf("%s: %s matches no address today; not rendered", name, comment))
						continue
					}
					peers = append(peers, m)
				}
			}
			ports := []string{""}
			if pp := portsOf(i); len(pp) > 0 {
				ports = nil
				for _, np := range pp {
					m, ok := portMatchNFT(np, portDir, pod, dir)
					if !ok {
						notes = append(notes, fmt.Sprintf("%s: %s has a port the view cannot express (named egress port)", name, comment))
						continue
					}
					ports = append(ports, m)
				}
			}
			for _, pm := range peers {
				for _, po := range ports {
					c.rules = append(c.rules, strings.TrimSpace(strings.Join(nonEmpty(pm, po), " ")+fmt.Sprintf(" accept comment %q", comment)))
				}
			}
		}
	}
	c.rules = append(c.rules, fmt.Sprintf("drop comment %q", "no NetworkPolicy rule allowed the packet"))
	return c, notes
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

// peerMatch renders a policy peer as an address match on today's members,
// the way Felix's IP sets would hold them.
func (cn *calicoNode) peerMatch(policyNS string, pr networkingv1.NetworkPolicyPeer, field string, pol *PolicyIndex) (string, bool) {
	if pr.IPBlock != nil {
		cidr, err := netip.ParsePrefix(pr.IPBlock.CIDR)
		if err != nil {
			return "", false
		}
		s := fmt.Sprintf("ip %s %s", field, prefixList([]netip.Prefix{cidr.Masked()}))
		var ex []netip.Prefix
		for _, e := range pr.IPBlock.Except {
			if p, err := netip.ParsePrefix(e); err == nil {
				ex = append(ex, p.Masked())
			}
		}
		if len(ex) > 0 {
			s += fmt.Sprintf(" ip %s != %s", field, prefixList(ex))
		}
		return s, true
	}
	k := peerKey{pol: pol, ns: policyNS, field: field, pods: pr.PodSelector, nsSels: pr.NamespaceSelector}
	cal := cn.cal
	cal.peersMu.Lock()
	r, ok := cal.peers[k]
	cal.peersMu.Unlock()
	if ok {
		return r.match, r.ok
	}
	r.match, r.ok = peerMembersMatch(policyNS, pr, field, pol)
	cal.peersMu.Lock()
	if cal.peers == nil {
		cal.peers = map[peerKey]peerMatchResult{}
	}
	cal.peers[k] = r
	cal.peersMu.Unlock()
	return r.match, r.ok
}

// peerMembersMatch renders a selector peer's current members.
func peerMembersMatch(policyNS string, pr networkingv1.NetworkPolicyPeer, field string, pol *PolicyIndex) (string, bool) {
	var members []netip.Prefix
	for _, ip := range pol.PeerMembers(policyNS, pr) {
		if ip.Is4() {
			members = append(members, netip.PrefixFrom(ip, 32))
		}
	}
	if len(members) == 0 {
		return "", false
	}
	return fmt.Sprintf("ip %s %s", field, prefixList(members)), true
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
	if n := NamedPort(pod, np.Port.StrVal, proto); n != 0 {
		return fmt.Sprintf("%s %s %d", l4, field, n), true
	}
	return "", false
}
