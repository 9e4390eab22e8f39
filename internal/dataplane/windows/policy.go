package windows

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
)

// Felix's Windows policy constants (felix/dataplane/windows/policysets/policyset_defs.go).
const (
	hostToEndpointPriority = 900
	policyBasePriority     = 1000
	policyMaxPriority      = 65000
	ipPortsPerRule         = 4000 // policysets.go protoRulesToHnsRules
	protocolAny            = 256
	actionPass             = "pass"
	defaultTier            = "default"
)

// Calico's workload and namespace labels (libcalico-go apiv3 constants).
const (
	labelNamespace      = "projectcalico.org/namespace"
	labelOrchestrator   = "projectcalico.org/orchestrator"
	labelServiceAccount = "projectcalico.org/serviceaccount"
	labelName           = "projectcalico.org/name"
	labelMetadataName   = "kubernetes.io/metadata.name"
)

// felix computes the HNS ACLs Felix programs on each local workload
// endpoint (felix/dataplane/windows/endpoint_mgr.go CompleteDeferredWork and
// policysets/policysets.go).
type felix struct {
	cx       *compiler
	weps     []wep
	policies []*polSet
	nsLabels map[string]map[string]string

	// Indexes for endpointACLs, which runs per Windows pod: the first wep
	// of each address (weps order), the policies that can apply in a
	// namespace (its own and the global ones, in policies order) and the
	// tier names. Scanning all weps and all policies per pod made it
	// O(pods × (pods + policies)).
	wepByIP    map[string]int
	policiesNS map[string][]*polSet
	global     []*polSet
	tiers      []string
	// For addresses, which resolves a rule's selectors to IP set members:
	// the weps of each namespace (positions in weps, ascending), the
	// namespaces each namespace selector matches, and the members of each
	// peer already resolved. Evaluating every selector on every workload of
	// the cluster per rule made the policies O(rules × pods).
	wepsByNS  map[string][]int
	nsMatches map[string]map[string]bool
	members   map[memberKey][]string
	// joined holds the address lists ruleACLs has written, by the list.
	joined map[joinKey]string
	// dirs holds each direction's rules by what decides them (dirKey):
	// endpoints selected by the same policies share them.
	dirs map[string]*dirRules
}

// dirRules are one direction's ACLs of an endpoint, after flattening and
// priorities, with their report; shared, never changed.
type dirRules struct {
	acls   []ACL
	report []ACLSource
}

// memberKey is what decides an IP set's members (see addresses).
type memberKey struct {
	selector, nsSelector, ns, saNames string
}

// wep is a workload endpoint anywhere in the cluster: what IP sets hold.
type wep struct {
	ip     string
	addr   netip.Addr
	ns     string
	sa     string
	labels map[string]string
}

// polSet is a policy as Felix's Windows dataplane holds it: a policy set
// with converted members per direction.
type polSet struct {
	id       string // policy-<Kind>/<ns>/<name> (policy_mgr.go policyIDToString)
	ns       string
	tier     string
	order    float64
	selector selector.Selector
	nsSel    selector.Selector // spec.namespaceSelector (global policies)
	ingress  bool
	egress   bool
	in, out  []crule

	built          bool
	inACL, outACL  []ACL
	inSkip, outSkp []string
}

// crule is a Calico v3 rule, from a Calico policy or converted from a
// Kubernetes NetworkPolicy.
type crule struct {
	action      string
	protocol    *intstr.IntOrString
	notProtocol bool
	ipVersion   int
	icmp        bool
	notICMP     bool
	src, dst    centity
}

type centity struct {
	nets        []string
	notNets     []string
	selector    string
	nsSelector  string
	notSelector string
	ports       []intstr.IntOrString
	notPorts    bool
	saNames     []string
	saSelector  string
}

// PodLabels are the labels the twin's Felix matches selectors against on
// a pod's endpoint: projectcalico.org/namespace, /orchestrator and
// /serviceaccount ("default" when the pod names none), then the pod's own
// labels over them.
func PodLabels(p *corev1.Pod) map[string]string {
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	l := make(map[string]string, len(p.Labels)+3)
	l[labelNamespace], l[labelOrchestrator], l[labelServiceAccount] = p.Namespace, "k8s", sa
	for k, v := range p.Labels {
		l[k] = v
	}
	return l
}

