// Package calico holds the Calico resource kinds the twin reads, in the shape
// of projectcalico.org/v3. The crd.projectcalico.org/v1 CRDs that older
// installs use carry the same spec fields (IPAMConfig there is
// IPAMConfiguration here), so one type serves both groups.
// Upstream: projectcalico/calico api/pkg/apis/projectcalico/v3 and
// libcalico-go/lib/apis/v1 (crd.projectcalico.org).
package calico

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
)

// Group is Calico's API group; crd.projectcalico.org is read as an alias.
const Group = "projectcalico.org"

// Encapsulation modes of an IPPool (vxlanMode / ipipMode).
const (
	ModeNever       = "Never"
	ModeAlways      = "Always"
	ModeCrossSubnet = "CrossSubnet"
)

// IPPool is a pool of pod addresses split into blocks.
type IPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IPPoolSpec `json:"spec"`
}

// IPPoolSpec is an IPPool's configuration.
type IPPoolSpec struct {
	CIDR             string `json:"cidr"`
	VXLANMode        string `json:"vxlanMode,omitempty"`
	IPIPMode         string `json:"ipipMode,omitempty"`
	NATOutgoing      bool   `json:"natOutgoing,omitempty"`
	Disabled         bool   `json:"disabled,omitempty"`
	DisableBGPExport bool   `json:"disableBGPExport,omitempty"`
	BlockSize        int    `json:"blockSize,omitempty"`
	NodeSelector     string `json:"nodeSelector,omitempty"`
	// NamespaceSelector limits the pool to pods of the namespaces it
	// selects (projectcalico.org/v3 IPPoolSpec).
	NamespaceSelector string   `json:"namespaceSelector,omitempty"`
	AllowedUses       []string `json:"allowedUses,omitempty"`
	AssignmentMode    string   `json:"assignmentMode,omitempty"`
}

// IPAMConfiguration is the cluster-wide IPAM setting (named "default").
type IPAMConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IPAMConfigurationSpec `json:"spec"`
}

// IPAMConfigurationSpec: StrictAffinity stops borrowing from other nodes'
// blocks; libcalico-go GetIPAMConfig defaults it to false and
// AutoAllocateBlocks to true.
type IPAMConfigurationSpec struct {
	StrictAffinity     bool  `json:"strictAffinity"`
	AutoAllocateBlocks *bool `json:"autoAllocateBlocks,omitempty"`
	MaxBlocksPerHost   int32 `json:"maxBlocksPerHost,omitempty"`
	// IPCooldownSeconds is how long a released address stays unusable;
	// 0 (the default) frees it at once, at the back of the queue.
	IPCooldownSeconds            int32   `json:"ipCooldownSeconds,omitempty"`
	KubeVirtVMAddressPersistence *string `json:"kubeVirtVMAddressPersistence,omitempty"`
}

// IPAMBlock is one block of a pool with its per-ordinal allocations.
type IPAMBlock struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              IPAMBlockSpec `json:"spec"`
}

// IPAMBlockSpec mirrors libcalico-go's AllocationBlock: Allocations[i] is the
// index into Attributes of the handle holding ordinal i, or nil when free;
// Unallocated lists free ordinals in the order they will be handed out.
type IPAMBlockSpec struct {
	CIDR              string                `json:"cidr"`
	Affinity          *string               `json:"affinity,omitempty"` // "host:<node>"
	AffinityClaimTime *metav1.Time          `json:"affinityClaimTime,omitempty"`
	StrictAffinity    bool                  `json:"strictAffinity,omitempty"`
	Allocations       []*int                `json:"allocations"`
	Unallocated       []int                 `json:"unallocated"`
	Attributes        []AllocationAttribute `json:"attributes"`
	Deleted           bool                  `json:"deleted,omitempty"`
	SequenceNumber    uint64                `json:"sequenceNumber,omitempty"`
	// SequenceNumberForAllocation maps an ordinal (as a string) to the
	// block's SequenceNumber when that ordinal was handed out.
	SequenceNumberForAllocation map[string]uint64 `json:"sequenceNumberForAllocation,omitempty"`
}

