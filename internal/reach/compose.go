package reach

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// worker evaluates rows; memo lives for one row, the reason caches for
// the whole run.
type worker struct {
	an *analyzer
	// felixMemo keeps Felix's ingress decisions (felixEnd).
	felixMemo map[felixKey]decision
	// slots memoizes a row's sub-results by pod column and rel; gen
	// marks the current row's.
	slots   []subRes
	slotGen []uint32
	gen     uint32
	subs    []subRes
	wheres  []where
	memo    map[subKey]subRes
	know    [knowSlots]knowSlot
	near    classes.Bitset // classes sharing a node with the row's source
	// unlike and unlikeCol: what a copied row cannot take (markUnlike).
	unlike, unlikeCol classes.Bitset
	// copyable, when set, records which of the row's cells other rows
	// may copy (rowFrom); col is the column being filled.
	copyable []bool
	col      int
	// diffJ and diffC collect a copied row's differences (rowFrom).
	diffJ   []int32
	diffC   []Cell
	deny    map[denyKey]int32
	clsDeny map[clsDenyKey]int32
	denyTab [][denyWays]denyEntry // by class id × direction
	acl     map[aclKey]int32
	misc    map[string]int32
}

type subKey struct {
	b     int32 // class id, or a host id
	proto protoID
	port  int
	rel   rel
}

type listenKey struct {
	cls   int
	proto protoID
	port  int
}

type denyKey struct {
	egress bool
	cls    int
	proto  protoID
	port   int
	ip     netip.Addr // the peer, when it is an address
}

type clsDenyKey struct {
	egress bool
	proto  protoID
	cls    int32
	port   int32
}

// denyWays is how many denials per class and direction the worker keeps
// at hand (a class serves a few ports); more go to the map.
const denyWays = 4

type denyEntry struct {
	ok    bool
	proto protoID
	port  int32
	id    int32
}

// denied finds a class's denial reason: in the class's few entries, else
// the map.
func (w *worker) denied(k clsDenyKey) (int32, bool) {
	if int(k.cls) < len(w.denyTab)/2 {
		i := int(k.cls) * 2
		if k.egress {
			i++
		}
		for _, e := range w.denyTab[i] {
			if e.ok && e.proto == k.proto && e.port == k.port {
				return e.id, true
			}
		}
	}
	id, ok := w.clsDeny[k]
	return id, ok
}

func (w *worker) putDenied(k clsDenyKey, id int32) {
	if n := 2 * len(w.an.Classes); len(w.denyTab) != n {
		w.denyTab = make([][denyWays]denyEntry, n)
	}
	i := int(k.cls) * 2
	if k.egress {
		i++
	}
	for j := range w.denyTab[i] {
		if !w.denyTab[i][j].ok {
			w.denyTab[i][j] = denyEntry{ok: true, proto: k.proto, port: k.port, id: id}
			return
		}
	}
	w.clsDeny[k] = id
}

type aclKey struct {
	ep     *classes.EndpointACLs
	cls    int
	egress bool
	rule   int
	k8s    int32 // the Kubernetes-semantics reason it is compared with
}

func (an *analyzer) newWorker() *worker {
	return &worker{an: an, memo: map[subKey]subRes{}, deny: map[denyKey]int32{}, clsDeny: map[clsDenyKey]int32{},
		acl: map[aclKey]int32{}, misc: map[string]int32{}}
}

// reason interns a rare reason through the worker's cache; key names it
// without building its text.
func (w *worker) reason(key string, mk func() Reason) int32 {
	if id, ok := w.misc[key]; ok {
		return id
	}
	id := w.an.intern(mk())
	w.misc[key] = id
	return id
}

func flow(proto trace.Proto, port int) string {
	if proto == trace.ICMP {
		return "ICMP"
	}
	return fmt.Sprintf("%s/%d", proto.Upper(), port)
}

func egressHop(c *classes.Class) string {
	if c.OS == "windows" {
		return "VFP ACL_ENDPOINT_LAYER ACL_ENDPOINT_GROUP_IPV4_OUT"
	}
	return "Calico filter-cali-fw (egress)"
}

