package operator

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
)

// Names of what the operator renders.
const (
	CalicoNamespace           = "calico-system"
	OperatorNamespace         = "tigera-operator"
	ServicesEndpointConfigMap = "kubernetes-services-endpoint"
	WindowsCNIConfigMap       = "cni-config-windows"
	LinuxCNIConfigMap         = "cni-config"

	// ManagedByLabel marks the IP pools the operator owns
	// (pool_controller.go managedByLabel).
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "tigera-operator"

	NodeDaemonSet             = "calico-node"
	WindowsNodeDaemonSet      = "calico-node-windows"
	CSIDaemonSet              = "csi-node-driver"
	TyphaDeployment           = "calico-typha"
	KubeControllersDeployment = "calico-kube-controllers"
	WebhooksDeployment        = "calico-webhooks"

	// CalicoVersion is the release this model renders: operator
	// release-v1.44 ships Calico v3.33.
	CalicoVersion   = "v3.33.0"
	DefaultRegistry = "quay.io/"

	typhaPort      = 5473
	felixHealthPrt = 9099
)

// Tolerations of pkg/render/common/meta/meta.go.
var (
	// tolerateAll: calico-node, calico-node-windows, csi-node-driver. The
	// seed's "Exists,Exists,Exists".
	tolerateAll = []corev1.Toleration{
		{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		{Effect: corev1.TaintEffectNoSchedule, Operator: corev1.TolerationOpExists},
		{Effect: corev1.TaintEffectNoExecute, Operator: corev1.TolerationOpExists},
	}
	tolerateControlPlane = []corev1.Toleration{
		{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule},
		{Key: wellknown.TaintControlPlane, Effect: corev1.TaintEffectNoSchedule},
	}
	// tolerateBootstrap: Typha. Survives the not-ready and
	// network-unavailable taints of install time but respects cordons.
	tolerateBootstrap = []corev1.Toleration{
		{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: wellknown.TaintControlPlane, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/network-unavailable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.cloudprovider.kubernetes.io/uninitialized", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
)

type images struct{ node, calico, cniPlugins, nodeWindows, cniWindows string }

// imagesFor resolves image references (pkg/components/references.go
// GetReference): registry, imagePath and imagePrefix+name joined as paths,
// each defaulting (also when "UseDefault") to quay.io/, calico and none.
func imagesFor(s *opapi.InstallationSpec) images {
	reg, dir, prefix := DefaultRegistry, "calico", ""
	if s.Registry != "" && s.Registry != "UseDefault" {
		reg = s.Registry
	}
	if s.ImagePath != "" && s.ImagePath != "UseDefault" {
		dir = s.ImagePath
	}
	if s.ImagePrefix != "" && s.ImagePrefix != "UseDefault" {
		prefix = s.ImagePrefix
	}
	ref := func(name string) string { return path.Join(reg, dir, prefix+name) + ":" + CalicoVersion }
	// On release-v1.44 calico-node and its ebpf-bootstrap init container
	// run the node image; Typha, kube-controllers, CSI, the webhooks and the
	// install-cni and flexvol-driver init containers run the combined
	// "calico" image (pkg/render/*.go ResolveImages).
	return images{
		node: ref("node"), calico: ref("calico"), cniPlugins: ref("third-party-cni-plugins"),
		nodeWindows: ref("node-windows"), cniWindows: ref("cni-windows"),
	}
}

func boolp(b bool) *bool    { return &b }
func int64p(i int64) *int64 { return &i }
func int32p(i int32) *int32 { return &i }

func envVal(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

func envField(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// endpointEnv is K8sServiceEndpoint.EnvVars: with the
// kubernetes-services-endpoint ConfigMap, Calico's components reach the
// API server directly rather than through the kubernetes Service.
func endpointEnv(ep endpoint) []corev1.EnvVar {
	if ep.host == "" || ep.port == "" {
		return nil
	}
	return []corev1.EnvVar{envVal("KUBERNETES_SERVICE_HOST", ep.host), envVal("KUBERNETES_SERVICE_PORT", ep.port)}
}

func hostPathVol(name, path string, t corev1.HostPathType) corev1.Volume {
	hp := &corev1.HostPathVolumeSource{Path: path}
	if t != "" {
		hp.Type = &t
	}
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: hp}}
}

// standardize adds what the operator's component handler adds to every
// workload (pkg/controller/utils/component.go): the k8s-app and
// app.kubernetes.io/name labels, a selector on k8s-app, and
// kubernetes.io/os in the node selector for the component's OS.
func standardize(meta *metav1.ObjectMeta, sel **metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, os string) {
	name := meta.Name
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels["k8s-app"] = name
	meta.Labels["app.kubernetes.io/name"] = name
	if *sel == nil {
		*sel = &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": name}}
	}
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	if tmpl.Labels["k8s-app"] == "" {
		tmpl.Labels["k8s-app"] = name
	}
	tmpl.Labels["app.kubernetes.io/name"] = name
	if tmpl.Spec.NodeSelector == nil {
		tmpl.Spec.NodeSelector = map[string]string{}
	}
	tmpl.Spec.NodeSelector[corev1.LabelOSStable] = os
}

func daemonSet(name string, tmpl corev1.PodTemplateSpec, os string) *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CalicoNamespace},
		Spec: appsv1.DaemonSetSpec{
			Template: tmpl,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{
				Type:          appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: &intstr.IntOrString{IntVal: 1}},
			},
		},
	}
	standardize(&ds.ObjectMeta, &ds.Spec.Selector, &ds.Spec.Template, os)
	return ds
}