func newFelix(cx *compiler) *felix {
	f := &felix{cx: cx, nsLabels: map[string]map[string]string{}}
	for _, ns := range cx.c.Namespaces {
		l := map[string]string{labelName: ns.Name, labelMetadataName: ns.Name}
		for k, v := range ns.Labels {
			l[k] = v
		}
		f.nsLabels[ns.Name] = l
	}
	for _, p := range cx.c.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Spec.NodeName == "" ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodPending {
			continue
		}
		a, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || !a.Is4() {
			continue
		}
		l := PodLabels(p)
		f.weps = append(f.weps, wep{ip: a.String(), addr: a, ns: p.Namespace, sa: l[labelServiceAccount], labels: l})
	}
	// By address; pods that share one (an invalid cluster) keep their
	// order. Sorting positions moves less than a stable sort of the weps.
	order := make([]int32, len(f.weps))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := f.weps[a].addr.Compare(f.weps[b].addr); c != 0 {
			return c
		}
		return int(a - b)
	})
	sorted := make([]wep, len(f.weps))
	for i, j := range order {
		sorted[i] = f.weps[j]
	}
	f.weps = sorted
	for _, np := range cx.c.NetworkPolicies {
		f.policies = append(f.policies, k8sPolicy(np))
	}
	for _, p := range cx.c.CalicoPolicies {
		f.policies = append(f.policies, calicoPolicy("NetworkPolicy", p.Namespace, p.Name, p.Spec))
	}
	for _, p := range cx.c.GlobalNetworkPolicies {
		f.policies = append(f.policies, calicoPolicy("GlobalNetworkPolicy", "", p.Name, p.Spec))
	}
	sort.SliceStable(f.policies, func(i, j int) bool {
		a, b := f.policies[i], f.policies[j]
		if a.order != b.order {
			return a.order < b.order
		}
		return a.id < b.id
	})
	f.wepByIP = make(map[string]int, len(f.weps))
	for i, w := range f.weps {
		if _, ok := f.wepByIP[w.ip]; !ok {
			f.wepByIP[w.ip] = i
		}
	}
	f.policiesNS = map[string][]*polSet{}
	for _, p := range f.policies {
		if p.ns == "" {
			f.global = append(f.global, p)
		} else {
			f.policiesNS[p.ns] = append(f.policiesNS[p.ns], p)
		}
	}
	f.tiers = f.tierNames()
	f.wepsByNS = map[string][]int{}
	for i, w := range f.weps {
		f.wepsByNS[w.ns] = append(f.wepsByNS[w.ns], i)
	}
	f.nsMatches = map[string]map[string]bool{}
	f.members = map[memberKey][]string{}
	return f
}

// candidates are the policies that may apply to a workload of namespace ns
// (appliesTo rejects a namespaced policy of another namespace), in policies
// order.
func (f *felix) candidates(ns string) []*polSet {
	own := f.policiesNS[ns]
	if len(f.global) == 0 {
		return own
	}
	if len(own) == 0 {
		return f.global
	}
	out := make([]*polSet, 0, len(own)+len(f.global))
	for _, p := range f.policies {
		if p.ns == "" || p.ns == ns {
			out = append(out, p)
		}
	}
	return out
}

// k8sPolicy converts a Kubernetes NetworkPolicy the way libcalico-go does
// (lib/backend/k8s/conversion/conversion.go K8sNetworkPolicyToCalico): order
// 1000 in the default tier, the pod selector prefixed with the orchestrator,
// one rule per protocol and peer, TCP when a port names no protocol, ipBlock
// excepts as NotNets.
func k8sPolicy(np *networkingv1.NetworkPolicy) *polSet {
	p := &polSet{
		id:       "policy-KubernetesNetworkPolicy/" + np.Namespace + "/" + np.Name,
		ns:       np.Namespace,
		tier:     defaultTier,
		order:    1000,
		selector: mustSel(k8sSelector(&np.Spec.PodSelector, true)),
	}
	for _, t := range np.Spec.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeIngress:
			p.ingress = true
		case networkingv1.PolicyTypeEgress:
			p.egress = true
		}
	}
	if !p.ingress && !p.egress {
		p.ingress = true
	}
	for _, r := range np.Spec.Ingress {
		p.in = append(p.in, k8sRules(r.From, r.Ports, true)...)
	}
	for _, r := range np.Spec.Egress {
		p.out = append(p.out, k8sRules(r.To, r.Ports, false)...)
	}
	return p
}

// k8sSelector is conversion.go k8sSelectorToCalico: pod selectors are
// prefixed with the orchestrator label; an empty namespace selector is all().
func k8sSelector(s *metav1.LabelSelector, pod bool) string {
	var parts []string
	if pod {
		parts = append(parts, labelOrchestrator+" == 'k8s'")
	}
	if s == nil {
		return strings.Join(parts, " && ")
	}
	if !pod && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return "all()"
	}
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s == '%s'", k, s.MatchLabels[k]))
	}
	for _, e := range s.MatchExpressions {
		vals := strings.Join(e.Values, "', '")
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			parts = append(parts, fmt.Sprintf("%s in { '%s' }", e.Key, vals))
		case metav1.LabelSelectorOpNotIn:
			parts = append(parts, fmt.Sprintf("%s not in { '%s' }", e.Key, vals))
		case metav1.LabelSelectorOpExists:
			parts = append(parts, fmt.Sprintf("has(%s)", e.Key))
		case metav1.LabelSelectorOpDoesNotExist:
			parts = append(parts, fmt.Sprintf("! has(%s)", e.Key))
		}
	}
	return strings.Join(parts, " && ")
}