func ingressHop(c *classes.Class) string {
	if c.OS == "windows" {
		return "VFP ACL_ENDPOINT_LAYER ACL_ENDPOINT_GROUP_IPV4_IN"
	}
	return "Calico filter-cali-tw (ingress)"
}

// prepareReasons interns the reasons classes and rules share.
func (an *analyzer) prepareReasons() {
	for _, c := range an.Classes {
		c.NoEg = an.intern(Reason{Text: "no NetworkPolicy selects " + c.Label + " for egress"})
		c.NoIn = an.intern(Reason{Text: "no NetworkPolicy selects " + c.Label + " for ingress"})
	}
	for _, list := range an.Pol.ByNS {
		for _, p := range list {
			for _, r := range append(append([]*classes.Rule(nil), p.InRules...), p.EgRules...) {
				r.Reason = an.intern(Reason{Text: "allowed by " + r.String()})
			}
		}
	}
}

// k8s decides one end: by the class-level evaluator of NetworkPolicies
// (the Felix calculation's semantics for them, which the tests hold it
// to), or by Felix's decision when a Calico policy applies (felixEnd).
func (w *worker) k8s(c *classes.Class, egress bool, p classes.Peer, peerIP netip.Addr, proto trace.Proto, port int) decision {
	an := w.an
	if egress && c.CalicoOut || !egress && c.CalicoIn {
		return w.felixEnd(c, egress, p, peerIP, proto, port)
	}
	pols := c.InPols
	if egress {
		pols = c.EgPols
	}
	if len(pols) == 0 {
		if egress {
			return decision{allowed: true, reason: c.NoEg}
		}
		return decision{allowed: true, reason: c.NoIn}
	}
	var ok bool
	var r *classes.Rule
	if egress {
		ok, r = an.Pol.Egress(c, p, proto.Upper(), int32(port))
	} else {
		ok, r = an.Pol.Ingress(c, p, proto.Upper(), int32(port))
	}
	if ok {
		return decision{allowed: true, reason: r.Reason}
	}
	// A denial names no peer class: keyed without an address, the cache
	// hashes 12 bytes rather than 40.
	ck := clsDenyKey{egress: egress, cls: int32(c.ID), proto: pid(proto), port: int32(port)}
	k := denyKey{egress: egress, cls: c.ID, proto: pid(proto), port: port, ip: peerIP}
	if p.Cls != nil {
		if id, ok := w.denied(ck); ok {
			return decision{reason: id}
		}
	} else if id, ok := w.deny[k]; ok {
		return decision{reason: id}
	}
	var text string
	if egress {
		text = fmt.Sprintf("denied: %s is selected for egress by %s and no rule allows %s to the destination", c.Label, classes.PolNames(pols), flow(proto, port))
	} else {
		from := "the source"
		if p.Cls == nil {
			from = peerIP.String()
			if n := an.NodeByIP[peerIP]; n != nil {
				from += " (node " + n.Name + ")"
			} else if n, dev := an.tunnelNode(peerIP); n != "" {
				from += " (" + dev + " of " + n + ")"
			}
		}
		text = fmt.Sprintf("denied: %s is selected for ingress by %s and no rule allows %s from %s", c.Label, classes.PolNames(pols), flow(proto, port), from)
	}
	hop := ingressHop(c)
	if egress {
		hop = egressHop(c)
	}
	id := an.intern(Reason{Hop: hop, Text: text})
	if egress {
		an.markEgress(id)
	}
	if p.Cls != nil {
		w.putDenied(ck, id)
	} else {
		w.deny[k] = id
	}
	return decision{reason: id}
}

