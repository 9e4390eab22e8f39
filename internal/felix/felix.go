// Package felix is the twin's Felix calculation, in the shape of Felix's
// calc graph (felix/calc): workload endpoints with the labels Calico gives
// them, the policies that apply to each endpoint per direction grouped by
// tier and ordered (active_rules_calculator.go, policy_resolver.go,
// policy_sorter.go), Kubernetes NetworkPolicies as Calico sees them
// (knp.default.* in the default tier at order 1000, libcalico-go's
// conversion), and the members of each rule's selectors (the IP sets).
//
// One calculation serves every reader: the Linux dataplane renders its
// Calico table from it and trace decides Linux endpoints with Decide (the
// semantics of Felix's Linux chains, felix/rules/endpoints.go and
// policy.go), the Windows dataplane compiles it into HNS ACLs, and reach
// reads it per class of pods. Host endpoints are out of scope: the twin
// polices workload endpoints only.
package felix

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Calico's workload, namespace and service account labels (libcalico-go
// apiv3 constants; conversion.go NamespaceToProfile, ServiceAccountToProfile).
const (
	LabelNamespace      = "projectcalico.org/namespace"
	LabelOrchestrator   = "projectcalico.org/orchestrator"
	LabelServiceAccount = "projectcalico.org/serviceaccount"
	LabelName           = "projectcalico.org/name"
)

// Endpoint is a workload endpoint: a pod Calico networks.
type Endpoint struct {
	Pod            *corev1.Pod
	Namespace      string
	ServiceAccount string
	// Addr is status.podIP; Addrs every pod address.
	Addr  netip.Addr
	Addrs []netip.Addr
	// Labels are PodLabels, one map for the endpoints of a Calc whose
	// labels are equal: read them, never change them.
	Labels map[string]string
	// LabelSet numbers the endpoints' sets of labels, namespace and
	// service account within a Calc: equal for equal sets (the endpoints
	// share Labels), else different; -1 for an endpoint not in a Calc.
	LabelSet int32
}

// Calc is the calculation for one cluster. Its caches are safe for
// concurrent use.
type Calc struct {
	// Endpoints are the workload endpoints by address (pods sharing one
	// keep their order).
	Endpoints []Endpoint
	// Policies are every policy, by order then ID (policy_sorter.go; Tier
	// objects are not modeled: Tiers lists the tiers in use).
	Policies []*Policy
	Tiers    []string

	byAddr   map[netip.Addr]int
	byNS     map[string][]int // positions in Endpoints, ascending
	nsLabels map[string]map[string]string
	saLabels map[string]map[string]string // "ns/sa"
	nsPols   map[string][]*Policy
	global   []*Policy

	mu        sync.Mutex
	nsMatches map[string]map[string]bool
	members   map[MemberKey][]int
	sels      map[string]selector.Selector
	hasCalico bool
}

// PodLabels are the labels Calico's selectors see on a pod's endpoint
// (libcalico-go conversion/workload_endpoint_default.go): the pod's labels,
// then projectcalico.org/namespace, /orchestrator and /serviceaccount over
// them. A pod with no service account is given "default", as the API
// server's ServiceAccount admission does.
func PodLabels(p *corev1.Pod) map[string]string {
	l := make(map[string]string, len(p.Labels)+3)
	for k, v := range p.Labels {
		l[k] = v
	}
	l[LabelNamespace], l[LabelOrchestrator], l[LabelServiceAccount] = p.Namespace, "k8s", serviceAccount(p)
	return l
}

