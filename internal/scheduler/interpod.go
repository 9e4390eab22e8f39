package scheduler

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Reason texts of PodTopologySpread and InterPodAffinity
// (plugins/podtopologyspread/plugin.go, plugins/interpodaffinity/filtering.go).
const (
	ReasonSpread             = "node(s) didn't match pod topology spread constraints"
	ReasonSpreadMissingLabel = ReasonSpread + " (missing required label)"
	ReasonPodAffinity        = "node(s) didn't match pod affinity rules"
	ReasonPodAntiAffinity    = "node(s) didn't match pod anti-affinity rules"
	ReasonExistingAnti       = "node(s) didn't satisfy existing pods anti-affinity rules"
)

// clusterView is what the PodTopologySpread and InterPodAffinity filters
// read beyond one node: every node's labels and pods. override replaces
// the pods of one node (preemption's dry run without its victims).
type clusterView struct {
	nodes    []*corev1.Node
	state    *State
	override string
	pods     []*podInfo
	// counts caches interPodCounts when no node's pods are overridden.
	counts *podCounts
}

// topoPair is a topology key and a node's value for it.
type topoPair struct{ key, value string }

// podCounts are InterPodAffinity's PreFilter sums per topology pair: pods
// matching all the pod's affinity terms, pods matching each anti-affinity
// term, and existing pods whose anti-affinity terms match the pod.
type podCounts struct {
	aff, anti, existing map[topoPair]int
}

func (v *clusterView) on(node string) []*podInfo {
	if v.override != "" && node == v.override {
		return v.pods
	}
	return v.state.on(node)
}

// mayHoldAnti reports whether a pod on node may have required pod
// anti-affinity: the State's totals count them per node; the node whose
// pods the view overrides is read as it is.
func (v *clusterView) mayHoldAnti(node string) bool {
	if v.override != "" && node == v.override {
		return true
	}
	return v.state.totalsOn(node).antiAffinity > 0
}

// needsView reports whether the pod or a pod already placed brings
// topology spread constraints or inter-pod (anti-)affinity into play.
// ReadsOtherNodes reports whether placing pod reads the pods on other
// nodes than the one it is tried on (topology spread, pod affinity, a
// placed pod's required anti-affinity).
func ReadsOtherNodes(pod *corev1.Pod, state *State) bool {
	return needsView(&podInfo{pod: pod}, state)
}

func needsView(pi *podInfo, state *State) bool {
	if len(pi.pod.Spec.TopologySpreadConstraints) > 0 {
		return true
	}
	if a := pi.pod.Spec.Affinity; a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil) {
		return true
	}
	return state != nil && state.antiAffinity > 0
}

// viewFilters runs PodTopologySpread then InterPodAffinity, the last of the
// default profile's filters.
func viewFilters(pi *podInfo, node *corev1.Node, v *clusterView) *filterStatus {
	if st := spreadFilter(pi, node, v); st != nil {
		return st
	}
	return interPodFilter(pi, node, v)
}

// spreadFilter follows plugins/podtopologyspread filtering.go for the
// DoNotSchedule constraints: the domains are the values of the key on the
// nodes that pass the pod's node affinity and nodeSelector (nodeAffinityPolicy
// Honor; taints are ignored) and carry every constraint's key; a domain
// counts the pods of the pod's namespace the selector matches, terminating
// ones left out; a node fails when its domain's count, plus one if the pod
// matches itself, exceeds the smallest domain's by more than maxSkew.
// matchLabelKeys are not merged in.
func spreadFilter(pi *podInfo, node *corev1.Node, v *clusterView) *filterStatus {
	var cs []corev1.TopologySpreadConstraint
	for _, c := range pi.pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	hasKeys := func(n *corev1.Node) bool {
		for _, c := range cs {
			if _, ok := n.Labels[c.TopologyKey]; !ok {
				return false
			}
		}
		return true
	}
	for _, c := range cs {
		if _, ok := node.Labels[c.TopologyKey]; !ok {
			return &filterStatus{reasons: []string{ReasonSpreadMissingLabel}, unresolvable: true, detail: "no label " + c.TopologyKey}
		}
	}
	for _, c := range cs {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			sel = labels.Nothing()
		}
		counts := map[string]int{}
		for _, n := range v.nodes {
			if !hasKeys(n) || !matchesRequiredAffinity(pi.pod, n) {
				continue
			}
			val := n.Labels[c.TopologyKey]
			counts[val] += 0
			for _, o := range v.on(n.Name) {
				if o.pod.Namespace == pi.pod.Namespace && o.pod.DeletionTimestamp == nil && sel.Matches(labels.Set(o.pod.Labels)) {
					counts[val]++
				}
			}
		}
		minimum := -1
		for _, n := range counts {
			if minimum < 0 || n < minimum {
				minimum = n
			}
		}
		if minimum < 0 || (c.MinDomains != nil && int32(len(counts)) < *c.MinDomains) {
			minimum = 0
		}
		self := 0
		if sel.Matches(labels.Set(pi.pod.Labels)) {
			self = 1
		}
		if counts[node.Labels[c.TopologyKey]]+self-minimum > int(c.MaxSkew) {
			return &filterStatus{reasons: []string{ReasonSpread}, detail: "skew on " + c.TopologyKey + " would exceed " + strconv.Itoa(int(c.MaxSkew))}
		}
	}
	return nil
}

