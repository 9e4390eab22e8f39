package scheduler

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Scheduler is Schedule for many pods over one set of nodes. Up to
// exactLimit nodes it is Schedule. On more nodes it ranks the feasible
// nodes lexicographically (nodeRank) instead of summing the plugins'
// normalised scores, which depend on every feasible node at once, and
// gives the node and FitError of scheduleRanked, in time that does not grow
// with the number of pods already placed: an approximation at scale.
//
// Schedule sorts the nodes, re-derives every node's taints and allocatable
// and sums the requests of every pod on every node, for each pod: O(nodes ×
// pods) per pod, hours at 5,000 nodes and 150,000 pods. A Scheduler instead
//   - sorts the nodes and derives their taints and allocatable once;
//   - runs the static filters (NodeUnschedulable, TaintToleration,
//     NodeAffinity) and the static scores (PreferNoSchedule taints,
//     preferred node affinity) once per equivalence class of pod specs —
//     pods whose tolerations, node selector and node affinity are equal
//     get equal results;
//   - reads what the resource filters and scores need from State's
//     running per-node totals;
//   - keeps, per shape of pod (the static class plus requests and host
//     ports: the replicas of a controller, and usually of many), a
//     tournament tree of the statically feasible nodes holding the best one
//     by bestNode's ranking with no pod of the owner on it; a placement
//     (State.Add) changes one node, which costs one leaf update. The first
//     criterion of the ranking is the fewest pods of the pod's owner, so
//     the best node is the tree's best once the nodes holding the owner's
//     pods are left out, or, when none is left, the best of those. An owner
//     spread over many nodes gets a tree of its own.
//
// When no node is feasible the FitError is Schedule's own: the Scheduler
// calls scheduleRanked, which also covers preemption.
//
// The nodes must not change (labels, taints, conditions, allocatable) while
// the Scheduler is in use; pods are recorded in the State with Add as for
// Schedule.
type Scheduler struct {
	nodes  []*corev1.Node // as given, for Schedule
	state  *State
	sorted []*corev1.Node
	info   []nodeStatic
	byName map[string][]int32
	// statics caches the static filters and scores per static key.
	statics map[string]*staticClass
	// trees are the shape trees by shape key; own is the tree of the last
	// owner spread too wide for leaving its nodes out.
	trees map[string]*classTree
	own   *classTree
}

// nodeStatic is what the filters and scores read from a node itself.
type nodeStatic struct {
	alloc   resources
	maxPods int64
	taints  []corev1.Taint
	totals  *nodeTotals // the State's, once the node has pods
}

// staticClass is the outcome of the static filters and scores of one
// equivalence class of pod specs, per sorted node.
type staticClass struct {
	feasible     []int32 // sorted-node indices that pass
	preferTaints []int   // by position in feasible
	affinity     []int64 // by position in feasible
}

// noTotals stands for a node without pods; never written.
var noTotals nodeTotals

// Cache bounds: pods given on their own may each have a spec of their own.
const (
	maxStatics = 256
	maxTrees   = 16
)

// maxLeftOut is how many nodes holding an owner's pods a shape tree leaves
// out per pod; an owner on more nodes gets a tree of its own (a variable for
// the tests, which run both ways).
var maxLeftOut = 64

// exactLimit is the largest cluster a Scheduler schedules with the scores
// (a variable for the tests).
var exactLimit = 200

// NewScheduler prepares scheduling over nodes with state (nil is an empty
// cluster, as for Schedule).
func NewScheduler(nodes []*corev1.Node, state *State) *Scheduler {
	if state == nil {
		state = NewState()
	}
	s := &Scheduler{nodes: nodes, state: state, sorted: sortedNodes(nodes), byName: map[string][]int32{},
		statics: map[string]*staticClass{}, trees: map[string]*classTree{}}
	s.info = make([]nodeStatic, len(s.sorted))
	for i, n := range s.sorted {
		alloc, pods := allocatable(n)
		s.info[i] = nodeStatic{alloc: alloc, maxPods: pods, taints: effectiveTaints(n)}
		s.byName[n.Name] = append(s.byName[n.Name], int32(i))
	}
	return s
}

