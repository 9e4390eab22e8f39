package operator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// mtu is getMTU (pkg/render/node.go): the Installation's MTU, nil when
// unset (Calico then autodetects it).
func mtu(s *opapi.InstallationSpec) *int32 {
	if s.CalicoNetwork != nil {
		return s.CalicoNetwork.MTU
	}
	return nil
}

// mtuEnv is the VXLAN and WireGuard MTU part of nodeEnvVars and
// windowsEnvVars (pkg/render/node.go, windows.go): both OSes get the
// same pair; the IPIP MTU is Linux-only and added by the caller.
func mtuEnv(s *opapi.InstallationSpec) []corev1.EnvVar {
	m := mtu(s)
	if m == nil {
		return nil
	}
	return []corev1.EnvVar{envVal("FELIX_VXLANMTU", fmt.Sprint(*m)), envVal("FELIX_WIREGUARDMTU", fmt.Sprint(*m))}
}

// addressEnv is the address autodetection part of nodeEnvVars and
// windowsEnvVars: IP autodetect with the method, or IP none when no
// IPv4 method is set; the same for IPv6 with FELIX_IPV6SUPPORT.
func addressEnv(s *opapi.InstallationSpec) []corev1.EnvVar {
	var v4, v6 string
	if cn := s.CalicoNetwork; cn != nil {
		v4, v6 = autodetectionMethod(cn.NodeAddressAutodetectionV4), autodetectionMethod(cn.NodeAddressAutodetectionV6)
	}
	var env []corev1.EnvVar
	if v4 != "" {
		env = append(env, envVal("IP", "autodetect"), envVal("IP_AUTODETECTION_METHOD", v4))
	} else {
		env = append(env, envVal("IP", "none"))
	}
	if v6 == "" {
		return append(env, envVal("IP6", "none"), envVal("FELIX_IPV6SUPPORT", "false"))
	}
	env = append(env, envVal("IP6", "autodetect"), envVal("IP6_AUTODETECTION_METHOD", v6), envVal("FELIX_IPV6SUPPORT", "true"))
	if v4 == "" && bgpEnabled(s) {
		env = append(env, envVal("CALICO_ROUTER_ID", "hash"))
	}
	if m := mtu(s); m != nil {
		env = append(env, envVal("FELIX_VXLANMTUV6", fmt.Sprint(*m)), envVal("FELIX_WIREGUARDMTUV6", fmt.Sprint(*m)))
	}
	return env
}

// autodetectionMethod is getAutodetectionMethod (pkg/render/node.go): the
// first method set, in the operator's order, as calico-node's startup
// reads it; "" when none is.
func autodetectionMethod(ad map[string]any) string {
	str := func(k string) string { v, _ := ad[k].(string); return v }
	switch {
	case ad == nil:
		return ""
	case str("interface") != "":
		return "interface=" + str("interface")
	case str("skipInterface") != "":
		return "skip-interface=" + str("skipInterface")
	case str("canReach") != "":
		return "can-reach=" + str("canReach")
	case ad["firstFound"] == true:
		return "first-found"
	case len(cidrList(ad)) > 0:
		return "cidr=" + strings.Join(cidrList(ad), ",")
	case str("kubernetes") == "NodeInternalIP":
		return "kubernetes-internal-ip"
	}
	return ""
}

func cidrList(ad map[string]any) []string {
	list, _ := ad["cidrs"].([]any)
	var out []string
	for _, c := range list {
		if s, ok := c.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// validateNodeAddressDetection is its namesake in pkg/controller/
// installation/validation.go: at most one method per family, and the
// cidrs method's CIDRs must parse.
func validateNodeAddressDetection(ad map[string]any) error {
	n := 0
	for _, k := range []string{"interface", "skipInterface", "canReach"} {
		if v, _ := ad[k].(string); v != "" {
			n++
		}
	}
	if ad["firstFound"] == true {
		n++
	}
	if list, ok := ad["cidrs"].([]any); ok && len(list) > 0 {
		n++
		for _, c := range list {
			s, _ := c.(string)
			if _, _, err := net.ParseCIDR(s); err != nil {
				return fmt.Errorf("invalid CIDR provided for node address autodetection: %v", c)
			}
		}
	}
	if v, ok := ad["kubernetes"]; ok && v != nil {
		n++
	}
	if n > 1 {
		return errors.New("no more than one node address autodetection method can be specified per-family")
	}
	return nil
}

// nodeProbes is its namesake in pkg/render/node.go: readiness and startup
// run `calico component node health --felix-ready` (plus --bird-ready
// with BGP); liveness is Felix's HTTP endpoint on the FelixConfiguration's
// healthPort.
func nodeProbes(s *opapi.InstallationSpec, healthPort int) (startup, live, ready *corev1.Probe) {
	cmd := []string{"/usr/bin/calico", "component", "node", "health", "--bird-ready", "--felix-ready"}
	if !bgpEnabled(s) {
		cmd = []string{"/usr/bin/calico", "component", "node", "health", "--felix-ready"}
	}
	live = &corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "localhost", Path: "/liveness", Port: intstr.FromInt(healthPort)}},
		TimeoutSeconds: 10,
	}
	ready = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}, PeriodSeconds: 10, TimeoutSeconds: 5}
	startup = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: append([]string(nil), cmd...)}},
		PeriodSeconds: 2, TimeoutSeconds: 5, FailureThreshold: 150}
	return startup, live, ready
}

