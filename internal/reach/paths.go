package reach

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// A trace from a pod to a pod passes, in this order: the source's own
// dataplane up to its egress policy (kube-proxy, routing: stage p1), the
// source's egress policy (E), the way to the destination's node (VXLAN,
// firewalls, decapsulation: p2), the destination's ingress policy (I),
// what lies between it and the pod (p3), whether the pod listens (L), and
// the reply's way back (r). E, I and L depend on the two classes and are
// decided at class level; p1, p2, p3 and r depend only on where the two
// pods sit — their placements, the same node or not — and on the protocol
// and port, and are learned from representative traces: one per stage that
// some cell needs and no trace has shown yet. The representative pair of a
// stage is the first pair of classes, in class order, that reaches the
// stage (its egress, ingress and listener let it through), so the traces
// walked and the reasons they give do not depend on the order in which
// parallel workers ask. A cell is the first stage that fails.

type rel uint8

const (
	relCross rel = iota
	relSame
)

// protoID is a protocol as a map key (its IP protocol number).
type protoID uint8

func pid(p trace.Proto) protoID { return protoID(p.Number()) }

func (p protoID) proto() trace.Proto {
	switch p {
	case 6:
		return trace.TCP
	case 17:
		return trace.UDP
	case 1:
		return trace.ICMP
	}
	return ""
}

type stageState uint8

const (
	unknown stageState = iota
	pass
	fail
)

type stageRes struct {
	st     stageState
	reason int32
}

// knowledge is what traces showed about one path.
type knowledge struct {
	p1, p2, p3, r stageRes
	// srcAt is the source address the destination's ingress hop saw (a
	// Linux node sends from its vxlan.calico address).
	srcAt netip.Addr
}

func (k *knowledge) stage(i int) stageRes {
	switch i {
	case 0:
		return k.p1
	case 1:
		return k.p2
	case 2:
		return k.p3
	}
	return k.r
}

type pathKind uint8

const (
	kindPods pathKind = iota // a class's pods → a class's pods
	kindNode                 // a node's host → a class's pods
	kindHost                 // a class's pods or a node → a host address
)

// pathKey identifies a path: source placement (or node), destination
// placement (or host address), the same node or not, protocol and port.
type pathKey struct {
	kind     pathKind
	src, dst int32
	rel      rel
	proto    protoID
	port     int32
}

// knowOf is what traces showed about a path, from the worker's copy:
// stages only go from unknown to known, so a copy is never wrong, only
// behind, and an unknown stage asks the shared one (learn).
func (w *worker) knowOf(key pathKey) knowledge {
	slot := &w.know[key.slot()]
	if !slot.ok || slot.key != key {
		*slot = knowSlot{key: key, k: w.an.getKnow(key), ok: true}
	}
	return slot.k
}

// knowSlot is an entry of a worker's copy of what traces showed, a
// direct-mapped cache by pathKey.slot: a row asks for a handful of paths,
// cell after cell, and a map lookup cost more than the rest of the cell.
type knowSlot struct {
	key pathKey
	k   knowledge
	ok  bool
}

const knowSlots = 256

// slot mixes every field into the top bits it takes: a row asks for the
// same-node and cross-node paths of a pair one after the other, which
// must not share a slot (the kind, relation and protocol once fell in bits
// the slot dropped, and the two evicted each other on every cell).
func (k pathKey) slot() int {
	h := uint32(k.src)*0x9e3779b1 ^ uint32(k.dst)*0x85ebca6b ^ uint32(k.port)*0xc2b2ae35 ^
		(uint32(k.proto)<<8|uint32(k.rel)<<4|uint32(k.kind))*0x27d4eb2f
	return int(h>>24) % knowSlots
}

// podPathKey is the path of class a's pods to target t's, on one node or
// two.
func podPathKey(a *classes.Class, t target, r rel) pathKey {
	return pathKey{kind: kindPods, src: int32(a.Placement), dst: int32(t.cls.Placement), rel: r, proto: pid(t.proto), port: int32(t.port)}
}