// k8sRules is conversion.go k8sRuleToCalico: ports group by protocol (TCP
// when none is named; a port without a number allows the whole protocol;
// no ports at all, everything), and each protocol group makes one Allow
// rule per peer.
func k8sRules(peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort, ingress bool) []crule {
	byProto := map[string][]intstr.IntOrString{}
	wholeProto := map[string]bool{}
	all := len(ports) == 0
	for _, p := range ports {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		if _, ok := byProto[proto]; !ok {
			byProto[proto] = nil
		}
		if p.Port == nil {
			wholeProto[proto] = true
			continue
		}
		port := *p.Port
		if port.Type == intstr.Int && p.EndPort != nil {
			port = intstr.FromString(fmt.Sprintf("%d:%d", port.IntVal, *p.EndPort))
		}
		byProto[proto] = append(byProto[proto], port)
	}
	for proto := range wholeProto {
		byProto[proto] = nil
	}
	protos := make([]string, 0, len(byProto))
	for k := range byProto {
		protos = append(protos, k)
	}
	sort.Strings(protos)
	if all {
		protos = []string{""}
	}
	if len(peers) == 0 {
		peers = []networkingv1.NetworkPolicyPeer{{}}
	}
	var out []crule
	for _, proto := range protos {
		var protocol *intstr.IntOrString
		if proto != "" {
			v := intstr.FromString(proto)
			protocol = &v
		}
		for _, peer := range peers {
			e := centity{ports: byProto[proto]}
			switch {
			case peer.IPBlock != nil:
				e.nets = []string{peer.IPBlock.CIDR}
				e.notNets = peer.IPBlock.Except
			case peer.PodSelector != nil || peer.NamespaceSelector != nil:
				e.selector = k8sSelector(peer.PodSelector, true)
				if peer.NamespaceSelector != nil {
					e.nsSelector = k8sSelector(peer.NamespaceSelector, false)
				}
			}
			r := crule{action: "allow", protocol: protocol}
			if ingress {
				r.src = centity{nets: e.nets, notNets: e.notNets, selector: e.selector, nsSelector: e.nsSelector}
				r.dst = centity{ports: e.ports}
			} else {
				r.dst = e
			}
			out = append(out, r)
		}
	}
	return out
}

func mustSel(s string) selector.Selector {
	sel, err := selector.Parse(s)
	if err != nil {
		return nil
	}
	return sel
}

// calicoPolicy takes a Calico NetworkPolicy or GlobalNetworkPolicy.
func calicoPolicy(kind, ns, name string, spec calicoapi.PolicySpec) *polSet {
	p := &polSet{
		id:    "policy-" + kind + "/" + name,
		ns:    ns,
		tier:  spec.Tier,
		order: math.Inf(1),
	}
	if ns != "" {
		p.id = "policy-" + kind + "/" + ns + "/" + name
	}
	if p.tier == "" {
		p.tier = defaultTier
	}
	if spec.Order != nil {
		p.order = *spec.Order
	}
	p.selector = mustSel(spec.Selector)
	if spec.NamespaceSelector != "" {
		p.nsSel = mustSel(spec.NamespaceSelector)
	}
	p.ingress, p.egress = spec.Directions()
	for _, r := range spec.Ingress {
		p.in = append(p.in, fromCalicoRule(r))
	}
	for _, r := range spec.Egress {
		p.out = append(p.out, fromCalicoRule(r))
	}
	return p
}

func fromCalicoRule(r calicoapi.Rule) crule {
	cr := crule{
		action:      strings.ToLower(r.Action),
		protocol:    r.Protocol,
		notProtocol: r.NotProtocol != nil,
		icmp:        r.ICMP != nil,
		notICMP:     r.NotICMP != nil,
		src:         fromEntity(r.Source),
		dst:         fromEntity(r.Destination),
	}
	if r.IPVersion != nil {
		cr.ipVersion = *r.IPVersion
	}
	return cr
}

func fromEntity(e calicoapi.EntityRule) centity {
	ce := centity{
		nets:        e.Nets,
		notNets:     e.NotNets,
		selector:    e.Selector,
		nsSelector:  e.NamespaceSelector,
		notSelector: e.NotSelector,
		ports:       e.Ports,
		notPorts:    len(e.NotPorts) > 0,
	}
	if e.ServiceAccounts != nil {
		ce.saNames = e.ServiceAccounts.Names
		ce.saSelector = e.ServiceAccounts.Selector
	}
	return ce
}