func deployment(name string, replicas int32, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CalicoNamespace},
		Spec:       appsv1.DeploymentSpec{Replicas: int32p(replicas), Template: tmpl},
	}
	standardize(&d.ObjectMeta, &d.Spec.Selector, &d.Spec.Template, "linux")
	return d
}

// calicoBackend is CALICO_NETWORKING_BACKEND: bird with BGP, vxlan with
// Calico IPAM and no BGP, none otherwise (pkg/render/node.go,
// windows.go getWindowsBackend; Windows says windows-bgp for bird).
func calicoBackend(s *opapi.InstallationSpec, windows bool) string {
	if bgpEnabled(s) {
		if windows {
			return "windows-bgp"
		}
		return "bird"
	}
	if s.CNI.Type == PluginCalico && s.CNI.IPAM.Type != IPAMHostLocal {
		return "vxlan"
	}
	return "none"
}

// providerCNIEnv is what node.go nodeEnvVars adds for a provider's CNI
// plugin: host encryption for WireGuard on AKS with Azure VNET and EKS with
// the AWS VPC CNI, the provider's workload interface prefix, and Felix's
// iptables rules returning to the provider's own where it has them.
func providerCNIEnv(s *opapi.InstallationSpec) []corev1.EnvVar {
	var env []corev1.EnvVar
	if s.KubernetesProvider == "AKS" && s.CNI.Type == "AzureVNET" || s.KubernetesProvider == "EKS" && s.CNI.Type == "AmazonVPC" {
		env = append(env, envVal("FELIX_WIREGUARDHOSTENCRYPTIONENABLED", "true"))
	}
	env = append(env, interfacePrefixEnv(s)...)
	switch s.CNI.Type {
	case "AmazonVPC":
		env = append(env, envVal("FELIX_IPTABLESMANGLEALLOWACTION", "Return"))
	case "GKE":
		env = append(env, envVal("FELIX_IPTABLESMANGLEALLOWACTION", "Return"), envVal("FELIX_IPTABLESFILTERALLOWACTION", "Return"))
	}
	return env
}

// interfacePrefixEnv names the provider CNI's workload interfaces for Felix
// and Typha (pkg/render/node.go nodeEnvVars, typha.go typhaEnvVars).
func interfacePrefixEnv(s *opapi.InstallationSpec) []corev1.EnvVar {
	switch s.CNI.Type {
	case "AmazonVPC":
		return []corev1.EnvVar{envVal("FELIX_INTERFACEPREFIX", "eni")}
	case "GKE":
		return []corev1.EnvVar{envVal("FELIX_INTERFACEPREFIX", "gke")}
	case "AzureVNET":
		return []corev1.EnvVar{envVal("FELIX_INTERFACEPREFIX", "azv")}
	}
	return nil
}

func clusterType(s *opapi.InstallationSpec) string {
	t := "k8s,operator"
	if bgpEnabled(s) {
		t += ",bgp"
	}
	return t
}