// podLabelSets returns PodLabels of pods, one map for pods whose labels,
// namespace and service account are equal (a workload's replicas): an
// endpoint's labels are only read. The key holds each of those strings
// after its length, so that no two different sets share one.
func podLabelSets() func(*corev1.Pod) (map[string]string, int32) {
	type set struct {
		labels map[string]string
		id     int32
	}
	sets := map[string]set{}
	var key []byte
	var names []string
	str := func(s string) {
		key = binary.AppendUvarint(key, uint64(len(s)))
		key = append(key, s...)
	}
	return func(p *corev1.Pod) (map[string]string, int32) {
		names = names[:0]
		for k := range p.Labels {
			names = append(names, k)
		}
		slices.Sort(names)
		key = key[:0]
		str(p.Namespace)
		str(serviceAccount(p))
		for _, k := range names {
			str(k)
			str(p.Labels[k])
		}
		if x, ok := sets[string(key)]; ok {
			return x.labels, x.id
		}
		x := set{PodLabels(p), int32(len(sets))}
		sets[string(key)] = x
		return x.labels, x.id
	}
}

func serviceAccount(p *corev1.Pod) string {
	if p.Spec.ServiceAccountName == "" {
		return "default"
	}
	return p.Spec.ServiceAccountName
}

// NamespaceLabels are the labels a namespaceSelector sees on a namespace
// (conversion.go NamespaceToProfile): its labels with
// kubernetes.io/metadata.name (which the API server sets) and
// projectcalico.org/name over them.
func NamespaceLabels(ns *corev1.Namespace) map[string]string {
	l := make(map[string]string, len(ns.Labels)+2)
	l[corev1.LabelMetadataName] = ns.Name
	for k, v := range ns.Labels {
		l[k] = v
	}
	l[LabelName] = ns.Name
	return l
}

// Ready reports whether Calico gives the pod a workload endpoint
// (conversion.go IsReadyCalicoPod): not host-networked, not finished,
// scheduled, with an address.
func Ready(p *corev1.Pod) bool {
	return !p.Spec.HostNetwork && p.Status.PodIP != "" && p.Spec.NodeName != "" &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// New runs the calculation over the cluster's pods, namespaces, service
// accounts and policies.
func New(c *model.Cluster) *Calc {
	x := &Calc{byAddr: map[netip.Addr]int{}, byNS: map[string][]int{}, nsLabels: map[string]map[string]string{},
		saLabels: map[string]map[string]string{}, nsPols: map[string][]*Policy{},
		nsMatches: map[string]map[string]bool{}, members: map[MemberKey][]int{}, sels: map[string]selector.Selector{}}
	for _, ns := range c.Namespaces {
		x.nsLabels[ns.Name] = NamespaceLabels(ns)
	}
	for _, sa := range c.ServiceAccounts {
		l := make(map[string]string, len(sa.Labels)+1)
		for k, v := range sa.Labels {
			l[k] = v
		}
		l[LabelName] = sa.Name
		x.saLabels[sa.Namespace+"/"+sa.Name] = l
	}
	// The ready pods by address, then their endpoints made in that order
	// into a slice of their number: pods that share an address (an
	// invalid cluster) keep their order. A pod's addresses share one
	// array with every other pod's.
	type ready struct {
		a netip.Addr
		i int32 // in c.Pods
	}
	order := make([]ready, 0, len(c.Pods))
	extra := 0
	for i, p := range c.Pods {
		if !Ready(p) {
			continue
		}
		a, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			continue
		}
		order = append(order, ready{a: a, i: int32(i)})
		extra += len(p.Status.PodIPs)
	}
	slices.SortFunc(order, func(a, b ready) int {
		if c := a.a.Compare(b.a); c != 0 {
			return c
		}
		return int(a.i - b.i)
	})
	x.Endpoints = make([]Endpoint, len(order))
	addrs := make([]netip.Addr, 0, len(order)+extra)
	x.byAddr = make(map[netip.Addr]int, len(order))
	labelsOf := podLabelSets()
	for i, r := range order {
		p := c.Pods[r.i]
		ep := &x.Endpoints[i]
		*ep = Endpoint{Pod: p, Namespace: p.Namespace, ServiceAccount: serviceAccount(p), Addr: r.a}
		ep.Labels, ep.LabelSet = labelsOf(p)
		start := len(addrs)
		if len(p.Status.PodIPs) == 0 {
			addrs = append(addrs, r.a)
		}
		for _, s := range p.Status.PodIPs {
			if s.IP == p.Status.PodIP {
				addrs = append(addrs, r.a) // parsed already (the first, as a rule)
			} else if b, err := netip.ParseAddr(s.IP); err == nil {
				addrs = append(addrs, b)
			}
		}
		if len(addrs) > start {
			ep.Addrs = addrs[start:len(addrs):len(addrs)]
		}
		for _, a := range ep.Addrs {
			if _, ok := x.byAddr[a]; !ok {
				x.byAddr[a] = i
			}
		}
		x.byNS[ep.Namespace] = append(x.byNS[ep.Namespace], i)
	}
	for _, np := range c.NetworkPolicies {
		x.Policies = append(x.Policies, FromKubernetes(np))
	}
	for _, p := range c.CalicoPolicies {
		x.Policies = append(x.Policies, FromCalico(KindNamespaced, p.Namespace, p.Name, p.Spec))
	}
	for _, p := range c.GlobalNetworkPolicies {
		x.Policies = append(x.Policies, FromCalico(KindGlobal, "", p.Name, p.Spec))
	}
	sort.SliceStable(x.Policies, func(i, j int) bool {
		a, b := x.Policies[i], x.Policies[j]
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.ID < b.ID
	})
	seen := map[string]bool{}
	for _, p := range x.Policies {
		if p.Namespace == "" {
			x.global = append(x.global, p)
		} else {
			x.nsPols[p.Namespace] = append(x.nsPols[p.Namespace], p)
		}
		if !seen[p.Tier] && p.Tier != DefaultTier {
			seen[p.Tier] = true
			x.Tiers = append(x.Tiers, p.Tier)
		}
	}
	// Calico's default tier has order 1,000,000; Tier objects are not
	// modeled, so other tiers sort by name before it.
	sort.Strings(x.Tiers)
	x.Tiers = append(x.Tiers, DefaultTier)
	x.compileRules()
	x.hasCalico = len(c.CalicoPolicies)+len(c.GlobalNetworkPolicies) > 0
	return x
}