// felixEnd decides one end of class c whose policies include a
// projectcalico.org one: the Felix calculation's decision for its
// representative (felix.Calc.DecideEndpoint, what trace asks on Linux).
func (w *worker) felixEnd(c *classes.Class, egress bool, p classes.Peer, peerIP netip.Addr, proto trace.Proto, port int) decision {
	an := w.an
	tiers := c.FIn
	if egress {
		tiers = c.FOut
	}
	f := felix.Flow{Peer: peerIP, Proto: proto.Upper(), DstPort: int32(port)}
	if p.Cls != nil {
		// Named by role, so that a template row's cell holds for
		// another source that the rules see alike (markUnlike).
		f.PeerName = "the source"
		if egress {
			f.PeerName = "the destination"
		}
	}
	// An ingress decision depends on the peer only through which rules'
	// source sides match it: decisions are kept by that signature.
	var key felixKey
	cache := !egress && p.Cls != nil
	if cache {
		key = felixKey{cls: int32(c.ID), proto: pid(proto), port: int32(port)}
		n := 0
		for _, t := range tiers {
			for _, pol := range t.Policies {
				for i := range pol.In {
					if n == 64 {
						cache = false
					} else if an.E.Felix().PeerSideMatches(pol, &pol.In[i], true, peerIP, p.Cls.FEP) {
						key.sig |= 1 << n
					}
					n++
				}
			}
		}
		if d, ok := w.felixMemo[key]; ok && cache {
			return d
		}
	}
	d := an.E.Felix().DecideEndpoint(c.FEP, tiers, !egress, f)
	r := Reason{Text: d.Reason}
	if !d.Allowed {
		r.Hop = ingressHop(c)
		if egress {
			r.Hop = egressHop(c)
		}
	}
	id := an.intern(r)
	if egress {
		an.markEgress(id)
	}
	out := decision{allowed: d.Allowed, reason: id}
	if cache {
		if w.felixMemo == nil {
			w.felixMemo = map[felixKey]decision{}
		}
		w.felixMemo[key] = out
	}
	return out
}

// felixKey keeps a Felix ingress decision of a class: the flow and which
// rules' source sides match the peer (felixEnd).
type felixKey struct {
	cls, port int32
	proto     protoID
	sig       uint64
}

// end decides class c's side of a connection: egress toward the peer, or
// ingress from it. A Windows pod's side is its endpoint's HNS ACLs (those
// of member, or of the class's first pod), which is what the dataplane
// enforces; the reason names the policies when Kubernetes semantics
// agree, and what Calico skipped when they do not.
func (w *worker) end(c *classes.Class, member netip.Addr, egress bool, p classes.Peer, peerIP netip.Addr, proto trace.Proto, port int) decision {
	k := w.k8s(c, egress, p, peerIP, proto, port)
	if c.OS != "windows" {
		return k
	}
	var x *classes.EndpointACLs
	switch {
	case member.IsValid():
		// A node's own pods: the host rule is the member's endpoint's.
		x = w.an.EndpointACLs(member)
	case egress && c.ACLOut, !egress && c.ACLIn:
		x = c.ACL
	}
	if x == nil {
		return k
	}
	i := x.Match(egress, peerIP, proto, port)
	rules, texts, host, skipped, none := x.In, x.InText, x.HostIn, x.SkipIn, x.InNone
	if egress {
		rules, texts, host, skipped, none = x.Out, x.OutText, x.HostOut, x.SkipOut, x.OutNone
	}
	allowed := i < 0 || rules[i].Action == "Allow"
	if allowed == k.allowed && (i < 0 || !host[i]) {
		return k
	}
	ak := aclKey{ep: x, cls: c.ID, egress: egress, rule: i, k8s: k.reason}
	if id, ok := w.acl[ak]; ok {
		return decision{allowed: allowed, reason: id}
	}
	rule := none
	if i >= 0 {
		rule = texts[i]
	}
	what := "ingress of " + c.Label
	hop := ingressHop(c)
	if egress {
		what, hop = "egress of "+c.Label, egressHop(c)
	}
	text := fmt.Sprintf("%s: the HNS ACLs' first match is %s", what, rule)
	switch {
	case i >= 0 && host[i]:
		text += " (the host's own traffic to its pods)"
	case allowed != k.allowed:
		w.an.rmu.Lock()
		kt := w.an.reasons[k.reason].Text
		w.an.rmu.Unlock()
		text += "; Kubernetes semantics say otherwise (" + kt + ")"
		if len(skipped) > 0 {
			text += ", but Calico on Windows does not program every rule: " + strings.Join(skipped, " | ")
		}
	}
	if !allowed {
		text = "denied: " + text
	}
	r := Reason{Text: text}
	if !allowed {
		r.Hop = hop
	}
	id := w.an.intern(r)
	if egress {
		w.an.markEgress(id)
	}
	w.acl[ak] = id
	return decision{allowed: allowed, reason: id}
}

