package scheduler

import (
	"fmt"
	"strconv"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Reason texts of the filter plugins as kube-scheduler v1.37 reports them.
const (
	// ReasonUnschedulable is pkg/scheduler/framework/plugins/nodeunschedulable.
	ReasonUnschedulable = "node(s) were unschedulable"
	// ReasonUntoleratedTaint is plugins/tainttoleration. Through v1.34 the
	// plugin named the taint ("node(s) had untolerated taint {key: value}");
	// the current source (the one with TaintTolerationComparisonOperators)
	// only logs it. FitError.Details carries it for the twin's reports.
	ReasonUntoleratedTaint = "node(s) had untolerated taint(s)"
	// ReasonNodeAffinity is plugins/nodeaffinity ErrReasonPod.
	ReasonNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	// ReasonNodePorts is plugins/nodeports ErrReason.
	ReasonNodePorts = "node(s) didn't have free ports for the requested pod ports"
	// ReasonTooManyPods and the Insufficient texts are plugins/noderesources fit.go.
	ReasonTooManyPods = "Too many pods"
)

// filterStatus is the failing outcome of one filter plugin on one node.
type filterStatus struct {
	reasons []string
	// unresolvable is UnschedulableAndUnresolvable: preemption cannot help.
	unresolvable bool
	// detail says what the upstream reason leaves out (the taint, the ports).
	detail string
}

// conditionTaints maps node conditions to the NoSchedule taints the node
// lifecycle controller adds for them (TaintNodesByCondition).
var conditionTaints = []struct {
	condition corev1.NodeConditionType
	status    corev1.ConditionStatus
	key       string
}{
	{corev1.NodeReady, corev1.ConditionFalse, corev1.TaintNodeNotReady},
	{corev1.NodeReady, corev1.ConditionUnknown, corev1.TaintNodeUnreachable},
	{corev1.NodeMemoryPressure, corev1.ConditionTrue, corev1.TaintNodeMemoryPressure},
	{corev1.NodeDiskPressure, corev1.ConditionTrue, corev1.TaintNodeDiskPressure},
	{corev1.NodePIDPressure, corev1.ConditionTrue, corev1.TaintNodePIDPressure},
	{corev1.NodeNetworkUnavailable, corev1.ConditionTrue, corev1.TaintNodeNetworkUnavailable},
}

// effectiveTaints is node.spec.taints plus the NoSchedule taints the node
// lifecycle controller would add for spec.unschedulable and for the node's
// conditions, where the node does not carry them yet. Nodes without a Ready
// condition get none: the twin may build nodes without status.
func effectiveTaints(node *corev1.Node) []corev1.Taint {
	if !node.Spec.Unschedulable && !conditionTainted(node) {
		return node.Spec.Taints // nothing to add: no copy
	}
	taints := append([]corev1.Taint(nil), node.Spec.Taints...)
	has := func(key string) bool {
		for _, t := range taints {
			if t.Key == key && t.Effect == corev1.TaintEffectNoSchedule {
				return true
			}
		}
		return false
	}
	addNoSchedule := func(key string) {
		if !has(key) {
			taints = append(taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		addNoSchedule(corev1.TaintNodeUnschedulable)
	}
	for _, ct := range conditionTaints {
		for _, c := range node.Status.Conditions {
			if c.Type == ct.condition && c.Status == ct.status {
				addNoSchedule(ct.key)
			}
		}
	}
	return taints
}

// conditionTainted reports whether a condition of the node calls for a
// taint of conditionTaints.
func conditionTainted(node *corev1.Node) bool {
	for _, ct := range conditionTaints {
		for _, c := range node.Status.Conditions {
			if c.Type == ct.condition && c.Status == ct.status {
				return true
			}
		}
	}
	return false
}

// tolerates reports whether any toleration tolerates the taint, with the API
// type's own matching (k8s.io/api core/v1 toleration.go). Gt/Lt operators
// are honoured: validation only lets them in when their feature gate is on.
func tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, true) {
			return true
		}
	}
	return false
}

// firstUntolerated returns the first taint with one of the effects that the
// pod does not tolerate (component-helpers FindMatchingUntoleratedTaint).
func firstUntolerated(taints []corev1.Taint, tolerations []corev1.Toleration, effects ...corev1.TaintEffect) (corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		relevant := false
		for _, e := range effects {
			if t.Effect == e {
				relevant = true
			}
		}
		if relevant && !tolerates(tolerations, t) {
			return *t, true
		}
	}
	return corev1.Taint{}, false
}

// taintString is kubectl's spelling of a taint: key=value:Effect.
func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// matchesRequiredAffinity is component-helpers nodeaffinity
// GetRequiredNodeAffinity(pod).Match: spec.nodeSelector and the required
// node-affinity terms must both hold.
func matchesRequiredAffinity(pod *corev1.Pod, node *corev1.Node) bool {
	// nodeSelector is labels.SelectorFromSet(...).Matches, without building
	// the selector for every node: each key present with the same value.
	for k, v := range pod.Spec.NodeSelector {
		if got, ok := node.Labels[k]; !ok || got != v {
			return false
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term, node) {
			return true
		}
	}
	return false
}

// termMatches ANDs a term's label expressions and field expressions; a term
// with neither matches nothing, and an unparsable one matches nothing.
func termMatches(term corev1.NodeSelectorTerm, node *corev1.Node) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	if len(term.MatchExpressions) > 0 {
		sel, err := requirementsSelector(term.MatchExpressions)
		if err != nil || !sel.Matches(labels.Set(node.Labels)) {
			return false
		}
	}
	if len(term.MatchFields) > 0 {
		// Only metadata.name is a valid node field selector key.
		for _, req := range term.MatchFields {
			if req.Key != "metadata.name" {
				return false
			}
		}
		sel, err := requirementsSelector(term.MatchFields)
		if err != nil || !sel.Matches(labels.Set{"metadata.name": node.Name}) {
			return false
		}
	}
	return true
}