// SameInputs reports whether New reads the same objects of a and b, so
// that one calculation serves both: the same Namespaces, ServiceAccounts,
// NetworkPolicies, projectcalico.org NetworkPolicies and
// GlobalNetworkPolicies, and the same ready pods (Ready) in the same
// order, each by pointer. New reads nothing else of a cluster (this
// file); an Endpoint holds its pod, which a reader compares by pointer
// (EndpointOf), so equal copies are not enough. Built clusters are not
// changed afterwards, and a twin derived from another shares the objects
// it leaves alone, so the test is one pass over the lists.
func SameInputs(a, b *model.Cluster) bool {
	if a == nil || b == nil {
		return false
	}
	if a == b {
		return true
	}
	if !slices.Equal(a.Namespaces, b.Namespaces) || !slices.Equal(a.ServiceAccounts, b.ServiceAccounts) ||
		!slices.Equal(a.NetworkPolicies, b.NetworkPolicies) || !slices.Equal(a.CalicoPolicies, b.CalicoPolicies) ||
		!slices.Equal(a.GlobalNetworkPolicies, b.GlobalNetworkPolicies) {
		return false
	}
	i, j := 0, 0
	for {
		for i < len(a.Pods) && !Ready(a.Pods[i]) {
			i++
		}
		for j < len(b.Pods) && !Ready(b.Pods[j]) {
			j++
		}
		if i == len(a.Pods) || j == len(b.Pods) {
			return i == len(a.Pods) && j == len(b.Pods)
		}
		if a.Pods[i] != b.Pods[j] {
			return false
		}
		i++
		j++
	}
}

// HasCalicoPolicies reports whether the cluster has projectcalico.org
// policies.
func (x *Calc) HasCalicoPolicies() bool { return x.hasCalico }

// EndpointAt is the workload endpoint with the address, or nil.
func (x *Calc) EndpointAt(a netip.Addr) *Endpoint {
	if i, ok := x.byAddr[a]; ok {
		return &x.Endpoints[i]
	}
	return nil
}

