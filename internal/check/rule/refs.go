package rule

// References shared by the rules: upstream documentation and code, in
// English, each with its link.
var (
	RefCalicoWindows        = Reference{Title: "Calico for Windows: overview (VXLAN networking, no BGP on Windows)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/"}
	RefStrictAffinity       = Reference{Title: "Calico IPAMConfiguration: strictAffinity, required with Windows nodes", URL: "https://docs.tigera.io/calico/latest/reference/resources/ipamconfig"}
	RefMigration            = Reference{Title: "Calico: overlay networking, moving an IP pool to VXLAN", URL: "https://docs.tigera.io/calico/latest/networking/configuring/vxlan-ipip"}
	RefOperatorInstall      = Reference{Title: "Calico for Windows: install using the operator (Installation, kubernetes-services-endpoint)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}
	RefWinkernel            = Reference{Title: "Kubernetes: Networking on Windows, load balancing and Services (kube-proxy winkernel)", URL: "https://kubernetes.io/docs/concepts/services-networking/windows-networking/#load-balancing-and-services"}
	RefWindowsLimits        = Reference{Title: "Kubernetes: Networking on Windows, limitations", URL: "https://kubernetes.io/docs/concepts/services-networking/windows-networking/#limitations"}
	RefWindowsPolicies      = Reference{Title: "Calico for Windows: limitations (network policy)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/limitations"}
	RefCalicoOperator       = Reference{Title: "Calico for Windows: install using the operator", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}
	RefServicesEndpoint     = Reference{Title: "Calico for Windows: install using the operator (the kubernetes-services-endpoint ConfigMap)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}
	RefKubeconfigContexts   = Reference{Title: "Kubernetes: Configure access to multiple clusters", URL: "https://kubernetes.io/docs/tasks/access-application-cluster/configure-access-multiple-clusters/"}
	RefServingCerts         = Reference{Title: "Kubernetes: kubeadm certificate management, kubelet serving certificates", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#kubelet-serving-certs"}
	RefFirewall             = Reference{Title: "Calico: network requirements (ports to open between nodes)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/requirements#network-requirements"}
	RefWindowsJoin          = Reference{Title: "Kubernetes: Adding Windows worker nodes (kubeadm join)", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/adding-windows-nodes/"}
	RefNodeName             = Reference{Title: "Kubernetes: Nodes, node name uniqueness", URL: "https://kubernetes.io/docs/concepts/architecture/nodes/#node-name-uniqueness"}
	RefWindowsVersions      = Reference{Title: "Calico for Windows: requirements (supported Windows Server versions)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements"}
	RefKubeProxyHostProcess = Reference{Title: "sig-windows-tools: kube-proxy as a HostProcess DaemonSet", URL: "https://github.com/kubernetes-sigs/sig-windows-tools/tree/master/hostprocess/calico/kube-proxy"}
	RefWindowsScheduling    = Reference{Title: "Kubernetes: Guide for running Windows containers (taints, tolerations and RuntimeClass)", URL: "https://kubernetes.io/docs/concepts/windows/user-guide/#ensuring-os-specific-workloads-land-on-the-appropriate-container-host"}
	RefWindowsVerify        = Reference{Title: "Kubernetes: Guide for running Windows containers", URL: "https://kubernetes.io/docs/concepts/windows/user-guide/"}
	RefWindowsAPI           = Reference{Title: "Kubernetes: Windows containers, API compatibility (fields a Windows pod cannot use)", URL: "https://kubernetes.io/docs/concepts/windows/intro/#api"}
	RefWindowsTroubleshoot  = Reference{Title: "Kubernetes: Windows debugging tips", URL: "https://kubernetes.io/docs/tasks/debug/debug-cluster/windows/"}
	RefWindowsUpdates       = Reference{Title: "Kubernetes: Windows containers, Windows OS version compatibility", URL: "https://kubernetes.io/docs/concepts/windows/intro/#windows-os-version-support"}

	CalicoLimitations  = Reference{Title: "Calico for Windows: limitations and known issues", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/limitations"}
	CalicoRequirements = Reference{Title: "Calico for Windows: requirements", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements"}
	CalicoOperator     = Reference{Title: "Calico for Windows: install using the operator", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}
	CalicoInstallAPI   = Reference{Title: "Calico Installation API reference", URL: "https://docs.tigera.io/calico/latest/reference/installation/api"}
	CalicoIPAMConfig   = Reference{Title: "Calico IPAMConfiguration resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/ipamconfig"}
	CalicoFelixConfig  = Reference{Title: "Calico FelixConfiguration resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/felixconfig"}
	CalicoIPPool       = Reference{Title: "Calico IPPool resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/ippool"}
	CalicoPolicy       = Reference{Title: "Calico NetworkPolicy resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/networkpolicy"}
	CalicoVXLAN        = Reference{Title: "Calico: overlay networking (VXLAN and IPIP)", URL: "https://docs.tigera.io/calico/latest/networking/configuring/vxlan-ipip"}
	OperatorValidation = Reference{Title: "tigera/operator validation.go (Windows checks)", URL: "https://github.com/tigera/operator/blob/master/pkg/controller/installation/validation.go"}
	OperatorWindows    = Reference{Title: "tigera/operator windows_controller.go", URL: "https://github.com/tigera/operator/blob/master/pkg/controller/installation/windows_controller.go"}
	OperatorAutoscale  = Reference{Title: "tigera/operator autoscale.go (Typha replicas)", URL: "https://github.com/tigera/operator/blob/master/pkg/common/autoscale.go"}
	CalicoIssue6322    = Reference{Title: "projectcalico/calico#6322: Service of Linux pods unreachable from Windows pods in the same subnet", URL: "https://github.com/projectcalico/calico/issues/6322"}
	CalicoIssue4404    = Reference{Title: "projectcalico/calico#4404: global strict affinity should not be false for Windows node", URL: "https://github.com/projectcalico/calico/issues/4404"}

	K8sWindowsNetworking = Reference{Title: "Kubernetes: Networking on Windows", URL: "https://kubernetes.io/docs/concepts/services-networking/windows-networking/"}
	k8sWindowsIntro      = Reference{Title: "Kubernetes: Windows containers in Kubernetes", URL: "https://kubernetes.io/docs/concepts/windows/intro/"}
	K8sWindowsGuide      = Reference{Title: "Kubernetes: Guide for running Windows containers", URL: "https://kubernetes.io/docs/concepts/windows/user-guide/"}
	K8sAddWindowsNodes   = Reference{Title: "Kubernetes: Adding Windows worker nodes (kubeadm)", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/adding-windows-nodes/"}
	K8sHostProcess       = Reference{Title: "Kubernetes: Create a Windows HostProcess pod", URL: "https://kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod/"}
	K8sPSS               = Reference{Title: "Kubernetes: Pod Security Standards", URL: "https://kubernetes.io/docs/concepts/security/pod-security-standards/"}
	K8sRuntimeClass      = Reference{Title: "Kubernetes: RuntimeClass", URL: "https://kubernetes.io/docs/concepts/containers/runtime-class/"}
	K8sDNSWindows        = Reference{Title: "Kubernetes: DNS resolution on Windows nodes", URL: "https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#dns-windows"}
	K8sKubeconfig        = Reference{Title: "Kubernetes: Organizing cluster access using kubeconfig files (merging rules)", URL: "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"}
	K8sPorts             = Reference{Title: "Kubernetes: Ports and protocols", URL: "https://kubernetes.io/docs/reference/networking/ports-and-protocols/"}
	K8sServingCerts      = Reference{Title: "Kubernetes: kubeadm certificate management, kubelet serving certificates", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#kubelet-serving-certs"}
	K8sTaints            = Reference{Title: "Kubernetes: Taints and tolerations", URL: "https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/"}
	K8sKubeadmPatches    = Reference{Title: "Kubernetes: kubeadm patches", URL: "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/control-plane-flags/#patches"}
	K8sLabels            = Reference{Title: "Kubernetes: Well-known labels, annotations and taints", URL: "https://kubernetes.io/docs/reference/labels-annotations-taints/"}
	K8sDaemonSet         = Reference{Title: "Kubernetes: DaemonSet", URL: "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"}
	K8sAssignPods        = Reference{Title: "Kubernetes: Assigning pods to nodes", URL: "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/"}
	K8sNodeStatus        = Reference{Title: "Kubernetes: Node status (conditions)", URL: "https://kubernetes.io/docs/reference/node/node-status/"}
	K8sCoreDNS           = Reference{Title: "Kubernetes: Using CoreDNS for service discovery", URL: "https://kubernetes.io/docs/tasks/administer-cluster/coredns/"}
	K8sIssue98680        = Reference{Title: "kubernetes/kubernetes#98680: Windows load balancer fails at 65 or more backends", URL: "https://github.com/kubernetes/kubernetes/issues/98680"}
	K8sIssue109780       = Reference{Title: "kubernetes/kubernetes#109780: externalTrafficPolicy Local on Windows nodes", URL: "https://github.com/kubernetes/kubernetes/issues/109780"}
	WinkernelProxier     = Reference{Title: "kubernetes/kubernetes pkg/proxy/winkernel (source-vip, DSR, session affinity)", URL: "https://github.com/kubernetes/kubernetes/tree/master/pkg/proxy/winkernel"}
	SigWindowsKubeProxy  = Reference{Title: "sig-windows-tools hostprocess/calico/kube-proxy (kube-proxy.yml, start.ps1)", URL: "https://github.com/kubernetes-sigs/sig-windows-tools/tree/master/hostprocess/calico/kube-proxy"}
	PodValidation        = Reference{Title: "kubernetes/kubernetes pkg/apis/core/validation (validateWindows)", URL: "https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/core/validation/validation.go"}
)