// windowsProbes is windowsLivenessReadinessProbes (pkg/render/
// windows.go): the felix container's exec probes through calico.exe.
func windowsProbes() (live, ready *corev1.Probe) {
	exe := "$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/calico.exe"
	live = &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{exe, "component", "node", "health", "--felix-live"}}},
		InitialDelaySeconds: 10, FailureThreshold: 6, TimeoutSeconds: 10, PeriodSeconds: 10,
	}
	ready = &corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{exe, "component", "node", "health", "--felix-ready"}}},
		TimeoutSeconds: 10, PeriodSeconds: 10,
	}
	return live, ready
}

// defaultAutodetection is the address autodetection defaulting of
// fillDefaults (pkg/controller/installation/core_controller.go): an IPv4
// pool (or the BPF dataplane) defaults IPv4 to firstFound (skipInterface
// ^br-.* on DockerEnterprise, canReach 8.8.8.8 on EKS); an IPv6 pool
// defaults IPv6 to firstFound.
func defaultAutodetection(s *opapi.InstallationSpec, pools []*calico.IPPool) {
	cn := s.CalicoNetwork
	if cn == nil {
		return
	}
	needV4 := cn.LinuxDataplane != nil && *cn.LinuxDataplane == DataplaneBPF
	for _, p := range pools {
		if isIPv4(p.Spec.CIDR) {
			needV4 = true
		} else if cn.NodeAddressAutodetectionV6 == nil {
			cn.NodeAddressAutodetectionV6 = map[string]any{"firstFound": true}
		}
	}
	if !needV4 || cn.NodeAddressAutodetectionV4 != nil {
		return
	}
	switch s.KubernetesProvider {
	case "DockerEnterprise":
		cn.NodeAddressAutodetectionV4 = map[string]any{"skipInterface": "^br-.*"}
	case "EKS":
		cn.NodeAddressAutodetectionV4 = map[string]any{"canReach": "8.8.8.8"}
	default:
		cn.NodeAddressAutodetectionV4 = map[string]any{"firstFound": true}
	}
}

// bpf is InstallationSpec.BPFEnabled (api/v1/installation_types.go).
func bpf(s *opapi.InstallationSpec) bool {
	return s.CalicoNetwork != nil && s.CalicoNetwork.LinuxDataplane != nil && *s.CalicoNetwork.LinuxDataplane == DataplaneBPF
}

// linuxCNIConfigMap is nodeCNIConfigMap (pkg/render/node.go) with
// createCalicoPluginConfig, getCalicoIPAM or buildHostLocalIPAM and the
// portmap plugin: the network config install-cni writes on each Linux node.
// Nil without Calico CNI. Not modelled: containerIPForwarding,
// linuxPolicySetupTimeoutSeconds (0 unless set), sysctl tuning, CNI
// logging settings and the netkit device type.
func linuxCNIConfigMap(s *opapi.InstallationSpec, ep endpoint, v1CRDs bool) (*corev1.ConfigMap, error) {
	if s.CNI.Type != PluginCalico {
		return nil, nil
	}
	var m int32
	if p := mtu(s); p != nil {
		m = *p
	}
	var pools []opapi.IPPool
	if s.CalicoNetwork != nil {
		pools = s.CalicoNetwork.IPPools
	}
	v4, v6 := poolFamilies(pools)
	ipam := map[string]any{"type": "calico-ipam", "assign_ipv4": fmt.Sprint(v4), "assign_ipv6": fmt.Sprint(v6)}
	if s.CNI.IPAM.Type == IPAMHostLocal {
		switch {
		case v4 && v6:
			ipam = map[string]any{"type": "host-local", "ranges": [][]map[string]string{{{"subnet": "usePodCidr"}}, {{"subnet": "usePodCidrIPv6"}}}}
		case v6:
			ipam = map[string]any{"type": "host-local", "subnet": "usePodCidrIPv6"}
		default:
			ipam = map[string]any{"type": "host-local", "subnet": "usePodCidr"}
		}
	}
	apiGroup := "projectcalico.org/v3"
	if v1CRDs {
		apiGroup = ""
	}
	k8s := map[string]any{"kubeconfig": "__KUBECONFIG_FILEPATH__"}
	if root := ep.apiRoot(); root != "" {
		k8s["k8s_api_root"] = root
	}
	plugins := []any{map[string]any{
		"type": "calico", "datastore_type": "kubernetes", "mtu": m,
		"nodename_file_optional": s.KubernetesProvider == "DockerEnterprise",
		"log_file_path":          "/var/log/calico/cni/cni.log", "ipam": ipam,
		"container_settings":           map[string]any{"allow_ip_forwarding": false},
		"policy":                       map[string]any{"type": "k8s"},
		"policy_setup_timeout_seconds": 0,
		"endpoint_status_dir":          "/var/run/calico/endpoint-status",
		"calico_api_group":             apiGroup,
		"kubernetes":                   k8s,
	}}
	if s.CalicoNetwork != nil && s.CalicoNetwork.HostPorts != nil && *s.CalicoNetwork.HostPorts == "Enabled" {
		plugins = append(plugins, map[string]any{"type": "portmap", "snat": true, "capabilities": map[string]bool{"portMappings": true}})
	}
	js, err := json.Marshal(plugins)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", LinuxCNIConfigMap, err)
	}
	config := fmt.Sprintf(`{
			  "name": "k8s-pod-network",
			  "cniVersion": "%s",
			  "plugins": %s
			}`, "1.0.0", js)
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: LinuxCNIConfigMap, Namespace: CalicoNamespace},
		Data:       map[string]string{"config": config},
	}, nil
}
