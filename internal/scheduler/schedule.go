package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Texts of the PostFilter plugins as kube-scheduler v1.37 reports them.
const (
	// Preemption dry-run texts (framework/preemption, defaultpreemption).
	msgNotHelpful     = "Preemption is not helpful for scheduling"
	msgNoVictims      = "No preemption victims found for incoming pod"
	msgPreemptNever   = "not eligible due to preemptionPolicy=Never."
	msgNoNodes        = "no nodes available to schedule pods"
	fitErrorHeadingFm = "0/%d nodes are available:"
	// msgNotNamed is the status schedule_one.go findNodesThatFitPod gives
	// the nodes a PreFilter result left out (only NodeAffinity narrows, by
	// metadata.name terms).
	msgNotNamed = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
	// msgTermsConflict is nodeaffinity errReasonConflict: every term names
	// nodes by metadata.name and no node is in all of a term's lists.
	msgTermsConflict = "pod affinity terms conflict"
	// msgGated is the condition the API server gives a pod with scheduling
	// gates (pkg/registry/core/pod/strategy.go).
	msgGated = "Scheduling is blocked due to non-empty scheduling gates"
	// msgNoPreFilterState is what the PostFilter step says after a PreFilter
	// rejected the pod: the PreFilters after it did not run, and the first
	// PostFilter plugin, DynamicResources, fails reading the state its
	// PreFilter would have written (framework ErrNotFound), which ends the
	// PostFilter step before DefaultPreemption (framework/runtime
	// RunPostFilterPlugins).
	msgNoPreFilterState = "not found"
)

// FitError is a failed scheduling attempt. Error() is the message of the
// FailedScheduling event and of the PodScheduled condition.
type FitError struct {
	Pod *corev1.Pod
	// NumAllNodes is the number of nodes considered; 0 means the cluster had none.
	NumAllNodes int
	// Reasons lists, per node, the reasons of the filter that rejected it,
	// in upstream wording.
	Reasons map[string][]string
	// Absent nodes were left out before filtering (a metadata.name node
	// affinity) and count under AbsentReason.
	Absent       int
	AbsentReason string
	// PreFilterMsg is a PreFilter plugin's rejection: then no node was
	// filtered and the message stands for them all.
	PreFilterMsg string
	// Details says per node what the upstream reason leaves out, e.g.
	// "untolerated taint os=windows:NoSchedule". Not part of Error().
	Details map[string]string
	// PostFilter is what the PostFilter plugins add after the filter
	// summary: "preemption: 0/N nodes are available: ...", or, when
	// preemption found room (see NominatedNode), "preemption: found a
	// potential placement for pod on node ..., preempting N victims".
	PostFilter string
	// NominatedNode is the node preemption would free for the pod by evicting
	// Victims (namespace/name). The pod still failed this attempt.
	NominatedNode string
	Victims       []string
}

// Error follows pkg/scheduler/framework types.go FitError.Error: a sorted
// histogram of "<count> <reason>" over the rejected nodes, then the
// PostFilter text.
func (f *FitError) Error() string {
	if f.NumAllNodes == 0 {
		return msgNoNodes
	}
	msg := fmt.Sprintf(fitErrorHeadingFm, f.NumAllNodes)
	if f.PreFilterMsg != "" {
		msg += " " + f.PreFilterMsg + "."
	} else if h := histogram(f.Reasons, f.Absent, f.AbsentReason); h != "" {
		msg += " " + h + "."
	}
	if f.PostFilter != "" {
		msg += " " + f.PostFilter
	}
	return msg
}

