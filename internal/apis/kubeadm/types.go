// Package kubeadm holds the subset of kubeadm's v1beta4 configuration the twin
// reads. kubeadm's own types live in k8s.io/kubernetes, which is not meant to
// be imported, so the fields used here are declared again with the same JSON
// names (cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go upstream).
package kubeadm

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group of kubeadm's configuration kinds.
const Group = "kubeadm.k8s.io"

// InitConfiguration is the first node's registration and API endpoint.
type InitConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	LocalAPIEndpoint  APIEndpoint      `json:"localAPIEndpoint,omitempty"`
	NodeRegistration  NodeRegistration `json:"nodeRegistration,omitempty"`
	Patches           *Patches         `json:"patches,omitempty"`
	SkipPhases        []string         `json:"skipPhases,omitempty"`
}

// ClusterConfiguration is the cluster-wide kubeadm configuration.
type ClusterConfiguration struct {
	metav1.TypeMeta      `json:",inline"`
	metav1.ObjectMeta    `json:"metadata,omitempty"`
	KubernetesVersion    string     `json:"kubernetesVersion,omitempty"`
	ControlPlaneEndpoint string     `json:"controlPlaneEndpoint,omitempty"`
	ClusterName          string     `json:"clusterName,omitempty"`
	Networking           Networking `json:"networking,omitempty"`
	APIServer            APIServer  `json:"apiServer,omitempty"`
	ImageRepository      string     `json:"imageRepository,omitempty"`
}

// Networking holds the pod and service subnets.
type Networking struct {
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	PodSubnet     string `json:"podSubnet,omitempty"`
	DNSDomain     string `json:"dnsDomain,omitempty"`
}

// APIServer holds the API server's extra settings.
type APIServer struct {
	CertSANs  []string `json:"certSANs,omitempty"`
	ExtraArgs []Arg    `json:"extraArgs,omitempty"`
}

// Arg is one extra command-line argument (v1beta4 lists them).
type Arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// JoinConfiguration is one node's join.
type JoinConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Discovery         Discovery         `json:"discovery,omitempty"`
	NodeRegistration  NodeRegistration  `json:"nodeRegistration,omitempty"`
	ControlPlane      *JoinControlPlane `json:"controlPlane,omitempty"`
	Patches           *Patches          `json:"patches,omitempty"`
}

// JoinControlPlane marks a control-plane join.
type JoinControlPlane struct {
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`
}

// Discovery is how a joining node finds and trusts the cluster.
type Discovery struct {
	BootstrapToken    *BootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`
	TLSBootstrapToken string                   `json:"tlsBootstrapToken,omitempty"`
}

// BootstrapTokenDiscovery is token-based discovery.
type BootstrapTokenDiscovery struct {
	Token                    string   `json:"token,omitempty"`
	APIServerEndpoint        string   `json:"apiServerEndpoint,omitempty"`
	CACertHashes             []string `json:"caCertHashes,omitempty"`
	UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification,omitempty"`
}

// NodeRegistration is how the node registers itself.
type NodeRegistration struct {
	Name      string `json:"name,omitempty"`
	CRISocket string `json:"criSocket,omitempty"`
	// Taints is a pointer so that "not set" (kubeadm's default: the
	// control-plane taint on control-plane nodes) and "empty" differ.
	Taints                *[]corev1.Taint `json:"taints,omitempty"`
	KubeletExtraArgs      []Arg           `json:"kubeletExtraArgs,omitempty"`
	IgnorePreflightErrors []string        `json:"ignorePreflightErrors,omitempty"`
}

// APIEndpoint is an advertise address and port.
type APIEndpoint struct {
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`
	BindPort         int32  `json:"bindPort,omitempty"`
}

// Patches points at a directory of patch files.
type Patches struct {
	Directory string `json:"directory,omitempty"`
}