// appliesTo reports whether the policy selects the workload.
func (f *felix) appliesTo(p *polSet, w wep) bool {
	if p.ns != "" && w.ns != p.ns {
		return false
	}
	if p.selector == nil || !p.selector.Evaluate(w.labels) {
		return false
	}
	if p.nsSel != nil && !p.nsSel.Evaluate(f.nsLabels[w.ns]) {
		return false
	}
	return true
}

// endpointACLs is the ACL list Felix applies to a local pod's HNS endpoint
// (endpoint_mgr.go): allow-host-to-endpoint, the ingress rules (tiers of
// policies, or the profiles when no default-tier policy applies), the egress
// rules likewise, then one host-scope allow per direction.
func (f *felix) endpointACLs(p *corev1.Pod, hostAddr string) ([]ACL, []ACLSource, []string) {
	w := wep{ip: p.Status.PodIP, ns: p.Namespace}
	if i, ok := f.wepByIP[p.Status.PodIP]; ok {
		w = f.weps[i]
	}
	if w.labels == nil {
		w.labels = map[string]string{labelNamespace: p.Namespace, labelOrchestrator: "k8s"}
	}
	var report []ACLSource
	var warns []string
	var acls []ACL
	if hostAddr != "" {
		acls = append(acls, ACL{ID: "allow-host-to-endpoint", Action: "Allow", Direction: "In", Protocol: protocolAny,
			RemoteAddresses: hostAddr + "/32", RuleType: "Switch", Priority: hostToEndpointPriority})
		report = append(report, ACLSource{Source: "allow-host-to-endpoint", Direction: "In", Rules: 1})
	}
	sa := p.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	profiles := []string{"kns." + p.Namespace, "ksa." + p.Namespace + "." + sa}
	cands := f.candidates(w.ns)
	in := f.dirRules(w, cands, profiles, p.Namespace, true)
	out := f.dirRules(w, cands, profiles, p.Namespace, false)
	acls = slices.Grow(acls, len(in.acls)+len(out.acls)+2)
	acls = append(append(acls, in.acls...), out.acls...)
	report = append(append(report, in.report...), out.report...)
	// Host-scope allows (endpoint_mgr.go NewHostRule): priority 0 on HNS
	// builds with AclNoHostRulePriority (1803 and later).
	for _, d := range []string{"In", "Out"} {
		acls = append(acls, ACL{Action: "Allow", Direction: d, Protocol: protocolAny, RuleType: "Host"})
		report = append(report, ACLSource{Source: "host", Direction: d, Rules: 1})
	}
	for _, r := range report {
		if r.Skipped > 0 {
			warns = append(warns, fmt.Sprintf("%s (%s): %d rule(s) not programmed on Windows: %s", r.Source, strings.ToLower(r.Direction)+"bound", r.Skipped, strings.Join(r.Reasons, "; ")))
		}
	}
	return acls, report, warns
}

// dirRules is one direction of an endpoint's ACLs: the tiers of the
// policies that apply to it, or its profiles when no default-tier policy
// does, flattened (flattener.go) with their priorities rewritten. What
// decides them (the policies per tier, the profiles) is the key: they are
// made once per key.
func (f *felix) dirRules(w wep, cands []*polSet, profiles []string, ns string, inbound bool) *dirRules {
	dir := "Out"
	if inbound {
		dir = "In"
	}
	var key strings.Builder
	key.WriteString(dir)
	var chosen [][]*polSet
	defaultApplies := false
	for _, tier := range f.tiers {
		var sets []*polSet
		for _, ps := range cands {
			if ps.tier != tier || !f.appliesTo(ps, w) {
				continue
			}
			if (inbound && ps.ingress) || (!inbound && ps.egress) {
				sets = append(sets, ps)
			}
		}
		if len(sets) == 0 {
			continue
		}
		if tier == defaultTier {
			defaultApplies = true
		}
		chosen = append(chosen, sets)
		key.WriteByte(0)
		key.WriteString(tier)
		for _, ps := range sets {
			key.WriteByte(1)
			key.WriteString(ps.id)
		}
	}
	useProfiles := len(chosen) == 0 || !defaultApplies
	if useProfiles {
		key.WriteByte(2)
		key.WriteString(ns)
		for _, pr := range profiles {
			key.WriteByte(0)
			key.WriteString(pr)
		}
	}
	if d, ok := f.dirs[key.String()]; ok {
		return d
	}
	var tiers [][]ACL
	var tierReports [][]ACLSource
	for _, sets := range chosen {
		rules, rep := f.policySetRules(sets, inbound, true)
		tiers = append(tiers, rules)
		tierReports = append(tierReports, rep)
	}
	if useProfiles {
		rules, rep := f.profileRules(profiles, ns, inbound)
		tiers = append(tiers, rules)
		tierReports = append(tierReports, rep)
	}
	d := &dirRules{acls: flattenTiers(tiers)}
	rewritePriorities(d.acls)
	for _, rep := range tierReports {
		d.report = append(d.report, rep...)
	}
	if len(tiers) > 1 {
		d.report = append(d.report, ACLSource{Source: "flattened tiers", Direction: dir, Rules: len(d.acls)})
	}
	if f.dirs == nil {
		f.dirs = map[string]*dirRules{}
	}
	f.dirs[key.String()] = d
	return d
}