// tunnelNode names the Linux node whose vxlan.calico or tunl0 has the
// address, and that device.
func (an *analyzer) tunnelNode(a netip.Addr) (node, dev string) {
	// The compiled nodes' tunnel addresses, read without compiling them.
	for _, n := range an.Nodes {
		if n.Windows {
			continue
		}
		if t, ok := an.E.Plane().LinuxTunnel(n.Name); ok && t == a {
			return n.Name, "vxlan.calico"
		}
		if t, ok := an.E.Plane().LinuxIPIP(n.Name); ok && t == a {
			return n.Name, "tunl0"
		}
	}
	return "", ""
}

// listens decides whether class b answers on proto/port.
func (an *analyzer) listens(b *classes.Class, proto trace.Proto, port int) decision {
	k := listenKey{b.ID, pid(proto), port}
	an.lmu.Lock()
	d, ok := an.listen[k]
	an.lmu.Unlock()
	if ok {
		return d
	}
	d = decision{allowed: true}
	if proto != trace.ICMP {
		if _, ok := imagecatalog.Listen(b.Rep, b.OS, corev1.Protocol(proto.Upper()), int32(port)); !ok {
			ports := imagecatalog.Ports(b.Rep, b.OS)
			listens := "nothing"
			if len(ports) > 0 {
				listens = strings.Join(ports, ", ")
			}
			what := "the connection is refused"
			if proto == trace.UDP {
				what = "ICMP port unreachable"
			}
			d.reason = an.intern(Reason{Hop: "pod", Text: fmt.Sprintf("nothing listens on %s in %s (it listens on %s): %s", flow(proto, port), b.Label, listens, what)})
			d.allowed = false
		}
	}
	an.lmu.Lock()
	an.listen[k] = d
	an.lmu.Unlock()
	return d
}

// target is a class at a port as a destination: what it answers there,
// and its slot in a row's memo (its pod column), or -1.
type target struct {
	cls   *classes.Class
	proto trace.Proto
	port  int
	l     decision
	slot  int
}

// prepareColumns fills what every row asks of a column: a pod column's
// listener, a Service column's view from each node group.
func (an *analyzer) prepareColumns(cols []Destination) {
	an.colIndex = map[listenKey]int{}
	for j := range cols {
		d := &cols[j]
		if d.Kind == "pods" && !d.noListen {
			d.tgt = target{cls: d.class, proto: d.Proto, port: d.Port, l: an.listens(d.class, d.Proto, d.Port), slot: j}
			an.colIndex[listenKey{d.class.ID, pid(d.Proto), d.Port}] = j
		}
	}
	for j := range cols {
		d := &cols[j]
		if d.Kind != "service" || d.itpLocal {
			continue
		}
		d.gviews = make([]*svcView, len(an.Groups))
		for g, nodes := range an.Groups {
			v := an.view(nodes[0], d)
			an.targets(v, d.Proto)
			d.gviews[g] = v
		}
	}
}

// row fills one source's cells; with copyable (a template row), it also
// says which cells hold for the other sources of its signature.
func (w *worker) row(src *Source, cols []Destination, cells []Cell, copyable []bool) {
	w.startRow(src, cols)
	w.copyable = copyable
	for j := range cols {
		w.col = j
		cells[j] = w.cell(src, &cols[j])
	}
	w.copyable = nil
}

func (w *worker) startRow(src *Source, cols []Destination) {
	clear(w.memo)
	if len(w.slots) < 2*len(cols) {
		w.slots = make([]subRes, 2*len(cols))
		w.slotGen = make([]uint32, 2*len(cols))
	}
	w.gen++
	if a := src.class; a != nil {
		// The classes with pods on a node of the source's, for rels.
		w.near = w.near.Reset(len(w.an.Classes))
		for _, n := range a.Nodes {
			for _, id := range w.an.NodeClasses[n] {
				w.near.Set(int(id))
			}
		}
	}
}

// rels is relsPods for the row's source a, whose node neighbours row
// collected: a word per pair instead of a walk over node sets.
func (w *worker) rels(a, b *classes.Class) (same, cross bool) {
	if a == b || w.an.Placements[a.Placement].Group != w.an.Placements[b.Placement].Group {
		return relsPods(w.an, a, b)
	}
	return w.near.Has(b.ID), pairExists(a, b, relCross)
}