// svcKey identifies a Service port's first stage from a source.
type svcKey struct {
	src   int32
	vip   netip.Addr
	port  int
	proto trace.Proto
}

type decision struct {
	allowed bool
	reason  int32
}

type subRes struct {
	v      Verdict
	reason int32
	// also is an allowed connection's second reason (the ingress side).
	also int32
}

// ends are one pair's decisions: the source's egress (hasE false for a
// node), the destination's ingress (decided once the path is known when
// inLazy is set), and its listener.
type ends struct {
	hasE   bool
	e      decision
	in     decision
	inLazy func(knowledge) decision
	l      decision
}

func (en *ends) ingress(k knowledge) decision {
	if en.inLazy != nil {
		return en.inLazy(k)
	}
	return en.in
}

type pick func() (trace.Source, trace.Target, bool)

func (an *analyzer) nodeSrcID(n *classes.NodeInfo) int32 { return int32(len(an.Placements) + n.Idx) }

// hostTarget is a Service backend that is no pod of a class: a node's
// address (the API server, a host-network pod) or an address the twin
// does not know.
type hostTarget struct {
	ap   netip.AddrPort
	node *classes.NodeInfo
}

func (an *analyzer) hostID(h hostTarget) int32 {
	an.mu.Lock()
	defer an.mu.Unlock()
	id, ok := an.hostIDs[h.ap]
	if !ok {
		id = -1 - int32(len(an.hosts))
		an.hostIDs[h.ap] = id
		an.hosts = append(an.hosts, h)
	}
	return id
}

func (an *analyzer) getKnow(k pathKey) knowledge {
	an.mu.RLock()
	defer an.mu.RUnlock()
	if x := an.know[k]; x != nil {
		return *x
	}
	return knowledge{}
}

func isEgressHop(h trace.Hop) bool {
	return h.Leg == trace.LegRequest && h.Point == trace.PointEgressPolicy
}

func isIngressHop(h trace.Hop) bool {
	return h.Leg == trace.LegRequest && h.Point == trace.PointIngressPolicy
}

func hopOf(res *trace.Result) string { return strings.TrimSpace(res.AtNode + " " + res.AtComp) }

// classify reads what a trace shows about each stage.
func (an *analyzer) classify(res *trace.Result) knowledge {
	var k knowledge
	ok := stageRes{st: pass}
	failed := func() stageRes {
		return stageRes{st: fail, reason: an.intern(Reason{Hop: hopOf(res), Text: res.Reason, NotModeled: res.Outcome == trace.NotModeled})}
	}
	egSeen, inSeen := false, false
	last := -1
	for i, h := range res.Hops {
		if h.Leg != trace.LegRequest {
			continue
		}
		last = i
		if isEgressHop(h) {
			egSeen = true
		}
		if isIngressHop(h) && !inSeen {
			inSeen = true
			k.srcAt, _ = netip.ParseAddr(h.Before.Src)
		}
	}
	switch {
	case res.Delivered:
		k.p1, k.p2, k.p3, k.r = ok, ok, ok, ok
	case res.Drop == trace.ReasonReplyLost:
		k.p1, k.p2, k.p3, k.r = ok, ok, ok, failed()
	case last < 0:
		k.p1 = failed()
	case isEgressHop(res.Hops[last]):
		k.p1 = ok
	case isIngressHop(res.Hops[last]):
		k.p1, k.p2 = ok, ok
	case res.Drop == trace.ReasonNoListener && res.At == trace.PointListener:
		k.p1, k.p2, k.p3 = ok, ok, ok
	case inSeen:
		k.p1, k.p2, k.p3 = ok, ok, failed()
	case egSeen:
		k.p1, k.p2 = ok, failed()
	default:
		k.p1 = failed()
	}
	return k
}