// calicoNodeDaemonSet is the Linux agent (pkg/render/node.go
// nodeDaemonset): host network, every taint tolerated, Linux only.
func calicoNodeDaemonSet(s *opapi.InstallationSpec, ep endpoint, img images, healthPort int) *appsv1.DaemonSet {
	root := &corev1.SecurityContext{Privileged: boolp(true), RunAsUser: int64p(0), RunAsGroup: int64p(0), RunAsNonRoot: boolp(false)}
	var inits []corev1.Container
	if s.FlexVolumePath != "None" {
		inits = append(inits, corev1.Container{
			Name: "flexvol-driver", Image: img.calico,
			Command:         []string{"/usr/bin/calico", "component", "flexvol", "install", "--target", "/host/driver/uds"},
			SecurityContext: root,
			VolumeMounts:    []corev1.VolumeMount{{Name: "flexvol-driver-host", MountPath: "/host/driver"}},
		})
	}
	// node.go bpfBootstrapInitContainer: the BPF filesystem and cgroup
	// mounts must propagate to the host; only the BPF dataplane makes a
	// failure fatal.
	initCmd := []string{"/usr/bin/calico", "component", "node", "init"}
	if !bpf(s) {
		initCmd = append(initCmd, "--best-effort")
	}
	bidir := corev1.MountPropagationBidirectional
	inits = append(inits, corev1.Container{
		Name: "ebpf-bootstrap", Image: img.node, SecurityContext: root,
		Command: initCmd,
		VolumeMounts: []corev1.VolumeMount{{Name: "sys-fs", MountPath: "/sys/fs", MountPropagation: &bidir},
			{Name: "var-run-calico", MountPath: "/var/run/calico", MountPropagation: &bidir}, {Name: "nodeproc", MountPath: "/nodeproc", ReadOnly: true}},
	})
	if s.CNI.Type == PluginCalico {
		inits = append(inits,
			corev1.Container{Name: "cni-plugins", Image: img.cniPlugins, SecurityContext: root,
				VolumeMounts: []corev1.VolumeMount{{Name: "cni-plugins-stage", MountPath: "/stage"}}},
			corev1.Container{Name: "install-cni", Image: img.calico, SecurityContext: root,
				Command: []string{"/usr/bin/calico", "component", "cni", "install"},
				// node.go cniEnvvars.
				Env: append([]corev1.EnvVar{envVal("CNI_CONF_NAME", "10-calico.conflist"), envVal("SLEEP", "false"),
					envVal("CNI_NET_DIR", "/etc/cni/net.d"),
					{Name: "CNI_NETWORK_CONFIG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: LinuxCNIConfigMap}, Key: "config"}}},
				}, endpointEnv(ep)...),
				VolumeMounts: []corev1.VolumeMount{{Name: "cni-bin-dir", MountPath: "/host/opt/cni/bin"}, {Name: "cni-net-dir", MountPath: "/host/etc/cni/net.d"}, {Name: "cni-plugins-stage", MountPath: "/opt/cni/bin"}}},
		)
	}
	env := []corev1.EnvVar{
		envVal("DATASTORE_TYPE", "kubernetes"), envVal("WAIT_FOR_DATASTORE", "true"),
		envVal("CLUSTER_TYPE", clusterType(s)), envVal("CALICO_DISABLE_FILE_LOGGING", "false"),
		envVal("FELIX_DEFAULTENDPOINTTOHOSTACTION", "ACCEPT"), envVal("FELIX_HEALTHENABLED", "true"),
		envVal("FELIX_HEALTHPORT", fmt.Sprint(healthPort)),
		envField("NODENAME", "spec.nodeName"), envField("NAMESPACE", "metadata.namespace"),
		envVal("FELIX_TYPHAK8SNAMESPACE", CalicoNamespace), envVal("FELIX_TYPHAK8SSERVICENAME", TyphaDeployment),
		envVal("NO_DEFAULT_POOLS", "true"), envVal("CALICO_MANAGE_CNI", fmt.Sprint(s.CNI.Type == PluginCalico)),
	}
	env = append(env, mtuEnv(s)...)
	if s.CNI.IPAM.Type == IPAMHostLocal {
		env = append(env, envVal("USE_POD_CIDR", "true"))
	}
	env = append(env, envVal("CALICO_NETWORKING_BACKEND", calicoBackend(s, false)))
	// node.go nodeEnvVars: the IPIP MTU only with BGP (BIRD programs the
	// IPIP routes).
	if m := mtu(s); m != nil && bgpEnabled(s) {
		env = append(env, envVal("FELIX_IPINIPMTU", fmt.Sprint(*m)))
	}
	env = append(env, addressEnv(s)...)
	env = append(env, providerCNIEnv(s)...)
	if s.CNI.Type != PluginCalico {
		env = append(env, envVal("FELIX_ROUTESOURCE", "WorkloadIPs"))
	}
	env = append(env, endpointEnv(ep)...)
	startup, live, ready := nodeProbes(s, healthPort)
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Tolerations:                   append([]corev1.Toleration(nil), tolerateAll...),
		ServiceAccountName:            NodeDaemonSet,
		TerminationGracePeriodSeconds: int64p(5),
		HostNetwork:                   true,
		PriorityClassName:             "system-node-critical",
		InitContainers:                inits,
		Containers: []corev1.Container{{
			Name: "calico-node", Image: img.node, Env: env, SecurityContext: root,
			StartupProbe: startup, LivenessProbe: live, ReadinessProbe: ready,
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"/usr/bin/calico", "component", "node", "shutdown"}}}},
			VolumeMounts: []corev1.VolumeMount{{Name: "lib-modules", MountPath: "/lib/modules", ReadOnly: true}, {Name: "var-run-calico", MountPath: "/var/run/calico"}, {Name: "var-lib-calico", MountPath: "/var/lib/calico"}, {Name: "xtables-lock", MountPath: "/run/xtables.lock"}},
		}},
		Volumes: []corev1.Volume{
			hostPathVol("lib-modules", "/lib/modules", ""),
			hostPathVol("xtables-lock", "/run/xtables.lock", corev1.HostPathFileOrCreate),
			hostPathVol("var-run-calico", "/var/run/calico", corev1.HostPathDirectoryOrCreate),
			hostPathVol("var-lib-calico", "/var/lib/calico", corev1.HostPathDirectoryOrCreate),
			hostPathVol("cni-bin-dir", "/opt/cni/bin", corev1.HostPathDirectoryOrCreate),
			hostPathVol("cni-net-dir", "/etc/cni/net.d", ""),
			hostPathVol("sys-fs", "/sys/fs/", corev1.HostPathDirectoryOrCreate),
			hostPathVol("nodeproc", "/proc", ""),
			{Name: "cni-plugins-stage", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}}
	// node.go nodeVolumes: the path is used verbatim, joined without a
	// separator (the default ends in "/").
	if s.FlexVolumePath != "None" {
		vols := tmpl.Spec.Volumes
		tmpl.Spec.Volumes = append(vols[:len(vols)-1:len(vols)-1],
			hostPathVol("flexvol-driver-host", s.FlexVolumePath+"nodeagent~uds", corev1.HostPathDirectoryOrCreate), vols[len(vols)-1])
	}
	return daemonSet(NodeDaemonSet, tmpl, "linux")
}