// histogram counts reasons over nodes and renders "n reason" entries sorted
// as strings (so "10 x" sorts before "2 y", as upstream). absent nodes not in
// byNode count under absentReason.
func histogram(byNode map[string][]string, absent int, absentReason string) string {
	counts := map[string]int{}
	for _, reasons := range byNode {
		for _, r := range reasons {
			counts[r]++
		}
	}
	if absent > 0 {
		counts[absentReason] += absent
	}
	entries := make([]string, 0, len(counts))
	for r, n := range counts {
		entries = append(entries, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(entries)
	return strings.Join(entries, ", ")
}

// Outcome is what becomes of one pod created in the cluster.
type Outcome struct {
	// Node is where the pod is bound; "" when it stays Pending.
	Node string
	// Candidates are the feasible nodes with the highest score, sorted:
	// kube-scheduler picks one of them at random (schedule_one.go
	// selectHost); Node is the first.
	Candidates []string
	// Condition is the pod's PodScheduled=False condition when it is not
	// bound: Unschedulable with the FitError's message, or SchedulingGated.
	Condition *corev1.PodCondition
	// Err is the failed attempt, when there was one.
	Err *FitError
	// NominatedNode and Victims are set when preemption found room.
	NominatedNode string
	Victims       []string
	// NoAnswer: the pod names another scheduler; nothing sets a condition.
	NoAnswer bool
}

// Decide says what kube-scheduler's default profile does with pod, given
// the pods recorded in state: a pod with spec.nodeName is bound without
// the scheduler; a pod with scheduling gates carries the SchedulingGated
// condition the API server gives it and waits (the SchedulingGates
// PreEnqueue plugin); a pod for another scheduler gets no answer at all.
func Decide(pod *corev1.Pod, nodes []*corev1.Node, state *State) Outcome {
	if pod.Spec.NodeName != "" {
		return Outcome{Node: pod.Spec.NodeName, Candidates: []string{pod.Spec.NodeName}}
	}
	if len(pod.Spec.SchedulingGates) > 0 {
		return Outcome{Condition: &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonSchedulingGated, Message: msgGated}}
	}
	if n := pod.Spec.SchedulerName; n != "" && n != corev1.DefaultSchedulerName {
		return Outcome{NoAnswer: true}
	}
	cands, fe := evaluate(pod, nodes, state, topScored)
	if fe != nil {
		return Outcome{Err: fe, NominatedNode: fe.NominatedNode, Victims: fe.Victims,
			Condition: &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: fe.Error()}}
	}
	return Outcome{Node: cands[0], Candidates: cands}
}

// Schedule picks the node kube-scheduler would bind pod to, given the pods
// already recorded in state (nil means none). It does not record the
// placement: call state.Add with the result. A pod with spec.nodeName is
// bound there without filtering, as the scheduler never sees it. Where the
// real scheduler picks at random among equally scored nodes, Schedule
// takes the first by name (Decide lists them all).
func Schedule(pod *corev1.Pod, nodes []*corev1.Node, state *State) (string, *FitError) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	cands, fe := evaluate(pod, nodes, state, topScored)
	if fe != nil {
		return "", fe
	}
	return cands[0], nil
}

// scheduleRanked is Schedule with the ranking a Scheduler uses on large
// clusters instead of the scores (see Scheduler).
func scheduleRanked(pod *corev1.Pod, nodes []*corev1.Node, state *State) (string, *FitError) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	cands, fe := evaluate(pod, nodes, state, func(pi *podInfo, feasible, _ []*corev1.Node, state *State) []string {
		return []string{bestNode(pi, feasible, state)}
	})
	if fe != nil {
		return "", fe
	}
	return cands[0], nil
}

// evaluate is one scheduling cycle (schedule_one.go schedulePod): the
// PreFilter results, the filters over the nodes they leave, the scores of
// the feasible nodes, and on failure the PostFilter (preemption). pick
// returns the best feasible nodes.
func evaluate(pod *corev1.Pod, nodes []*corev1.Node, state *State, pick func(pi *podInfo, feasible, all []*corev1.Node, state *State) []string) ([]string, *FitError) {
	if len(nodes) == 0 {
		return nil, &FitError{Pod: pod}
	}
	pi := newPodInfo(pod)
	named, conflict := namedNodes(pod)
	// A pod aimed at named nodes (every DaemonSet pod) filters only those:
	// sort the whole list only when it is needed.
	var considered []*corev1.Node
	count := 0
	if named != nil {
		// One name (a DaemonSet's pod) is compared, not hashed: every
		// daemon pod scans every node.
		only, one := "", len(named) == 1
		for n := range named {
			only = n
		}
		for _, n := range nodes {
			if n == nil {
				continue
			}
			count++
			if (one && n.Name == only) || (!one && named[n.Name]) {
				considered = append(considered, n)
			}
		}
		considered = sortedNodes(considered)
	} else {
		nodes = sortedNodes(nodes)
		considered, count = nodes, len(nodes)
	}
	sorted := func() []*corev1.Node {
		if named != nil {
			nodes, named = sortedNodes(nodes), nil
		}
		return nodes
	}
	fe := &FitError{Pod: pod, NumAllNodes: count}
	if conflict {
		fe.PreFilterMsg, fe.PostFilter = msgTermsConflict, msgNoPreFilterState
		return nil, fe
	}
	if msg := missingClaim(pod, state); msg != "" {
		// VolumeRestrictions' PreFilter reads the pod's claims.
		fe.PreFilterMsg, fe.PostFilter = msg, msgNoPreFilterState
		return nil, fe
	}
	if named != nil {
		fe.Absent, fe.AbsentReason = count-len(considered), msgNotNamed
	}
	var failed map[string]*filterStatus
	var feasible []*corev1.Node
	var view *clusterView
	if needsView(pi, state) {
		view = &clusterView{nodes: sorted(), state: state}
	}
	for _, n := range considered {
		st := runFilters(pi, n, state)
		if st == nil && view != nil {
			st = viewFilters(pi, n, view)
		}
		if st != nil {
			if failed == nil {
				failed = map[string]*filterStatus{}
			}
			failed[n.Name] = st
			continue
		}
		feasible = append(feasible, n)
	}
	if len(feasible) == 1 {
		// One feasible node: the scheduler does not score.
		return []string{feasible[0].Name}, nil
	}
	if len(feasible) > 0 {
		return pick(pi, feasible, sorted(), state), nil
	}
	fe.Reasons, fe.Details = map[string][]string{}, map[string]string{}
	for name, st := range failed {
		fe.Reasons[name] = st.reasons
		fe.Details[name] = st.detail
	}
	preempt(pi, sorted(), failed, state, fe)
	return nil, fe
}