// termMatchesPod is PodAffinityTerm matching: the term's namespaces (the
// owner's own when none are listed and there is no namespaceSelector; all
// of them for an empty namespaceSelector) and its label selector. A
// non-empty namespaceSelector needs the namespaces' labels, which the model
// does not have: it matches nothing.
func termMatchesPod(term corev1.PodAffinityTerm, ownerNS string, p *corev1.Pod) bool {
	nsOK := false
	switch {
	case len(term.Namespaces) == 0 && term.NamespaceSelector == nil:
		nsOK = p.Namespace == ownerNS
	default:
		for _, ns := range term.Namespaces {
			if ns == p.Namespace {
				nsOK = true
			}
		}
		if s := term.NamespaceSelector; s != nil && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
			nsOK = true
		}
	}
	if !nsOK || term.LabelSelector == nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	return err == nil && sel.Matches(labels.Set(p.Labels))
}

func requiredAffinity(p *corev1.Pod) []corev1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func requiredAnti(p *corev1.Pod) []corev1.PodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// interPodCounts sums what interPodFilter reads over every node's pods.
func interPodCounts(pi *podInfo, v *clusterView) *podCounts {
	pod := pi.pod
	aff, anti := requiredAffinity(pod), requiredAnti(pod)
	type pair = topoPair
	affCounts, antiCounts, existing := map[pair]int{}, map[pair]int{}, map[pair]int{}
	// Without terms of its own, the pod reads only the placed pods with
	// required anti-affinity: the nodes without any are skipped, as the
	// plugin walks only HavePodsWithRequiredAntiAffinityList then
	// (plugins/interpodaffinity filtering.go getExistingAntiAffinityCounts,
	// getIncomingAffinityAntiAffinityCounts).
	incoming := len(aff) > 0 || len(anti) > 0
	for _, n := range v.nodes {
		if !incoming && !v.mayHoldAnti(n.Name) {
			continue
		}
		for _, o := range v.on(n.Name) {
			if len(aff) > 0 {
				all := true
				for _, t := range aff {
					if !termMatchesPod(t, pod.Namespace, o.pod) {
						all = false
					}
				}
				if all {
					for _, t := range aff {
						if val, ok := n.Labels[t.TopologyKey]; ok {
							affCounts[pair{t.TopologyKey, val}]++
						}
					}
				}
			}
			for _, t := range anti {
				if val, ok := n.Labels[t.TopologyKey]; ok && termMatchesPod(t, pod.Namespace, o.pod) {
					antiCounts[pair{t.TopologyKey, val}]++
				}
			}
			for _, t := range requiredAnti(o.pod) {
				if val, ok := n.Labels[t.TopologyKey]; ok && termMatchesPod(t, o.pod.Namespace, pod) {
					existing[pair{t.TopologyKey, val}]++
				}
			}
		}
	}
	return &podCounts{aff: affCounts, anti: antiCounts, existing: existing}
}

// interPodFilter follows plugins/interpodaffinity filtering.go (the
// InterPodAffinityHostnameFastPath gate is off in v1.37): the pod's
// required affinity, its required anti-affinity, then the required
// anti-affinity of the pods already placed.
func interPodFilter(pi *podInfo, node *corev1.Node, v *clusterView) *filterStatus {
	pod := pi.pod
	aff, anti := requiredAffinity(pod), requiredAnti(pod)
	c := v.counts
	if c == nil || v.override != "" {
		c = interPodCounts(pi, v)
		if v.override == "" {
			v.counts = c
		}
	}
	affCounts, antiCounts, existing := c.aff, c.anti, c.existing
	type pair = topoPair
	if len(aff) > 0 {
		exist := true
		for _, t := range aff {
			val, ok := node.Labels[t.TopologyKey]
			if !ok {
				return &filterStatus{reasons: []string{ReasonPodAffinity}, unresolvable: true, detail: "no label " + t.TopologyKey}
			}
			if affCounts[pair{t.TopologyKey, val}] <= 0 {
				exist = false
			}
		}
		if !exist {
			// The first pod of a group with affinity to itself may go
			// anywhere the topology keys exist.
			self := len(affCounts) == 0
			for _, t := range aff {
				if !termMatchesPod(t, pod.Namespace, pod) {
					self = false
				}
			}
			if !self {
				return &filterStatus{reasons: []string{ReasonPodAffinity}, unresolvable: true, detail: "no pod matching the affinity terms in the node's domain"}
			}
		}
	}
	for _, t := range anti {
		if val, ok := node.Labels[t.TopologyKey]; ok && antiCounts[pair{t.TopologyKey, val}] > 0 {
			return &filterStatus{reasons: []string{ReasonPodAntiAffinity}, detail: "a pod matching the anti-affinity terms is in the node's domain"}
		}
	}
	for k, val := range node.Labels {
		if existing[pair{k, val}] > 0 {
			return &filterStatus{reasons: []string{ReasonExistingAnti}, detail: "a pod in the node's domain has anti-affinity to this pod"}
		}
	}
	return nil
}