// tierNames lists the tiers in use, the default tier last (Calico's default
// tier has order 1,000,000; Tier objects are not modeled, others sort by
// name before it).
func (f *felix) tierNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range f.policies {
		if !seen[p.tier] && p.tier != defaultTier {
			seen[p.tier] = true
			names = append(names, p.tier)
		}
	}
	sort.Strings(names)
	return append(names, defaultTier)
}

// policySetRules is policysets.go GetPolicySetRules for policies: members in
// set order, the priority stepping up whenever the action changes, then an
// end-of-tier Block (or Pass).
func (f *felix) policySetRules(sets []*polSet, inbound, endOfTierDrop bool) ([]ACL, []ACLSource) {
	prio := policyBasePriority
	var out []ACL
	var rep []ACLSource
	var last string
	dir := "Out"
	if inbound {
		dir = "In"
	}
	for _, ps := range sets {
		f.build(ps)
		members, skipped := ps.outACL, ps.outSkp
		if inbound {
			members, skipped = ps.inACL, ps.inSkip
		}
		for _, m := range members {
			if last != "" && last != m.Action {
				prio++
			}
			m.Priority = prio
			out = append(out, m)
			last = m.Action
		}
		rep = append(rep, ACLSource{Source: ps.id, Direction: dir, Rules: len(members), Skipped: len(skipped), Reasons: skipped})
	}
	prio++
	end := ACL{Action: "Block", Direction: dir, Protocol: protocolAny, RuleType: "Switch", Priority: prio}
	if !endOfTierDrop {
		end.Action = actionPass
	}
	out = append(out, end)
	rep = append(rep, ACLSource{Source: "end-of-tier", Direction: dir, Rules: 1})
	return out, rep
}

// profileRules is GetPolicySetRules over the workload's profiles: kns.<ns>
// allows everything both ways (libcalico-go NamespaceToProfile), ksa.<ns>.<sa>
// has no rules.
func (f *felix) profileRules(profiles []string, ns string, inbound bool) ([]ACL, []ACLSource) {
	dir := "Out"
	seedDir := "prof-out-"
	if inbound {
		dir, seedDir = "In", "prof-in-"
	}
	var out []ACL
	var rep []ACLSource
	prio := policyBasePriority
	for _, name := range profiles {
		setID := "profile-" + name
		n := 0
		if strings.HasPrefix(name, "kns.") {
			id := setID + "-" + profileRuleID(seedDir+name) + "-0"
			out = append(out, ACL{ID: id, Action: "Allow", Direction: dir, Protocol: protocolAny, RuleType: "Switch", Priority: prio})
			n = 1
		}
		rep = append(rep, ACLSource{Source: setID, Direction: dir, Rules: n})
	}
	prio++
	out = append(out, ACL{Action: "Block", Direction: dir, Protocol: protocolAny, RuleType: "Switch", Priority: prio})
	rep = append(rep, ACLSource{Source: "end-of-tier", Direction: dir, Rules: 1})
	return out, rep
}

// profileRuleID is Felix's rule ID for a profile's single allow rule
// (felix/calc/rule_convert.go fillInRuleIDs): SHA-224 of the seed
// ("prof-in-kns.<ns>"), then SHA-224 of that hash followed by the rule's
// protobuf encoding, base64url, 16 characters. The rule {action: "allow"}
// encodes as field 1, length 5, "allow".
func profileRuleID(seed string) string {
	h := sha256.Sum224([]byte(seed))
	data := append(h[:], 0x0a, 0x05)
	data = append(data, "allow"...)
	h2 := sha256.Sum224(data)
	return base64.RawURLEncoding.EncodeToString(h2[:])[:16]
}

// standInRuleID is the twin's rule ID for policy rules: the same chained
// SHA-224 as Felix, over a text form of the rule rather than its protobuf
// (whose IP set IDs the twin does not compute).
func standInRuleID(prev []byte, seed string, r crule, i int) ([]byte, string) {
	if prev == nil {
		h := sha256.Sum224([]byte(seed))
		prev = h[:]
	}
	h := sha256.Sum224(append(append([]byte{}, prev...), fmt.Sprintf("%d %s", i, r.text())...))
	return h[:], base64.RawURLEncoding.EncodeToString(h[:])[:16]
}