// calicoNodeWindowsDaemonSet is calico-node for Windows (pkg/render/
// windows.go windowsDaemonset): HostProcess containers running as
// NT AUTHORITY\system in the host network, init containers uninstall-calico
// then install-cni, containers felix (with the probes and the preStop
// hook) and node, plus confd with BGP. The Typha TLS volumes and mounts
// are not modelled.
func calicoNodeWindowsDaemonSet(s *opapi.InstallationSpec, ep endpoint, img images, vni int, dnsIPs []string) *appsv1.DaemonSet {
	hpc := func() *corev1.SecurityContext {
		u := `NT AUTHORITY\system`
		return &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: boolp(true), RunAsUserName: &u}}
	}
	calicoCNI := s.CNI.Type == PluginCalico
	// windows.go windowsEnvVars.
	ct := clusterType(s) + ",windows"
	env := []corev1.EnvVar{
		envVal("CNI_PLUGIN_TYPE", s.CNI.Type), envVal("DATASTORE_TYPE", "kubernetes"), envVal("WAIT_FOR_DATASTORE", "true"),
		envVal("CLUSTER_TYPE", ct), envVal("CALICO_DISABLE_FILE_LOGGING", "false"),
		envVal("FELIX_DEFAULTENDPOINTTOHOSTACTION", "ACCEPT"), envVal("FELIX_HEALTHENABLED", "true"),
		envField("NODENAME", "spec.nodeName"), envField("NAMESPACE", "metadata.namespace"),
		envVal("FELIX_TYPHAK8SNAMESPACE", CalicoNamespace), envVal("FELIX_TYPHAK8SSERVICENAME", TyphaDeployment),
		envVal("VXLAN_VNI", fmt.Sprint(vni)), envVal("VXLAN_ADAPTER", s.WindowsNodes.VXLANAdapter),
		envVal("CALICO_MANAGE_CNI", fmt.Sprint(calicoCNI)),
	}
	kubeNetwork := "Calico.*"
	switch s.CNI.Type {
	case "AmazonVPC":
		kubeNetwork = "vpc.*"
	case "AzureVNET":
		kubeNetwork = "azure.*"
	}
	env = append(env, envVal("KUBE_NETWORK", kubeNetwork))
	env = append(env, mtuEnv(s)...)
	if s.CNI.IPAM.Type == IPAMHostLocal {
		env = append(env, envVal("USE_POD_CIDR", "true"))
	}
	env = append(env, envVal("CALICO_NETWORKING_BACKEND", calicoBackend(s, true)))
	env = append(env, addressEnv(s)...)
	if !calicoCNI {
		env = append(env, envVal("FELIX_ROUTESOURCE", "WorkloadIPs"))
	}
	env = append(env, endpointEnv(ep)...)

	// windows.go windowsVolumeMounts.
	mounts := []corev1.VolumeMount{{Name: "var-run-calico", MountPath: "/var/run/calico"}, {Name: "var-lib-calico", MountPath: "/var/lib/calico"}}
	if calicoCNI {
		mounts = append(mounts, corev1.VolumeMount{Name: "cni-log-dir", MountPath: "/var/log/calico/cni"},
			corev1.VolumeMount{Name: "cni-net-dir", MountPath: "/host/etc/cni/net.d"})
	}
	var cniMounts []corev1.VolumeMount
	if calicoCNI {
		cniMounts = []corev1.VolumeMount{{Name: "cni-bin-dir", MountPath: "/host/opt/cni/bin"}, {Name: "cni-net-dir", MountPath: "/host/etc/cni/net.d"}}
	}
	// windows.go uninstallContainer, uninstallEnvVars.
	inits := []corev1.Container{{
		Name: "uninstall-calico", Image: img.nodeWindows, SecurityContext: hpc(),
		Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/uninstall-calico.ps1"},
		Env: []corev1.EnvVar{envVal("SLEEP", "false"), envVal("CNI_PLUGIN_TYPE", s.CNI.Type), envVal("CNI_BIN_DIR", "/host/opt/cni/bin"),
			envVal("CNI_CONF_NAME", "10-calico.conflist"), envVal("CNI_NET_DIR", "/host/etc/cni/net.d")},
		VolumeMounts: cniMounts,
	}}
	if calicoCNI {
		// windows.go cniContainer, cniEnvVars: CNI_NET_DIR is the
		// host's CNI config directory without its drive letter, since the
		// installer writes it into the CNI config as c:<dir>.
		inits = append(inits, corev1.Container{
			Name: "install-cni", Image: img.cniWindows, SecurityContext: hpc(),
			Command: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/opt/cni/bin/calico.exe", "component", "cni", "install"},
			Env: append([]corev1.EnvVar{envVal("SLEEP", "false"), envVal("CNI_PLUGIN_TYPE", s.CNI.Type),
				envVal("CNI_BIN_DIR", "/host/opt/cni/bin"), envVal("CNI_CONF_NAME", "10-calico.conflist"),
				envVal("CNI_NET_DIR", windowsCNINetDir(s)), envVal("KUBERNETES_DNS_SERVERS", strings.Join(dnsIPs, ",")),
				envVal("KUBERNETES_SERVICE_CIDRS", strings.Join(s.ServiceCIDRs, ",")), envVal("VXLAN_VNI", fmt.Sprint(vni)),
				envField("KUBERNETES_NODE_NAME", "spec.nodeName"),
				{Name: "CNI_NETWORK_CONFIG", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: WindowsCNIConfigMap}, Key: "config"}}},
			}, endpointEnv(ep)...),
			VolumeMounts: cniMounts,
		})
	}
	wd := "$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/"
	live, ready := windowsProbes()
	containers := []corev1.Container{
		{Name: "felix", Image: img.nodeWindows, Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/felix-service.ps1"}, WorkingDir: wd, SecurityContext: hpc(), Env: env, VolumeMounts: mounts,
			LivenessProbe: live, ReadinessProbe: ready,
			Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/calico.exe", "component", "node", "shutdown"}}}}},
		{Name: "node", Image: img.nodeWindows, Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/node-service.ps1"}, WorkingDir: wd, SecurityContext: hpc(), Env: env, VolumeMounts: mounts},
	}
	if bgpEnabled(s) {
		containers = append(containers, corev1.Container{Name: "confd", Image: img.nodeWindows, Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/confd/confd-service.ps1"}, WorkingDir: wd, SecurityContext: hpc(), Env: env, VolumeMounts: mounts})
	}
	// windows.go windowsVolumes, less the Typha TLS volumes.
	vols := []corev1.Volume{
		hostPathVol("lib-modules", "/lib/modules", ""),
		hostPathVol("xtables-lock", "/run/xtables.lock", corev1.HostPathFileOrCreate),
		hostPathVol("policysync", "/var/run/nodeagent", corev1.HostPathDirectoryOrCreate),
		hostPathVol("var-run-calico", "/var/run/calico", corev1.HostPathDirectoryOrCreate),
		hostPathVol("var-lib-calico", "/var/lib/calico", corev1.HostPathDirectoryOrCreate),
	}
	if calicoCNI {
		vols = append(vols,
			hostPathVol("cni-bin-dir", s.WindowsNodes.CNIBinDir, corev1.HostPathDirectoryOrCreate),
			hostPathVol("cni-net-dir", s.WindowsNodes.CNIConfigDir, ""),
			hostPathVol("cni-log-dir", s.WindowsNodes.CNILogDir, corev1.HostPathDirectoryOrCreate))
	}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelOSStable: "windows"},
		Tolerations:                   append([]corev1.Toleration(nil), tolerateAll...),
		ServiceAccountName:            NodeDaemonSet,
		TerminationGracePeriodSeconds: int64p(5),
		HostNetwork:                   true,
		PriorityClassName:             "system-node-critical",
		InitContainers:                inits,
		Containers:                    containers,
		Volumes:                       vols,
	}}
	return daemonSet(WindowsNodeDaemonSet, tmpl, "windows")
}

