package gen

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
)

func ptr[T any](v T) *T { return &v }

const (
	labelName    = "app.kubernetes.io/name"
	portHTTP     = 8080
	portMetrics  = 9090
	apiHost      = "api." + domain
	psaEnforce   = "pod-security.kubernetes.io/enforce"
	linuxCRI     = "unix:///run/containerd/containerd.sock"
	windowsCRI   = "npipe:////./pipe/containerd-containerd"
	kubeletPatch = "kubeletconfiguration"
)

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// --- Hosts ---------------------------------------------------------------

// clusterKind is the project's Cluster: the hosts in join order, the node
// network with its DNS, and the Windows firewall rules.
func (p *plan) clusterKind() *hybrid.Cluster {
	c := &hybrid.Cluster{
		TypeMeta:   typeMeta(hybrid.Group+"/"+hybrid.Version, "Cluster"),
		ObjectMeta: metav1.ObjectMeta{Name: clusterName},
	}
	net := &c.Spec.Network
	net.CIDR = nodeNet.String()
	net.Gateway = gateway.String()
	net.DNS = append(net.DNS,
		hybrid.DNSRecord{Name: "router." + domain, Address: gateway.String()},
		hybrid.DNSRecord{Name: apiHost, Address: p.hosts[0].addr.String()})
	var windows []string
	for i := range p.hosts {
		h := &p.hosts[i]
		net.DNS = append(net.DNS, hybrid.DNSRecord{Name: h.fqdn, Address: h.addr.String()})
		created := metav1.NewTime(h.created)
		host := hybrid.Host{
			Name: h.name, FQDN: h.fqdn, Address: h.addr.String(), OS: h.os(),
			ContainerRuntime: containerRuntime, KubeletVersion: kubernetesVersion,
			CPU: h.cpu, Memory: h.memory,
			Observed: hybrid.HostObserved{CreationTimestamp: &created},
		}
		if h.windows {
			windows = append(windows, h.name)
			host.OSImage, host.KernelVersion = windowsOSImage, windowsKernel
			host.NIC = hybrid.NIC{Name: "Ethernet", MAC: h.nicMAC, MTU: 1500}
			host.Join = h.name
			host.Patches = []string{kubeletPatch}
			// Like a fresh join, nothing is observed on the Windows host:
			// the DrPort adapter's MAC (the node's VTEP) and GUID are known
			// only once calico-node-windows has created the Calico network,
			// so the twin gives the node its placeholder VTEP MAC.
		} else {
			host.OSImage, host.KernelVersion = linuxOSImage, linuxKernel
			host.NIC = hybrid.NIC{Name: "ens18", MTU: 1500}
		}
		if h.controlPlane {
			host.Join = "init"
		}
		c.Spec.Hosts = append(c.Spec.Hosts, host)
	}
	if len(windows) > 0 {
		// Windows Defender Firewall is on; the Linux firewalls are off.
		net.Firewall = []hybrid.FirewallRule{
			{Name: "kubelet", Hosts: windows, Protocol: "TCP", Ports: []int32{10250}, From: []string{nodeNet.String()}, Action: "Allow"},
			{Name: "kube-proxy-health", Hosts: windows, Protocol: "TCP", Ports: []int32{10256}, From: []string{nodeNet.String()}, Action: "Allow"},
		}
	}
	return c
}

