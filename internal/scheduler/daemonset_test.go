package scheduler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDaemonSetNodes(t *testing.T) {
	linux := map[string]string{"kubernetes.io/os": "linux"}
	windows := map[string]string{"kubernetes.io/os": "windows"}
	exists := corev1.Toleration{Operator: corev1.TolerationOpExists}
	noScheduleExists := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	allLinux := []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2"}
	cases := []struct {
		name  string
		spec  corev1.PodSpec
		nodes func() []*corev1.Node
		want  []string
	}{
		{
			name: "kubeadm's kube-proxy runs on every Linux node, the control plane included",
			spec: corev1.PodSpec{NodeSelector: linux, HostNetwork: true, Tolerations: []corev1.Toleration{exists}},
			want: allLinux,
		},
		{
			name: "kube-proxy-windows runs only on the Windows node",
			spec: corev1.PodSpec{NodeSelector: windows, HostNetwork: true, Tolerations: []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}, exists}},
			want: []string{"k8s-lab-win-1"},
		},
		{
			name: "node-exporter's chart defaults tolerate NoSchedule and keep to Linux through the selector",
			spec: corev1.PodSpec{NodeSelector: linux, Tolerations: []corev1.Toleration{noScheduleExists}},
			want: allLinux,
		},
		{
			name: "node-exporter with the OS selector overridden away lands on the Windows node too",
			spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/arch": "amd64"}, Tolerations: []corev1.Toleration{noScheduleExists}},
			want: []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2", "k8s-lab-win-1"},
		},
		{
			name: "a DaemonSet without tolerations stays off both tainted nodes",
			spec: corev1.PodSpec{},
			want: []string{"k8s-lab-node-1", "k8s-lab-node-2"},
		},
		{
			name: "the daemon tolerations cover a cordoned node and memory pressure but not a NotReady node",
			spec: corev1.PodSpec{},
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				n1 := nodeNamed(nodes, "k8s-lab-node-1")
				n1.Spec.Unschedulable = true
				n1.Status.Conditions = append(n1.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue})
				nodeNamed(nodes, "k8s-lab-node-2").Status.Conditions[0].Status = corev1.ConditionFalse
				return nodes
			},
			want: []string{"k8s-lab-node-1"},
		},
		{
			name: "network-unavailable is tolerated only by hostNetwork daemons",
			spec: corev1.PodSpec{NodeSelector: linux, HostNetwork: true},
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				for _, n := range nodes {
					n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue})
				}
				return nodes
			},
			want: []string{"k8s-lab-node-1", "k8s-lab-node-2"},
		},
		{
			name: "without hostNetwork a network-unavailable node is skipped",
			spec: corev1.PodSpec{NodeSelector: linux},
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				nodeNamed(nodes, "k8s-lab-node-2").Status.Conditions = append(nodeNamed(nodes, "k8s-lab-node-2").Status.Conditions,
					corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue})
				return nodes
			},
			want: []string{"k8s-lab-node-1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := labNodes()
			if tc.nodes != nil {
				nodes = tc.nodes()
			}
			got := DaemonSetNodes(daemonSet("ds", tc.spec), nodes)
			if !slices.Equal(got, tc.want) {
				t.Errorf("nodes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDaemonPodSpecReplacesAMatchingTolerationAndAppendsTheRest(t *testing.T) {
	ds := daemonSet("ds", corev1.PodSpec{Tolerations: []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64)},
	}})
	spec := DaemonPodSpec(ds)
	if len(spec.Tolerations) != 6 || spec.Tolerations[0].TolerationSeconds != nil {
		t.Errorf("tolerations %+v", spec.Tolerations)
	}
	if ds.Spec.Template.Spec.Tolerations[0].TolerationSeconds == nil {
		t.Error("the DaemonSet's own template must not be modified")
	}
}