// Schedule picks the node for pod as Schedule(pod, nodes, state) does.
func (s *Scheduler) Schedule(pod *corev1.Pod) (string, *FitError) {
	if pod.Spec.NodeName != "" || len(s.sorted) <= exactLimit {
		return Schedule(pod, s.nodes, s.state)
	}
	pi := newPodInfo(pod)
	if _, conflict := namedNodes(pod); conflict || missingClaim(pod, s.state) != "" || needsView(pi, s.state) {
		return scheduleRanked(pod, s.nodes, s.state)
	}
	static, shape := classKey(pi)
	var owned []string
	if pi.owner != "" {
		owned = s.state.byOwner[pi.owner]
	}
	best := int32(-1)
	var t *classTree
	if len(owned) > maxLeftOut {
		t = s.tree(&s.own, pi, static, shape+"\x00"+pi.owner, true)
		best = t.best()
	} else {
		var cur *classTree
		if c, ok := s.trees[shape]; ok {
			cur = c
		}
		t = s.tree(&cur, pi, static, shape, false)
		if len(s.trees) >= maxTrees {
			clear(s.trees)
		}
		s.trees[shape] = t
		var out []int32
		for _, name := range owned {
			for _, i := range s.byName[name] {
				if j := t.leafOf[i]; j >= 0 {
					out = append(out, j)
				}
			}
		}
		if best = t.bestWithout(out); best < 0 {
			best = s.bestOf(t, pi, out)
		}
	}
	if best >= 0 {
		return s.sorted[t.leaves[best]].Name, nil
	}
	return scheduleRanked(pod, s.nodes, s.state)
}

// bestOf ranks the given leaves with the owner's pods counted: the best
// feasible one, the first in name order among equals, or -1.
func (s *Scheduler) bestOf(t *classTree, pi *podInfo, leaves []int32) int32 {
	slices.Sort(leaves)
	best := int32(-1)
	var br nodeRank
	for _, j := range leaves {
		if !t.ok[j] {
			continue
		}
		r := t.ranks[j]
		if tot := s.state.totals[s.sorted[t.leaves[j]].Name]; tot != nil {
			r.sameOwner = tot.ownerCount(pi.owner)
		}
		if best < 0 || r.better(br) {
			best, br = j, r
		}
	}
	return best
}

// staticKey encodes every field of the pod the static filters and scores
// read: tolerations, nodeSelector and node affinity.
func staticKey(b *strings.Builder, pod *corev1.Pod) {
	str := func(v string) {
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	num := func(v int64) {
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(';')
	}
	reqs := func(rs []corev1.NodeSelectorRequirement) {
		num(int64(len(rs)))
		for _, r := range rs {
			str(r.Key)
			str(string(r.Operator))
			num(int64(len(r.Values)))
			for _, v := range r.Values {
				str(v)
			}
		}
	}
	term := func(t corev1.NodeSelectorTerm) {
		reqs(t.MatchExpressions)
		reqs(t.MatchFields)
	}
	num(int64(len(pod.Spec.Tolerations)))
	for _, t := range pod.Spec.Tolerations {
		str(t.Key)
		str(string(t.Operator))
		str(t.Value)
		str(string(t.Effect))
		if t.TolerationSeconds == nil {
			b.WriteByte('-')
		} else {
			num(*t.TolerationSeconds)
		}
	}
	keys := make([]string, 0, len(pod.Spec.NodeSelector))
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if pod.Spec.NodeSelector == nil {
		b.WriteByte('-')
	}
	num(int64(len(keys)))
	for _, k := range keys {
		str(k)
		str(pod.Spec.NodeSelector[k])
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		b.WriteByte('-')
		return
	}
	na := a.NodeAffinity
	if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r == nil {
		b.WriteByte('-')
	} else {
		num(int64(len(r.NodeSelectorTerms)))
		for _, t := range r.NodeSelectorTerms {
			term(t)
		}
	}
	num(int64(len(na.PreferredDuringSchedulingIgnoredDuringExecution)))
	for _, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		num(int64(p.Weight))
		term(p.Preference)
	}
}