// node is the Node object of a host as `kubectl get node -o yaml` shows it
// once the node is Ready and Calico runs on it.
func (p *plan) node(h *host) *corev1.Node {
	created := metav1.NewTime(h.created)
	n := &corev1.Node{
		TypeMeta: typeMeta("v1", "Node"),
		ObjectMeta: metav1.ObjectMeta{
			Name:              h.name,
			CreationTimestamp: created,
			Labels: map[string]string{
				kubeletapis.LabelArch:  "amd64",
				kubeletapis.LabelOS:    h.os(),
				corev1.LabelArchStable: "amd64",
				corev1.LabelHostname:   h.name,
				corev1.LabelOSStable:   h.os(),
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				calico.AnnotationIPv4Address:                             fmt.Sprintf("%s/%d", h.addr, nodeNet.Bits()),
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: h.podCIDR, PodCIDRs: []string{h.podCIDR}},
	}
	if h.tunnel.IsValid() {
		n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] = h.tunnel.String()
	}
	maxPods := LinuxMaxPods
	osImage, kernel := linuxOSImage, linuxKernel
	if h.windows {
		maxPods = WindowsMaxPods
		osImage, kernel = windowsOSImage, windowsKernel
		n.Labels[corev1.LabelWindowsBuild] = windowsBuild
		n.Annotations[calico.AnnotationVXLANTunnelMACAddr] = h.vtepMAC
		n.Spec.Taints = []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	}
	if h.controlPlane {
		n.Labels[wellknown.LabelControlPlane] = ""
		n.Labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
		n.Spec.Taints = []corev1.Taint{{Key: wellknown.TaintControlPlane, Effect: corev1.TaintEffectNoSchedule}}
	}
	mem := resource.MustParse(h.memory)
	alloc := mem.DeepCopy()
	alloc.Sub(resource.MustParse("100Mi"))
	n.Status = corev1.NodeStatus{
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(h.cpu), corev1.ResourceMemory: mem,
			corev1.ResourcePods: *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		},
		Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(h.cpu), corev1.ResourceMemory: alloc,
			corev1.ResourcePods: *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
		},
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "CalicoIsUp", Message: "Calico is running on this node", LastHeartbeatTime: created, LastTransitionTime: created},
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available", LastHeartbeatTime: created, LastTransitionTime: created},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure", LastHeartbeatTime: created, LastTransitionTime: created},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available", LastHeartbeatTime: created, LastTransitionTime: created},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: created, LastTransitionTime: created},
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: h.addr.String()},
			{Type: corev1.NodeHostName, Address: h.name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			Architecture: "amd64", OperatingSystem: h.os(), OSImage: osImage, KernelVersion: kernel,
			ContainerRuntimeVersion: containerRuntime, KubeletVersion: kubernetesVersion,
		},
	}
	return n
}

// --- kubeadm ---------------------------------------------------------------

// kubeletConfig and kubeProxyConfig are the few fields written of the
// kubelet's and kube-proxy's component configuration.
type kubeletConfig struct {
	APIVersion   string `json:"apiVersion"`
	Kind         string `json:"kind"`
	CgroupDriver string `json:"cgroupDriver,omitempty"`
	MaxPods      int32  `json:"maxPods,omitempty"`
}

type kubeProxyConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Mode       string `json:"mode,omitempty"`
}