// AllocationAttribute is who holds an allocation.
type AllocationAttribute struct {
	HandleID            *string           `json:"handle_id,omitempty"`
	ActiveOwnerAttrs    map[string]string `json:"secondary,omitempty"`
	AlternateOwnerAttrs map[string]string `json:"alternateOwnerAttrs,omitempty"`
	// ReleasedAt marks an allocation in its release cooldown.
	ReleasedAt *metav1.Time `json:"releasedAt,omitempty"`
}

// BlockAffinity binds a block to a node.
type BlockAffinity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BlockAffinitySpec `json:"spec"`
}

// BlockAffinitySpec: State is confirmed, pending or pendingDeletion.
type BlockAffinitySpec struct {
	State   string `json:"state"`
	Node    string `json:"node"`
	Type    string `json:"type,omitempty"`
	CIDR    string `json:"cidr"`
	Deleted string `json:"deleted,omitempty"`
}

// FelixConfiguration holds Felix settings; "default" is cluster-wide,
// "node.<name>" per node.
type FelixConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FelixConfigurationSpec `json:"spec"`
}

// FelixConfigurationSpec is the subset of Felix settings the twin models.
type FelixConfigurationSpec struct {
	VXLANEnabled      *bool   `json:"vxlanEnabled,omitempty"`
	VXLANVNI          *int    `json:"vxlanVNI,omitempty"`
	VXLANPort         *int    `json:"vxlanPort,omitempty"`
	VXLANMTU          *int    `json:"vxlanMTU,omitempty"`
	IPIPEnabled       *bool   `json:"ipipEnabled,omitempty"`
	IPIPMTU           *int    `json:"ipipMTU,omitempty"`
	BPFEnabled        *bool   `json:"bpfEnabled,omitempty"`
	WireguardEnabled  *bool   `json:"wireguardEnabled,omitempty"`
	IPv6Support       *bool   `json:"ipv6Support,omitempty"`
	LogSeverityScreen string  `json:"logSeverityScreen,omitempty"`
	HealthPort        *int    `json:"healthPort,omitempty"`
	NFTablesMode      *string `json:"nftablesMode,omitempty"`
	// ProgramClusterRoutes is Enabled, EnabledIPIPOnly or Disabled: which
	// cluster routes Felix rather than BIRD programs.
	ProgramClusterRoutes *string `json:"programClusterRoutes,omitempty"`
}

// BGPConfiguration holds BGP settings.
type BGPConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              BGPConfigurationSpec `json:"spec"`
}

// BGPConfigurationSpec is the subset of BGP settings the twin models.
type BGPConfigurationSpec struct {
	NodeToNodeMeshEnabled *bool              `json:"nodeToNodeMeshEnabled,omitempty"`
	ASNumber              *uint32            `json:"asNumber,omitempty"`
	ServiceClusterIPs     []ServiceCIDRBlock `json:"serviceClusterIPs,omitempty"`
	ServiceExternalIPs    []ServiceCIDRBlock `json:"serviceExternalIPs,omitempty"`
}

// ServiceCIDRBlock is an advertised service range.
type ServiceCIDRBlock struct {
	CIDR string `json:"cidr"`
}

// NetworkPolicy is Calico's namespaced policy.
type NetworkPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PolicySpec `json:"spec"`
}

// GlobalNetworkPolicy is Calico's cluster-wide policy.
type GlobalNetworkPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PolicySpec `json:"spec"`
}

