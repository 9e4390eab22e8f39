package check

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// syntheticCluster builds a large hybrid cluster directly (no engine): one
// node in ten is Windows; pods belong to Deployments of ten replicas, one
// in ten of them Windows, each behind a Service with its EndpointSlice; the
// node agents (kube-proxy, calico-node, and their Windows twins) put pods
// on every node; a Calico policy has a rule with both
// selectors; the Cluster kind lists every host and a firewall.
func syntheticCluster(nodes, pods int) *model.Cluster {
	str := func(s string) *string { return &s }
	yes := true
	c := &model.Cluster{Origins: map[model.Key]model.Origin{}, DerivedFields: map[model.Key][]string{}}
	c.Network = hybrid.Network{CIDR: "10.0.0.0/8", Firewall: []hybrid.FirewallRule{
		{Name: "kubelet", Protocol: "TCP", Ports: []int32{10250}, From: []string{"10.0.0.0/8"}, Action: "Allow"},
		{Name: "vxlan", Protocol: "UDP", Ports: []int32{4789}, From: []string{"10.0.0.0/8"}, Action: "Allow"},
	}}
	var windows, linux []string
	for i := 0; i < nodes; i++ {
		name, os := fmt.Sprintf("node-%05d", i), hybrid.OSLinux
		if i%10 == 9 {
			name, os = fmt.Sprintf("win-%05d", i), hybrid.OSWindows
		}
		addr := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255+1)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os, corev1.LabelArchStable: "amd64", "kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{
				NodeInfo:    corev1.NodeSystemInfo{OperatingSystem: os, ContainerRuntimeVersion: "containerd://2.2.2", KernelVersion: "7.0.0"},
				Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("60")},
			},
		}
		if i == 0 {
			n.Labels[wellknown.LabelControlPlane] = ""
		}
		if os == hybrid.OSWindows {
			n.Labels[corev1.LabelWindowsBuild] = "10.0.26100"
			n.Status.NodeInfo.KernelVersion = "10.0.26100.33438"
			n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
			windows = append(windows, name)
		} else {
			linux = append(linux, name)
		}
		c.Nodes = append(c.Nodes, n)
		c.Hosts = append(c.Hosts, hybrid.Host{Name: name, Address: addr, OS: os})
	}
	for i := 0; i < 50; i++ {
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%02d", i)}})
	}
	c.RuntimeClasses = []*nodev1.RuntimeClass{{ObjectMeta: metav1.ObjectMeta{Name: "windows-2025"}, Handler: "runhcs-wcow-process",
		Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{corev1.LabelOSStable: "windows", corev1.LabelWindowsBuild: "10.0.26100"}}}}
	c.Installation = &operator.Installation{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: operator.InstallationSpec{
		ServiceCIDRs: []string{"10.96.0.0/12"},
		CalicoNetwork: &operator.CalicoNetworkSpec{BGP: str("Disabled"), WindowsDataplane: str("HNS"),
			IPPools: []operator.IPPool{{Name: "default-ipv4-ippool", CIDR: "172.16.0.0/12", Encapsulation: "VXLAN"}}},
	}}
	c.IPPools = []*calico.IPPool{{ObjectMeta: metav1.ObjectMeta{Name: "default-ipv4-ippool"}, Spec: calico.IPPoolSpec{CIDR: "172.16.0.0/12", VXLANMode: "Always", IPIPMode: "Never", BlockSize: 26, NodeSelector: "all()"}}}
	c.IPAMConfig = &calico.IPAMConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calico.IPAMConfigurationSpec{StrictAffinity: true}}
	c.ConfigMaps = []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-services-endpoint", Namespace: "tigera-operator"},
		Data: map[string]string{"KUBERNETES_SERVICE_HOST": "api.example.com", "KUBERNETES_SERVICE_PORT": "6443"}}}
	c.CalicoPolicies = []*calico.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: "ns-00"}, Spec: calico.PolicySpec{
		Selector: "all()", Ingress: []calico.Rule{{Action: "Allow", Source: calico.EntityRule{Selector: "app == 'app-0'"}, Destination: calico.EntityRule{Selector: "all()"}}}}}}

	// The node agents: kube-proxy and calico-node on every Linux node, their
	// HostProcess twins on every Windows node.
	hpc := &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &yes}}
	ds := func(ns, name, os string, nodes []string) {
		d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		d.Spec.Template.Spec = corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelOSStable: os}, HostNetwork: true,
			Containers: []corev1.Container{{Name: name, Image: "registry.example.com/" + name + ":1",
				Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/start.ps1"}}}}
		if os == hybrid.OSWindows {
			d.Spec.Template.Spec.SecurityContext = hpc
		}
		c.DaemonSets = append(c.DaemonSets, d)
		for _, n := range nodes {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + n, Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: name, Controller: &yes}}}, Spec: d.Spec.Template.Spec}
			p.Spec.NodeName = n
			c.Pods = append(c.Pods, p)
		}
	}
	ds("kube-system", "kube-proxy", hybrid.OSLinux, linux)
	ds("kube-system", "kube-proxy-windows", hybrid.OSWindows, windows)
	ds("calico-system", "calico-node", hybrid.OSLinux, linux)
	ds("calico-system", "calico-node-windows", hybrid.OSWindows, windows)
	c.Namespaces = append(c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "calico-system",
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}})

	replicas := 10
	for d := 0; len(c.Pods) < pods; d++ {
		ns, name := fmt.Sprintf("ns-%02d", d%50), fmt.Sprintf("app-%d", d)
		win := d%10 == 3
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "ghcr.io/example/app:1",
			Env: []corev1.EnvVar{{Name: "PEER", Value: fmt.Sprintf("http://app-%d.ns-%02d.svc.cluster.local:80/", d+1, (d+1)%50)}}}}}
		targets := linux
		if win {
			spec.OS = &corev1.PodOS{Name: corev1.Windows}
			spec.RuntimeClassName = str("windows-2025")
			spec.Containers[0].Image = "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025"
			targets = windows
		}
		labels := map[string]string{"app": name}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		dep.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-abc", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: name, Controller: &yes}}}}
		c.Deployments = append(c.Deployments, dep)
		c.ReplicaSets = append(c.ReplicaSets, rs)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ServiceSpec{Selector: labels, ClusterIP: "10.96.0.10"}}
		c.Services = append(c.Services, svc)
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name + "-x", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}}}
		for r := 0; r < replicas; r++ {
			i := d*replicas + r
			node := targets[i%len(targets)]
			ip := fmt.Sprintf("172.%d.%d.%d", 16+i>>16&15, i>>8&255, i&255)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-abc-%d", name, r), Namespace: ns, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs.Name, Controller: &yes}}}, Spec: spec}
			p.Spec.NodeName = node
			p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}
			c.Pods = append(c.Pods, p)
			n := node
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: &n})
		}
		c.EndpointSlices = append(c.EndpointSlices, slice)
	}
	return c
}

func benchmarkCheck(b *testing.B, nodes, pods int) {
	c := syntheticCluster(nodes, pods)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep, err := Run(c, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Rules) == 0 {
			b.Fatal("no rules ran")
		}
	}
}

// BenchmarkCheck runs every rule over synthetic clusters: 1,000 nodes and
// 30,000 pods, and (without -short) 5,000 nodes and 150,000 pods.
func BenchmarkCheck(b *testing.B) {
	b.Run("1000-nodes-30000-pods", func(b *testing.B) { benchmarkCheck(b, 1000, 30000) })
	if testing.Short() {
		return
	}
	b.Run("5000-nodes-150000-pods", func(b *testing.B) { benchmarkCheck(b, 5000, 150000) })
}

// TestASyntheticClusterChecksLikeTheLab guards the benchmark's cluster: the
// rules find only what it was built to show.
func TestASyntheticClusterChecksLikeTheLab(t *testing.T) {
	rep := mustRun(t, syntheticCluster(100, 2000), Options{})
	for _, f := range rep.Findings {
		switch f.RuleID {
		case "HYB055", "HYB016":
		default:
			t.Errorf("unexpected finding:%s", describe([]rule.Finding{f}))
		}
	}
}