func (p *plan) kubeadmDocs() []any {
	cp := &p.hosts[0]
	return []any{
		&kubeadm.InitConfiguration{
			TypeMeta:         typeMeta("kubeadm.k8s.io/v1beta4", "InitConfiguration"),
			LocalAPIEndpoint: kubeadm.APIEndpoint{AdvertiseAddress: cp.addr.String(), BindPort: apiPort},
			NodeRegistration: kubeadm.NodeRegistration{Name: cp.name, CRISocket: linuxCRI},
		},
		&kubeadm.ClusterConfiguration{
			TypeMeta:             typeMeta("kubeadm.k8s.io/v1beta4", "ClusterConfiguration"),
			KubernetesVersion:    kubernetesVersion,
			ControlPlaneEndpoint: fmt.Sprintf("%s:%d", apiHost, apiPort),
			Networking:           kubeadm.Networking{PodSubnet: p.pool.String(), ServiceSubnet: serviceCIDR, DNSDomain: "cluster.local"},
			APIServer:            kubeadm.APIServer{CertSANs: []string{apiHost, cp.fqdn}},
		},
		&kubeletConfig{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration", CgroupDriver: "systemd"},
		&kubeProxyConfig{APIVersion: "kubeproxy.config.k8s.io/v1alpha1", Kind: "KubeProxyConfiguration", Mode: "nftables"},
	}
}

// joinCredentials are the bootstrap token and CA hash every join uses.
type joinCredentials struct{ token, caHash string }

func (p *plan) credentials() joinCredentials {
	const tokenChars = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	for i := 0; i < 23; i++ {
		if i == 6 {
			b.WriteByte('.')
			continue
		}
		b.WriteByte(tokenChars[p.rng.IntN(len(tokenChars))])
	}
	hash := fmt.Sprintf("sha256:%016x%016x%016x%016x", p.rng.Uint64(), p.rng.Uint64(), p.rng.Uint64(), p.rng.Uint64())
	return joinCredentials{token: b.String(), caHash: hash}
}

// join is C:\k\join.yaml on a Windows host.
func (p *plan) join(h *host, cred joinCredentials) *kubeadm.JoinConfiguration {
	return &kubeadm.JoinConfiguration{
		TypeMeta: typeMeta("kubeadm.k8s.io/v1beta4", "JoinConfiguration"),
		Discovery: kubeadm.Discovery{BootstrapToken: &kubeadm.BootstrapTokenDiscovery{
			APIServerEndpoint: fmt.Sprintf("%s:%d", apiHost, apiPort), Token: cred.token, CACertHashes: []string{cred.caHash},
		}},
		NodeRegistration: kubeadm.NodeRegistration{
			Name: h.name, CRISocket: windowsCRI,
			Taints: &[]corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		},
		Patches: &kubeadm.Patches{Directory: `C:\k\patches`},
	}
}

// --- Calico and Windows support ----------------------------------------

func (p *plan) calicoDocs() []any {
	docs := []any{
		&operator.Installation{
			TypeMeta:   typeMeta("operator.tigera.io/v1", "Installation"),
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec: operator.InstallationSpec{
				ServiceCIDRs: []string{serviceCIDR},
				CalicoNetwork: &operator.CalicoNetworkSpec{
					BGP:              ptr("Disabled"),
					LinuxDataplane:   ptr("Nftables"),
					WindowsDataplane: ptr("HNS"),
					IPPools: []operator.IPPool{{
						Name: poolName, CIDR: p.pool.String(), BlockSize: ptr(int32(blockSize)),
						Encapsulation: operator.EncapVXLAN, NATOutgoing: "Enabled", NodeSelector: "all()",
					}},
				},
			},
		},
		&operator.APIServer{TypeMeta: typeMeta("operator.tigera.io/v1", "APIServer"), ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: map[string]any{}},
		&calico.IPAMConfiguration{
			TypeMeta:   typeMeta("projectcalico.org/v3", "IPAMConfiguration"),
			ObjectMeta: metav1.ObjectMeta{Name: "default"},
			Spec:       calico.IPAMConfigurationSpec{StrictAffinity: true},
		},
		&corev1.ConfigMap{
			TypeMeta:   typeMeta("v1", "ConfigMap"),
			ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-services-endpoint", Namespace: "tigera-operator"},
			Data:       map[string]string{"KUBERNETES_SERVICE_HOST": apiHost, "KUBERNETES_SERVICE_PORT": strconv.Itoa(apiPort)},
		},
		&nodev1.RuntimeClass{
			TypeMeta:   typeMeta("node.k8s.io/v1", "RuntimeClass"),
			ObjectMeta: metav1.ObjectMeta{Name: runtimeClassName},
			Handler:    "runhcs-wcow-process",
			Scheduling: &nodev1.Scheduling{
				NodeSelector: map[string]string{corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64", corev1.LabelWindowsBuild: windowsBuild},
				Tolerations:  []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
			},
		},
	}
	if p.o.BeforeMigration {
		docs = beforeMigration(docs)
	}
	if len(p.windows) > 0 {
		docs = append(docs, kubeProxyWindows())
	}
	return docs
}

// beforeMigration turns the Calico documents back to the settings of a
// Linux cluster that runs Calico's defaults with VXLAN across subnets
// (https://docs.tigera.io/calico/latest/networking/configuring/vxlan-ipip):
// VXLANCrossSubnet, BGP on, strictAffinity off, no Windows dataplane, no
// serviceCIDRs and no kubernetes-services-endpoint ConfigMap, the
// settings kubectl hybrid plan migrate starts from.
func beforeMigration(docs []any) []any {
	out := docs[:0]
	for _, d := range docs {
		switch v := d.(type) {
		case *operator.Installation:
			cn := v.Spec.CalicoNetwork
			v.Spec.ServiceCIDRs, cn.BGP, cn.WindowsDataplane = nil, ptr("Enabled"), nil
			for i := range cn.IPPools {
				cn.IPPools[i].Encapsulation = operator.EncapVXLANCrossSubnet
			}
		case *calico.IPAMConfiguration:
			v.Spec.StrictAffinity = false
		case *corev1.ConfigMap:
			if v.Name == "kubernetes-services-endpoint" {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// kubeProxyWindows is sig-windows-tools' hostprocess/calico/kube-proxy
// DaemonSet, as the lab applies it.
func kubeProxyWindows() *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "kube-proxy-windows"}
	return &appsv1.DaemonSet{
		TypeMeta:   typeMeta("apps/v1", "DaemonSet"),
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-windows", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-proxy"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "kube-proxy",
					SecurityContext: &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
						HostProcess: ptr(true), RunAsUserName: ptr(`NT AUTHORITY\system`),
					}},
					HostNetwork: true,
					Containers: []corev1.Container{{
						Name:            "kube-proxy",
						Image:           "sigwindowstools/kube-proxy:" + kubernetesVersion + "-calico-hostprocess",
						Args:            []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/start.ps1"},
						WorkingDir:      "$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/",
						ImagePullPolicy: corev1.PullAlways,
						Env: []corev1.EnvVar{
							{Name: "NODENAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}},
							{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
						},
						VolumeMounts: []corev1.VolumeMount{{MountPath: "/var/lib/kube-proxy", Name: "kube-proxy"}},
					}},
					NodeSelector: map[string]string{corev1.LabelOSStable: "windows"},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Operator: corev1.TolerationOpExists},
					},
					Volumes: []corev1.Volume{{Name: "kube-proxy", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-proxy"}},
					}}},
				},
			},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
		},
	}
}