func (w *worker) cell(src *Source, d *Destination) Cell {
	an := w.an
	if d.Kind == "service" {
		c := w.serviceCell(src, d)
		if w.copyable != nil && src.class != nil {
			w.copyable[w.col] = w.svcCopyable(src.class, d, c)
		}
		return c
	}
	b := d.class
	if d.noListen {
		return Cell{Verdict: NotApplicable, Also: -1, Reason: w.reason(fmt.Sprintf("nolisten\x00%d", b.ID), func() Reason {
			return Reason{Text: b.Label + " listens on no port (no declared container port, no known server)"}
		})}
	}
	var subs []subRes
	var rels []rel
	if a := src.class; a != nil {
		if a == b && d.selfNA {
			return Cell{Verdict: NotApplicable, Also: -1, Reason: w.reason("self", func() Reason {
				return Reason{Text: "a single pod to itself: the connection does not leave the pod's network namespace"}
			})}
		}
		same, cross := w.rels(a, b)
		if cross {
			rels = append(rels, relCross)
			subs = append(subs, w.podPod(a, d.tgt, relCross))
		}
		if same {
			rels = append(rels, relSame)
			subs = append(subs, w.podPod(a, d.tgt, relSame))
		}
		if len(subs) == 2 && subs[0] != subs[1] {
			an.mu.Lock()
			an.split[an.Placements[a.Placement].Group] = true
			an.mu.Unlock()
		}
		if w.copyable != nil && !d.noListen {
			w.copyable[w.col] = w.podCopyable(a, d)
		}
	} else {
		n := src.node
		_, here := b.ByNode[n.Idx]
		if len(b.ByNode) > 1 || !here {
			rels = append(rels, relCross)
			subs = append(subs, w.nodePod(n, d.tgt, relCross))
		}
		if here {
			rels = append(rels, relSame)
			subs = append(subs, w.nodePod(n, d.tgt, relSame))
		}
	}
	return w.combine(subs, func(i int) string {
		if rels[i] == relSame {
			return "on the same node"
		}
		return "on other nodes"
	})
}

// combine merges sub-results: one verdict when they agree, else Partial.
func (w *worker) combine(subs []subRes, where func(int) string) Cell {
	if len(subs) == 0 {
		return Cell{Verdict: NotApplicable, Also: -1, Reason: w.reason("nothing", func() Reason { return Reason{Text: "no pair of pods to connect"} })}
	}
	first := subs[0]
	agree := true
	for _, s := range subs[1:] {
		if s.v != first.v {
			agree = false
		}
	}
	if agree {
		return Cell{Verdict: first.v, Reason: first.reason, Also: first.also}
	}
	var ok, bad []string
	failing := int32(-1)
	for i, s := range subs {
		if s.v == Allowed {
			ok = append(ok, where(i))
		} else {
			bad = append(bad, where(i))
			if failing < 0 {
				failing = s.reason
			}
		}
	}
	key := fmt.Sprintf("partial\x00%d\x00%s\x00%s", failing, strings.Join(ok, ","), strings.Join(bad, ","))
	return Cell{Verdict: Partial, Also: -1, Reason: w.reason(key, func() Reason {
		w.an.rmu.Lock()
		f := w.an.reasons[failing]
		w.an.rmu.Unlock()
		return Reason{Hop: f.Hop, Text: fmt.Sprintf("delivered to pods %s; not to pods %s: %s", strings.Join(ok, ", "), strings.Join(bad, ", "), f.Text)}
	})}
}

// svcPortKey finds a Service port in a node's dataplane.
type svcPortKey struct {
	vip   netip.Addr
	port  int
	proto trace.Proto
}

// svcView is what a node's dataplane does with a new connection to a
// Service port: pass (DNAT to one of the backends) or not.
type svcView struct {
	pass     bool
	backends []netip.AddrPort
	// tgts are the backends grouped (targets), once.
	once sync.Once
	tgts []*svcTarget
}

