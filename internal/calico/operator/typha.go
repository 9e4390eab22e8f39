package operator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ExpectedTyphaScale is GetExpectedTyphaScale (tigera/operator
// pkg/common/autoscale.go): one Typha per 200 nodes plus one spare, but 1
// for one or two nodes, 2 for three or four, and at least 3 beyond that.
func ExpectedTyphaScale(nodes int) int {
	switch {
	case nodes <= 2:
		return 1
	case nodes <= 4:
		return 2
	}
	return max(nodes/200+2, 3)
}

// TyphaReplicas is the Typha autoscaler's count (pkg/controller/
// installation/typha_autoscaler.go on release-v1.44, pkg/controller/
// typhaautoscaler on master): every schedulable node counts, Windows nodes
// included since their Felix also connects to Typha; cordoned nodes and AKS
// virtual-kubelet nodes do not. Typha only runs on Linux, so when there are
// fewer schedulable Linux nodes than replicas the autoscaler fails with
// upstream's error and leaves the Deployment alone.
func TyphaReplicas(nodes []*corev1.Node) (int, error) {
	all, lin := 0, 0
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			continue
		}
		if _, aks := n.Labels["kubernetes.azure.com/cluster"]; aks && n.Labels["type"] == "virtual-kubelet" {
			continue
		}
		all++
		if n.Labels[corev1.LabelOSStable] == "linux" {
			lin++
		}
	}
	want := ExpectedTyphaScale(all)
	if lin < want {
		return 0, fmt.Errorf("not enough linux nodes to schedule typha pods on, require %d and have %d", want, lin)
	}
	return want, nil
}