var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// requirementsSelector converts node selector requirements to a label
// selector, as component-helpers nodeSelectorRequirementsAsSelector does.
func requirementsSelector(reqs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	sel := labels.NewSelector()
	for _, r := range reqs {
		op, ok := nodeSelectorOps[r.Operator]
		if !ok {
			return nil, fmt.Errorf("%q is not a valid node selector operator", r.Operator)
		}
		if op == selection.GreaterThan || op == selection.LessThan {
			if len(r.Values) != 1 {
				return nil, fmt.Errorf("%s needs exactly one value", r.Operator)
			}
			if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
				return nil, err
			}
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// preferredAffinityWeight sums the weights of the preferred node-affinity
// terms the node matches (NodeAffinity score before normalisation).
func preferredAffinityWeight(pod *corev1.Pod, node *corev1.Node) int64 {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return 0
	}
	var sum int64
	for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if t.Weight != 0 && termMatches(t.Preference, node) {
			sum += int64(t.Weight)
		}
	}
	return sum
}

// runFilters runs the modelled filter plugins in the default profile's order
// and returns the first failure, or nil when the node is feasible. others
// are the pods already on the node.
func runFilters(pi *podInfo, node *corev1.Node, state *State) *filterStatus {
	if st := staticFilters(pi.pod, node, effectiveTaints(node)); st != nil {
		return st
	}
	if st := portsFilter(pi, state.on(node.Name)); st != nil {
		return st
	}
	tot := state.totalsOn(node.Name)
	return fitUsed(pi, node, tot.requests, tot.count)
}

// staticFilters are the filters that read only the pod's spec and the node
// (NodeUnschedulable, TaintToleration, NodeAffinity), not the pods already
// placed; taints are effectiveTaints(node).
func staticFilters(pod *corev1.Pod, node *corev1.Node, taints []corev1.Taint) *filterStatus {
	unschedulable := corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
	if node.Spec.Unschedulable && !tolerates(pod.Spec.Tolerations, &unschedulable) {
		return &filterStatus{reasons: []string{ReasonUnschedulable}, unresolvable: true, detail: "node is cordoned (spec.unschedulable)"}
	}
	if t, ok := firstUntolerated(taints, pod.Spec.Tolerations, corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute); ok {
		return &filterStatus{reasons: []string{ReasonUntoleratedTaint}, unresolvable: true, detail: "untolerated taint " + taintString(t)}
	}
	if !matchesRequiredAffinity(pod, node) {
		return &filterStatus{reasons: []string{ReasonNodeAffinity}, unresolvable: true, detail: "node labels do not satisfy nodeSelector/required node affinity"}
	}
	return nil
}

// runResourceFilters is the part preemption can change: NodePorts and
// NodeResourcesFit against the pods on the node.
func runResourceFilters(pi *podInfo, node *corev1.Node, others []*podInfo) *filterStatus {
	if st := portsFilter(pi, others); st != nil {
		return st
	}
	return fitResources(pi, node, others)
}

// portsFilter is NodePorts: a host port of the pod that a pod on the node
// already claims.
func portsFilter(pi *podInfo, others []*podInfo) *filterStatus {
	for _, want := range pi.ports {
		for _, o := range others {
			for _, used := range o.ports {
				if want.conflicts(used) {
					return &filterStatus{reasons: []string{ReasonNodePorts},
						detail: fmt.Sprintf("host port %s/%d is used by %s", want.protocol, want.port, o.qualifiedName)}
				}
			}
		}
	}
	return nil
}

// fitResources follows plugins/noderesources fit.go fitsRequest: the pod
// count first, then cpu, memory, ephemeral-storage and scalar resources
// against allocatable minus the requests already placed. A shortage is
// unresolvable when the request exceeds allocatable outright.
func fitResources(pi *podInfo, node *corev1.Node, others []*podInfo) *filterStatus {
	var used resources
	for _, o := range others {
		used.add(o.requests)
	}
	return fitUsed(pi, node, used, int64(len(others)))
}

// fitUsed is fitResources on the sums of the node's pods: their requests
// and their number.
func fitUsed(pi *podInfo, node *corev1.Node, used resources, pods int64) *filterStatus {
	alloc, maxPods := allocatable(node)
	var reasons []string
	var details []string
	unresolvable := false
	if pods+1 > maxPods {
		reasons = append(reasons, ReasonTooManyPods)
		details = append(details, fmt.Sprintf("pods %d/%d", pods, maxPods))
	}
	req := pi.requests
	if !req.isZero() {
		check := func(name string, want, have, total int64) {
			if want > 0 && want > total-have {
				reasons = append(reasons, "Insufficient "+name)
				details = append(details, fmt.Sprintf("%s requested %d, used %d of %d", name, want, have, total))
				if want > total {
					unresolvable = true
				}
			}
		}
		check("cpu", req.milliCPU, used.milliCPU, alloc.milliCPU)
		check("memory", req.memory, used.memory, alloc.memory)
		check("ephemeral-storage", req.ephemeral, used.ephemeral, alloc.ephemeral)
		for _, name := range sortedResourceNames(req.scalar) { // nil when none
			check(string(name), req.scalar[name], used.scalar[name], alloc.scalar[name])
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return &filterStatus{reasons: reasons, unresolvable: unresolvable, detail: joinDetails(details)}
}