// view is the Service port as node n's kube-proxy programmed it
// (nftables maps on Linux, HNS load balancers on Windows).
func (an *analyzer) view(n *classes.NodeInfo, d *Destination) *svcView {
	an.viewMu.Lock()
	defer an.viewMu.Unlock()
	key := svcPortKey{d.vipAddr, d.Port, d.Proto}
	if n.Windows {
		m := an.wnViews[n.Idx]
		if m == nil {
			m = map[svcPortKey]*svcView{}
			if win := an.WinNode(n); win != nil {
				for _, lb := range win.LoadBalancers() {
					proto := trace.TCP
					if lb.Protocol == 17 {
						proto = trace.UDP
					} else if lb.Protocol != 6 {
						continue
					}
					for _, vip := range lb.FrontendVIPs {
						a, err := netip.ParseAddr(vip)
						if err != nil {
							continue
						}
						k := svcPortKey{a, lb.ExternalPort, proto}
						if _, dup := m[k]; dup {
							continue
						}
						v := &svcView{pass: lb.Kind == "ClusterIP" && len(lb.Backends) > 0}
						for _, b := range lb.Backends {
							if ba, err := netip.ParseAddr(b); err == nil {
								v.backends = append(v.backends, netip.AddrPortFrom(ba, uint16(lb.InternalPort)))
							}
						}
						m[k] = v
					}
				}
			}
			an.wnViews[n.Idx] = m
		}
		if v := m[key]; v != nil {
			return v
		}
		return &svcView{}
	}
	m := an.lxViews[n.Idx]
	if m == nil {
		m = map[svcPortKey]*svcView{}
		if lx := n.LX(); lx != nil {
			for _, sp := range lx.ServicePorts() {
				proto, ok := trace.ParseProto(sp.Protocol)
				if !ok {
					continue
				}
				v := &svcView{pass: sp.NoEndpoints == "" && len(sp.Endpoints) > 0}
				for _, ep := range sp.Endpoints {
					v.backends = append(v.backends, ep.Addr)
				}
				m[svcPortKey{sp.ClusterIP, sp.Port, proto}] = v
			}
		}
		an.lxViews[n.Idx] = m
	}
	if v := m[key]; v != nil {
		return v
	}
	return &svcView{}
}

// svcStage is the first stage of a connection to a Service port from a
// source whose dataplane does not balance it (no endpoints, no load
// balancer, a Windows host): a trace from the first pod, in class order,
// with the source's placement (or from the node) says why.
func (w *worker) svcStage(key svcKey, viewed bool, d *Destination) stageRes {
	an := w.an
	an.mu.RLock()
	s, ok := an.svcKnow[key]
	an.mu.RUnlock()
	if ok {
		return s
	}
	an.probeMu.Lock()
	defer an.probeMu.Unlock()
	an.mu.RLock()
	s, ok = an.svcKnow[key]
	an.mu.RUnlock()
	if ok {
		return s
	}
	var src trace.Source
	found := false
	switch {
	case int(key.src) >= len(an.Placements):
		src, found = nodeSource(an.Nodes[int(key.src)-len(an.Placements)]), true
	case key.src >= 0:
		if cs := an.ByPlacement[key.src]; len(cs) > 0 {
			src, found = podSource(cs[0].Members[0]), true
		}
	default: // internalTrafficPolicy Local: the pods on one node
		n := int(-1 - key.src)
		for _, c := range an.Classes {
			if ms := c.ByNode[n]; len(ms) > 0 {
				src, found = podSource(c.Members[ms[0]]), true
				break
			}
		}
	}
	if !found {
		return stageRes{}
	}
	port := key.port
	if !key.vip.IsValid() {
		port = d.Port
	}
	res := an.E.Trace(src, d.svcTarget, d.Proto, port)
	an.traces.Add(1)
	s = an.classify(res).p1
	if s.st == pass && viewed {
		// The node's dataplane does not balance the port, yet the trace
		// went on: take the trace's answer for the whole stage.
		an.mu.Lock()
		an.mismatch = append(an.mismatch, fmt.Sprintf("%s → %s %s/%d: kube-proxy's view has no backends, the trace went on (%s)", res.From, res.To, d.Proto, port, res.Outcome))
		an.mu.Unlock()
		s = stageRes{st: fail, reason: an.intern(Reason{Hop: hopOf(res), Text: res.Reason})}
		if res.Delivered {
			s = stageRes{st: pass}
		}
	}
	an.mu.Lock()
	an.svcKnow[key] = s
	an.mu.Unlock()
	return s
}