// classKey adds to the static key what the resource filters and scores read
// from the pod but its owner: requests, the non-zero requests and host
// ports. That is the pod's shape.
func classKey(pi *podInfo) (static, shape string) {
	var b strings.Builder
	staticKey(&b, pi.pod)
	static = b.String()
	num := func(v int64) {
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(';')
	}
	r := pi.requests
	num(r.milliCPU)
	num(r.memory)
	num(r.ephemeral)
	names := sortedResourceNames(r.scalar)
	num(int64(len(names)))
	for _, n := range names {
		b.WriteString(strconv.Quote(string(n)))
		num(r.scalar[n])
	}
	num(pi.nonZeroMilliCPU)
	num(pi.nonZeroMemory)
	num(int64(len(pi.ports)))
	for _, p := range pi.ports {
		b.WriteString(strconv.Quote(p.ip))
		b.WriteString(strconv.Quote(string(p.protocol)))
		num(int64(p.port))
	}
	return static, b.String()
}

// static returns the static filter and score outcome of the pod's class.
func (s *Scheduler) static(key string, pod *corev1.Pod) *staticClass {
	if sc, ok := s.statics[key]; ok {
		return sc
	}
	sc := &staticClass{}
	for i, n := range s.sorted {
		taints := s.info[i].taints
		if staticFilters(pod, n, taints) != nil {
			continue
		}
		sc.feasible = append(sc.feasible, int32(i))
		sc.preferTaints = append(sc.preferTaints, untoleratedPreferNoSchedule(pod.Spec.Tolerations, taints))
		sc.affinity = append(sc.affinity, preferredAffinityWeight(pod, n))
	}
	if len(s.statics) >= maxStatics {
		clear(s.statics)
	}
	s.statics[key] = sc
	return sc
}

// classTree is the tournament tree of one shape's (or one owner's)
// statically feasible nodes; a leaf holds the node's rank when the resource
// filters pass.
type classTree struct {
	key    string
	pi     *podInfo // the first pod: what every pod of the key shares
	owner  bool     // ranks count pi.owner's pods (an owner tree)
	sc     *staticClass
	leaves []int32 // sorted-node index per leaf, in name order
	// leafOf is the leaf of a sorted-node index, -1 for none.
	leafOf []int32
	ranks  []nodeRank
	ok     []bool
	size   int
	tree   []int32 // 1-based heap of the best leaf under each node, -1 none
	synced int     // how much of the State's log the leaves reflect
}

// tree returns *cur brought up to date when it is the tree of key, else a
// new tree of key, stored in *cur.
func (s *Scheduler) tree(cur **classTree, pi *podInfo, static, key string, owner bool) *classTree {
	t := *cur
	if t == nil || t.key != key {
		sc := s.static(static, pi.pod)
		t = &classTree{key: key, pi: pi, owner: owner, sc: sc, leaves: sc.feasible}
		t.leafOf = make([]int32, len(s.sorted))
		for i := range t.leafOf {
			t.leafOf[i] = -1
		}
		for j, i := range t.leaves {
			t.leafOf[i] = int32(j)
		}
		t.ranks = make([]nodeRank, len(t.leaves))
		t.ok = make([]bool, len(t.leaves))
		t.size = 1
		for t.size < len(t.leaves) {
			t.size *= 2
		}
		t.tree = make([]int32, 2*t.size)
		*cur = t
		s.rebuild(t)
		return t
	}
	log := s.state.log
	if pending := len(log) - t.synced; pending > len(t.leaves)/8+1 {
		s.rebuild(t)
		return t
	}
	for _, name := range log[t.synced:] {
		for _, i := range s.byName[name] {
			if j := t.leafOf[i]; j >= 0 {
				s.evalLeaf(t, j)
				t.update(j)
			}
		}
	}
	t.synced = len(log)
	return t
}