// namedNodes is NodeAffinity's PreFilter result: when every required term
// has metadata.name In requirements, the union over the terms of the
// intersection of each term's lists (nil: all nodes); conflict when that
// leaves no name at all.
func namedNodes(pod *corev1.Pod) (map[string]bool, bool) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nil, false
	}
	union := map[string]bool{}
	for _, t := range terms {
		var term map[string]bool
		for _, r := range t.MatchFields {
			if r.Key != "metadata.name" || r.Operator != corev1.NodeSelectorOpIn {
				continue
			}
			s := map[string]bool{}
			for _, v := range r.Values {
				if term == nil || term[v] {
					s[v] = true
				}
			}
			term = s
		}
		if term == nil {
			return nil, false // a term without names: any node may match
		}
		for n := range term {
			union[n] = true
		}
	}
	return union, len(union) == 0
}

// missingClaim is the NotFound error of the first claim of the pod that is
// not in state's claims ("" when claims are unknown or all exist).
func missingClaim(pod *corev1.Pod, state *State) string {
	if state == nil || state.claims == nil {
		return ""
	}
	for _, v := range pod.Spec.Volumes {
		if c := v.PersistentVolumeClaim; c != nil && !state.claims[pod.Namespace+"/"+c.ClaimName] {
			return fmt.Sprintf("persistentvolumeclaim %q not found", c.ClaimName)
		}
	}
	return ""
}

