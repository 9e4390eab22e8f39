package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// weightTopologySpread is PodTopologySpread's weight in the default profile.
const weightTopologySpread int64 = 2

// softConstraint is one ScheduleAnyway constraint PodTopologySpread scores.
type softConstraint struct {
	key     string
	maxSkew int32
	// matches says whether a pod already placed counts for the constraint.
	matches func(*podInfo) bool
}

// softConstraints are the pod's ScheduleAnyway constraints or, when it has
// none at all, the system default constraints (hostname maxSkew 3, zone
// maxSkew 5; plugins/podtopologyspread/plugin.go systemDefaultConstraints)
// for a pod with a controller. Upstream selects the pods the owner's and
// the Services' selectors match; the model counts the pods of the same
// owner. system reports the defaults.
func softConstraints(pi *podInfo) (cs []softConstraint, system bool) {
	pod := pi.pod
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		for _, c := range pod.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable != corev1.ScheduleAnyway {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				sel = labels.Nothing()
			}
			cs = append(cs, softConstraint{key: c.TopologyKey, maxSkew: c.MaxSkew, matches: func(o *podInfo) bool {
				return o.pod.Namespace == pod.Namespace && o.pod.DeletionTimestamp == nil && sel.Matches(labels.Set(o.pod.Labels))
			}})
		}
		return cs, false
	}
	if !hasController(pod) {
		return nil, true
	}
	same := func(o *podInfo) bool { return o.owner == pi.owner && o.pod.DeletionTimestamp == nil }
	return []softConstraint{
		{key: corev1.LabelHostname, maxSkew: 3, matches: same},
		{key: corev1.LabelTopologyZone, maxSkew: 5, matches: same},
	}, true
}

func hasController(pod *corev1.Pod) bool {
	for _, r := range pod.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			switch r.Kind {
			case "ReplicaSet", "ReplicationController", "StatefulSet":
				return true
			}
		}
	}
	return false
}

// spreadScores follows plugins/podtopologyspread scoring.go: per feasible
// node the sum over the constraints of count×log(domains+2)+maxSkew-1,
// rounded, then normalised so that the fewest matching pods score 100.
// nil when the plugin skips the pod (no soft constraints).
func spreadScores(pi *podInfo, feasible, all []*corev1.Node, state *State) []int64 {
	cs, system := softConstraints(pi)
	if len(cs) == 0 {
		return nil
	}
	hasAll := func(n *corev1.Node) bool {
		for _, c := range cs {
			if _, ok := n.Labels[c.key]; !ok {
				return false
			}
		}
		return true
	}
	requireAll := !system
	ignored := map[string]bool{}
	domains := make([]map[string]int64, len(cs))
	for i := range cs {
		domains[i] = map[string]int64{}
	}
	scored := 0
	for _, n := range feasible {
		if requireAll && !hasAll(n) {
			ignored[n.Name] = true
			continue
		}
		scored++
		for i, c := range cs {
			if c.key == corev1.LabelHostname {
				continue
			}
			if _, seen := domains[i][n.Labels[c.key]]; !seen {
				domains[i][n.Labels[c.key]] = 0
			}
		}
	}
	count := func(node string, c softConstraint) int64 {
		var k int64
		for _, o := range state.on(node) {
			if c.matches(o) {
				k++
			}
		}
		return k
	}
	zoned := false
	for i := range cs {
		zoned = zoned || len(domains[i]) > 0
	}
	for _, n := range all {
		if !zoned {
			break // only hostname constraints: counted per node below
		}
		if !matchesRequiredAffinity(pi.pod, n) || (requireAll && !hasAll(n)) {
			continue
		}
		for i, c := range cs {
			if c.key == corev1.LabelHostname {
				continue
			}
			v := n.Labels[c.key]
			if _, ok := domains[i][v]; ok {
				domains[i][v] += count(n.Name, c)
			}
		}
	}
	raw := make([]int64, len(feasible))
	for j, n := range feasible {
		if ignored[n.Name] {
			continue
		}
		var score float64
		for i, c := range cs {
			v, ok := n.Labels[c.key]
			if !ok {
				continue
			}
			size := len(domains[i])
			cnt := domains[i][v]
			if c.key == corev1.LabelHostname {
				size = scored
				cnt = count(n.Name, c)
			}
			score += float64(cnt)*math.Log(float64(size+2)) + float64(c.maxSkew-1)
		}
		raw[j] = int64(math.Round(score))
	}
	var lo int64 = math.MaxInt64
	var hi int64
	for j, n := range feasible {
		if ignored[n.Name] {
			continue
		}
		lo, hi = min(lo, raw[j]), max(hi, raw[j])
	}
	out := make([]int64, len(feasible))
	for j, n := range feasible {
		switch {
		case ignored[n.Name]:
			out[j] = 0
		case hi == 0:
			out[j] = maxNodeScore
		default:
			out[j] = maxNodeScore * (hi + lo - raw[j]) / hi
		}
	}
	return out
}