// svcTarget is one kind of backend of a Service port: the backends that
// are pods of one class at one port (with the nodes they run on), or one
// host address.
type svcTarget struct {
	tgt      target
	cls      *classes.Class
	host     hostTarget
	port     int
	nodes    classes.Bitset
	nodeList []int // the same, ascending
	name     string
}

// targets groups a view's backends, once per view; rows ask on every
// Service cell, so the answer is read without a lock once made.
func (an *analyzer) targets(v *svcView, proto trace.Proto) []*svcTarget {
	v.once.Do(func() { v.tgts = an.groupTargets(v.backends, proto) })
	return v.tgts
}

func (an *analyzer) groupTargets(backends []netip.AddrPort, proto trace.Proto) []*svcTarget {
	var tgts []*svcTarget
	idx := map[string]*svcTarget{}
	for _, ap := range backends {
		var t *svcTarget
		if c := an.PodClass[ap.Addr()]; c != nil {
			k := fmt.Sprintf("c%d:%d", c.ID, ap.Port())
			if t = idx[k]; t == nil {
				t = &svcTarget{cls: c, port: int(ap.Port()), nodes: classes.NewBitset(len(an.Nodes)), name: c.Label}
				idx[k] = t
				tgts = append(tgts, t)
			}
			for _, m := range c.Members {
				if m.IP == ap.Addr() {
					t.nodes.Set(m.Node)
				}
			}
			continue
		}
		k := "h" + ap.String()
		if idx[k] == nil {
			t = &svcTarget{host: hostTarget{ap: ap, node: an.NodeByIP[ap.Addr()]}, port: int(ap.Port()), nodes: classes.NewBitset(len(an.Nodes)), name: ap.String()}
			if t.host.node != nil {
				t.nodes.Set(t.host.node.Idx)
			}
			idx[k] = t
			tgts = append(tgts, t)
		}
	}
	for _, t := range tgts {
		t.nodeList = t.nodes.List()
		if t.cls != nil {
			t.tgt = target{cls: t.cls, proto: proto, port: t.port, slot: -1}
			if j, ok := an.colIndex[listenKey{t.cls.ID, pid(proto), t.port}]; ok {
				t.tgt.slot = j
			}
			t.tgt.l = an.listens(t.cls, proto, t.port)
		}
	}
	return tgts
}

// serviceCell is a source → a Service port: kube-proxy on the source's
// node balances the connection to one backend; the cell is Allowed when
// every backend the source can get is reached, Partial when some are.
func (w *worker) serviceCell(src *Source, d *Destination) Cell {
	an := w.an
	w.subs, w.wheres = w.subs[:0], w.wheres[:0]
	if a := src.class; a != nil {
		if !d.itpLocal {
			n := an.Groups[an.Placements[a.Placement].Group][0]
			w.serviceBucket(src, d, n, a.NodeBits, a.Nodes)
		} else {
			idx := make([]int, 0, len(a.ByNode))
			for i := range a.ByNode {
				idx = append(idx, i)
			}
			sort.Ints(idx)
			for _, i := range idx {
				nodes := classes.NewBitset(len(an.Nodes))
				nodes.Set(i)
				w.serviceBucket(src, d, an.Nodes[i], nodes, []int{i})
			}
		}
	} else {
		nodes := classes.NewBitset(len(an.Nodes))
		nodes.Set(src.node.Idx)
		w.serviceBucket(src, d, src.node, nodes, []int{src.node.Idx})
	}
	return w.combineBackends(w.subs, w.wheres)
}