// --- Workloads -------------------------------------------------------------

func (p *plan) namespaceObj(ns *namespace) *corev1.Namespace {
	labels := map[string]string{
		corev1.LabelMetadataName: ns.name,
		psaEnforce:               ns.enforce,
		psaEnforce + "-version":  "latest",
		"team":                   ns.team,
		"environment":            ns.env,
	}
	if ns.enforce != "restricted" {
		labels["pod-security.kubernetes.io/warn"] = "restricted"
		labels["pod-security.kubernetes.io/audit"] = "restricted"
	}
	return &corev1.Namespace{TypeMeta: typeMeta("v1", "Namespace"), ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: labels}}
}

// linuxPodSpec passes the restricted Pod Security level.
func linuxPodSpec(image string, ports []corev1.ContainerPort, cpu, mem, memLimit string) corev1.PodSpec {
	return corev1.PodSpec{
		OS:           &corev1.PodOS{Name: corev1.Linux},
		NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name: "app", Image: image, Ports: ports,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString(ports[0].Name)}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memLimit)},
			},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false),
				ReadOnlyRootFilesystem:   ptr(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

// windowsPodSpec is the lab's aspnetapp: process isolation on Windows
// Server 2025 through the RuntimeClass, as ContainerUser.
func windowsPodSpec(image string, ports []corev1.ContainerPort) corev1.PodSpec {
	return corev1.PodSpec{
		OS:               &corev1.PodOS{Name: corev1.Windows},
		RuntimeClassName: ptr(runtimeClassName),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr("ContainerUser")},
		},
		Containers: []corev1.Container{{
			Name: "app", Image: image, Ports: ports,
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
		}},
	}
}

