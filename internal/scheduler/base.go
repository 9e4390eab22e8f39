package scheduler

import (
	"maps"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// Base is the State of the pods already running on their nodes when a
// build starts placing new ones, kept so that the next build of a cluster
// that differs little (a derived twin) need not record every pod again.
// A Base is never changed once made: State gives a copy that shares what
// it holds and copies a node's part before changing it.
type Base struct {
	// pods are the pods recorded, in order (each on its spec.nodeName).
	pods  []*corev1.Pod
	state *State
	// fresh: nothing is the previous Base's; else again are the nodes
	// whose pods differ from it.
	fresh bool
	again map[string]bool
}

// Kept reports whether the node's pods (maybe none) are exactly the
// previous Base's (NewBase's prev), so that placing a pod there sees
// what it saw then.
func (b *Base) Kept(node string) bool {
	return !b.fresh && !b.again[node]
}

// NewBase records pods (each on its spec.nodeName, finished ones skipped
// as Add skips them) and gives exactly the State that adding them in
// order to an empty one gives. With prev, the Base of an earlier build,
// a node whose pods are the same as prev's (the same objects in the same
// order) keeps prev's record of them; only the other nodes are recorded
// again. The pods prev recorded must not have changed since: what State
// reads of a pod is taken when it is added.
func NewBase(prev *Base, pods []*corev1.Pod) *Base {
	b := &Base{pods: pods}
	if prev != nil && len(prev.pods) == len(pods) {
		if s, again := prev.replaced(pods); s != nil {
			b.state, b.again = s, again
			return b
		}
	}
	// The pods per node, in order, as adding them would list them.
	var on map[string][]*corev1.Pod
	if prev != nil {
		on = map[string][]*corev1.Pod{}
		for _, p := range pods {
			if !finished(p) {
				on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
			}
		}
	}
	if len(on) == 0 {
		b.fresh = true
		s := NewState()
		for _, p := range pods {
			s.Add(p, p.Spec.NodeName)
		}
		b.state = s
		return b
	}
	was := prev.state
	s := &State{gen: nextGen(), nodes: make(map[string][]*podInfo, len(on)), totals: make(map[string]*nodeTotals, len(on)),
		byOwner: map[string][]string{}, claims: was.claims}
	b.again = map[string]bool{}
	for node := range was.nodes {
		if _, ok := on[node]; !ok {
			b.again[node] = true
		}
	}
	for node, ps := range on {
		infos := was.nodes[node]
		same := len(infos) == len(ps)
		for i := 0; same && i < len(ps); i++ {
			same = infos[i].pod == ps[i]
		}
		b.again[node] = !same
		if same {
			s.nodes[node] = slices.Clip(infos)
			s.totals[node] = was.totals[node]
			continue
		}
		// Recorded again; a pod prev recorded here keeps its record.
		kept := make(map[*corev1.Pod]*podInfo, len(infos))
		for _, pi := range infos {
			kept[pi.pod] = pi
		}
		t := &nodeTotals{gen: s.gen, owners: map[string]int{}}
		s.totals[node] = t
		list := make([]*podInfo, 0, len(ps))
		for _, p := range ps {
			pi := kept[p]
			if pi == nil {
				pi = newPodInfo(p)
			}
			list = append(list, t.record(pi))
		}
		s.nodes[node] = list
	}
	// What spans nodes follows the order of the pods: the log, the nodes
	// of each owner in the order they got its first pod.
	s.log = make([]string, 0, len(pods))
	next := make(map[string]int, len(on))
	for _, p := range pods {
		if finished(p) {
			continue
		}
		node := p.Spec.NodeName
		i := next[node]
		next[node] = i + 1
		t := s.totals[node]
		if t.first[i] {
			owner := s.nodes[node][i].owner
			s.byOwner[owner] = append(s.byOwner[owner], node)
		}
		s.log = append(s.log, node)
	}
	for _, t := range s.totals {
		s.antiAffinity += t.antiAffinity
		s.withAffinity += t.withAffinity
	}
	b.state = s
	return b
}

// State is a State holding the Base's pods, to add more to; the Base
// stays as it is.
func (b *Base) State() *State {
	return b.state.clone()
}

// gens numbers States: a State changes in place only the node totals of
// its own generation and copies the others (shared with a Base) first.
var gens atomic.Uint64

func nextGen() uint64 { return gens.Add(1) }

// clone is a State equal to s that shares s's records: slices are clipped
// so that appending copies them, and node totals are copied before they
// change (their generation is not the clone's). s must not change
// afterwards except through its own copies of the same kind.
func (s *State) clone() *State {
	if s.nodes == nil {
		return &State{gen: nextGen(), claims: s.claims}
	}
	c := &State{gen: nextGen(), nodes: make(map[string][]*podInfo, len(s.nodes)), totals: maps.Clone(s.totals),
		log: slices.Clip(s.log), byOwner: make(map[string][]string, len(s.byOwner)), claims: s.claims,
		antiAffinity: s.antiAffinity, withAffinity: s.withAffinity}
	for k, v := range s.nodes {
		c.nodes[k] = slices.Clip(v)
	}
	for k, v := range s.byOwner {
		c.byOwner[k] = slices.Clip(v)
	}
	return c
}

// own returns the node's totals for s to change: a copy when they are
// shared with another State.
func (s *State) own(node string) *nodeTotals {
	t := s.totals[node]
	if t == nil {
		t = &nodeTotals{gen: s.gen, owners: map[string]int{}}
		s.totals[node] = t
		return t
	}
	if t.gen != s.gen {
		cp := *t
		cp.gen = s.gen
		// The shared totals never change again (a State changes only
		// its own generation's): their counts are read where they are,
		// and the copy counts only the pods added since.
		if t.ownersBase == nil {
			cp.ownersBase, cp.owners = t.owners, map[string]int{}
		} else {
			cp.owners = maps.Clone(t.owners)
		}
		cp.requests.scalar = maps.Clone(t.requests.scalar)
		cp.withPorts = slices.Clip(t.withPorts)
		cp.first = slices.Clip(t.first)
		t = &cp
		s.totals[node] = t
	}
	return t
}

// replaced is the State of pods when they are prev's but for a few
// replaced in place by pods on the same node with the same owner (a pod
// built again, the static pods every build makes anew): only those
// nodes are recorded again, and what spans nodes (the log, the owners'
// nodes and their order) stays prev's. nil when pods differ otherwise.
func (prev *Base) replaced(pods []*corev1.Pod) (_ *State, again map[string]bool) {
	var at []int
	for i, p := range pods {
		if p != prev.pods[i] {
			if len(at) > len(pods)/8 {
				return nil, nil
			}
			at = append(at, i)
		}
	}
	s := prev.state.clone()
	if len(at) == 0 {
		return s, nil
	}
	lists := map[string][]*podInfo{}
	for _, i := range at {
		old, p := prev.pods[i], pods[i]
		node := p.Spec.NodeName
		if finished(p) {
			return nil, nil
		}
		list, ok := lists[node]
		if !ok {
			list = slices.Clone(s.nodes[node])
		}
		// Not found: old was finished or on another node.
		j := slices.IndexFunc(list, func(pi *podInfo) bool { return pi.pod == old })
		if j < 0 {
			return nil, nil
		}
		pi := newPodInfo(p)
		if pi.owner != list[j].owner {
			return nil, nil
		}
		list[j] = pi
		lists[node] = list
	}
	for node, list := range lists {
		was := s.totals[node]
		t := &nodeTotals{gen: s.gen, owners: map[string]int{}}
		for _, pi := range list {
			t.record(pi)
		}
		s.antiAffinity += t.antiAffinity - was.antiAffinity
		s.withAffinity += t.withAffinity - was.withAffinity
		s.nodes[node], s.totals[node] = list, t
	}
	again = make(map[string]bool, len(lists))
	for node := range lists {
		again[node] = true
	}
	return s, again
}