// serviceBucket adds the sub-results of the source's pods on nodes, whose
// connections node n's dataplane balances.
func (w *worker) serviceBucket(src *Source, d *Destination, n *classes.NodeInfo, nodes classes.Bitset, nodeList []int) {
	an := w.an
	var v *svcView
	switch {
	case src.class != nil && d.gviews != nil:
		v = d.gviews[an.Placements[src.class.Placement].Group]
	case src.node == nil || !src.node.Windows:
		v = an.view(n, d)
	}
	if v == nil || !v.pass {
		key := svcKey{vip: d.vipAddr, port: d.Port, proto: d.Proto}
		switch {
		case src.node != nil:
			key.src = an.nodeSrcID(src.node)
			if src.node.Windows {
				// A Windows host's connection to any ClusterIP ends in
				// HNS before a load balancer is looked at.
				key.vip, key.port = netip.Addr{}, 0
			}
		case d.itpLocal:
			key.src = -1 - int32(n.Idx)
		default:
			key.src = int32(src.class.Placement)
		}
		st := w.svcStage(key, v != nil, d)
		if st.st == fail {
			w.subs = append(w.subs, subRes{v: Denied, reason: st.reason, also: -1})
			w.wheres = append(w.wheres, where{})
			return
		}
		if st.st == pass {
			v = an.view(n, d)
		}
		if v == nil || len(v.backends) == 0 {
			w.subs = append(w.subs, subRes{v: NotApplicable, also: -1, reason: w.reason("nobackend", func() Reason {
				return Reason{Text: "the twin cannot tell which backend the connection reaches"}
			})})
			w.wheres = append(w.wheres, where{})
			return
		}
	}
	for _, t := range an.targets(v, d.Proto) {
		// A class with no pod on the row's nodes has no backend there.
		same := (t.cls == nil || src.class == nil || d.itpLocal || w.near.Has(t.cls.ID)) &&
			classes.SharesNode(nodes, nodeList, t.nodes, t.nodeList)
		cross := !(len(nodeList) == 1 && len(t.nodeList) == 1 && same)
		for _, r := range [2]rel{relCross, relSame} {
			if r == relCross && !cross || r == relSame && !same {
				continue
			}
			var s subRes
			switch {
			case t.cls != nil && src.class != nil:
				s = w.podPod(src.class, t.tgt, r)
			case t.cls != nil:
				s = w.nodePod(src.node, t.tgt, r)
			default:
				s = w.toHost(src.class, src.node, t.host, d.Proto, r)
			}
			w.subs = append(w.subs, s)
			w.wheres = append(w.wheres, where{t: t, same: r == relSame})
		}
	}
}

// combineBackends merges the backends' sub-results of a Service cell.
// where names a Service cell's sub-result: a kind of backend, on the
// source's node or not (text only for the partial cells that say it).
type where struct {
	t    *svcTarget
	same bool
}

func (wh where) String() string {
	switch {
	case wh.t == nil:
		return ""
	case wh.same:
		return wh.t.name + " on the same node"
	}
	return wh.t.name
}

func (w *worker) combineBackends(subs []subRes, wheres []where) Cell {
	if len(subs) == 0 {
		return Cell{Verdict: NotApplicable, Also: -1, Reason: w.reason("nobackend", func() Reason {
			return Reason{Text: "the twin cannot tell which backend the connection reaches"}
		})}
	}
	allowed, other := 0, -1
	for i, s := range subs {
		if s.v == Allowed {
			allowed++
		} else if other < 0 {
			other = i
		}
	}
	// Of the backends not reached, the first whose trace stopped where
	// the twin does not model what happens decides: then the cell's
	// verdict is not known either, and its reason says so.
	if other >= 0 {
		w.an.rmu.Lock()
		for i, s := range subs {
			if s.v != Allowed && s.reason >= 0 && int(s.reason) < len(w.an.reasons) && w.an.reasons[s.reason].NotModeled {
				other = i
				break
			}
		}
		w.an.rmu.Unlock()
	}
	switch {
	case allowed == len(subs):
		return Cell{Verdict: Allowed, Reason: subs[0].reason, Also: subs[0].also}
	case allowed == 0:
		return Cell{Verdict: subs[other].v, Reason: subs[other].reason, Also: -1}
	}
	f := subs[other]
	key := fmt.Sprintf("svcpartial\x00%d\x00%d\x00%d\x00%s", f.reason, allowed, len(subs), wheres[other].String())
	return Cell{Verdict: Partial, Also: -1, Reason: w.reason(key, func() Reason {
		w.an.rmu.Lock()
		r := w.an.reasons[f.reason]
		w.an.rmu.Unlock()
		return Reason{Hop: r.Hop, Text: fmt.Sprintf("delivered to %d of %d kinds of backend; not to %s: %s", allowed, len(subs), wheres[other].String(), r.Text), NotModeled: r.NotModeled}
	})}
}