// learn walks the representative trace of a stage of a path, unless a
// trace has shown the stage meanwhile, and records what it shows.
func (w *worker) learn(key pathKey, stage int) {
	an := w.an
	// One trace at a time per path; paths learn in parallel.
	an.mu.Lock()
	km := an.keyMu[key]
	if km == nil {
		km = &sync.Mutex{}
		an.keyMu[key] = km
	}
	an.mu.Unlock()
	km.Lock()
	defer km.Unlock()
	k := an.getKnow(key)
	if k.stage(stage).st != unknown {
		return
	}
	src, dst, en, ok := w.representative(key, stage, k)
	if !ok {
		return
	}
	res := an.E.Trace(src, dst, key.proto.proto(), int(key.port))
	an.traces.Add(1)
	got := an.classify(res)
	merge := func(dst *stageRes, s stageRes) {
		if dst.st == unknown {
			*dst = s
		}
	}
	merge(&k.p1, got.p1)
	merge(&k.p2, got.p2)
	merge(&k.p3, got.p3)
	merge(&k.r, got.r)
	if !k.srcAt.IsValid() {
		k.srcAt = got.srcAt
	}
	an.mu.Lock()
	an.know[key] = &k
	an.mu.Unlock()
	// The representative's own answer, composed from what is known now,
	// must be the trace's.
	kk := k
	out := w.compose(&kk, func(i int) stageRes { return kk.stage(i) }, en)
	if out.v == NotApplicable || (out.v == Allowed) != res.Delivered {
		an.mu.Lock()
		an.mismatch = append(an.mismatch, fmt.Sprintf("%s → %s %s/%d: composed %s, trace %s (%s)", res.From, res.To, key.proto.proto(), key.port, out.v, res.Outcome, res.Reason))
		an.mu.Unlock()
	}
}

// path composes a sub-result from the stages, learning those no trace has
// shown yet; fallback is the cell's own pair, traced when the stages
// cannot be learned (which the tests hold to never happen).
func (w *worker) path(key pathKey, en ends, fallback pick) subRes {
	an := w.an
	k := w.knowOf(key)
	ensure := func(i int) stageRes {
		if s := k.stage(i); s.st != unknown {
			return s
		}
		w.learn(key, i)
		k = an.getKnow(key)
		w.know[key.slot()] = knowSlot{key: key, k: k, ok: true}
		return k.stage(i)
	}
	out := w.compose(&k, ensure, en)
	if out.v != NotApplicable {
		return out
	}
	src, dst, ok := fallback()
	if !ok {
		return subRes{v: NotApplicable, also: -1, reason: w.reason("undetermined", func() Reason {
			return Reason{Text: "no representative trace could be walked for this path"}
		})}
	}
	res := an.E.Trace(src, dst, key.proto.proto(), int(key.port))
	an.traces.Add(1)
	an.mu.Lock()
	an.mismatch = append(an.mismatch, fmt.Sprintf("%s → %s %s/%d: no representative trace showed every stage; the cell's own trace: %s", res.From, res.To, key.proto.proto(), key.port, res.Outcome))
	an.mu.Unlock()
	if res.Delivered {
		return subRes{v: Allowed, also: -1, reason: w.reason("delivered", func() Reason { return Reason{Text: "delivered"} })}
	}
	return subRes{v: Denied, also: -1, reason: an.intern(Reason{Hop: hopOf(res), Text: res.Reason})}
}

