package scheduler

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Weights of InterPodAffinity and ImageLocality in the default profile.
const (
	weightInterPodAffinity int64 = 2
	weightImageLocality    int64 = 1
	// hardPodAffinityWeight is InterPodAffinityArgs' default: an existing
	// pod's required affinity term that matches the pod counts this much.
	hardPodAffinityWeight int32 = 1
)

func preferredAffinity(p *corev1.Pod) []corev1.WeightedPodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAffinity != nil {
		return a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func preferredAnti(p *corev1.Pod) []corev1.WeightedPodAffinityTerm {
	if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		return a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func withAffinity(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// interPodScores follows plugins/interpodaffinity scoring.go: per topology
// domain, the weights of the pod's preferred (anti-)affinity terms that
// pods there match, plus the existing pods' required affinity (weight 1)
// and preferred (anti-)affinity terms that the pod matches; a node scores
// its domains' sums, normalised between the lowest and highest. nil when
// the plugin skips the pod.
func interPodScores(pi *podInfo, feasible, all []*corev1.Node, state *State) []int64 {
	pod := pi.pod
	own := len(preferredAffinity(pod)) > 0 || len(preferredAnti(pod)) > 0
	if !own && (state == nil || state.withAffinity == 0) {
		return nil
	}
	type pair struct{ key, value string }
	topo := map[pair]int64{}
	add := func(t corev1.PodAffinityTerm, ns string, target *corev1.Pod, node *corev1.Node, w int64) {
		if !termMatchesPod(t, ns, target) {
			return
		}
		if v, ok := node.Labels[t.TopologyKey]; ok {
			topo[pair{t.TopologyKey, v}] += w
		}
	}
	for _, n := range all {
		// Without preferred terms of its own, the pod reads only the
		// placed pods with pod (anti-)affinity (HavePodsWithAffinityList
		// in plugins/interpodaffinity scoring.go PreScore): the nodes
		// without any are skipped.
		if len(n.Labels) == 0 || (!own && state.totalsOn(n.Name).withAffinity == 0) {
			continue
		}
		for _, o := range state.on(n.Name) {
			if !own && !withAffinity(o.pod) {
				continue
			}
			for _, t := range preferredAffinity(pod) {
				add(t.PodAffinityTerm, pod.Namespace, o.pod, n, int64(t.Weight))
			}
			for _, t := range preferredAnti(pod) {
				add(t.PodAffinityTerm, pod.Namespace, o.pod, n, -int64(t.Weight))
			}
			for _, t := range requiredAffinity(o.pod) {
				add(t, o.pod.Namespace, pod, n, int64(hardPodAffinityWeight))
			}
			for _, t := range preferredAffinity(o.pod) {
				add(t.PodAffinityTerm, o.pod.Namespace, pod, n, int64(t.Weight))
			}
			for _, t := range preferredAnti(o.pod) {
				add(t.PodAffinityTerm, o.pod.Namespace, pod, n, -int64(t.Weight))
			}
		}
	}
	if len(topo) == 0 {
		return nil
	}
	scores := make([]int64, len(feasible))
	for i, n := range feasible {
		for k, v := range n.Labels {
			scores[i] += topo[pair{k, v}]
		}
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi > lo {
			scores[i] = int64(float64(maxNodeScore) * (float64(s-lo) / float64(hi-lo)))
		} else {
			scores[i] = 0
		}
	}
	return scores
}

// Image sizes ImageLocality scales between (plugins/imagelocality).
const (
	mib                  int64 = 1024 * 1024
	imageMinThreshold          = 23 * mib
	imageMaxPerContainer       = 1000 * mib
)

// normalizedImageName adds ":latest" to an image without a tag.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

// imageScores follows plugins/imagelocality: per node the sizes of the
// pod's images the node already has (status.images), each scaled by the
// share of nodes that have it, clamped to 23 MiB .. 1000 MiB per
// container and mapped onto 0-100. Image volumes are not counted.
func imageScores(pi *podInfo, feasible, all []*corev1.Node) []int64 {
	type summary struct {
		size  int64
		nodes map[string]bool
	}
	images := map[string]*summary{}
	for _, n := range all {
		for _, img := range n.Status.Images {
			for _, name := range img.Names {
				s := images[name]
				if s == nil {
					s = &summary{size: img.SizeBytes, nodes: map[string]bool{}}
					images[name] = s
				}
				s.nodes[n.Name] = true
			}
		}
	}
	if len(images) == 0 {
		return nil
	}
	cs := append(append([]corev1.Container(nil), pi.pod.Spec.InitContainers...), pi.pod.Spec.Containers...)
	out := make([]int64, len(feasible))
	for i, n := range feasible {
		var sum int64
		for _, c := range cs {
			if s := images[normalizedImageName(c.Image)]; s != nil && s.nodes[n.Name] {
				sum += int64(float64(s.size) * (float64(len(s.nodes)) / float64(len(all))))
			}
		}
		top := imageMaxPerContainer * int64(len(cs))
		sum = min(max(sum, imageMinThreshold), top)
		out[i] = maxNodeScore * (sum - imageMinThreshold) / (top - imageMinThreshold)
	}
	return out
}