// text is a rule's content without pointers, so the same rule gets the
// same ID in every compile.
func (r crule) text() string {
	proto := "-"
	if r.protocol != nil {
		proto = r.protocol.String()
	}
	return fmt.Sprintf("%s proto=%s!%t ipv=%d icmp=%t!%t src={%s} dst={%s}", r.action, proto, r.notProtocol, r.ipVersion, r.icmp, r.notICMP, r.src.text(), r.dst.text())
}

func (e centity) text() string {
	ports := make([]string, len(e.ports))
	for i, p := range e.ports {
		ports[i] = p.String()
	}
	return fmt.Sprintf("nets=%q !nets=%q sel=%q nssel=%q !sel=%q ports=%q!%t sa=%q sasel=%q",
		e.nets, e.notNets, e.selector, e.nsSelector, e.notSelector, ports, e.notPorts, e.saNames, e.saSelector)
}

// build converts a policy's rules once (policysets.go AddOrReplacePolicySet).
func (f *felix) build(ps *polSet) {
	if ps.built {
		return
	}
	ps.built = true
	var prev []byte
	var id string
	for i, r := range ps.in {
		prev, id = standInRuleID(prev, "pol-in-"+ps.tier+"/"+ps.id, r, i)
		acls, err := f.ruleACLs(ps, r, id, true)
		if err != "" {
			ps.inSkip = append(ps.inSkip, fmt.Sprintf("rule %d: %s", i, err))
		}
		ps.inACL = append(ps.inACL, acls...)
	}
	prev = nil
	for i, r := range ps.out {
		prev, id = standInRuleID(prev, "pol-out-"+ps.tier+"/"+ps.id, r, i)
		acls, err := f.ruleACLs(ps, r, id, false)
		if err != "" {
			ps.outSkp = append(ps.outSkp, fmt.Sprintf("rule %d: %s", i, err))
		}
		ps.outACL = append(ps.outACL, acls...)
	}
}

// ruleACLs is policysets.go protoRuleToHnsRules: unsupported matches skip
// the rule (windowsSkip); source and destination become Remote/Local
// addresses by direction; every address and port list is cut into chunks
// of 4000 and one ACL is emitted per combination of local-address,
// local-port, remote-address and remote-port chunk. The reason is "" when
// the rule converts (a rule that is a no-op yields no ACL and no reason).
func (f *felix) ruleACLs(ps *polSet, r crule, ruleID string, inbound bool) ([]ACL, string) {
	if why := windowsSkip(r); why != "" {
		return nil, why
	}
	if r.src.saSelector != "" || r.dst.saSelector != "" {
		return nil, skipSASelector
	}
	acl := ACL{Action: "Block", Direction: "Out", Protocol: protocolAny, RuleType: "Switch", Priority: policyBasePriority}
	if inbound {
		acl.Direction = "In"
	}
	switch r.action {
	case "", "allow":
		acl.Action = "Allow"
	case "deny":
		acl.Action = "Block"
	case "pass", "next-tier":
		acl.Action = actionPass
	default:
		return nil, skipUnknownAct + r.action
	}
	if r.protocol != nil {
		acl.Protocol = protocolNumber(*r.protocol)
	}
	src, ok, why := f.addresses(ps, r.src)
	if !ok {
		return nil, why
	}
	dst, ok, why := f.addresses(ps, r.dst)
	if !ok {
		return nil, why
	}
	local, remote := dst, src
	localPorts, remotePorts := portList(r.dst.ports), portList(r.src.ports)
	if !inbound {
		local, remote = src, dst
		localPorts, remotePorts = portList(r.src.ports), portList(r.dst.ports)
	}
	var out []ACL
	i := 0
	for _, la := range chunk(local) {
		for _, lp := range chunk(localPorts) {
			for _, ra := range chunk(remote) {
				for _, rp := range chunk(remotePorts) {
					a := acl
					a.ID = fmt.Sprintf("%s-%s-%d", ps.id, ruleID, i)
					i++
					a.LocalAddresses = f.join(la)
					a.LocalPorts = strings.Join(lp, ",")
					a.RemoteAddresses = f.join(ra)
					a.RemotePorts = strings.Join(rp, ",")
					out = append(out, a)
				}
			}
		}
	}
	return out, ""
}

