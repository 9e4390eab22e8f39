package scheduler

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The lab cluster of seed 000: a tainted control plane, two Linux workers
// and a Windows Server 2025 worker tainted os=windows:NoSchedule with
// maxPods 60. Sizes are the VMs' (2 vCPU/4 GB, 2/8, 2/8, 4/8).

func labNode(name, os string, cpu, mem string, pods int64, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name,
			"kubernetes.io/os":       os,
			"kubernetes.io/arch":     "amd64",
		}},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(cpu),
				corev1.ResourceMemory: resource.MustParse(mem),
				corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: os},
		},
	}
	if os == "windows" {
		n.Labels["node.kubernetes.io/windows-build"] = "10.0.26100"
		n.Status.NodeInfo.KernelVersion = "10.0.26100.33438"
	}
	return n
}

var (
	controlPlaneTaint = corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	windowsTaint      = corev1.Taint{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	windowsToleration = corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}
)

func labNodes() []*corev1.Node {
	return []*corev1.Node{
		labNode("k8s-lab-win-1", "windows", "4", "8Gi", 60, windowsTaint),
		labNode("k8s-lab-node-2", "linux", "2", "8Gi", 110),
		labNode("k8s-lab-master-1", "linux", "2", "4Gi", 110, controlPlaneTaint),
		labNode("k8s-lab-node-1", "linux", "2", "8Gi", 110),
	}
}

func nodeNamed(nodes []*corev1.Node, name string) *corev1.Node {
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	panic("no node " + name)
}

func requests(cpu, mem string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	if cpu != "" {
		r.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		r.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return r
}

// replica is a pod of the named ReplicaSet with the given requests.
func replica(ns, rs string, i int, cpu, mem string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%d", rs, i), Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "ghcr.io/example/hello:1.2", Resources: requests(cpu, mem)}}},
	}
}

// aspnetAdmitted is an aspnetapp pod after DefaultTolerationSeconds and the
// windows-2025 RuntimeClass.
func aspnetAdmitted(i int) *corev1.Pod {
	p := replica("win-demo", "aspnetapp-769559d8ff", i, "100m", "128Mi")
	p.Spec.Containers[0].Image = "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025"
	p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	p.Spec.NodeSelector = map[string]string{
		"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.26100",
	}
	p.Spec.Tolerations = []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		windowsToleration,
	}
	return p
}

func daemonSet(name string, spec corev1.PodSpec) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec:       appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
	}
}