func (s *Scheduler) rebuild(t *classTree) {
	for j := range t.leaves {
		s.evalLeaf(t, int32(j))
	}
	for k := range t.tree[t.size:] {
		t.tree[t.size+k] = -1
		if k < len(t.leaves) && t.ok[k] {
			t.tree[t.size+k] = int32(k)
		}
	}
	for k := t.size - 1; k >= 1; k-- {
		t.tree[k] = t.pick(t.tree[2*k], t.tree[2*k+1])
	}
	t.synced = len(s.state.log)
}

// best is the leaf of the best feasible node, or -1.
func (t *classTree) best() int32 {
	if len(t.leaves) == 0 {
		return -1
	}
	return t.tree[1]
}

// bestWithout is best with the given leaves left out.
func (t *classTree) bestWithout(out []int32) int32 {
	if len(out) == 0 {
		return t.best()
	}
	for _, j := range out {
		t.set(j, false)
	}
	best := t.best()
	for _, j := range out {
		t.set(j, t.ok[j])
	}
	return best
}

// pick is the better of two leaves; the left one (earlier by name) on a
// tie, as bestNode keeps the first of equals.
func (t *classTree) pick(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case t.ranks[b].better(t.ranks[a]):
		return b
	}
	return a
}

func (t *classTree) update(j int32) { t.set(j, t.ok[j]) }

// set makes leaf j present or not and fixes the path to the root.
func (t *classTree) set(j int32, present bool) {
	k := t.size + int(j)
	t.tree[k] = -1
	if present {
		t.tree[k] = j
	}
	for k /= 2; k >= 1; k /= 2 {
		t.tree[k] = t.pick(t.tree[2*k], t.tree[2*k+1])
	}
}

// evalLeaf runs the resource filters (runResourceFilters) and ranks the node
// (rankNode) from the node's totals.
func (s *Scheduler) evalLeaf(t *classTree, j int32) {
	i := t.leaves[j]
	ns := &s.info[i]
	name := s.sorted[i].Name
	if ns.totals == nil {
		ns.totals = s.state.totals[name]
	}
	tot := ns.totals
	if tot == nil {
		tot = &noTotals
	}
	pi := t.pi
	t.ok[j] = false
	for _, want := range pi.ports {
		for _, o := range tot.withPorts {
			for _, used := range o.ports {
				if want.conflicts(used) {
					return
				}
			}
		}
	}
	if tot.count+1 > ns.maxPods {
		return
	}
	if req := pi.requests; !req.isZero() {
		short := func(want, have, total int64) bool { return want > 0 && want > total-have }
		u, a := &tot.requests, &ns.alloc
		if short(req.milliCPU, u.milliCPU, a.milliCPU) || short(req.memory, u.memory, a.memory) || short(req.ephemeral, u.ephemeral, a.ephemeral) {
			return
		}
		for name, want := range req.scalar {
			if short(want, u.scalar[name], a.scalar[name]) {
				return
			}
		}
	}
	r := nodeRank{name: name, preferTaints: t.sc.preferTaints[j], affinityScore: t.sc.affinity[j]}
	if t.owner && pi.owner != "" {
		r.sameOwner = tot.ownerCount(pi.owner)
	}
	cpu, mem := pi.nonZeroMilliCPU+tot.nonZeroCPU, pi.nonZeroMemory+tot.nonZeroMem
	r.leastAlloc = (leastRequested(cpu, ns.alloc.milliCPU) + leastRequested(mem, ns.alloc.memory)) / 2
	t.ranks[j] = r
	t.ok[j] = true
}
