package report

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The fixtures rebuild the lab cluster of seed 000 (three Linux nodes and
// k8s-lab-win-1) at the moments the seed's kubectl outputs were taken. Every
// timestamp is relative to now, so AGE columns come out as the seed shows.

var now = time.Date(2026, 11, 6, 23, 30, 0, 0, time.UTC)

// ago is now minus a seed AGE: "8m2s", "146m", "12d".
func ago(s string) metav1.Time {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		fmt.Sscanf(d, "%d", &n)
		return metav1.NewTime(now.Add(-time.Duration(n) * 24 * time.Hour))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return metav1.NewTime(now.Add(-d))
}

func ptr[T any](v T) *T { return &v }

type nodeSpec struct {
	name, ip, age string
	windows       bool
	controlPlane  bool
	notReady      bool
}

func labNode(s nodeSpec) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, CreationTimestamp: ago(s.age), Labels: map[string]string{
			"kubernetes.io/arch":     "amd64",
			"kubernetes.io/hostname": s.name,
			"kubernetes.io/os":       "linux",
		}},
		Status: corev1.NodeStatus{
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: s.ip},
				{Type: corev1.NodeHostName, Address: s.name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          "v1.37.2",
				OSImage:                 "Ubuntu 26.04.1 LTS",
				KernelVersion:           "7.0.0-42-generic",
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "containerd://2.2.2",
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"},
			},
		},
	}
	if s.windows {
		n.Labels["kubernetes.io/os"] = "windows"
		n.Labels["node.kubernetes.io/windows-build"] = "10.0.26100"
		n.Status.NodeInfo.OSImage = "Windows Server 2025 Datacenter"
		n.Status.NodeInfo.KernelVersion = "10.0.26100.33438"
		n.Status.NodeInfo.OperatingSystem = "windows"
		n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	}
	if s.controlPlane {
		n.Labels["node-role.kubernetes.io/control-plane"] = ""
		n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	if s.notReady {
		n.Status.Conditions[1] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}
	}
	return n
}

// linuxNodes are the three Linux nodes with the given ages (master, node-1, node-2).
func linuxNodes(master, node1, node2 string) []*corev1.Node {
	return []*corev1.Node{
		labNode(nodeSpec{name: "k8s-lab-master-1", ip: "192.168.10.23", age: master, controlPlane: true}),
		labNode(nodeSpec{name: "k8s-lab-node-1", ip: "192.168.10.24", age: node1}),
		labNode(nodeSpec{name: "k8s-lab-node-2", ip: "192.168.10.26", age: node2}),
	}
}

func winNode(age string, notReady bool) *corev1.Node {
	return labNode(nodeSpec{name: "k8s-lab-win-1", ip: "192.168.10.25", age: age, windows: true, notReady: notReady})
}

type podSpec struct {
	ns, name, ip, node, age string
	containers, ready       int
	labels                  map[string]string
	hostNetwork             bool
}

func runningPod(s podSpec) *corev1.Pod {
	if s.containers == 0 {
		s.containers = 1
		s.ready = 1
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name, CreationTimestamp: ago(s.age), Labels: s.labels},
		Spec:       corev1.PodSpec{NodeName: s.node, HostNetwork: s.hostNetwork},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIP:  s.ip,
			PodIPs: []corev1.PodIP{{IP: s.ip}},
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
		},
	}
	for i := 0; i < s.containers; i++ {
		name := fmt.Sprintf("c%d", i)
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name, Image: "example/" + name})
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name:  name,
			Ready: i < s.ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(s.age)}},
		})
	}
	return p
}

func clusterIPService(ns, name, ip, age string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(age)},
		Spec: corev1.ServiceSpec{
			Selector:   selector,
			Ports:      ports,
			ClusterIP:  ip,
			ClusterIPs: []string{ip},
			Type:       corev1.ServiceTypeClusterIP,
		},
	}
}

type dsSpec struct {
	ns, name, os, age                                 string
	desired, current, ready, upToDate, available, gen int32
	labels                                            map[string]string
}

func daemonSet(s dsSpec) *appsv1.DaemonSet {
	labels := s.labels
	if labels == nil {
		labels = map[string]string{"k8s-app": s.name}
	}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name, CreationTimestamp: ago(s.age)},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/os": s.os},
					Containers:   []corev1.Container{{Name: s.name, Image: "quay.io/calico/" + s.name + ":v3.33.0"}},
				},
			},
		},
		Status: appsv1.DaemonSetStatus{
			DesiredNumberScheduled: s.desired,
			CurrentNumberScheduled: s.current,
			NumberReady:            s.ready,
			UpdatedNumberScheduled: s.upToDate,
			NumberAvailable:        s.available,
		},
	}
}