// windowsCNINetDir is the Windows CNI config directory with any c: drive
// prefix dropped (windows.go cniEnvVars, createCalicoPluginConfig).
func windowsCNINetDir(s *opapi.InstallationSpec) string {
	d := strings.TrimPrefix(s.WindowsNodes.CNIConfigDir, "c:")
	return strings.TrimPrefix(d, "C:")
}

// windowsCNIConfigMap is its namesake in pkg/render/windows.go: the
// Calico CNI network configuration install-cni writes on each Windows
// node, with one HNS network for every pod (windows_use_single_network),
// OutBoundNAT exceptions and SDN routes for the service CIDRs. Nil without
// Calico CNI.
func windowsCNIConfigMap(s *opapi.InstallationSpec, ep endpoint, vni int, dnsIPs []string) (*corev1.ConfigMap, error) {
	if s.CNI.Type != PluginCalico {
		return nil, nil
	}
	var m int32
	if p := mtu(s); p != nil {
		m = *p
	}
	ipam := map[string]any{"type": "calico-ipam", "subnet": "usePodCidr"}
	if s.CNI.IPAM.Type == IPAMHostLocal {
		ipam["type"] = "host-local"
	}
	macPrefix := "0E-2A"
	if s.WindowsNodes.VXLANMACPrefix != "" {
		macPrefix = s.WindowsNodes.VXLANMACPrefix
	}
	k8s := map[string]any{"kubeconfig": path.Join("c:", windowsCNINetDir(s), "calico-kubeconfig")}
	if root := ep.apiRoot(); root != "" {
		k8s["k8s_api_root"] = root
	}
	cidrs := append([]string{}, s.ServiceCIDRs...)
	policies := []map[string]any{{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "OutBoundNAT", "ExceptionList": cidrs}}}
	for _, c := range cidrs {
		policies = append(policies, map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "SDNROUTE", "DestinationPrefix": c, "NeedEncap": true}})
	}
	if dnsIPs == nil {
		dnsIPs = []string{}
	}
	plugin := map[string]any{
		"type": "calico", "name": "Calico", "windows_use_single_network": true,
		"mode": calicoBackend(s, true), "vxlan_mac_prefix": macPrefix, "vxlan_vni": vni, "mtu": m,
		"policy": map[string]any{"type": "k8s"}, "log_file_path": "c:/var/log/calico/cni/cni.log",
		"windows_loopback_DSR": "__DSR_SUPPORT__", "capabilities": map[string]any{"dns": true},
		"nodename": "__KUBERNETES_NODE_NAME__", "nodename_file": "__NODENAME_FILE__", "nodename_file_optional": true,
		"datastore_type": "kubernetes", "ipam": ipam, "kubernetes": k8s,
		"DNS":      map[string]any{"Nameservers": dnsIPs, "Search": []string{"svc.cluster.local"}},
		"policies": policies,
	}
	plugins, err := json.Marshal([]any{plugin})
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", WindowsCNIConfigMap, err)
	}
	// The operator formats the list the same way (1.0.0 is the CNI spec
	// version it resolves "auto" to, api/v1 ResolvedSpecVersion).
	config := fmt.Sprintf(`{
			  "name": "Calico",
			  "cniVersion": "%s",
			  "plugins": %s
			}`, "1.0.0", plugins)
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: WindowsCNIConfigMap, Namespace: CalicoNamespace},
		Data:       map[string]string{"config": config},
	}, nil
}