// addresses is one side of a rule as addresses: its CIDRs, the members of
// its selector's IP set, or their intersection when it has both. ok is false
// when the rule must be skipped: an IP set with no members is "missing" to
// the Windows dataplane (ipsets.go GetIPSetMembers returns nil for it), and
// policysets.go then skips the rule; an empty intersection is a no-op.
func (f *felix) addresses(ps *polSet, e centity) (addrs []string, ok bool, why string) {
	nets := filterV4(e.nets)
	if len(e.nets) > 0 && len(nets) == 0 {
		return nil, false, "" // only IPv6 nets: a no-op on IPv4
	}
	if e.selector == "" && e.nsSelector == "" && len(e.saNames) == 0 {
		return nets, true, ""
	}
	sel := mustSel(e.selector)
	if sel == nil {
		return nil, false, fmt.Sprintf("bad selector %q", e.selector)
	}
	var nsSel selector.Selector
	if e.nsSelector != "" {
		nsSel = mustSel(e.nsSelector)
		if nsSel == nil {
			return nil, false, fmt.Sprintf("bad namespace selector %q", e.nsSelector)
		}
	}
	members := f.selectMembers(ps, e, sel, nsSel)
	if len(members) == 0 {
		return nil, false, "selector matches no endpoint (empty IP set)"
	}
	if len(nets) == 0 {
		return members, true, ""
	}
	in := intersectCIDRs(nets, members)
	if len(in) == 0 {
		return nil, false, ""
	}
	return in, true, ""
}

// selectMembers lists, in weps order, the workloads in the rule's scope
// (the namespaces nsSel selects, else the policy's namespace, else all)
// that sel selects and that run as one of saNames (when given), as
// "ip/32". Results are shared between rules with the same peer.
func (f *felix) selectMembers(ps *polSet, e centity, sel, nsSel selector.Selector) []string {
	key := memberKey{selector: e.selector, nsSelector: "\x00"}
	if e.nsSelector != "" {
		key.nsSelector = e.nsSelector
	} else {
		key.ns = ps.ns
	}
	if len(e.saNames) > 0 {
		key.saNames = strings.Join(e.saNames, "\x00") + "\x00"
	}
	if m, ok := f.members[key]; ok {
		return m
	}
	var scope []int // positions in weps; nil with all set means every wep
	all := false
	switch {
	case nsSel != nil:
		// The namespace selector reads only the namespace's labels:
		// evaluated once per namespace.
		ok, seen := f.nsMatches[e.nsSelector]
		if !seen {
			ok = map[string]bool{}
			for ns := range f.wepsByNS {
				ok[ns] = nsSel.Evaluate(f.nsLabels[ns])
			}
			f.nsMatches[e.nsSelector] = ok
		}
		for ns, idx := range f.wepsByNS {
			if ok[ns] {
				scope = append(scope, idx...)
			}
		}
		slices.Sort(scope)
	case ps.ns != "":
		scope = f.wepsByNS[ps.ns]
	default:
		all = true
	}
	var members []string
	visit := func(w *wep) {
		if !sel.Evaluate(w.labels) {
			return
		}
		if len(e.saNames) > 0 && !containsStr(e.saNames, w.sa) {
			return
		}
		members = append(members, w.ip+"/32")
	}
	if all {
		for i := range f.weps {
			visit(&f.weps[i])
		}
	} else {
		for _, i := range scope {
			visit(&f.weps[i])
		}
	}
	f.members[key] = members
	return members
}

// chunk cuts a list into chunks of ipPortsPerRule; an empty list is one
// empty chunk (SplitIPList, SplitPortList).
// joinKey is an address list by its first element's address and length.
type joinKey struct {
	first *string
	n     int
}

// join is strings.Join(s, ","), written once per list: the rules of many
// policies share a selector's members (selectMembers), and those lists grow
// with the cluster. The key holds the list, so its address is not reused.
func (f *felix) join(s []string) string {
	if len(s) < 16 {
		return strings.Join(s, ",")
	}
	k := joinKey{&s[0], len(s)}
	if j, ok := f.joined[k]; ok {
		return j
	}
	j := strings.Join(s, ",")
	if f.joined == nil {
		f.joined = map[joinKey]string{}
	}
	f.joined[k] = j
	return j
}

func chunk(s []string) [][]string {
	if len(s) == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for i := 0; i < len(s); i += ipPortsPerRule {
		out = append(out, s[i:min(i+ipPortsPerRule, len(s))])
	}
	return out
}

func portList(ports []intstr.IntOrString) []string {
	var out []string
	for _, p := range ports {
		if p.Type == intstr.Int {
			out = append(out, strconv.Itoa(int(p.IntVal)))
			continue
		}
		// "min:max" ranges as HNS writes them, "min-max".
		out = append(out, strings.ReplaceAll(p.StrVal, ":", "-"))
	}
	return out
}

func namedPorts(ports []intstr.IntOrString) bool {
	for _, p := range ports {
		if p.Type != intstr.String {
			continue
		}
		s := strings.ReplaceAll(p.StrVal, ":", "-")
		lo, hi, isRange := strings.Cut(s, "-")
		if _, err := strconv.Atoi(lo); err != nil {
			return true
		}
		if isRange {
			if _, err := strconv.Atoi(hi); err != nil {
				return true
			}
		}
	}
	return false
}