func kubeletServingCSR(name, node, age string) *certv1.CertificateSigningRequest {
	return &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)},
		Spec: certv1.CertificateSigningRequestSpec{
			SignerName: certv1.KubeletServingSignerName,
			Username:   "system:node:" + node,
			Groups:     []string{"system:nodes", "system:authenticated"},
			Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
		},
	}
}

const strictAffinityMessage = "Invalid StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows: StrictAffinity is false, it must be set to 'true' in the default IPAMConfiguration when using Calico IPAM on Windows"

// healthyStatus is a TigeraStatus as the operator leaves a component that is
// available: Available since the given age, not progressing, not degraded.
func healthyStatus(name, since string) *operator.TigeraStatus {
	return &operator.TigeraStatus{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(since)},
		Status: operator.TigeraStatusStatus{Conditions: []operator.TigeraStatusCondition{
			{Type: "Available", Status: "True", LastTransitionTime: ago(since), Reason: "AllObjectsAvailable", Message: "All objects available"},
			{Type: "Progressing", Status: "False", LastTransitionTime: ago(since), Reason: "AllObjectsAvailable", Message: "All objects available"},
			{Type: "Degraded", Status: "False", LastTransitionTime: ago(since), Reason: "AllObjectsAvailable", Message: "All objects available"},
		}},
	}
}

// degradedWindowsStatus is calico-windows before strictAffinity was set:
// only a Degraded condition, so AVAILABLE, PROGRESSING and SINCE are empty.
func degradedWindowsStatus() *operator.TigeraStatus {
	return &operator.TigeraStatus{
		ObjectMeta: metav1.ObjectMeta{Name: "calico-windows", CreationTimestamp: ago("3m")},
		Status: operator.TigeraStatusStatus{Conditions: []operator.TigeraStatusCondition{
			{Type: "Degraded", Status: "True", LastTransitionTime: ago("3m"), Reason: "ResourceValidationError", Message: strictAffinityMessage},
		}},
	}
}

func ipamBlock(cidr, node string, allocated []string, reserved []int) *calico.IPAMBlock {
	name := strings.NewReplacer(".", "-", "/", "-").Replace(cidr)
	b := &calico.IPAMBlock{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago("153m")},
		Spec:       calico.IPAMBlockSpec{CIDR: cidr, Affinity: ptr("host:" + node), StrictAffinity: true, Allocations: make([]*int, 64)},
	}
	attr := func(handle string) int {
		b.Spec.Attributes = append(b.Spec.Attributes, calico.AllocationAttribute{HandleID: ptr(handle)})
		return len(b.Spec.Attributes) - 1
	}
	if len(reserved) > 0 {
		r := attr(WindowsReservedHandle)
		for _, o := range reserved {
			b.Spec.Allocations[o] = ptr(r)
		}
	}
	for i, h := range allocated {
		ord := i
		if len(reserved) > 0 {
			ord = i + 2 // .0 and .1 are reserved, .2 is Calico_ep
		}
		for b.Spec.Allocations[ord] != nil {
			ord++
		}
		b.Spec.Allocations[ord] = ptr(attr(h))
	}
	for o, a := range b.Spec.Allocations {
		if a == nil {
			b.Spec.Unallocated = append(b.Spec.Unallocated, o)
		}
	}
	return b
}