// EndpointOf is the pod's endpoint; a pod Calico gives none still gets
// Calico's labels (callers ask about pods the cluster holds).
func (x *Calc) EndpointOf(p *corev1.Pod) *Endpoint {
	if a, err := netip.ParseAddr(p.Status.PodIP); err == nil {
		if ep := x.EndpointAt(a); ep != nil && ep.Pod == p {
			return ep
		}
		if ep := x.EndpointAt(a); ep != nil && ep.Pod.Namespace == p.Namespace && ep.Pod.Name == p.Name {
			return ep
		}
	}
	ep := &Endpoint{Pod: p, Namespace: p.Namespace, ServiceAccount: serviceAccount(p), Labels: PodLabels(p), LabelSet: -1}
	if a, err := netip.ParseAddr(p.Status.PodIP); err == nil {
		ep.Addr, ep.Addrs = a, []netip.Addr{a}
	}
	return ep
}

// NamespaceLabelsOf are the labels of a namespace by name; a namespace the
// cluster does not hold has only its name labels.
func (x *Calc) NamespaceLabelsOf(ns string) map[string]string {
	if l, ok := x.nsLabels[ns]; ok {
		return l
	}
	return map[string]string{corev1.LabelMetadataName: ns, LabelName: ns}
}

func (x *Calc) serviceAccountLabels(ns, sa string) map[string]string {
	if l, ok := x.saLabels[ns+"/"+sa]; ok {
		return l
	}
	return map[string]string{LabelName: sa}
}

