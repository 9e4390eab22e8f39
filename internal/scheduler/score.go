package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// maxNodeScore is framework.MaxNodeScore.
const maxNodeScore int64 = 100

// Weights of the default profile's score plugins
// (pkg/scheduler/apis/config/v1/default_plugins.go); PodTopologySpread's
// is in spreadscore.go, InterPodAffinity's and ImageLocality's in
// morescores.go.
const (
	weightTaintToleration int64 = 3
	weightNodeAffinity    int64 = 2
	weightFit             int64 = 1
	weightBalancedAlloc   int64 = 1
)

// topScored returns the feasible nodes with the highest weighted sum of the
// modelled score plugins, in name order: schedule_one.go selectHost picks
// one of them at random.
func topScored(pi *podInfo, feasible, all []*corev1.Node, state *State) []string {
	if len(feasible) == 1 {
		// One feasible node: the scheduler does not score.
		return []string{feasible[0].Name}
	}
	taints := make([]int64, len(feasible))
	affinity := make([]int64, len(feasible))
	total := make([]int64, len(feasible))
	for i, n := range feasible {
		taints[i] = int64(untoleratedPreferNoSchedule(pi.pod.Spec.Tolerations, effectiveTaints(n)))
		affinity[i] = preferredAffinityWeight(pi.pod, n)
		alloc, _ := allocatable(n)
		tot := state.totalsOn(n.Name)
		total[i] = weightFit*leastAllocated(pi, alloc, tot.nonZeroCPU, tot.nonZeroMem) + weightBalancedAlloc*balancedAllocation(pi, alloc, tot.requests)
	}
	normalize(taints, true)
	normalize(affinity, false)
	for _, extra := range []struct {
		weight int64
		scores []int64
	}{
		{weightTopologySpread, spreadScores(pi, feasible, all, state)},
		{weightInterPodAffinity, interPodScores(pi, feasible, all, state)},
		{weightImageLocality, imageScores(pi, feasible, all)},
	} {
		for i := range extra.scores {
			total[i] += extra.weight * extra.scores[i]
		}
	}
	var best int64 = -1
	var out []string
	for i, n := range feasible {
		t := total[i] + weightTaintToleration*taints[i] + weightNodeAffinity*affinity[i]
		switch {
		case t > best:
			best, out = t, []string{n.Name}
		case t == best:
			out = append(out, n.Name)
		}
	}
	return out
}

// normalize is plugins/helper DefaultNormalizeScore: scale to 0-100 by the
// highest score; reverse turns counts of something bad into scores (all
// nodes 100 when none has any).
func normalize(scores []int64, reverse bool) {
	var top int64
	for _, s := range scores {
		top = max(top, s)
	}
	if top == 0 {
		if reverse {
			for i := range scores {
				scores[i] = maxNodeScore
			}
		}
		return
	}
	for i, s := range scores {
		s = maxNodeScore * s / top
		if reverse {
			s = maxNodeScore - s
		}
		scores[i] = s
	}
}

// leastAllocated is NodeResourcesFit's LeastAllocated strategy on cpu and
// memory with weight 1 each (noderesources/least_allocated.go), on the
// non-zero requests of the node's pods plus the pod's.
func leastAllocated(pi *podInfo, alloc resources, nzCPU, nzMem int64) int64 {
	var score, weights int64
	for _, r := range [][2]int64{{nzCPU + pi.nonZeroMilliCPU, alloc.milliCPU}, {nzMem + pi.nonZeroMemory, alloc.memory}} {
		if r[1] == 0 {
			continue
		}
		score += leastRequested(r[0], r[1])
		weights++
	}
	if weights == 0 {
		return 0
	}
	return score / weights
}

// balancedAllocation is NodeResourcesBalancedAllocation
// (noderesources/balanced_allocation.go): on the actual requests, the
// balance of cpu and memory use with the pod against without it, in
// [50, 100]; 0 for a pod that requests neither (the plugin skips it).
func balancedAllocation(pi *podInfo, alloc resources, used resources) int64 {
	if pi.requests.milliCPU == 0 && pi.requests.memory == 0 {
		return 0
	}
	with := balance([][2]int64{{used.milliCPU + pi.requests.milliCPU, alloc.milliCPU}, {used.memory + pi.requests.memory, alloc.memory}})
	without := balance([][2]int64{{used.milliCPU, alloc.milliCPU}, {used.memory, alloc.memory}})
	return maxNodeScore/2 + (maxNodeScore/2+with-without)/2
}

// balance is balancedResourceScore: (1 - standard deviation of the used
// fractions) × 100, for two resources |f1-f2|/2.
func balance(rs [][2]int64) int64 {
	var fractions []float64
	var sum float64
	for _, r := range rs {
		if r[1] == 0 {
			continue
		}
		f := math.Min(float64(r[0])/float64(r[1]), 1)
		fractions = append(fractions, f)
		sum += f
	}
	std := 0.0
	switch {
	case len(fractions) == 2:
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	case len(fractions) > 2:
		mean := sum / float64(len(fractions))
		var v float64
		for _, f := range fractions {
			v += (f - mean) * (f - mean)
		}
		std = math.Sqrt(v / float64(len(fractions)))
	}
	return int64((1 - std) * float64(maxNodeScore))
}