// PolicySpec is shared by both policy kinds.
type PolicySpec struct {
	Tier                   string   `json:"tier,omitempty"`
	Order                  *float64 `json:"order,omitempty"`
	Selector               string   `json:"selector,omitempty"`
	NamespaceSelector      string   `json:"namespaceSelector,omitempty"`
	ServiceAccountSelector string   `json:"serviceAccountSelector,omitempty"`
	Types                  []string `json:"types,omitempty"`
	Ingress                []Rule   `json:"ingress,omitempty"`
	Egress                 []Rule   `json:"egress,omitempty"`
	DoNotTrack             bool     `json:"doNotTrack,omitempty"`
	ApplyOnForward         bool     `json:"applyOnForward,omitempty"`
	PreDNAT                bool     `json:"preDNAT,omitempty"`
}

// Directions are the directions the policy applies to: its types (any
// case), or without types Calico's default, Ingress plus Egress when it
// has egress rules.
func (s PolicySpec) Directions() (ingress, egress bool) {
	if len(s.Types) == 0 {
		return true, len(s.Egress) > 0
	}
	for _, t := range s.Types {
		switch strings.ToLower(t) {
		case "ingress":
			ingress = true
		case "egress":
			egress = true
		}
	}
	return ingress, egress
}

// Rule is one policy rule.
type Rule struct {
	Action      string       `json:"action"`
	Protocol    *intOrString `json:"protocol,omitempty"`
	NotProtocol *intOrString `json:"notProtocol,omitempty"`
	IPVersion   *int         `json:"ipVersion,omitempty"`
	ICMP        *ICMPFields  `json:"icmp,omitempty"`
	NotICMP     *ICMPFields  `json:"notICMP,omitempty"`
	Source      EntityRule   `json:"source,omitempty"`
	Destination EntityRule   `json:"destination,omitempty"`
}

// ICMPFields match ICMP type and code.
type ICMPFields struct {
	Type *int `json:"type,omitempty"`
	Code *int `json:"code,omitempty"`
}

// EntityRule matches one end of a connection.
type EntityRule struct {
	Nets              []string      `json:"nets,omitempty"`
	Selector          string        `json:"selector,omitempty"`
	NamespaceSelector string        `json:"namespaceSelector,omitempty"`
	Ports             []intOrString `json:"ports,omitempty"`
	NotNets           []string      `json:"notNets,omitempty"`
	NotSelector       string        `json:"notSelector,omitempty"`
	NotPorts          []intOrString `json:"notPorts,omitempty"`
	ServiceAccounts   *struct {
		Names    []string `json:"names,omitempty"`
		Selector string   `json:"selector,omitempty"`
	} `json:"serviceAccounts,omitempty"`
}

// Node is calico-node's record of a host (projectcalico.org/v3 Node, as
// `calicoctl get nodes -o yaml` prints it). Under the Kubernetes datastore
// it is not stored on its own: its fields are the Kubernetes Node's
// projectcalico.org/* annotations (libcalico-go
// lib/backend/k8s/resources/node.go), so the twin reads it as observed
// annotations of the Node of the same name.
type Node struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              NodeSpec `json:"spec,omitempty"`
	// Status (WireGuard key, pod CIDRs) is kept as given, not modeled.
	Status map[string]any `json:"status,omitempty"`
}

// NodeSpec is the part of Calico's NodeSpec the twin reads
// (api/pkg/apis/projectcalico/v3/node.go).
type NodeSpec struct {
	BGP *NodeBGPSpec `json:"bgp,omitempty"`
	// IPv4VXLANTunnelAddr is the address calico-node gave vxlan.calico
	// (Linux) or the HNS network's gateway (Windows).
	IPv4VXLANTunnelAddr string `json:"ipv4VXLANTunnelAddr,omitempty"`
	// VXLANTunnelMACAddr is the VTEP's MAC when the node recorded one.
	VXLANTunnelMACAddr   string        `json:"vxlanTunnelMACAddr,omitempty"`
	IPv6VXLANTunnelAddr  string        `json:"ipv6VXLANTunnelAddr,omitempty"`
	VXLANTunnelMACAddrV6 string        `json:"vxlanTunnelMACAddrV6,omitempty"`
	Addresses            []NodeAddress `json:"addresses,omitempty"`
	OrchRefs             []OrchRef     `json:"orchRefs,omitempty"`
	InterfaceName        string        `json:"interfaceName,omitempty"`
	// Wireguard is kept as given; the twin does not model WireGuard.
	Wireguard map[string]any `json:"wireguard,omitempty"`
}