// labCluster is the finished lab of seed 000 ("Смотрим руками"): four Ready
// nodes, Calico with strictAffinity, hello on the Linux workers and
// aspnetapp on the Windows node.
func labCluster() *model.Cluster {
	nodes := append(linuxNodes("153m", "146m", "146m"), winNode("64m", false))
	c := &model.Cluster{Nodes: nodes}
	for _, ns := range []string{"calico-system", "default", "demo", "kube-system", "tigera-operator", "win-demo"} {
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: ns, CreationTimestamp: ago("153m")},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	c.Namespaces[2].Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	c.Namespaces[5].CreationTimestamp = ago("5m")

	helloLabels := map[string]string{"app.kubernetes.io/name": "hello", "pod-template-hash": "55fb8f8684"}
	aspLabels := map[string]string{"app.kubernetes.io/name": "aspnetapp", "pod-template-hash": "769559d8ff"}
	c.Pods = []*corev1.Pod{
		runningPod(podSpec{ns: "calico-system", name: "calico-kube-controllers-7cbbcdd58d-2h4x8", ip: "172.21.70.196", node: "k8s-lab-master-1", age: "153m", labels: map[string]string{"k8s-app": "calico-kube-controllers"}}),
		runningPod(podSpec{ns: "calico-system", name: "calico-node-windows-q54h2", ip: "192.168.10.25", node: "k8s-lab-win-1", age: "63m", containers: 2, ready: 2, hostNetwork: true, labels: map[string]string{"k8s-app": "calico-node-windows"}}),
		runningPod(podSpec{ns: "calico-system", name: "calico-typha-7c68577f9-8gjrr", ip: "192.168.10.24", node: "k8s-lab-node-1", age: "146m", hostNetwork: true, labels: map[string]string{"k8s-app": "calico-typha"}}),
		runningPod(podSpec{ns: "calico-system", name: "calico-typha-7c68577f9-hjzzm", ip: "192.168.10.23", node: "k8s-lab-master-1", age: "151m", hostNetwork: true, labels: map[string]string{"k8s-app": "calico-typha"}}),
		runningPod(podSpec{ns: "demo", name: "hello-55fb8f8684-69mvv", ip: "172.21.211.25", node: "k8s-lab-node-1", age: "140m", labels: helloLabels}),
		runningPod(podSpec{ns: "demo", name: "hello-55fb8f8684-nztv2", ip: "172.21.172.4", node: "k8s-lab-node-2", age: "140m", labels: helloLabels}),
		runningPod(podSpec{ns: "kube-system", name: "coredns-8f97fdbd9-9gc9h", ip: "172.21.172.3", node: "k8s-lab-node-2", age: "145m", labels: map[string]string{"k8s-app": "kube-dns"}}),
		runningPod(podSpec{ns: "kube-system", name: "coredns-8f97fdbd9-vr6vv", ip: "172.21.70.199", node: "k8s-lab-master-1", age: "145m", labels: map[string]string{"k8s-app": "kube-dns"}}),
		runningPod(podSpec{ns: "kube-system", name: "kube-proxy-windows-z9qdq", ip: "192.168.10.25", node: "k8s-lab-win-1", age: "59m", hostNetwork: true, labels: map[string]string{"k8s-app": "kube-proxy-windows"}}),
		runningPod(podSpec{ns: "win-demo", name: "aspnetapp-769559d8ff-dkp9z", ip: "172.21.41.6", node: "k8s-lab-win-1", age: "4m", labels: aspLabels}),
		runningPod(podSpec{ns: "win-demo", name: "aspnetapp-769559d8ff-vk445", ip: "172.21.41.5", node: "k8s-lab-win-1", age: "4m1s", labels: aspLabels}),
	}
	// One pod that is still pulling its image, one that restarted.
	pending := runningPod(podSpec{ns: "win-demo", name: "bad-7d9f8c6b5-x2x9q", node: "k8s-lab-win-1", age: "2m"})
	pending.Status.Phase = corev1.PodPending
	pending.Status.PodIPs, pending.Status.PodIP = nil, ""
	pending.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "c0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	c.Pods = append(c.Pods, pending)
	c.Pods[1].Status.ContainerStatuses[0].RestartCount = 1
	c.Pods[1].Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago("61m")}

	c.Services = []*corev1.Service{
		clusterIPService("default", "kubernetes", "10.96.0.1", "153m", nil, corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(6443)}),
		clusterIPService("demo", "hello", "10.97.141.163", "140m", map[string]string{"app.kubernetes.io/name": "hello"}),
		clusterIPService("kube-system", "kube-dns", "10.96.0.10", "153m", map[string]string{"k8s-app": "kube-dns"},
			corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			corev1.ServicePort{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP},
			corev1.ServicePort{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP}),
		clusterIPService("win-demo", "aspnetapp", "10.102.98.171", "4m1s", map[string]string{"app.kubernetes.io/name": "aspnetapp"}),
	}
	c.EndpointSlices = []*discoveryv1.EndpointSlice{{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: "hello-x7k2p", CreationTimestamp: ago("140m"), Labels: map[string]string{discoveryv1.LabelServiceName: "hello"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"172.21.172.4"}, NodeName: ptr("k8s-lab-node-2")},
			{Addresses: []string{"172.21.211.25"}, NodeName: ptr("k8s-lab-node-1")},
		},
	}}
	c.DaemonSets = []*appsv1.DaemonSet{
		daemonSet(dsSpec{ns: "calico-system", name: "calico-node", os: "linux", age: "151m", desired: 3, current: 3, ready: 3, upToDate: 3, available: 3}),
		daemonSet(dsSpec{ns: "calico-system", name: "calico-node-windows", os: "windows", age: "146m", desired: 1, current: 1, ready: 1, upToDate: 1, available: 1}),
		daemonSet(dsSpec{ns: "calico-system", name: "csi-node-driver", os: "linux", age: "151m", desired: 3, current: 3, ready: 3, upToDate: 3, available: 3}),
		daemonSet(dsSpec{ns: "kube-system", name: "kube-proxy", os: "linux", age: "153m", desired: 3, current: 3, ready: 3, upToDate: 3, available: 3}),
		daemonSet(dsSpec{ns: "kube-system", name: "kube-proxy-windows", os: "windows", age: "59m", desired: 1, current: 1, ready: 1, upToDate: 1, available: 1}),
	}
	deploy := func(ns, name, image, age string, labels map[string]string, replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: ago(age), Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(replicas),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
				},
			},
			Status: appsv1.DeploymentStatus{Replicas: replicas, ReadyReplicas: replicas, UpdatedReplicas: replicas, AvailableReplicas: replicas},
		}
	}
	hello := deploy("demo", "hello", "ghcr.io/example/hello:1.2", "140m", map[string]string{"app.kubernetes.io/name": "hello"}, 2)
	asp := deploy("win-demo", "aspnetapp", "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025", "4m1s", map[string]string{"app.kubernetes.io/name": "aspnetapp"}, 2)
	c.Deployments = []*appsv1.Deployment{hello, asp}
	rs := func(d *appsv1.Deployment, hash string) *appsv1.ReplicaSet {
		l := map[string]string{"app.kubernetes.io/name": d.Name, "pod-template-hash": hash}
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-" + hash, CreationTimestamp: d.CreationTimestamp, Labels: l},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: d.Spec.Replicas,
				Selector: &metav1.LabelSelector{MatchLabels: l},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: d.Spec.Template.Spec},
			},
			Status: appsv1.ReplicaSetStatus{Replicas: *d.Spec.Replicas, ReadyReplicas: *d.Spec.Replicas},
		}
	}
	c.ReplicaSets = []*appsv1.ReplicaSet{rs(hello, "55fb8f8684"), rs(asp, "769559d8ff")}
	c.NetworkPolicies = []*networkingv1.NetworkPolicy{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "default-deny", CreationTimestamp: ago("30m")},
			Spec:       networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "hello-ingress", CreationTimestamp: ago("30m")},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "hello"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			},
		},
	}
	c.ServiceAccounts = []*corev1.ServiceAccount{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "default", CreationTimestamp: ago("153m")},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "ghcr-pull"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "win-demo", Name: "default", CreationTimestamp: ago("5m")}},
	}
	c.StatefulSets = []*appsv1.StatefulSet{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "cache", CreationTimestamp: ago("20m")},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(3)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "redis", Image: "redis:8"}, {Name: "exporter", Image: "oliver006/redis_exporter:v1"},
			}}},
		},
		Status: appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2},
	}}
	c.RuntimeClasses = []*nodev1.RuntimeClass{{
		ObjectMeta: metav1.ObjectMeta{Name: "windows-2025", CreationTimestamp: ago("8m")},
		Handler:    "runhcs-wcow-process",
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{
			"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "node.kubernetes.io/windows-build": "10.0.26100",
		}},
	}}
	c.ConfigMaps = []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubelet-config", CreationTimestamp: ago("153m")}, Data: map[string]string{"kubelet": "..."}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "tigera-operator", Name: "kubernetes-services-endpoint", CreationTimestamp: ago("152m")},
			Data: map[string]string{"KUBERNETES_SERVICE_HOST": "k8s-lab-api.example.com", "KUBERNETES_SERVICE_PORT": "6443"}},
	}
	approved := func(c *certv1.CertificateSigningRequest) *certv1.CertificateSigningRequest {
		c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved, Status: corev1.ConditionTrue}}
		c.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----\n")
		return c
	}
	client := &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-8xq2v", CreationTimestamp: ago("65m")},
		Spec: certv1.CertificateSigningRequestSpec{
			SignerName:        certv1.KubeAPIServerClientKubeletSignerName,
			Username:          "system:bootstrap:3h8q2w",
			ExpirationSeconds: ptr(int32(31536000)),
		},
	}
	c.CSRs = []*certv1.CertificateSigningRequest{
		approved(kubeletServingCSR("csr-4wm2t", "k8s-lab-master-1", "152m")),
		approved(kubeletServingCSR("csr-ljq25", "k8s-lab-win-1", "64m")),
		approved(client),
	}

	c.Installation = &operator.Installation{
		ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: ago("152m")},
		Spec: operator.InstallationSpec{
			CalicoNetwork: &operator.CalicoNetworkSpec{
				BGP:              ptr("Disabled"),
				WindowsDataplane: ptr("HNS"),
				IPPools:          []operator.IPPool{{Name: "default-ipv4-ippool", CIDR: "172.21.0.0/16", Encapsulation: "VXLAN", NATOutgoing: "Enabled", BlockSize: ptr(int32(26))}},
			},
			ServiceCIDRs: []string{"10.96.0.0/12"},
		},
	}
	c.TigeraStatuses = []*operator.TigeraStatus{
		healthyStatus("apiserver", "150m"), healthyStatus("calico", "145m"),
		healthyStatus("calico-windows", "60m"), healthyStatus("ippools", "151m"), healthyStatus("tiers", "151m"),
	}
	c.IPPools = []*calico.IPPool{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "default-ipv4-ippool", CreationTimestamp: ago("151m")},
			Spec: calico.IPPoolSpec{CIDR: "172.21.0.0/16", VXLANMode: calico.ModeAlways, IPIPMode: calico.ModeNever,
				NATOutgoing: true, BlockSize: 26, NodeSelector: "all()", AllowedUses: []string{"Workload", "Tunnel"}},
		},
		{
			// Added later and overlapping the default pool: the IP pool
			// controller keeps it from allocating.
			ObjectMeta: metav1.ObjectMeta{Name: "overlap-pool", CreationTimestamp: ago("10m")},
			Spec:       calico.IPPoolSpec{CIDR: "172.21.128.0/18", VXLANMode: calico.ModeAlways, IPIPMode: calico.ModeNever, BlockSize: 26, NodeSelector: "!all()"},
		},
	}
	c.IPAMConfig = &calico.IPAMConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: ago("151m")},
		Spec:       calico.IPAMConfigurationSpec{StrictAffinity: true, AutoAllocateBlocks: ptr(true)},
	}
	c.IPAMBlocks = []*calico.IPAMBlock{
		ipamBlock("172.21.172.0/26", "k8s-lab-node-2", []string{"vxlan-tunnel-addr-k8s-lab-node-2", "k8s-pod-network.csi", "k8s-pod-network.coredns", "k8s-pod-network.hello"}, nil),
		ipamBlock("172.21.211.0/26", "k8s-lab-node-1", []string{"vxlan-tunnel-addr-k8s-lab-node-1", "k8s-pod-network.csi"}, nil),
		ipamBlock("172.21.41.0/26", "k8s-lab-win-1", []string{"k8s-pod-network.aspnetapp-1", "k8s-pod-network.aspnetapp-2"}, []int{0, 1, 2, 63}),
		ipamBlock("172.21.70.192/26", "k8s-lab-master-1", []string{"vxlan-tunnel-addr-k8s-lab-master-1", "k8s-pod-network.a", "k8s-pod-network.b", "k8s-pod-network.c", "k8s-pod-network.d", "k8s-pod-network.e", "k8s-pod-network.f", "k8s-pod-network.coredns"}, nil),
	}
	for _, b := range c.IPAMBlocks {
		node := strings.TrimPrefix(*b.Spec.Affinity, "host:")
		c.BlockAffinities = append(c.BlockAffinities, &calico.BlockAffinity{
			ObjectMeta: metav1.ObjectMeta{Name: node + "-" + b.Name, CreationTimestamp: b.CreationTimestamp},
			Spec:       calico.BlockAffinitySpec{State: "confirmed", Node: node, Type: "host", CIDR: b.Spec.CIDR},
		})
	}
	return c
}
