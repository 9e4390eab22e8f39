package operator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// Values of Installation fields.
const (
	PluginCalico        = "Calico"
	IPAMCalico          = "Calico"
	IPAMHostLocal       = "HostLocal"
	DataplaneIptables   = "Iptables"
	DataplaneNftables   = "Nftables"
	DataplaneBPF        = "BPF"
	WindowsHNS          = "HNS"
	WindowsDisabled     = "Disabled"
	BGPEnabled          = "Enabled"
	BGPDisabled         = "Disabled"
	NATOutgoingEnabled  = "Enabled"
	NATOutgoingDisabled = "Disabled"
	NodeSelectorAll     = "all()"
	VariantCalico       = "Calico"

	DefaultPoolName   = "default-ipv4-ippool"
	DefaultV6PoolName = "default-ipv6-ippool"

	managedByLabel = ManagedByLabel
	managedByValue = ManagedByValue
)

// copyInstallation deep-copies through JSON (the typed API has no
// generated DeepCopy); the result is deterministic.
func copyInstallation(in *opapi.Installation) *opapi.Installation {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	out := &opapi.Installation{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	// omitempty drops an empty pool list, which means "no pools" and is
	// not the same as an absent one.
	if cn := in.Spec.CalicoNetwork; cn != nil && cn.IPPools != nil && len(cn.IPPools) == 0 {
		out.Spec.CalicoNetwork.IPPools = []opapi.IPPool{}
	}
	return out
}

func strp(s string) *string { return &s }

// applyCoreDefaults is the core controller's defaulting of the fields this
// model renders from (tigera/operator pkg/controller/installation/
// core_controller.go fillDefaults). IP pools are defaulted separately by
// the IP pool controller (applyPoolDefaults).
func applyCoreDefaults(s *opapi.InstallationSpec) {
	if s.Variant == "" {
		s.Variant = VariantCalico
	}
	if s.CNI == nil {
		s.CNI = &opapi.CNISpec{}
	}
	if s.CNI.Type == "" {
		switch s.KubernetesProvider {
		case "AKS":
			s.CNI.Type = "AzureVNET"
		case "EKS":
			s.CNI.Type = "AmazonVPC"
		case "GKE":
			s.CNI.Type = "GKE"
		default:
			s.CNI.Type = PluginCalico
		}
	}
	if s.CNI.IPAM == nil {
		s.CNI.IPAM = &opapi.IPAMSpec{}
	}
	if s.CNI.IPAM.Type == "" {
		switch s.CNI.Type {
		case "AzureVNET":
			s.CNI.IPAM.Type = "AzureVNET"
		case "AmazonVPC":
			s.CNI.IPAM.Type = "AmazonVPC"
		case "GKE":
			s.CNI.IPAM.Type = IPAMHostLocal
		default:
			s.CNI.IPAM.Type = IPAMCalico
		}
	}
	if s.CalicoNetwork == nil {
		s.CalicoNetwork = &opapi.CalicoNetworkSpec{}
	}
	cn := s.CalicoNetwork
	if cn.LinuxDataplane == nil {
		cn.LinuxDataplane = strp(DataplaneIptables)
	}
	if cn.WindowsDataplane == nil {
		cn.WindowsDataplane = strp(WindowsDisabled)
	}
	// Windows enabled: CNI directories default to vanilla Kubernetes paths
	// (pkg/render/windows.go DefaultWindowsCNIDirectories).
	if *cn.WindowsDataplane != WindowsDisabled {
		if s.WindowsNodes == nil {
			s.WindowsNodes = &opapi.WindowsNodeSpec{}
		}
		bin, conf, log := "/opt/cni/bin", "/etc/cni/net.d", "/var/log/calico/cni"
		switch s.KubernetesProvider {
		case "AKS":
			bin, conf = "/k/azurecni/bin", "/k/azurecni/netconf"
		case "EKS":
			bin, conf = "/Program Files/Amazon/EKS/cni", "/Program Files/Amazon/EKS/cni/config"
		}
		if s.WindowsNodes.CNIBinDir == "" {
			s.WindowsNodes.CNIBinDir = bin
		}
		if s.WindowsNodes.CNIConfigDir == "" {
			s.WindowsNodes.CNIConfigDir = conf
		}
		if s.WindowsNodes.CNILogDir == "" {
			s.WindowsNodes.CNILogDir = log
		}
	}
	if cn.BGP == nil {
		if s.CNI.Type == PluginCalico && s.KubernetesProvider != "EKS" {
			cn.BGP = strp(BGPEnabled)
		} else {
			cn.BGP = strp(BGPDisabled)
		}
	}
	if s.CNI.Type == PluginCalico && cn.HostPorts == nil {
		cn.HostPorts = strp("Enabled")
	}
	if s.ControlPlaneReplicas == nil {
		r := int32(2)
		s.ControlPlaneReplicas = &r
	}
	if s.FlexVolumePath == "" {
		s.FlexVolumePath = "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/"
	}
}

// windowsEnabled is common.WindowsEnabled (pkg/common/windows.go).
func windowsEnabled(s *opapi.InstallationSpec) bool {
	return s.CalicoNetwork != nil && s.CalicoNetwork.WindowsDataplane != nil && *s.CalicoNetwork.WindowsDataplane != WindowsDisabled
}

func bgpEnabled(s *opapi.InstallationSpec) bool {
	return s.CalicoNetwork != nil && s.CalicoNetwork.BGP != nil && *s.CalicoNetwork.BGP == BGPEnabled
}

func isIPv4(cidr string) bool { return !strings.Contains(cidr, ":") }

// firstIPv4Pool is render.GetIPv4Pool (pkg/render/node.go).
func firstIPv4Pool(pools []opapi.IPPool) *opapi.IPPool {
	for i, p := range pools {
		if ip, _, err := net.ParseCIDR(p.CIDR); err == nil && ip.To4() != nil {
			return &pools[i]
		}
	}
	return nil
}

// endpoint is k8sapi.Endpoint (tigera/operator pkg/controller/k8sapi/
// k8s-endpoint.go): the operator's own KUBERNETES_SERVICE_HOST and _PORT,
// which PopulateK8sServiceEndPoint (pkg/controller/utils/utils.go)
// replaces with the kubernetes-services-endpoint ConfigMap's data when that
// ConfigMap exists.
type endpoint struct{ host, port string }

// apiRoot is ServiceEndpoint.CNIAPIRoot: https://host:port, "" when
// either is missing.
func (e endpoint) apiRoot() string {
	if e.host == "" || e.port == "" {
		return ""
	}
	return "https://" + net.JoinHostPort(e.host, e.port)
}

// validateInstallation is validateCustomResource
// (pkg/controller/installation/validation.go), limited to the fields this
// model has. Messages are upstream's.
func validateInstallation(s *opapi.InstallationSpec, ep endpoint) error {
	if s.CNI == nil {
		return errors.New("spec.cni must be defined")
	}
	ipamType := ""
	if s.CNI.IPAM != nil {
		ipamType = s.CNI.IPAM.Type
	}
	switch s.CNI.Type {
	case PluginCalico:
		if ipamType != IPAMCalico && ipamType != IPAMHostLocal {
			return fmt.Errorf("spec.cni.ipam.type %s is not compatible with spec.cni.type %s, valid IPAM values %s",
				ipamType, s.CNI.Type, "Calico,HostLocal")
		}
	case "GKE", "AmazonVPC", "AzureVNET":
	default:
		return fmt.Errorf("invalid value '%s' for spec.cni.type, it should be one of %s",
			s.CNI.Type, "Calico,GKE,AmazonVPC,AzureVNET")
	}
	if cn := s.CalicoNetwork; cn != nil {
		bgpOff := cn.BGP == nil || *cn.BGP == BGPDisabled
		mode := clusterRoutingMode(s)
		felixIPIP := mode == RoutingFelix || mode == RoutingFelixIPIPOnly
		felixNoEncap := mode == RoutingFelix
		for _, p := range cn.IPPools {
			if !isIPv4(p.CIDR) && (p.Encapsulation == opapi.EncapIPIP || p.Encapsulation == opapi.EncapIPIPCrossSubnet) {
				return fmt.Errorf("IPIP encapsulation is not supported by IPv6 pools, but it is set for %s", p.CIDR)
			}
			if s.CNI.Type == PluginCalico {
				switch ipamType {
				case IPAMCalico:
					// IPIP and unencapsulated routes need BGP unless Felix
					// owns them (felixProgramsIPIPClusterRoutes,
					// felixProgramsNoEncapClusterRoutes).
					switch p.Encapsulation {
					case opapi.EncapIPIP, opapi.EncapIPIPCrossSubnet:
						if !felixIPIP && bgpOff {
							return errors.New("with BIRD cluster routing mode, IPIP encapsulation requires that BGP is enabled")
						}
					case opapi.EncapNone:
						if !felixNoEncap && bgpOff {
							return errors.New("with BIRD cluster routing mode, unencapsulated IP pools require that BGP is enabled")
						}
					}
				case IPAMHostLocal:
					if p.Encapsulation == opapi.EncapVXLAN || p.Encapsulation == opapi.EncapVXLANCrossSubnet {
						return fmt.Errorf("%s is invalid for ipPool.encapsulation with %s CNI and %s IPAM", p.Encapsulation, s.CNI.Type, ipamType)
					}
				}
			} else {
				switch p.Encapsulation {
				case "", opapi.EncapNone:
				default:
					return fmt.Errorf("%s is invalid for ipPool.encapsulation when using non-Calico CNI, should be None", p.Encapsulation)
				}
				if cn.BGP != nil && *cn.BGP == BGPEnabled {
					return errors.New("BGP is not supported when using non-Calico CNI")
				}
			}
		}
	}
	if cn := s.CalicoNetwork; cn != nil {
		for _, ad := range []map[string]any{cn.NodeAddressAutodetectionV4, cn.NodeAddressAutodetectionV6} {
			if ad != nil {
				if err := validateNodeAddressDetection(ad); err != nil {
					return err
				}
			}
		}
	}
	// validation.go: "None" or an absolute path.
	if s.FlexVolumePath != "None" && !path.IsAbs(s.FlexVolumePath) {
		return fmt.Errorf("installation spec.FlexVolumePath '%s' is not an absolute path", s.FlexVolumePath)
	}
	if s.ControlPlaneNodeSelector != nil {
		if v, ok := s.ControlPlaneNodeSelector[corev1.LabelOSStable]; ok && v != "linux" {
			return fmt.Errorf("installation spec.ControlPlaneNodeSelector 'kubernetes.io/os=%s' is not supported", v)
		}
	}
	if s.ControlPlaneReplicas != nil && *s.ControlPlaneReplicas <= 0 {
		return errors.New("installation spec.ControlPlaneReplicas should be greater than 0")
	}
	if windowsEnabled(s) {
		if ep.host == "" || ep.port == "" {
			return fmt.Errorf("services endpoint configmap '%s' does not have all required information for Calico Windows daemonset configuration", ServicesEndpointConfigMap)
		}
		if s.CNI.Type == PluginCalico {
			if len(s.ServiceCIDRs) == 0 {
				return errors.New("installation spec.ServiceCIDRs must be provided when using Calico CNI on Windows")
			}
			if s.CalicoNetwork != nil {
				if p := firstIPv4Pool(s.CalicoNetwork.IPPools); p != nil && p.Encapsulation != opapi.EncapVXLAN && p.Encapsulation != opapi.EncapNone {
					return fmt.Errorf("IPv4 IPPool encapsulation %s is not supported by Calico for Windows", p.Encapsulation)
				}
			}
		}
	} else if s.WindowsNodes != nil {
		return errors.New("installation spec.WindowsNodes is not valid and should not be provided when Calico for Windows is disabled")
	}
	return nil
}

// Cluster routing modes (api/v1/installation_types.go ClusterRoutingMode).
const (
	RoutingBIRD          = "BIRD"
	RoutingFelix         = "Felix"
	RoutingFelixIPIPOnly = "FelixIPIPOnly"
)

// clusterRoutingMode is its namesake in core_controller.go: the
// configured mode, or FelixIPIPOnly when unset, which is what Calico
// v3.33's own defaults amount to (Felix programs IPIP routes, BIRD the
// unencapsulated ones).
func clusterRoutingMode(s *opapi.InstallationSpec) string {
	if s.CalicoNetwork != nil && s.CalicoNetwork.ClusterRoutingMode != nil {
		return *s.CalicoNetwork.ClusterRoutingMode
	}
	return RoutingFelixIPIPOnly
}

// Kubeadm is what the IP pool controller reads from the kube-system
// kubeadm-config ConfigMap: the podSubnet line (comma-separated for dual
// stack). ServiceSubnet is only used for a consistency note.
type Kubeadm struct {
	PodSubnet     string
	ServiceSubnet string
}

func cidrWithin(outer, inner string) bool {
	_, o, err := net.ParseCIDR(outer)
	if err != nil {
		return false
	}
	_, in, err := net.ParseCIDR(inner)
	if err != nil {
		return false
	}
	oo, _ := o.Mask.Size()
	io, _ := in.Mask.Size()
	return o.Contains(in.IP) && io >= oo
}

// applyPoolDefaults is the IP pool controller's defaulting
// (pkg/controller/ippool/defaults.go fillDefaults, kubeadm.go): with no
// pools in the cluster, pools are taken from kubeadm's podSubnet or else
// 192.168.0.0/16 (172.16.0.0/16 with VXLAN on EKS); then every pool gets
// encapsulation IPIP (Calico CNI; None otherwise; None for IPv6),
// natOutgoing Enabled (Disabled for IPv6), nodeSelector all(), blockSize
// 26 (122 for IPv6), allowedUses Workload+Tunnel, assignmentMode Automatic
// and a name.
func applyPoolDefaults(s *opapi.InstallationSpec, kubeadm *Kubeadm, existing []*calico.IPPool) error {
	if s.CNI == nil || s.CNI.IPAM == nil {
		return errors.New("cannot perform IP pool defaulting until CNI configuration is available")
	}
	if len(existing) == 0 {
		if kubeadm != nil && (s.CNI.Type == PluginCalico) {
			if s.CalicoNetwork == nil {
				s.CalicoNetwork = &opapi.CalicoNetworkSpec{}
			}
			if err := mergeKubeadm(s, kubeadm); err != nil {
				return fmt.Errorf("could not resolve CalicoNetwork IPPool and kubeadm configuration: %s", err)
			}
		}
		if (s.CalicoNetwork == nil || s.CalicoNetwork.IPPools == nil) && s.CNI.IPAM.Type == IPAMCalico {
			if s.CalicoNetwork == nil {
				s.CalicoNetwork = &opapi.CalicoNetworkSpec{}
			}
			if s.KubernetesProvider == "EKS" {
				s.CalicoNetwork.IPPools = []opapi.IPPool{{Name: DefaultPoolName, CIDR: "172.16.0.0/16", Encapsulation: opapi.EncapVXLAN}}
			} else {
				s.CalicoNetwork.IPPools = []opapi.IPPool{{Name: DefaultPoolName, CIDR: "192.168.0.0/16"}}
			}
		}
	} else if s.CalicoNetwork == nil || s.CalicoNetwork.IPPools == nil {
		// Pools managed out of band: the operator manages none.
		if s.CalicoNetwork == nil {
			s.CalicoNetwork = &opapi.CalicoNetworkSpec{}
		}
		s.CalicoNetwork.IPPools = []opapi.IPPool{}
	}
	if s.CalicoNetwork == nil {
		return nil
	}
	byCIDR := map[string]string{}
	for _, p := range existing {
		byCIDR[normalizeCIDR(p.Spec.CIDR)] = p.Name
	}
	pools := s.CalicoNetwork.IPPools
	for i := range pools {
		p := &pools[i]
		if len(p.AllowedUses) == 0 {
			p.AllowedUses = []string{"Workload", "Tunnel"}
		}
		ip, _, err := net.ParseCIDR(p.CIDR)
		v4 := err == nil && ip.To4() != nil
		switch {
		case v4:
			if p.Encapsulation == "" {
				if s.CNI.Type == PluginCalico {
					p.Encapsulation = opapi.EncapIPIP
				} else {
					p.Encapsulation = opapi.EncapNone
				}
			}
			if p.NATOutgoing == "" {
				p.NATOutgoing = NATOutgoingEnabled
			}
			if p.BlockSize == nil {
				b := int32(26)
				p.BlockSize = &b
			}
		case err == nil:
			if p.Encapsulation == "" {
				p.Encapsulation = opapi.EncapNone
			}
			if p.NATOutgoing == "" {
				p.NATOutgoing = NATOutgoingDisabled
			}
			if p.BlockSize == nil {
				b := int32(122)
				p.BlockSize = &b
			}
		}
		if err == nil && p.NodeSelector == "" {
			p.NodeSelector = NodeSelectorAll
		}
		if p.DisableNewAllocations == nil {
			f := false
			p.DisableNewAllocations = &f
		}
		if p.Name == "" {
			switch {
			case byCIDR[normalizeCIDR(p.CIDR)] != "":
				p.Name = byCIDR[normalizeCIDR(p.CIDR)]
			case len(pools) == 1 || (len(pools) == 2 && dualStack(pools)):
				p.Name = DefaultPoolName
				if !v4 {
					p.Name = DefaultV6PoolName
				}
			default:
				if p.Name, err = poolNameFromCIDR(p.CIDR); err != nil {
					return err
				}
			}
		}
		if p.AssignmentMode == "" {
			p.AssignmentMode = "Automatic"
		}
	}
	return nil
}

func dualStack(pools []opapi.IPPool) bool {
	v4, v6 := poolFamilies(pools)
	return v4 && v6
}

// poolFamilies says whether any pool is IPv4 and whether any is IPv6;
// a CIDR that does not parse counts as neither.
func poolFamilies(pools []opapi.IPPool) (v4, v6 bool) {
	for _, p := range pools {
		if ip, _, err := net.ParseCIDR(p.CIDR); err == nil {
			if ip.To4() != nil {
				v4 = true
			} else {
				v6 = true
			}
		}
	}
	return v4, v6
}

// mergeKubeadm adds pools for kubeadm's podSubnet when the Installation
// has none, and otherwise checks that every pool lies inside it
// (defaults.go mergePlatformPodCIDRs, kubeadm.go extractKubeadmCIDRs).
func mergeKubeadm(s *opapi.InstallationSpec, k *Kubeadm) error {
	if k.PodSubnet == "" {
		return errors.New("kubeadm configuration is missing required podSubnet field")
	}
	var cidrs []string
	for _, c := range strings.Split(k.PodSubnet, ",") {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return err
		}
		cidrs = append(cidrs, c)
	}
	cn := s.CalicoNetwork
	switch {
	case cn.IPPools == nil:
		v4, v6 := false, false
		for _, c := range cidrs {
			ip, _, _ := net.ParseCIDR(c)
			name := ""
			if ip.To4() == nil {
				if !v6 {
					name = DefaultV6PoolName
				}
				v6 = true
			} else {
				if !v4 {
					name = DefaultPoolName
				}
				v4 = true
			}
			cn.IPPools = append(cn.IPPools, opapi.IPPool{Name: name, CIDR: c})
		}
	case len(cn.IPPools) == 0:
	default:
		for _, p := range cn.IPPools {
			within := false
			for _, c := range cidrs {
				within = within || cidrWithin(c, p.CIDR)
			}
			if !within {
				return fmt.Errorf("IPPool %v is not within the platform's configured pod network CIDR(s) %v", p.CIDR, cidrs)
			}
		}
	}
	return nil
}