// Candidates are the policies that may apply to an endpoint of namespace
// ns (its namespace's and the global ones), in Policies order.
func (x *Calc) Candidates(ns string) []*Policy {
	own := x.nsPols[ns]
	if len(x.global) == 0 {
		return own
	}
	if len(own) == 0 {
		return x.global
	}
	out := make([]*Policy, 0, len(own)+len(x.global))
	for _, p := range x.Policies {
		if p.Namespace == "" || p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// AppliesTo reports whether the policy selects the endpoint
// (active_rules_calculator.go: the policy's selector, with its namespace
// and service account selectors folded in).
func (x *Calc) AppliesTo(p *Policy, ep *Endpoint) bool {
	if p.bad || p.Selector == nil {
		return false
	}
	if p.Namespace != "" && ep.Namespace != p.Namespace {
		return false
	}
	if !p.Selector.Evaluate(ep.Labels) {
		return false
	}
	if p.NamespaceSelector != nil && !p.NamespaceSelector.Evaluate(x.NamespaceLabelsOf(ep.Namespace)) {
		return false
	}
	if p.SASelector != nil && !p.SASelector.Evaluate(x.serviceAccountLabels(ep.Namespace, ep.ServiceAccount)) {
		return false
	}
	return true
}

// Tier is the policies of one tier that apply to an endpoint in one
// direction, in order.
type Tier struct {
	Name     string
	Policies []*Policy
}

// Active lists, tier by tier (tiers with no applying policy left out),
// the policies that apply to the endpoint for a direction
// (policy_resolver.go's tiers for the endpoint).
func (x *Calc) Active(ep *Endpoint, ingress bool) []Tier {
	return x.ActiveAmong(ep, x.Candidates(ep.Namespace), ingress)
}

// ActiveAmong is Active over given candidates (Candidates of the
// endpoint's namespace), for callers that ask both directions.
func (x *Calc) ActiveAmong(ep *Endpoint, cands []*Policy, ingress bool) []Tier {
	var out []Tier
	for _, tier := range x.Tiers {
		var sets []*Policy
		for _, p := range cands {
			if p.Tier != tier || (ingress && !p.Ingress) || (!ingress && !p.Egress) || !x.AppliesTo(p, ep) {
				continue
			}
			sets = append(sets, p)
		}
		if len(sets) > 0 {
			out = append(out, Tier{Name: tier, Policies: sets})
		}
	}
	return out
}

// Profiles are the endpoint's profiles (conversion.go: kns.<namespace>, and
// ksa.<namespace>.<service account>).
func Profiles(ep *Endpoint) []string {
	return []string{"kns." + ep.Namespace, "ksa." + ep.Namespace + "." + ep.ServiceAccount}
}

// MemberKey is what decides a rule side's IP set: its selectors and, for a
// selector without a namespace selector, the policy's namespace.
type MemberKey struct {
	Selector, NamespaceSelector, Namespace, SANames, SASelector string
}

// KeyOf is the key of a rule side's IP set.
func KeyOf(p *Policy, e Entity) MemberKey {
	k := MemberKey{Selector: e.Selector, NamespaceSelector: "\x00", SASelector: e.SASelector}
	if e.NamespaceSelector != "" {
		k.NamespaceSelector = e.NamespaceSelector
	} else {
		k.Namespace = p.Namespace
	}
	if len(e.SANames) > 0 {
		k.SANames = strings.Join(e.SANames, "\x00") + "\x00"
	}
	return k
}

// Members are the endpoints (positions in Endpoints, ascending) a rule
// side's selectors match (the IP set Felix makes for them): within the
// namespaces its namespace selector matches, else the policy's namespace,
// else (a global policy) every namespace; running as one of its service
// account names and under a service account its selector matches, when
// given. ok is false when a selector does not parse. Results are shared
// between rules with the same key; callers must not change them.
func (x *Calc) Members(p *Policy, e Entity) (members []int, ok bool) {
	k := KeyOf(p, e)
	x.mu.Lock()
	m, done := x.members[k]
	x.mu.Unlock()
	if done {
		return m, m != nil || x.parses(e)
	}
	sel, nsSel, saSel, good := x.compile(e)
	if !good {
		return nil, false
	}
	var scope []int
	all := false
	switch {
	case nsSel != nil:
		okNS := x.namespaceMatches(e.NamespaceSelector, nsSel)
		for ns, idx := range x.byNS {
			if okNS[ns] {
				scope = append(scope, idx...)
			}
		}
		slices.Sort(scope)
	case p.Namespace != "":
		scope = x.byNS[p.Namespace]
	default:
		all = true
	}
	visit := func(i int) {
		if x.memberOf(&x.Endpoints[i], e, sel, saSel) {
			members = append(members, i)
		}
	}
	if all {
		for i := range x.Endpoints {
			visit(i)
		}
	} else {
		for _, i := range scope {
			visit(i)
		}
	}
	x.mu.Lock()
	x.members[k] = members
	x.mu.Unlock()
	return members, true
}

func (x *Calc) parses(e Entity) bool {
	_, _, _, ok := x.compile(e)
	return ok
}

func (x *Calc) compile(e Entity) (sel, nsSel, saSel selector.Selector, ok bool) {
	if sel = x.parsed(e.Selector); sel == nil {
		return nil, nil, nil, false
	}
	if e.NamespaceSelector != "" {
		if nsSel = x.parsed(e.NamespaceSelector); nsSel == nil {
			return nil, nil, nil, false
		}
	}
	if e.SASelector != "" {
		if saSel = x.parsed(e.SASelector); saSel == nil {
			return nil, nil, nil, false
		}
	}
	return sel, nsSel, saSel, true
}

// parsed parses a selector once; nil when it does not parse.
func (x *Calc) parsed(s string) selector.Selector {
	x.mu.Lock()
	sel, ok := x.sels[s]
	x.mu.Unlock()
	if ok {
		return sel
	}
	sel, _ = parse(s)
	x.mu.Lock()
	x.sels[s] = sel
	x.mu.Unlock()
	return sel
}

// namespaceMatches evaluates a namespace selector once per namespace.
func (x *Calc) namespaceMatches(key string, nsSel selector.Selector) map[string]bool {
	x.mu.Lock()
	okNS, seen := x.nsMatches[key]
	x.mu.Unlock()
	if seen {
		return okNS
	}
	okNS = map[string]bool{}
	for ns := range x.byNS {
		okNS[ns] = nsSel.Evaluate(x.NamespaceLabelsOf(ns))
	}
	x.mu.Lock()
	x.nsMatches[key] = okNS
	x.mu.Unlock()
	return okNS
}

func (x *Calc) memberOf(ep *Endpoint, e Entity, sel, saSel selector.Selector) bool {
	if !sel.Evaluate(ep.Labels) {
		return false
	}
	if len(e.SANames) > 0 && !slices.Contains(e.SANames, ep.ServiceAccount) {
		return false
	}
	if saSel != nil && !saSel.Evaluate(x.serviceAccountLabels(ep.Namespace, ep.ServiceAccount)) {
		return false
	}
	return true
}

// InSet reports whether the endpoint is a member of the rule side's IP
// set (Members, for one endpoint); ok is false when a selector does not
// parse.
func (x *Calc) InSet(p *Policy, e Entity, ep *Endpoint) (in, ok bool) {
	if e.c != nil {
		return e.c.inSet(p, ep)
	}
	c := x.compileEntity(e, false)
	return c.inSet(p, ep)
}

// compiledEntity is a rule side's selectors, parsed once, with its
// namespace selector evaluated on every namespace (New compiles every
// rule's sides, so that deciding takes no lock).
type compiledEntity struct {
	e                 *Calc
	sel, nsSel, saSel selector.Selector
	nsOK              map[string]bool
	names             []string
	bad               bool
	notSel, notSelBad bool
	notSelector       selector.Selector
	hasSelector       bool
	nsSelectorGiven   bool
}

func (x *Calc) compileEntity(e Entity, withNot bool) *compiledEntity {
	c := &compiledEntity{e: x, names: e.SANames, hasSelector: e.HasSelector(), nsSelectorGiven: e.NamespaceSelector != ""}
	var good bool
	c.sel, c.nsSel, c.saSel, good = x.compile(e)
	c.bad = !good
	if good && c.nsSel != nil {
		c.nsOK = x.namespaceMatches(e.NamespaceSelector, c.nsSel)
	}
	if withNot && e.NotSelector != "" {
		c.notSel = true
		c.notSelector = x.parsed(e.NotSelector)
		c.notSelBad = c.notSelector == nil
	}
	return c
}

func (c *compiledEntity) inScope(p *Policy, ep *Endpoint) bool {
	switch {
	case c.nsSelectorGiven:
		ok, known := c.nsOK[ep.Namespace]
		if !known {
			ok = c.nsSel.Evaluate(c.e.NamespaceLabelsOf(ep.Namespace))
		}
		return ok
	case p.Namespace != "":
		return ep.Namespace == p.Namespace
	}
	return true
}

func (c *compiledEntity) inSet(p *Policy, ep *Endpoint) (in, ok bool) {
	if c.bad {
		return false, false
	}
	if !c.inScope(p, ep) {
		return false, true
	}
	if !c.sel.Evaluate(ep.Labels) {
		return false, true
	}
	if len(c.names) > 0 && !slices.Contains(c.names, ep.ServiceAccount) {
		return false, true
	}
	if c.saSel != nil && !c.saSel.Evaluate(c.e.serviceAccountLabels(ep.Namespace, ep.ServiceAccount)) {
		return false, true
	}
	return true, true
}

// inNotSet reports whether the endpoint is in the notSelector's set (the
// same scope as the selector's).
func (c *compiledEntity) inNotSet(p *Policy, ep *Endpoint) (in, ok bool) {
	if c.notSelBad || (c.nsSelectorGiven && c.nsSel == nil) {
		return false, false
	}
	if !c.inScope(p, ep) {
		return false, true
	}
	return c.notSelector.Evaluate(ep.Labels), true
}

// compileRules compiles every rule side of the policies (New).
func (x *Calc) compileRules() {
	for _, p := range x.Policies {
		for _, rules := range [][]Rule{p.In, p.Out} {
			for i := range rules {
				rules[i].Src.c = x.compileEntity(rules[i].Src, true)
				rules[i].Dst.c = x.compileEntity(rules[i].Dst, true)
			}
		}
	}
}
