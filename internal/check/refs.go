package check

// References shared by the rules. Seed sections have no URL: the seeds are
// the articles of the series the project models (000 is part 38, 001 part 37).
var (
	seed001Calico     = Reference{Title: "Seed 001 (part 37), «Calico на Windows» and «Два режима и чего нет»"}
	seed001IPAM       = Reference{Title: "Seed 001 (part 37), «IPAM: strictAffinity, один блок и четыре адреса»"}
	seed001Migration  = Reference{Title: "Seed 001 (part 37), «Альтернатива: перевод существующего кластера», steps 0–4"}
	seed001Where      = Reference{Title: "Seed 001 (part 37), «Где запускать Windows-узлы» (the test cluster's Installation and ConfigMap)"}
	seed001KubeProxy  = Reference{Title: "Seed 001 (part 37), «kube-proxy в режиме winkernel»"}
	seed001Limits     = Reference{Title: "Seed 001 (part 37), «Ограничения сети Windows-узлов»"}
	seed001Policies   = Reference{Title: "Seed 001 (part 37), «Сетевые политики на Windows»"}
	seed000Calico     = Reference{Title: "Seed 000 (part 38), «Calico сразу для Windows»"}
	seed000Endpoint   = Reference{Title: "Seed 000 (part 38), «Адрес API для Calico»"}
	seed000Kubeconfig = Reference{Title: "Seed 000 (part 38), «Второй контекст в kubeconfig»"}
	seed000Workers    = Reference{Title: "Seed 000 (part 38), «Linux-воркеры» (kubelet-serving CSRs, CoreDNS placement, Typha)"}
	seed000Firewall   = Reference{Title: "Seed 000 (part 38), «Файрвол»"}
	seed000Join       = Reference{Title: "Seed 000 (part 38), «kubeadm join» (taint and maxPods: 60)"}
	seed000Name       = Reference{Title: "Seed 000 (part 38), «Имя и адрес»"}
	seed000CalicoWin  = Reference{Title: "Seed 000 (part 38), «Calico для Windows» (what is ready, the Windows Server version caveat)"}
	seed000KubeProxy  = Reference{Title: "Seed 000 (part 38), «kube-proxy для Windows»"}
	seed000Scheduling = Reference{Title: "Seed 000 (part 38), «Taint, RuntimeClass и Linux-DaemonSet'ы»"}
	seed000Verify     = Reference{Title: "Seed 000 (part 38), «Проверка: Windows-под, Service, DNS и связность»"}
	seed000LinuxField = Reference{Title: "Seed 000 (part 38), «Linux-поля в Windows-поде»"}
	seed000NotReady   = Reference{Title: "Seed 000 (part 38), «Если узел NotReady»"}
	seed000Updates    = Reference{Title: "Seed 000 (part 38), «Обновления» (image and host build)"}

	calicoLimitations  = Reference{Title: "Calico for Windows: limitations and known issues", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/limitations"}
	calicoRequirements = Reference{Title: "Calico for Windows: requirements", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements"}
	calicoOperator     = Reference{Title: "Calico for Windows: install using the operator", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}
	calicoInstallAPI   = Reference{Title: "Calico Installation API reference", URL: "https://docs.tigera.io/calico/latest/reference/installation/api"}
	calicoIPAMConfig   = Reference{Title: "Calico IPAMConfiguration resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/ipamconfig"}
	calicoFelixConfig  = Reference{Title: "Calico FelixConfiguration resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/felixconfig"}
	calicoIPPool       = Reference{Title: "Calico IPPool resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/ippool"}
	calicoPolicy       = Reference{Title: "Calico NetworkPolicy resource", URL: "https://docs.tigera.io/calico/latest/reference/resources/networkpolicy"}
	calicoVXLAN        = Reference{Title: "Calico: overlay networking (VXLAN and IPIP)", URL: "https://docs.tigera.io/calico/latest/networking/configuring/vxlan-ipip"}
	operatorValidation = Reference{Title: "tigera/operator validation.go (Windows checks)", URL: "https://github.com/tigera/operator/blob/master/pkg/controller/installation/validation.go"}
	operatorWindows    = Reference{Title: "tigera/operator windows_controller.go", URL: "https://github.com/tigera/operator/blob/master/pkg/controller/installation/windows_controller.go"}
	operatorAutoscale  = Reference{Title: "tigera/operator autoscale.go (Typha replicas)", URL: "https://github.com/tigera/operator/blob/master/pkg/common/autoscale.go"}
	calicoIssue6322    = Reference{Title: "projectcalico/calico#6322: Service of Linux pods unreachable from Windows pods in the same subnet", URL: "https://github.com/projectcalico/calico/issues/6322"}
	calicoIssue4404    = Reference{Title: "projectcalico/calico#4404: global strict affinity should not be false for Windows node", URL: "https://github.com/projectcalico/calico/issues/4404"}

	k8sWindowsNetworking = Reference{Title: "Kubernetes: Networking on Windows", URL: "https://kubernetes.io/docs/concepts/services-networking/windows-networking/"}
	k8sWindowsIntro      = Reference{Title: "Kubernetes: Windows containers in Kubernetes", URL: "https://kubernetes.io/docs/concepts/windows/intro/"}
	k8sWindowsGuide      = Reference{Title: "Kubernetes: Guide for running Windows containers", URL: "https://kubernetes.io/docs/concepts/windows/user-guide/"}
	k8sAddWindowsNodes   = Reference{Title: "Kubernetes: Adding Windows worker nodes (kubeadm)", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/adding-windows-nodes/"}
	k8sHostProcess       = Reference{Title: "Kubernetes: Create a Windows HostProcess pod", URL: "https://kubernetes.io/docs/tasks/configure-pod-container/create-hostprocess-pod/"}
	k8sPSS               = Reference{Title: "Kubernetes: Pod Security Standards", URL: "https://kubernetes.io/docs/concepts/security/pod-security-standards/"}
	k8sRuntimeClass      = Reference{Title: "Kubernetes: RuntimeClass", URL: "https://kubernetes.io/docs/concepts/containers/runtime-class/"}
	k8sDNSWindows        = Reference{Title: "Kubernetes: DNS resolution on Windows nodes", URL: "https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#dns-windows"}
	k8sKubeconfig        = Reference{Title: "Kubernetes: Organizing cluster access using kubeconfig files (merging rules)", URL: "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"}
	k8sPorts             = Reference{Title: "Kubernetes: Ports and protocols", URL: "https://kubernetes.io/docs/reference/networking/ports-and-protocols/"}
	k8sServingCerts      = Reference{Title: "Kubernetes: kubeadm certificate management, kubelet serving certificates", URL: "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-certs/#kubelet-serving-certs"}
	k8sTaints            = Reference{Title: "Kubernetes: Taints and tolerations", URL: "https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/"}
	k8sKubeadmPatches    = Reference{Title: "Kubernetes: kubeadm patches", URL: "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/control-plane-flags/#patches"}
	k8sLabels            = Reference{Title: "Kubernetes: Well-known labels, annotations and taints", URL: "https://kubernetes.io/docs/reference/labels-annotations-taints/"}
	k8sDaemonSet         = Reference{Title: "Kubernetes: DaemonSet", URL: "https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"}
	k8sAssignPods        = Reference{Title: "Kubernetes: Assigning pods to nodes", URL: "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/"}
	k8sNodeStatus        = Reference{Title: "Kubernetes: Node status (conditions)", URL: "https://kubernetes.io/docs/reference/node/node-status/"}
	k8sCoreDNS           = Reference{Title: "Kubernetes: Using CoreDNS for service discovery", URL: "https://kubernetes.io/docs/tasks/administer-cluster/coredns/"}
	k8sIssue98680        = Reference{Title: "kubernetes/kubernetes#98680: Windows load balancer fails at 65 or more backends", URL: "https://github.com/kubernetes/kubernetes/issues/98680"}
	k8sIssue109780       = Reference{Title: "kubernetes/kubernetes#109780: externalTrafficPolicy Local on Windows nodes", URL: "https://github.com/kubernetes/kubernetes/issues/109780"}
	winkernelProxier     = Reference{Title: "kubernetes/kubernetes pkg/proxy/winkernel (source-vip, DSR, session affinity)", URL: "https://github.com/kubernetes/kubernetes/tree/master/pkg/proxy/winkernel"}
	sigWindowsKubeProxy  = Reference{Title: "sig-windows-tools hostprocess/calico/kube-proxy (kube-proxy.yml, start.ps1)", URL: "https://github.com/kubernetes-sigs/sig-windows-tools/tree/master/hostprocess/calico/kube-proxy"}
	podValidation        = Reference{Title: "kubernetes/kubernetes pkg/apis/core/validation (validateWindows)", URL: "https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/core/validation/validation.go"}
)