func normalizeCIDR(c string) string {
	_, n, err := net.ParseCIDR(c)
	if err != nil {
		return c
	}
	return n.String()
}

// poolNameFromCIDR is defaults.go cidrToName: the expanded address with
// ':' turned into '.', then "-<prefix length>".
func poolNameFromCIDR(c string) (string, error) {
	_, n, err := net.ParseCIDR(c)
	if err != nil {
		return "", err
	}
	ones, bits := n.Mask.Size()
	var name string
	if bits == 32 {
		name = n.IP.To4().String()
	} else {
		ip := n.IP.To16()
		parts := make([]string, 8)
		for i := range parts {
			parts[i] = fmt.Sprintf("%02x%02x", ip[2*i], ip[2*i+1])
		}
		name = strings.Join(parts, ".")
	}
	return fmt.Sprintf("%s-%d", name, ones), nil
}

// validatePools is ValidatePools (pkg/controller/ippool/validation.go).
func validatePools(s *opapi.InstallationSpec) error {
	cidrs, names := map[string]bool{}, map[string]bool{}
	for _, p := range s.CalicoNetwork.IPPools {
		_, n, err := net.ParseCIDR(p.CIDR)
		if err != nil {
			return fmt.Errorf("IP pool CIDR (%s) is invalid: %s", p.CIDR, err)
		}
		if cidrs[p.CIDR] {
			return fmt.Errorf("IP pool %v is specified more than once", p.CIDR)
		}
		cidrs[p.CIDR] = true
		if names[p.Name] {
			return fmt.Errorf("IP pool %v is specified more than once", p.Name)
		}
		names[p.Name] = true
		lb := false
		for _, u := range p.AllowedUses {
			lb = lb || u == "LoadBalancer"
		}
		if lb {
			for _, u := range p.AllowedUses {
				if u != "LoadBalancer" {
					return fmt.Errorf("IP pool %s AllowedUse LoadBalancer cannot be used with Workload/Tunnel", p.Name)
				}
			}
		}
		if p.NATOutgoing != NATOutgoingEnabled && p.NATOutgoing != NATOutgoingDisabled {
			return fmt.Errorf("%s is invalid for natOutgoing, should be one of %s", p.NATOutgoing, "Enabled,Disabled")
		}
		if p.NodeSelector == "" {
			return errors.New("IP pool nodeSelector should not be empty")
		}
		if lb && p.NodeSelector != NodeSelectorAll {
			return errors.New("IP pool nodeSelector should be set to all() if allowedUse is LoadBalancer")
		}
		if s.CNI.Type != PluginCalico && p.NodeSelector != NodeSelectorAll {
			return fmt.Errorf("IP pool nodeSelector (%s) should be 'all()' when using non-Calico CNI plugin", p.NodeSelector)
		}
		switch p.Encapsulation {
		case opapi.EncapIPIP, opapi.EncapIPIPCrossSubnet, opapi.EncapVXLAN, opapi.EncapVXLANCrossSubnet:
			if lb {
				return errors.New("IP pool encapsulation must be none if allowedUse is LoadBalancer")
			}
		case opapi.EncapNone:
		default:
			return fmt.Errorf("%s is invalid for ipPool.encapsulation, should be one of %s", p.Encapsulation,
				"IPIPCrossSubnet,IPIP,VXLAN,VXLANCrossSubnet,None")
		}
		ones, _ := n.Mask.Size()
		if p.BlockSize != nil {
			bs := *p.BlockSize
			if isIPv4(p.CIDR) && (bs > 32 || bs < 20) {
				return errors.New("IPv4 pool block size must be greater than 19 and less than or equal to 32")
			}
			if !isIPv4(p.CIDR) && (bs > 128 || bs < 116) {
				return errors.New("IPv6 pool block size must be greater than 115 and less than or equal to 128")
			}
			if int32(ones) > bs {
				return errors.New("IP pool size is too small. It must be equal to or greater than the block size")
			}
		}
	}
	return nil
}