// csiNodeDriverDaemonSet is pkg/render/csi.go: two containers on the
// combined image, every taint tolerated, Linux only.
func csiNodeDriverDaemonSet(img images) *appsv1.DaemonSet {
	bidir := corev1.MountPropagationBidirectional
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"name": CSIDaemonSet}},
		Spec: corev1.PodSpec{
			Tolerations:        append([]corev1.Toleration(nil), tolerateAll...),
			ServiceAccountName: CSIDaemonSet,
			Containers: []corev1.Container{
				{Name: "calico-csi", Image: img.calico, Command: []string{"/usr/bin/calico", "component", "csi"},
					Args:            []string{"--nodeid=$(KUBE_NODE_NAME)", "--loglevel=$(LOG_LEVEL)"},
					Env:             []corev1.EnvVar{envVal("LOG_LEVEL", "warn"), envField("KUBE_NODE_NAME", "spec.nodeName")},
					SecurityContext: &corev1.SecurityContext{Privileged: boolp(true)},
					VolumeMounts: []corev1.VolumeMount{{Name: "varrun", MountPath: "/var/run"}, {Name: "socket-dir", MountPath: "/csi"},
						{Name: "kubelet-dir", MountPath: "/var/lib/kubelet", MountPropagation: &bidir}}},
				{Name: "csi-node-driver-registrar", Image: img.calico, Command: []string{"/usr/bin/csi-node-driver-registrar"},
					Args: []string{"--v=5", "--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)"},
					Env: []corev1.EnvVar{envVal("ADDRESS", "/csi/csi.sock"), envVal("DRIVER_REG_SOCK_PATH", "/var/lib/kubelet/plugins/csi.tigera.io/csi.sock"),
						envField("KUBE_NODE_NAME", "spec.nodeName")},
					SecurityContext: &corev1.SecurityContext{Privileged: boolp(true)},
					VolumeMounts:    []corev1.VolumeMount{{Name: "socket-dir", MountPath: "/csi"}, {Name: "registration-dir", MountPath: "/registration"}}},
			},
			Volumes: []corev1.Volume{
				hostPathVol("varrun", "/var/run", ""),
				hostPathVol("kubelet-dir", "/var/lib/kubelet", corev1.HostPathDirectory),
				hostPathVol("socket-dir", "/var/lib/kubelet/plugins/csi.tigera.io", corev1.HostPathDirectoryOrCreate),
				hostPathVol("registration-dir", "/var/lib/kubelet/plugins_registry", corev1.HostPathDirectory),
			},
		},
	}
	return daemonSet(CSIDaemonSet, tmpl, "linux")
}