// protocolNumber is policysets.go protocolNameToNumber.
func protocolNumber(p intstr.IntOrString) int {
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
	return protocolAny
}

func filterV4(nets []string) []string {
	var out []string
	for _, n := range nets {
		if !strings.Contains(n, ":") {
			out = append(out, n)
		}
	}
	return out
}

// intersectCIDRs keeps, for every pair, the smaller prefix when one contains
// the other (felix/iputils IntersectCIDRs).
func intersectCIDRs(as, bs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range as {
		pa, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		for _, b := range bs {
			pb, err := netip.ParsePrefix(b)
			if err != nil {
				continue
			}
			var keep netip.Prefix
			switch {
			case pa.Bits() <= pb.Bits() && pa.Contains(pb.Addr()):
				keep = pb
			case pb.Bits() < pa.Bits() && pb.Contains(pa.Addr()):
				keep = pa
			default:
				continue
			}
			if s := keep.Masked().String(); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// flattenTiers merges tiers as flattener.go does: a Pass rule in a tier is
// replaced by the next tier's rules narrowed to the Pass rule's match; pass
// rules of the last tier become Block.
func flattenTiers(tiers [][]ACL) []ACL {
	last := tiers[len(tiers)-1]
	for i := range last {
		if last[i].Action == actionPass {
			last[i].Action = "Block"
		}
	}
	for len(tiers) > 1 {
		var first []ACL
		found := false
		for _, r := range tiers[0] {
			if r.Action != actionPass {
				first = append(first, r)
				continue
			}
			found = true
			for _, n := range tiers[1] {
				if c, ok := combineRules(r, n); ok {
					first = append(first, c)
				}
			}
		}
		if !found {
			return tiers[0]
		}
		tiers = append([][]ACL{first}, tiers[2:]...)
	}
	return tiers[0]
}

// combineRules narrows r2 to r1's match (flattener.go combineRules); false
// when the combination cannot match.
func combineRules(r1, r2 ACL) (ACL, bool) {
	c := r2
	if r1.Protocol != protocolAny {
		if r2.Protocol == protocolAny {
			c.Protocol = r1.Protocol
		} else if r1.Protocol != r2.Protocol {
			return ACL{}, false
		}
	}
	var ok bool
	if c.LocalAddresses, ok = combineCIDRList(r1.LocalAddresses, r2.LocalAddresses); !ok {
		return ACL{}, false
	}
	if c.RemoteAddresses, ok = combineCIDRList(r1.RemoteAddresses, r2.RemoteAddresses); !ok {
		return ACL{}, false
	}
	if c.LocalPorts, ok = combinePortList(r1.LocalPorts, r2.LocalPorts); !ok {
		return ACL{}, false
	}
	if c.RemotePorts, ok = combinePortList(r1.RemotePorts, r2.RemotePorts); !ok {
		return ACL{}, false
	}
	return c, true
}

func combineCIDRList(a, b string) (string, bool) {
	if a == "" {
		return b, true
	}
	if b == "" {
		return a, true
	}
	in := intersectCIDRs(strings.Split(a, ","), strings.Split(b, ","))
	return strings.Join(in, ","), len(in) > 0
}

func combinePortList(a, b string) (string, bool) {
	if a == "" {
		return b, true
	}
	if b == "" {
		return a, true
	}
	ra, rb := parsePortRanges(a), parsePortRanges(b)
	var out []string
	for _, x := range ra {
		for _, y := range rb {
			lo, hi := max(x[0], y[0]), min(x[1], y[1])
			if lo > hi {
				continue
			}
			if lo == hi {
				out = append(out, strconv.Itoa(lo))
			} else {
				out = append(out, fmt.Sprintf("%d-%d", lo, hi))
			}
		}
	}
	return strings.Join(out, ","), len(out) > 0
}

func parsePortRanges(s string) [][2]int {
	var out [][2]int
	for _, p := range strings.Split(s, ",") {
		lo, hi, ok := strings.Cut(p, "-")
		l, _ := strconv.Atoi(lo)
		h := l
		if ok {
			h, _ = strconv.Atoi(hi)
		}
		out = append(out, [2]int{l, h})
	}
	return out
}

// rewritePriorities is flattener.go rewritePriorities: priorities from 1000
// up, one step per rule while they fit under 65000, else one step per
// change of action.
func rewritePriorities(acls []ACL) {
	if len(acls) <= 1 {
		return
	}
	prio := policyBasePriority
	acls[0].Priority = prio
	always := len(acls) < policyMaxPriority-policyBasePriority
	for i := 1; i < len(acls); i++ {
		if always || acls[i-1].Action != acls[i].Action {
			prio++
		}
		acls[i].Priority = prio
	}
}