// compose walks the stages in a trace's order and stops at the first that
// fails; a stage no trace could show gives NotApplicable.
func (w *worker) compose(k *knowledge, ensure func(int) stageRes, en ends) subRes {
	stop := func(s stageRes) subRes {
		if s.st == fail {
			return subRes{v: Denied, reason: s.reason, also: -1}
		}
		return subRes{v: NotApplicable, reason: -1, also: -1}
	}
	if s := ensure(0); s.st != pass {
		return stop(s)
	}
	eg := int32(-1)
	if en.hasE {
		if !en.e.allowed {
			return subRes{v: Denied, reason: en.e.reason, also: -1}
		}
		eg = en.e.reason
	}
	if s := ensure(1); s.st != pass {
		return stop(s)
	}
	d := en.ingress(*k)
	if !d.allowed {
		return subRes{v: Denied, reason: d.reason, also: -1}
	}
	if s := ensure(2); s.st != pass {
		return stop(s)
	}
	if !en.l.allowed {
		return subRes{v: Denied, reason: en.l.reason, also: -1}
	}
	if s := ensure(3); s.st != pass {
		return stop(s)
	}
	if eg < 0 {
		return subRes{v: Allowed, reason: d.reason, also: -1}
	}
	return subRes{v: Allowed, reason: eg, also: d.reason}
}

// reaches reports whether a pair's decisions let a connection reach stage.
func reaches(en ends, stage int, k knowledge) bool {
	if stage >= 1 && en.hasE && !en.e.allowed {
		return false
	}
	if stage >= 2 && !en.ingress(k).allowed {
		return false
	}
	if stage >= 3 && !en.l.allowed {
		return false
	}
	return true
}

// representative is the pair whose trace shows a stage of a path: the
// first, in class order, that has the placement and reaches the stage.
func (w *worker) representative(key pathKey, stage int, k knowledge) (trace.Source, trace.Target, ends, bool) {
	an := w.an
	proto, port := key.proto.proto(), int(key.port)
	switch key.kind {
	case kindPods:
		for _, self := range []bool{false, true} {
			for _, a := range an.ByPlacement[key.src] {
				for _, b := range an.ByPlacement[key.dst] {
					if !self && !pairExists(a, b, key.rel) || self && (a != b || key.rel != relSame) {
						continue
					}
					en := w.podEnds(a, target{cls: b, proto: proto, port: port, l: an.listens(b, proto, port)})
					if !reaches(en, stage, k) {
						continue
					}
					if src, dst, ok := pickPods(a, b, key.rel, self)(); ok {
						return src, dst, en, true
					}
				}
			}
		}
	case kindNode:
		n := an.Nodes[int(key.src)-len(an.Placements)]
		for _, b := range an.ByPlacement[key.dst] {
			en, p := w.nodeEnds(n, target{cls: b, proto: proto, port: port, l: an.listens(b, proto, port)}, key.rel)
			if !reaches(en, stage, k) {
				continue
			}
			if src, dst, ok := p(); ok {
				return src, dst, en, true
			}
		}
	case kindHost:
		an.mu.RLock() // hostID appends to hosts
		h := an.hosts[-1-key.dst]
		an.mu.RUnlock()
		if int(key.src) >= len(an.Placements) {
			n := an.Nodes[int(key.src)-len(an.Placements)]
			en, p := w.hostEnds(nil, n, h, proto, key.rel)
			if src, dst, ok := p(); ok && reaches(en, stage, k) {
				return src, dst, en, true
			}
			break
		}
		for _, a := range an.ByPlacement[key.src] {
			en, p := w.hostEnds(a, nil, h, proto, key.rel)
			if !reaches(en, stage, k) {
				continue
			}
			if src, dst, ok := p(); ok {
				return src, dst, en, true
			}
		}
	}
	return trace.Source{}, trace.Target{}, ends{}, false
}

// pairExists reports whether two distinct pods of a and b sit as r says.
func pairExists(a, b *classes.Class, r rel) bool {
	if a == b {
		if r == relSame {
			return a.MultiOnNode
		}
		return len(a.Nodes) >= 2
	}
	if r == relSame {
		return a.SharesNode(b)
	}
	return !(len(a.Nodes) == 1 && len(b.Nodes) == 1 && a.Nodes[0] == b.Nodes[0])
}

