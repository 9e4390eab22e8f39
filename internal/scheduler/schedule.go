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
	// msgNoClaims is the DynamicResources PostFilter for a pod without
	// ResourceClaims; it runs before DefaultPreemption (DRA is GA and on).
	msgNoClaims = "no new claims to deallocate"
	// Preemption dry-run texts (framework/preemption, defaultpreemption).
	msgNotHelpful     = "Preemption is not helpful for scheduling"
	msgNoVictims      = "No preemption victims found for incoming pod"
	msgPreemptNever   = "not eligible due to preemptionPolicy=Never."
	msgNoNodes        = "no nodes available to schedule pods"
	fitErrorHeadingFm = "0/%d nodes are available:"
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
	// Details says per node what the upstream reason leaves out, e.g.
	// "untolerated taint os=windows:NoSchedule". Not part of Error().
	Details map[string]string
	// PostFilter is what the PostFilter plugins add after the filter summary:
	// "no new claims to deallocate, preemption: ...", or "" when preemption
	// found room (see NominatedNode).
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
	if h := histogram(f.Reasons, 0, ""); h != "" {
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

// Schedule picks the node kube-scheduler would bind pod to, given the pods
// already recorded in state (nil means none). It does not record the
// placement: call state.Add with the result. A pod with spec.nodeName is
// bound there without filtering, as the scheduler never sees it. Nodes are
// considered in name order; see the package comment for the ranking.
func Schedule(pod *corev1.Pod, nodes []*corev1.Node, state *State) (string, *FitError) {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, nil
	}
	if len(nodes) == 0 {
		return "", &FitError{Pod: pod}
	}
	nodes = sortedNodes(nodes)
	pi := newPodInfo(pod)
	failed := map[string]*filterStatus{}
	var feasible []*corev1.Node
	for _, n := range nodes {
		if st := runFilters(pi, n, state.on(n.Name)); st != nil {
			failed[n.Name] = st
			continue
		}
		feasible = append(feasible, n)
	}
	if len(feasible) > 0 {
		return bestNode(pi, feasible, state), nil
	}
	fe := &FitError{Pod: pod, NumAllNodes: len(nodes), Reasons: map[string][]string{}, Details: map[string]string{}}
	for name, st := range failed {
		fe.Reasons[name] = st.reasons
		fe.Details[name] = st.detail
	}
	preempt(pi, nodes, failed, state, fe)
	return "", fe
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

// nodeRank is one feasible node's place in the simplified score ordering.
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
// framework/preemption Evaluator.Preempt), preceded in the message by the
// DynamicResources PostFilter text.
func preempt(pi *podInfo, nodes []*corev1.Node, failed map[string]*filterStatus, state *State, fe *FitError) {
	if pi.preemptNeverFlag {
		fe.PostFilter = msgNoClaims + ", preemption: " + msgPreemptNever
		return
	}
	dryRun := map[string][]string{}
	var best *candidate
	for _, n := range nodes {
		st := failed[n.Name]
		if st == nil || st.unresolvable {
			continue // preemption only considers nodes it might help
		}
		c, reasons := victimsOn(pi, n, state.on(n.Name))
		if c == nil {
			dryRun[n.Name] = reasons
			continue
		}
		if best == nil || c.better(best) {
			best = c
		}
	}
	if best != nil {
		fe.NominatedNode = best.node
		fe.Victims = best.victims
		return
	}
	msg := fmt.Sprintf(fitErrorHeadingFm, len(nodes))
	if h := histogram(dryRun, len(nodes)-len(dryRun), msgNotHelpful); h != "" {
		msg += " " + h + "."
	}
	fe.PostFilter = msgNoClaims + ", preemption: " + msg
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
func victimsOn(pi *podInfo, node *corev1.Node, others []*podInfo) (*candidate, []string) {
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
	if st := runResourceFilters(pi, node, keep); st != nil {
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
		if runResourceFilters(pi, node, append(slices.Clip(keep), v)) == nil {
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
