// Package operator holds the Tigera operator's kinds (operator.tigera.io/v1)
// that the twin reads. Upstream: tigera/operator api/v1/installation_types.go,
// apiserver_types.go, tigerastatus_types.go.
package operator

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
)

// Group of the operator's kinds.
const Group = "operator.tigera.io"

// Encapsulation values of an Installation IP pool.
const (
	EncapIPIP             = "IPIP"
	EncapIPIPCrossSubnet  = "IPIPCrossSubnet"
	EncapVXLAN            = "VXLAN"
	EncapVXLANCrossSubnet = "VXLANCrossSubnet"
	EncapNone             = "None"
)

// Installation is the operator's description of the Calico install.
type Installation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InstallationSpec   `json:"spec"`
	Status            InstallationStatus `json:"status,omitempty"`
}

// InstallationSpec is the subset the twin models.
type InstallationSpec struct {
	Variant  string `json:"variant,omitempty"`
	Registry string `json:"registry,omitempty"`
	// ImagePath and ImagePrefix place the images under the registry
	// (registry/imagePath/imagePrefix+name).
	ImagePath                string              `json:"imagePath,omitempty"`
	ImagePrefix              string              `json:"imagePrefix,omitempty"`
	KubernetesProvider       string              `json:"kubernetesProvider,omitempty"`
	CNI                      *CNISpec            `json:"cni,omitempty"`
	CalicoNetwork            *CalicoNetworkSpec  `json:"calicoNetwork,omitempty"`
	ServiceCIDRs             []string            `json:"serviceCIDRs,omitempty"`
	WindowsNodes             *WindowsNodeSpec    `json:"windowsNodes,omitempty"`
	ControlPlaneReplicas     *int32              `json:"controlPlaneReplicas,omitempty"`
	TyphaAffinity            map[string]any      `json:"typhaAffinity,omitempty"`
	ControlPlaneNodeSelector map[string]string   `json:"controlPlaneNodeSelector,omitempty"`
	ControlPlaneTolerations  []corev1.Toleration `json:"controlPlaneTolerations,omitempty"`
	// FlexVolumePath "None" drops calico-node's flexvol-driver init container.
	FlexVolumePath string `json:"flexVolumePath,omitempty"`
}

// CNISpec selects the CNI plugin and IPAM.
type CNISpec struct {
	Type string    `json:"type,omitempty"` // Calico, AmazonVPC, AzureVNET, GKE
	IPAM *IPAMSpec `json:"ipam,omitempty"`
}

// IPAMSpec selects the IPAM plugin.
type IPAMSpec struct {
	Type string `json:"type,omitempty"` // Calico or HostLocal
}

// CalicoNetworkSpec is the network part of the Installation.
type CalicoNetworkSpec struct {
	BGP                        *string        `json:"bgp,omitempty"` // Enabled or Disabled
	LinuxDataplane             *string        `json:"linuxDataplane,omitempty"`
	WindowsDataplane           *string        `json:"windowsDataplane,omitempty"` // HNS or Disabled
	IPPools                    []IPPool       `json:"ipPools,omitempty"`
	MTU                        *int32         `json:"mtu,omitempty"`
	NodeAddressAutodetectionV4 map[string]any `json:"nodeAddressAutodetectionV4,omitempty"`
	NodeAddressAutodetectionV6 map[string]any `json:"nodeAddressAutodetectionV6,omitempty"`
	HostPorts                  *string        `json:"hostPorts,omitempty"`
	// ClusterRoutingMode says who programs IPIP and unencapsulated cluster
	// routes: BIRD, Felix or FelixIPIPOnly.
	ClusterRoutingMode *string `json:"clusterRoutingMode,omitempty"`
}

// IPPool is a pool as the Installation declares it; the operator creates the
// projectcalico.org IPPool from it.
type IPPool struct {
	Name             string   `json:"name,omitempty"`
	CIDR             string   `json:"cidr"`
	Encapsulation    string   `json:"encapsulation,omitempty"`
	NATOutgoing      string   `json:"natOutgoing,omitempty"` // Enabled or Disabled
	NodeSelector     string   `json:"nodeSelector,omitempty"`
	BlockSize        *int32   `json:"blockSize,omitempty"`
	DisableBGPExport *bool    `json:"disableBGPExport,omitempty"`
	AllowedUses      []string `json:"allowedUses,omitempty"`
	AssignmentMode   string   `json:"assignmentMode,omitempty"`
	// DisableNewAllocations becomes the IPPool's spec.disabled.
	DisableNewAllocations *bool `json:"disableNewAllocations,omitempty"`
}

// WindowsNodeSpec holds Windows-specific settings.
type WindowsNodeSpec struct {
	CNIBinDir      string `json:"cniBinDir,omitempty"`
	CNIConfigDir   string `json:"cniConfigDir,omitempty"`
	CNILogDir      string `json:"cniLogDir,omitempty"`
	VXLANMACPrefix string `json:"vxlanMACPrefix,omitempty"`
	VXLANAdapter   string `json:"vxlanAdapter,omitempty"`
}

// InstallationStatus is what the operator reports.
type InstallationStatus struct {
	Variant       string             `json:"variant,omitempty"`
	MTU           int32              `json:"mtu,omitempty"`
	CalicoVersion string             `json:"calicoVersion,omitempty"`
	ImageSet      string             `json:"imageSet,omitempty"`
	Computed      *InstallationSpec  `json:"computed,omitempty"`
	Conditions    []metav1.Condition `json:"conditions,omitempty"`
}

// APIServer asks the operator for the Calico API server (with native v3 CRDs,
// the calico-webhooks Deployment instead).
type APIServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]any `json:"spec,omitempty"`
}

// TigeraStatus is the operator's per-component health.
type TigeraStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]any     `json:"spec,omitempty"`
	Status            TigeraStatusStatus `json:"status,omitempty"`
}

// TigeraStatusStatus holds the conditions kubectl shows as columns.
type TigeraStatusStatus struct {
	Conditions []TigeraStatusCondition `json:"conditions,omitempty"`
}

// TigeraStatusCondition: Type is Available, Progressing or Degraded.
type TigeraStatusCondition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
	ObservedGeneration int64       `json:"observedGeneration,omitempty"`
}

// Kinds lists the operator kinds the loader decodes.
func Kinds() []meta.Kind {
	vs := []string{"v1"}
	return []meta.Kind{
		{Group: Group, Versions: vs, Kind: "Installation", New: func() any { return &Installation{} }},
		{Group: Group, Versions: vs, Kind: "APIServer", New: func() any { return &APIServer{} }},
		{Group: Group, Versions: vs, Kind: "TigeraStatus", New: func() any { return &TigeraStatus{} }},
	}
}