// relsPods says which placements member pairs of a and b have: on the
// same node, on different nodes.
func relsPods(an *analyzer, a, b *classes.Class) (same, cross bool) {
	if a != b && an.Placements[a.Placement].Group != an.Placements[b.Placement].Group {
		return false, true
	}
	return pairExists(a, b, relSame), pairExists(a, b, relCross)
}

func podSource(m classes.Member) trace.Source {
	return trace.Source{Kind: trace.KindPod, Pod: m.Pod, Node: m.Pod.Spec.NodeName, Addr: m.IP}
}

func podTarget(m classes.Member) trace.Target {
	return trace.Target{Kind: trace.KindPod, Given: m.IP.String(), Pod: m.Pod, Addr: m.IP, Node: m.Pod.Spec.NodeName}
}

func nodeSource(n *classes.NodeInfo) trace.Source {
	return trace.Source{Kind: trace.KindNode, Node: n.Name, Addr: n.IP}
}

// repFirst is a class's members, its representative first (a Windows
// representative sits on a node whose HNS state is compiled already).
func repFirst(c *classes.Class) func(yield func(classes.Member) bool) {
	return func(yield func(classes.Member) bool) {
		if !yield(c.Members[c.RepIdx]) {
			return
		}
		for i, m := range c.Members {
			if i != c.RepIdx && !yield(m) {
				return
			}
		}
	}
}

// pickPods is the first pair of pods of a and b that sit as r says; self:
// a pod and itself (a Service balancing a pod's connection back to it).
func pickPods(a, b *classes.Class, r rel, self bool) pick {
	return func() (trace.Source, trace.Target, bool) {
		if self {
			m := a.Members[a.RepIdx]
			return podSource(m), podTarget(m), a == b
		}
		for m := range repFirst(a) {
			if r == relSame {
				for _, i := range b.ByNode[m.Node] {
					if n := b.Members[i]; n.Pod != m.Pod {
						return podSource(m), podTarget(n), true
					}
				}
				continue
			}
			for n := range repFirst(b) {
				if n.Node != m.Node {
					return podSource(m), podTarget(n), true
				}
			}
		}
		return trace.Source{}, trace.Target{}, false
	}
}

func (w *worker) podEnds(a *classes.Class, t target) ends {
	b, proto, port := t.cls, t.proto, t.port
	en := ends{hasE: true, e: w.end(a, netip.Addr{}, true, classes.Peer{Cls: b}, b.RepIP, proto, port), l: t.l}
	if en.e.allowed {
		en.in = w.end(b, netip.Addr{}, false, classes.Peer{Cls: a}, a.RepIP, proto, port)
	}
	return en
}

// memo returns a row's memoized sub-result for t and r.
func (w *worker) memoGet(t target, r rel) (subRes, bool) {
	if t.slot >= 0 {
		i := 2*t.slot + int(r)
		return w.slots[i], w.slotGen[i] == w.gen
	}
	s, ok := w.memo[subKey{int32(t.cls.ID), pid(t.proto), t.port, r}]
	return s, ok
}

func (w *worker) memoPut(t target, r rel, s subRes) {
	if t.slot >= 0 {
		i := 2*t.slot + int(r)
		w.slots[i], w.slotGen[i] = s, w.gen
		return
	}
	w.memo[subKey{int32(t.cls.ID), pid(t.proto), t.port, r}] = s
}

// podPod is class a → class b at proto/port, for pods on the same node or
// not.
func (w *worker) podPod(a *classes.Class, t target, r rel) subRes {
	if s, ok := w.memoGet(t, r); ok {
		return s
	}
	b := t.cls
	key := podPathKey(a, t, r)
	self := r == relSame && a == b && !a.MultiOnNode
	s := w.path(key, w.podEnds(a, t), pickPods(a, b, r, self))
	w.memoPut(t, r, s)
	return s
}