// NodeBGPSpec: IPv4Address is the autodetected address with its subnet's
// prefix length (the projectcalico.org/IPv4Address annotation).
type NodeBGPSpec struct {
	ASNumber                *uint32 `json:"asNumber,omitempty"`
	IPv4Address             string  `json:"ipv4Address,omitempty"`
	IPv6Address             string  `json:"ipv6Address,omitempty"`
	IPv4IPIPTunnelAddr      string  `json:"ipv4IPIPTunnelAddr,omitempty"`
	RouteReflectorClusterID string  `json:"routeReflectorClusterID,omitempty"`
}

// NodeAddress is one of the node's addresses; Type is CalicoNodeIP,
// InternalIP or ExternalIP.
type NodeAddress struct {
	Address string `json:"address"`
	Type    string `json:"type,omitempty"`
}

// OrchRef names the node in an orchestrator (k8s).
type OrchRef struct {
	NodeName     string `json:"nodeName,omitempty"`
	Orchestrator string `json:"orchestrator"`
}

// KubernetesNodeName is the Kubernetes Node the Calico Node stands for:
// its k8s orchestrator reference, else its own name (calico-node names it
// after the host, which kubeadm also does).
func (n *Node) KubernetesNodeName() string {
	for _, r := range n.Spec.OrchRefs {
		if r.Orchestrator == "k8s" && r.NodeName != "" {
			return r.NodeName
		}
	}
	return n.Name
}

// IPv4Address is the address calico-node autodetected, with its prefix
// length: spec.bgp.ipv4Address, else the CalicoNodeIP address.
func (n *Node) IPv4Address() string {
	if n.Spec.BGP != nil && n.Spec.BGP.IPv4Address != "" {
		return n.Spec.BGP.IPv4Address
	}
	for _, a := range n.Spec.Addresses {
		if a.Type == "CalicoNodeIP" && !strings.Contains(a.Address, ":") {
			return a.Address
		}
	}
	return ""
}

// Kinds lists the Calico kinds the loader decodes.
func Kinds() []meta.Kind {
	vs := []string{"v3"}
	k := func(name string, namespaced bool, newFn func() any, short ...string) meta.Kind {
		return meta.Kind{Group: Group, Versions: vs, Kind: name, Namespaced: namespaced, New: newFn, ShortNames: short}
	}
	return []meta.Kind{
		k("IPPool", false, func() any { return &IPPool{} }),
		k("IPAMConfiguration", false, func() any { return &IPAMConfiguration{} }, "ipamconfig", "ipamconfigs"),
		// crd.projectcalico.org/v1 names the same resource IPAMConfig.
		k("IPAMConfig", false, func() any { return &IPAMConfiguration{} }),
		k("IPAMBlock", false, func() any { return &IPAMBlock{} }),
		k("BlockAffinity", false, func() any { return &BlockAffinity{} }, "affinity", "affinities"),
		k("FelixConfiguration", false, func() any { return &FelixConfiguration{} }, "felixconfig", "felixconfigs"),
		k("BGPConfiguration", false, func() any { return &BGPConfiguration{} }),
		k("NetworkPolicy", true, func() any { return &NetworkPolicy{} }),
		k("GlobalNetworkPolicy", false, func() any { return &GlobalNetworkPolicy{} }),
	}
}

// FileKinds lists the Calico kinds read from files only. Calico's Node is
// what `calicoctl get nodes -o yaml` prints; from a live cluster the same
// facts arrive as the Kubernetes Nodes' annotations (Kubernetes datastore),
// so the live reader has nothing more to list.
func FileKinds() []meta.Kind {
	return []meta.Kind{
		{Group: Group, Versions: []string{"v3"}, Kind: "Node", New: func() any { return &Node{} }},
	}
}