func sortedNodes(nodes []*corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, 0, len(nodes))
	for _, n := range nodes {
		if n != nil {
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// nodeRank is one feasible node's place in the ranking a Scheduler uses on
// large clusters, lexicographic where the real scheduler sums scores:
// fewest pods of the same owner (for PodTopologySpread's default
// constraints), least allocated, fewest untolerated PreferNoSchedule
// taints, most preferred node-affinity weight, node name.
type nodeRank struct {
	name          string
	sameOwner     int
	leastAlloc    int64
	preferTaints  int
	affinityScore int64
}

func (a nodeRank) better(b nodeRank) bool {
	switch {
	case a.sameOwner != b.sameOwner:
		return a.sameOwner < b.sameOwner
	case a.leastAlloc != b.leastAlloc:
		return a.leastAlloc > b.leastAlloc
	case a.preferTaints != b.preferTaints:
		return a.preferTaints < b.preferTaints
	case a.affinityScore != b.affinityScore:
		return a.affinityScore > b.affinityScore
	default:
		return a.name < b.name
	}
}

func bestNode(pi *podInfo, feasible []*corev1.Node, state *State) string {
	var best nodeRank
	for i, n := range feasible {
		r := rankNode(pi, n, state.on(n.Name))
		if i == 0 || r.better(best) {
			best = r
		}
	}
	return best.name
}

func rankNode(pi *podInfo, node *corev1.Node, others []*podInfo) nodeRank {
	r := nodeRank{name: node.Name}
	cpu, mem := pi.nonZeroMilliCPU, pi.nonZeroMemory
	for _, o := range others {
		if pi.owner != "" && o.owner == pi.owner {
			r.sameOwner++
		}
		cpu += o.nonZeroMilliCPU
		mem += o.nonZeroMemory
	}
	alloc, _ := allocatable(node)
	r.leastAlloc = (leastRequested(cpu, alloc.milliCPU) + leastRequested(mem, alloc.memory)) / 2
	r.preferTaints = untoleratedPreferNoSchedule(pi.pod.Spec.Tolerations, effectiveTaints(node))
	r.affinityScore = preferredAffinityWeight(pi.pod, node)
	return r
}

// untoleratedPreferNoSchedule counts the PreferNoSchedule taints the
// tolerations leave untolerated (TaintToleration score).
func untoleratedPreferNoSchedule(tolerations []corev1.Toleration, taints []corev1.Taint) int {
	n := 0
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !tolerates(tolerations, &t) {
			n++
		}
	}
	return n
}

// leastRequested is noderesources leastRequestedScore on a 0-100 scale.
func leastRequested(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * 100 / capacity
}

// preempt models the PostFilter step: DefaultPreemption's dry run over the
// nodes whose rejection was resolvable (plugins/defaultpreemption,
// framework/preemption Evaluator.Preempt). Since v1.37 the DynamicResources
// PostFilter adds nothing for a pod without claims.
func preempt(pi *podInfo, nodes []*corev1.Node, failed map[string]*filterStatus, state *State, fe *FitError) {
	if pi.preemptNeverFlag {
		fe.PostFilter = "preemption: " + msgPreemptNever
		return
	}
	dryRun := map[string][]string{}
	var best *candidate
	for _, n := range nodes {
		st := failed[n.Name]
		if st == nil || st.unresolvable {
			continue // preemption only considers nodes it might help
		}
		var view *clusterView
		if needsView(pi, state) {
			view = &clusterView{nodes: nodes, state: state, override: n.Name}
		}
		c, reasons := victimsOn(pi, n, state.on(n.Name), view)
		if c == nil {
			dryRun[n.Name] = reasons
			continue
		}
		if best == nil || c.better(best) {
			best = c
		}
	}
	if best != nil {
		// Preemption succeeded (framework/preemption Preempt): the pod is
		// nominated, the victims are deleted, and this attempt still fails.
		fe.NominatedNode = best.node
		fe.Victims = best.victims
		fe.PostFilter = fmt.Sprintf("preemption: found a potential placement for pod on node %s, preempting %d victims", best.node, len(best.victims))
		return
	}
	msg := fmt.Sprintf(fitErrorHeadingFm, len(nodes))
	if h := histogram(dryRun, len(nodes)-len(dryRun), msgNotHelpful); h != "" {
		msg += " " + h + "."
	}
	fe.PostFilter = "preemption: " + msg
}

// candidate is a node where evicting lower-priority pods makes room.
type candidate struct {
	node          string
	victims       []string
	topPriority   int32
	priorityTotal int64
}

// better follows pickOneNodeForPreemption without PodDisruptionBudgets: the
// lowest top victim priority, then the lowest priority sum, then the fewest
// victims, then the node name.
func (c *candidate) better(o *candidate) bool {
	switch {
	case c.topPriority != o.topPriority:
		return c.topPriority < o.topPriority
	case c.priorityTotal != o.priorityTotal:
		return c.priorityTotal < o.priorityTotal
	case len(c.victims) != len(o.victims):
		return len(c.victims) < len(o.victims)
	default:
		return c.node < o.node
	}
}

// victimsOn follows SelectVictimsOnNode: every lower-priority pod is a
// potential victim; with none the node is "No preemption victims found";
// if the pod does not fit even with all of them gone, the filter's reasons
// are the node's status; otherwise victims are reprieved, most important
// first, while the pod still fits.
func victimsOn(pi *podInfo, node *corev1.Node, others []*podInfo, view *clusterView) (*candidate, []string) {
	fits := func(on []*podInfo) *filterStatus {
		if st := runResourceFilters(pi, node, on); st != nil || view == nil {
			return st
		}
		view.pods = on
		return viewFilters(pi, node, view)
	}
	var keep, potential []*podInfo
	for _, o := range others {
		if o.priority < pi.priority {
			potential = append(potential, o)
		} else {
			keep = append(keep, o)
		}
	}
	if len(potential) == 0 {
		return nil, []string{msgNoVictims}
	}
	if st := fits(keep); st != nil {
		return nil, st.reasons
	}
	sort.SliceStable(potential, func(i, j int) bool {
		if potential[i].priority != potential[j].priority {
			return potential[i].priority > potential[j].priority
		}
		return potential[i].qualifiedName < potential[j].qualifiedName
	})
	c := &candidate{node: node.Name}
	for _, v := range potential {
		if fits(append(slices.Clip(keep), v)) == nil {
			keep = append(keep, v)
			continue
		}
		c.victims = append(c.victims, v.qualifiedName)
		c.priorityTotal += int64(v.priority)
		if len(c.victims) == 1 || v.priority > c.topPriority {
			c.topPriority = v.priority
		}
	}
	return c, nil
}

func sortedResourceNames(m map[corev1.ResourceName]int64) []corev1.ResourceName {
	if len(m) == 0 {
		return nil
	}
	names := make([]corev1.ResourceName, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func joinDetails(details []string) string {
	return strings.Join(details, "; ")
}