func (a *app) ports() []corev1.ContainerPort {
	ports := []corev1.ContainerPort{{Name: "http", ContainerPort: portHTTP, Protocol: corev1.ProtocolTCP}}
	if a.metrics {
		ports = append(ports, corev1.ContainerPort{Name: "metrics", ContainerPort: portMetrics, Protocol: corev1.ProtocolTCP})
	}
	return ports
}

func (p *plan) deployment(a *app) *appsv1.Deployment {
	sel := map[string]string{labelName: a.name}
	var spec corev1.PodSpec
	if a.windows {
		spec = windowsPodSpec(a.image, a.ports())
	} else {
		spec = linuxPodSpec(a.image, a.ports(), "50m", "64Mi", "128Mi")
	}
	return &appsv1.Deployment{
		TypeMeta: typeMeta("apps/v1", "Deployment"),
		ObjectMeta: metav1.ObjectMeta{
			Name: a.name, Namespace: p.namespaces[a.ns].name,
			Labels: map[string]string{labelName: a.name, "app.kubernetes.io/part-of": p.namespaces[a.ns].team},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(a.replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelName: a.name, "tier": a.tier}},
				Spec:       spec,
			},
		},
	}
}

// agent is the node agent DaemonSet: one restricted pod per Linux worker.
func (p *plan) agent() *appsv1.DaemonSet {
	labels := map[string]string{labelName: agentName}
	spec := linuxPodSpec("ghcr.io/example/node-agent:3.1", []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9100, Protocol: corev1.ProtocolTCP}}, "10m", "32Mi", "64Mi")
	return &appsv1.DaemonSet{
		TypeMeta:   typeMeta("apps/v1", "DaemonSet"),
		ObjectMeta: metav1.ObjectMeta{Name: agentName, Namespace: p.namespaces[0].name, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			Template:       corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
		},
	}
}

// stub is an observed pod as the lab records one: name, owner, node and
// address; the twin completes its spec from the owner's template.
func stub(ns, name, ownerKind, owner string, h *host) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: typeMeta("v1", "Pod"),
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: owner, Controller: ptr(true)}},
		},
		Spec:   corev1.PodSpec{NodeName: h.name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: h.podIP()},
	}
}

// serviceName is the k-th Service of an app.
func serviceName(a *app, k int) string {
	if k == 0 {
		return a.name
	}
	return a.name + "-" + strconv.Itoa(k+1)
}

func (p *plan) service(a *app, k int, nodePort bool) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta: typeMeta("v1", "Service"),
		ObjectMeta: metav1.ObjectMeta{
			Name: serviceName(a, k), Namespace: p.namespaces[a.ns].name,
			Labels: map[string]string{labelName: a.name},
		},
		Spec: corev1.ServiceSpec{Selector: map[string]string{labelName: a.name}},
	}
	if k == 0 {
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}
		if a.metrics {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: portMetrics, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("metrics")})
		}
	} else {
		svc.Spec.Ports = []corev1.ServicePort{{Name: "http-alt", Port: 8080, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(portHTTP)}}
	}
	if nodePort {
		svc.Spec.Type = corev1.ServiceTypeNodePort
	}
	return svc
}

// podRef is what an EndpointSlice needs of a pod.
type podRef struct {
	name string
	ip   string
	node string
}

// endpointSlice is what the EndpointSlice controller writes for a Service
// whose pods are all ready.
func (p *plan) endpointSlice(svc *corev1.Service, pods []podRef) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		TypeMeta: typeMeta("discovery.k8s.io/v1", "EndpointSlice"),
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-" + p.suffix(), Namespace: svc.Namespace,
			Labels: map[string]string{
				discoveryv1.LabelServiceName: svc.Name,
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, sp := range svc.Spec.Ports {
		port := sp.TargetPort.IntVal
		switch sp.TargetPort.StrVal {
		case "http":
			port = portHTTP
		case "metrics":
			port = portMetrics
		}
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: ptr(sp.Name), Port: ptr(port), Protocol: ptr(corev1.ProtocolTCP)})
	}
	for _, pod := range pods {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{pod.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
			NodeName:   ptr(pod.node),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: pod.name},
		})
	}
	return es
}