// toIPPool is ToProjectCalico (pkg/controller/ippool/pool_controller.go):
// the projectcalico.org/v3 IPPool the operator writes. VXLAN sets
// vxlanMode Always and ipipMode Never, VXLANCrossSubnet vxlanMode
// CrossSubnet, IPIP ipipMode Always, IPIPCrossSubnet ipipMode CrossSubnet,
// each with the other mode Never. None sets neither mode: the operator
// leaves both empty and, with native v3 CRDs, nothing defaults them, so the
// stored pool has neither field (Calico reads an empty mode as Never; see
// EffectiveModes).
func toIPPool(p opapi.IPPool) *calico.IPPool {
	out := &calico.IPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: calico.Group + "/v3", Kind: "IPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: map[string]string{managedByLabel: managedByValue}},
		Spec:       calico.IPPoolSpec{CIDR: normalizeCIDR(p.CIDR), NodeSelector: p.NodeSelector, AssignmentMode: p.AssignmentMode},
	}
	switch p.Encapsulation {
	case opapi.EncapIPIP:
		out.Spec.IPIPMode, out.Spec.VXLANMode = calico.ModeAlways, calico.ModeNever
	case opapi.EncapIPIPCrossSubnet:
		out.Spec.IPIPMode, out.Spec.VXLANMode = calico.ModeCrossSubnet, calico.ModeNever
	case opapi.EncapVXLAN:
		out.Spec.VXLANMode, out.Spec.IPIPMode = calico.ModeAlways, calico.ModeNever
	case opapi.EncapVXLANCrossSubnet:
		out.Spec.VXLANMode, out.Spec.IPIPMode = calico.ModeCrossSubnet, calico.ModeNever
	}
	out.Spec.NATOutgoing = p.NATOutgoing == NATOutgoingEnabled
	if p.DisableNewAllocations != nil {
		out.Spec.Disabled = *p.DisableNewAllocations
	}
	if p.BlockSize != nil {
		out.Spec.BlockSize = int(*p.BlockSize)
	}
	if p.DisableBGPExport != nil {
		out.Spec.DisableBGPExport = *p.DisableBGPExport
	}
	out.Spec.AllowedUses = append(out.Spec.AllowedUses, p.AllowedUses...)
	return out
}

// EffectiveModes returns the IPIP and VXLAN modes Calico acts on: an empty
// mode means Never.
func EffectiveModes(p *calico.IPPool) (ipip, vxlan string) {
	ipip, vxlan = p.Spec.IPIPMode, p.Spec.VXLANMode
	if ipip == "" {
		ipip = calico.ModeNever
	}
	if vxlan == "" {
		vxlan = calico.ModeNever
	}
	return ipip, vxlan
}