// typhaDeployment is pkg/render/typha.go: host network (its container
// port 5473 becomes a host port, so two replicas never share a node),
// bootstrap tolerations, a soft zone anti-affinity. Replicas come from the
// autoscaler.
func typhaDeployment(s *opapi.InstallationSpec, ep endpoint, img images, replicas int32) *appsv1.Deployment {
	tol := tolerateBootstrap
	if len(s.ControlPlaneTolerations) > 0 {
		tol = s.ControlPlaneTolerations
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{TimeoutSeconds: 10, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "localhost", Path: path, Port: intstr.FromInt32(felixHealthPrt - 1)}}}
	}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Tolerations:                   append([]corev1.Toleration(nil), tol...),
		ServiceAccountName:            TyphaDeployment,
		TerminationGracePeriodSeconds: int64p(300),
		HostNetwork:                   true,
		PriorityClassName:             "system-cluster-critical",
		Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 1,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{TyphaDeployment}}}},
				TopologyKey:   corev1.LabelTopologyZone,
			},
		}}}},
		Containers: []corev1.Container{{
			Name: "calico-typha", Image: img.calico, Command: []string{"/usr/bin/calico", "component", "typha"},
			// The API server defaults hostPort to containerPort for a
			// host-network pod; the scheduler's NodePorts filter then keeps
			// two Typhas off one node.
			Ports: []corev1.ContainerPort{{Name: "calico-typha", ContainerPort: typhaPort, HostPort: typhaPort, Protocol: corev1.ProtocolTCP}},
			Env: append([]corev1.EnvVar{envVal("TYPHA_LOGSEVERITYSCREEN", "info"), envVal("TYPHA_DATASTORETYPE", "kubernetes"),
				envVal("TYPHA_HEALTHENABLED", "true"), envVal("TYPHA_HEALTHPORT", fmt.Sprint(felixHealthPrt-1)),
				envVal("TYPHA_K8SNAMESPACE", CalicoNamespace), envVal("TYPHA_SHUTDOWNTIMEOUTSECS", "300")}, append(interfacePrefixEnv(s), endpointEnv(ep)...)...),
			LivenessProbe:   probe("/liveness"),
			ReadinessProbe:  probe("/readiness"),
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: boolp(true), AllowPrivilegeEscalation: boolp(false)},
		}},
	}}
	d := deployment(TyphaDeployment, replicas, tmpl)
	maxUnavail, maxSurge := intstr.FromInt32(1), intstr.FromString("100%")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &maxUnavail, MaxSurge: &maxSurge}}
	d.Spec.RevisionHistoryLimit = int32p(2)
	return d
}