// nodeEnds are node n's host → class b: its own pods (same) are not
// policed (Kubernetes: traffic from the node where a pod runs is always
// allowed; Calico accepts host-to-local-workload traffic on Linux and
// programs allow-host-to-endpoint on Windows); pods elsewhere see the
// node's address, the one the trace shows at their ingress.
func (w *worker) nodeEnds(n *classes.NodeInfo, t target, r rel) (ends, pick) {
	b, proto, port := t.cls, t.proto, t.port
	var target classes.Member
	found := false
	for _, m := range b.Members {
		if (m.Node == n.Idx) == (r == relSame) {
			target, found = m, true
			break
		}
	}
	in := func(k knowledge) decision {
		if r == relSame {
			if b.OS == "windows" {
				return w.end(b, target.IP, false, classes.Peer{IP: n.IP}, n.IP, proto, port)
			}
			return decision{allowed: true, reason: w.reason("host-own", func() Reason {
				return Reason{Text: "traffic from the host to its own pods is always allowed (kubelet probes; NetworkPolicy does not apply)"}
			})}
		}
		addr := k.srcAt
		if !addr.IsValid() {
			addr = n.IP
		}
		return w.end(b, target.IP, false, classes.Peer{IP: addr}, addr, proto, port)
	}
	p := func() (trace.Source, trace.Target, bool) {
		if !found {
			return trace.Source{}, trace.Target{}, false
		}
		return nodeSource(n), podTarget(target), true
	}
	return ends{inLazy: in, l: t.l}, p
}

func (w *worker) nodePod(n *classes.NodeInfo, t target, r rel) subRes {
	if s, ok := w.memoGet(t, r); ok {
		return s
	}
	key := pathKey{kind: kindNode, src: w.an.nodeSrcID(n), dst: int32(t.cls.Placement), rel: r, proto: pid(t.proto), port: int32(t.port)}
	en, p := w.nodeEnds(n, t, r)
	s := w.path(key, en, p)
	w.memoPut(t, r, s)
	return s
}

// hostEnds are a source (class a, or node n) → a host address: no ingress
// policy applies; what answers there is part of the path.
func (w *worker) hostEnds(a *classes.Class, n *classes.NodeInfo, h hostTarget, proto trace.Proto, r rel) (ends, pick) {
	ip, port := h.ap.Addr(), int(h.ap.Port())
	en := ends{
		in: decision{allowed: true, reason: w.reason("host\x00"+ip.String(), func() Reason {
			return Reason{Text: ip.String() + " is a host address: no NetworkPolicy applies there"}
		})},
		l: decision{allowed: true},
	}
	if a != nil {
		en.hasE, en.e = true, w.end(a, netip.Addr{}, true, classes.Peer{IP: ip}, ip, proto, port)
	}
	target := trace.Target{Kind: trace.KindIP, Given: ip.String(), Addr: ip}
	if h.node != nil {
		target.Node = h.node.Name
	}
	p := func() (trace.Source, trace.Target, bool) {
		if n != nil {
			return nodeSource(n), target, true
		}
		for _, m := range a.Members {
			on := h.node != nil && m.Node == h.node.Idx
			if on == (r == relSame) {
				return podSource(m), target, true
			}
		}
		return trace.Source{}, trace.Target{}, false
	}
	return en, p
}

func (w *worker) toHost(a *classes.Class, n *classes.NodeInfo, h hostTarget, proto trace.Proto, r rel) subRes {
	an := w.an
	id := an.hostID(h)
	mk := subKey{id, pid(proto), int(h.ap.Port()), r}
	if s, ok := w.memo[mk]; ok {
		return s
	}
	key := pathKey{kind: kindHost, dst: id, rel: r, proto: pid(proto), port: int32(h.ap.Port())}
	if a != nil {
		key.src = int32(a.Placement)
	} else {
		key.src = an.nodeSrcID(n)
	}
	en, p := w.hostEnds(a, n, h, proto, r)
	s := w.path(key, en, p)
	w.memo[mk] = s
	return s
}