// kubeControllersDeployment is pkg/render/kubecontrollers: one replica,
// control-plane and CriticalAddonsOnly tolerations, Recreate strategy, on
// the pod network.
func kubeControllersDeployment(s *opapi.InstallationSpec, ep endpoint, img images) *appsv1.Deployment {
	tol := append(append([]corev1.Toleration(nil), s.ControlPlaneTolerations...), tolerateControlPlane...)
	tol = append(tol, corev1.Toleration{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists})
	ns := map[string]string{}
	for k, v := range s.ControlPlaneNodeSelector {
		ns[k] = v
	}
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		NodeSelector:       ns,
		Tolerations:        tol,
		ServiceAccountName: KubeControllersDeployment,
		PriorityClassName:  "system-cluster-critical",
		Containers: []corev1.Container{{
			Name: "calico-kube-controllers", Image: img.calico,
			Command: []string{"/usr/bin/calico", "component", "kube-controllers", "--health-port=9440"},
			Env: append([]corev1.EnvVar{envVal("KUBE_CONTROLLERS_CONFIG_NAME", "default"), envVal("DATASTORE_TYPE", "kubernetes"),
				envVal("ENABLED_CONTROLLERS", "node,loadbalancer"), envVal("DISABLE_KUBE_CONTROLLERS_CONFIG_API", "false")}, endpointEnv(ep)...),
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: boolp(true), AllowPrivilegeEscalation: boolp(false)},
		}},
	}}
	d := deployment(KubeControllersDeployment, 1, tmpl)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	return d
}

// webhooksDeployment is pkg/render/webhooks/render.go (APIServer with
// native projectcalico.org/v3 CRDs): ControlPlaneReplicas replicas (2 by
// default) on the pod network, control-plane tolerations, and a soft
// anti-affinity by host and zone when there is more than one replica.
func webhooksDeployment(s *opapi.InstallationSpec, img images) *appsv1.Deployment {
	replicas := int32(1)
	if s.ControlPlaneReplicas != nil {
		replicas = *s.ControlPlaneReplicas
	}
	tol := append(append([]corev1.Toleration(nil), s.ControlPlaneTolerations...), tolerateControlPlane...)
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		ServiceAccountName: WebhooksDeployment,
		Tolerations:        tol,
		Containers: []corev1.Container{{
			Name: WebhooksDeployment, Image: img.calico,
			Command: []string{"/usr/bin/calico", "component", "webhooks"},
			Args: []string{"webhook", "--tls-cert-file=/calico-webhooks-tls/tls.crt",
				"--tls-private-key-file=/calico-webhooks-tls/tls.key", "--port=6443"},
			Ports: []corev1.ContainerPort{{ContainerPort: 6443, Protocol: corev1.ProtocolTCP}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 5, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(6443), Scheme: corev1.URISchemeHTTPS}}},
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: boolp(true), AllowPrivilegeEscalation: boolp(false)},
		}},
	}}
	if replicas > 1 {
		term := func(topo string) corev1.WeightedPodAffinityTerm {
			return corev1.WeightedPodAffinityTerm{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": WebhooksDeployment}},
				Namespaces:    []string{CalicoNamespace}, TopologyKey: topo}}
		}
		tmpl.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{term(corev1.LabelHostname), term(corev1.LabelTopologyZone)}}}
	}
	d := deployment(WebhooksDeployment, replicas, tmpl)
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &one, MaxUnavailable: &zero}}
	return d
}

func service(name string, port int32, target intstr.IntOrString, portName string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CalicoNamespace, Labels: map[string]string{"k8s-app": name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"k8s-app": name},
			Ports:    []corev1.ServicePort{{Name: portName, Port: port, Protocol: corev1.ProtocolTCP, TargetPort: target}},
		},
	}
}

// calicoNamespace is pkg/render/namespaces.go CreateNamespace: privileged
// Pod Security, since calico-node and calico-node-windows run host-network,
// privileged and HostProcess pods.
func calicoNamespace() *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: CalicoNamespace, Labels: map[string]string{
			"name":                               CalicoNamespace,
			"pod-security.kubernetes.io/enforce": "privileged",
			"pod-security.kubernetes.io/enforce-version": "latest",
		}},
	}
}
