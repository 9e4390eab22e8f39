package windows

import (
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"
)

// Node is what HNS and VFP hold on one Windows node: the objects Calico's
// node agent and CNI plugin, Felix and kube-proxy (winkernel) create, in the
// order HNS lists them, plus the host adapters and firewall rules those
// objects bring along.
type Node struct {
	Name string
	// Address is the node's InternalIP: every HNS network's ManagementIP and
	// the provider address of everything local.
	Address string
	// HostMAC is the host NIC's MAC as Windows prints it (00-15-5D-0A-00-05).
	HostMAC string
	// SourceVIP is kube-proxy's --source-vip (Calico_ep's address); empty when
	// kube-proxy does not run on the node.
	SourceVIP string
	// DSR is kube-proxy's --enable-dsr.
	DSR bool
	// KubeProxy reports whether kube-proxy (winkernel) runs on the node.
	KubeProxy bool
	// KubeProxyDown says why it does not: no pod, or it exits or waits at
	// start (also among Warnings or Notes).
	KubeProxyDown string

	Namespaces    []*Namespace
	Adapters      []*Adapter
	FirewallRules []*FirewallRule

	// Warnings are problems the real components would hit or report.
	Warnings []string
	// Notes say which values are stand-ins for ones only the host knows.
	Notes []string

	// The HNS networks (Networks), endpoints (Endpoints), load balancers
	// (LoadBalancers) and VFP ports (Ports). kube-proxy's objects are
	// Θ(Services + endpoints) on every node and the Calico network's
	// RemoteSubnetRoutes Θ(nodes); they and the VFP ports mirroring them
	// are made on first read (render), so that compiling every node holds
	// the cluster's kube-proxy model and routes once, not once per node.
	nets   []*Network
	eps    []*Endpoint
	lbs    []*LoadBalancer
	ports  []*VFPPort
	once   sync.Once
	render *nodeBuild

	// acls are the endpoints' Switch ACLs ordered for matching (ACLs),
	// made on first read and kept: a trace asks for them on every packet.
	aclMu sync.Mutex
	acls  map[*Endpoint]*ACLMatcher
}

// Networks are the node's HNS networks: External, then Calico.
func (n *Node) Networks() []*Network {
	n.made()
	return n.nets
}

// Endpoints are the node's HNS endpoints in the order HNS lists them.
func (n *Node) Endpoints() []*Endpoint {
	n.made()
	return n.eps
}

// LoadBalancers are the node's HNS load balancers in creation order.
func (n *Node) LoadBalancers() []*LoadBalancer {
	n.made()
	return n.lbs
}

// Ports are the node's vSwitch ports with their VFP layers.
func (n *Node) Ports() []*VFPPort {
	n.made()
	return n.ports
}

// made renders what compiling the node left to reading, once; it is safe
// for concurrent readers.
func (n *Node) made() {
	n.once.Do(func() {
		if n.render != nil {
			n.render.render()
			n.render = nil
		}
	})
}

// Network is an HNS network.
type Network struct {
	ID                 string
	Name               string
	Type               string // Overlay
	NetworkAdapterName string
	ManagementIP       string
	// DrMacAddress is the distributed router port's MAC (the VTEP), as HNS
	// prints it; only the Calico network has one.
	DrMacAddress string
	Subnets      []Subnet
	Policies     []NetworkPolicy
	// CreatedBy names the component that creates the network.
	CreatedBy string
}

// Subnet is an HNS network subnet with its VSID subnet policy.
type Subnet struct {
	AddressPrefix  string
	GatewayAddress string
	VSID           int
}

// Network policy types.
const (
	PolicyHostRoute         = "HostRoute"
	PolicyRemoteSubnetRoute = "RemoteSubnetRoute"
)

// NetworkPolicy is an HNS network policy: HostRoute (the CNI plugin adds it
// to the VXLAN network) or RemoteSubnetRoute (Felix adds one per remote block).
type NetworkPolicy struct {
	Type                        string
	DestinationPrefix           string
	ProviderAddress             string
	DistributedRouterMacAddress string
	IsolationID                 int
	// Node is the remote node whose block the route leads to (not an HNS field).
	Node string
}

// Endpoint kinds: who created the endpoint and why.
const (
	KindPod       = "Pod"       // calico CNI, one per pod sandbox
	KindHost      = "Host"      // calico-node: <network>_ep (Calico_ep)
	KindClusterIP = "ClusterIP" // kube-proxy: the service VIP as a remote endpoint
	KindRemote    = "Remote"    // kube-proxy: a backend on another node
)

// Endpoint is an HNS endpoint.
type Endpoint struct {
	ID                 string
	Name               string
	VirtualNetwork     string
	VirtualNetworkName string
	IPAddress          string
	MacAddress         string
	PrefixLength       int
	GatewayAddress     string
	IsRemoteEndpoint   bool
	DNSServerList      string
	DNSSuffix          string
	// NamespaceID is the HNS namespace (network compartment) the endpoint is
	// attached to; pods only.
	NamespaceID   string
	EncapOverhead int
	// State is HNS's EndpointState: 1 created, 3 attached and shared.
	State    int
	Policies []EndpointPolicy

	// Not HNS fields: where the endpoint comes from.
	Kind      string
	Owner     string // calico-cni, calico-node, kube-proxy
	Pod       string // namespace/name for pod endpoints
	SandboxID string
	// Node is the node a kube-proxy remote endpoint's backend runs on.
	Node string
	// ACLCount is how many HNS ACL rules Felix programs on the endpoint
	// (the ACL policies below); see ACLReport for how they add up.
	ACLCount  int
	ACLReport []ACLSource
}

// Endpoint policy types as HNS's V1 view (Get-HnsEndpoint) names them.
const (
	PolicyOutBoundNAT = "OutBoundNAT"
	PolicyRoute       = "ROUTE"
	PolicyPA          = "PA"
	PolicyACL         = "ACL"
)

// EndpointPolicy is one HNS endpoint policy.
type EndpointPolicy struct {
	Type string
	// OutBoundNAT: ExceptionList (natOutgoing exceptions) or Destinations
	// (loopback DSR).
	ExceptionList []string
	Destinations  []string
	// ROUTE (V2 SDNRoute).
	DestinationPrefix string
	NeedEncap         bool
	// PA (V2 ProviderAddress).
	PA string
	// ACL.
	ACL *ACL
}

// ACL is an HNS ACL rule and ACLSource where a run of them comes from;
// Felix's Windows policy renderer (policysets) makes them.
type (
	ACL       = policysets.ACL
	ACLSource = policysets.ACLSource
)

// Namespace is an HNS namespace: a pod's network compartment.
type Namespace struct {
	ID          string
	NamespaceID int // the compartment number
	Type        string
	EndpointIDs []string
	Pod         string
}

// HNS load balancer flags (hcn.LoadBalancerFlags, PortMappingFlags and
// Distribution; K8s pkg/proxy/winkernel/hns.go adds VipExternalIP = 16).
const (
	LBFlagDSR  = 1
	LBFlagIPv6 = 2

	PortMappingILB            = 1
	PortMappingLocalRoutedVIP = 2
	PortMappingUseMux         = 4
	PortMappingPreserveDIP    = 8
	PortMappingVipExternalIP  = 16

	DistributionNone     = 0
	DistributionSourceIP = 2
)

// Load balancer kinds.
const (
	LBClusterIP    = "ClusterIP"
	LBNodePort     = "NodePort"
	LBExternalIP   = "ExternalIP"
	LBIngressIP    = "LoadBalancerIngress"
	LBHealthCheck  = "HealthCheck"
	maxVFPLBTarget = 64
)

// LoadBalancer is an HNS load balancer (a V1 policy list with one ELB
// policy) that kube-proxy creates per service port and frontend.
type LoadBalancer struct {
	ID               string
	SourceVIP        string
	FrontendVIPs     []string
	Protocol         int
	InternalPort     int
	ExternalPort     int
	DistributionType int
	PortMappingFlags int
	Flags            int
	EndpointIDs      []string

	// Not HNS fields.
	Service  string // namespace/name
	PortName string
	Kind     string
	Backends []string // backend IPs, in EndpointIDs order
	// Warnings: the VFP 64-destination limit and similar, reported, never applied.
	Warnings []string
}

// DSR reports the load balancer's DSR flag.
func (lb *LoadBalancer) DSR() bool { return lb.Flags&LBFlagDSR != 0 }

// Adapter is a network adapter as Get-NetAdapter lists it.
type Adapter struct {
	Name                 string
	InterfaceDescription string
	MacAddress           string
	Status               string
}

// FirewallRule is a Windows Defender Firewall rule as Get-NetFirewallRule
// shows it.
type FirewallRule struct {
	Name        string
	DisplayName string
	Enabled     bool
	Direction   string // Inbound
	Action      string // Allow, Block
	Protocol    string
	LocalPorts  []int32
	// Source says who adds the rule.
	Source string
}

// VFPPort is a vSwitch port with its VFP layers.
type VFPPort struct {
	Name               string
	FriendlyName       string
	SwitchName         string
	SwitchFriendlyName string
	PortID             int
	// EndpointID is the HNS endpoint behind the port, if any.
	EndpointID string
	Layers     []*VFPLayer
}

// VFPLayer is one VFP layer of a port.
type VFPLayer struct {
	Name     string
	Priority int
	Flags    string // Stateful, Stateless
	Groups   []*VFPGroup
	// Confirmed is false for layers whose name or placement upstream
	// material does not confirm for HNS container ports.
	Confirmed bool
}

// VFPGroup is a rule group of a layer, per direction.
type VFPGroup struct {
	Name      string
	Priority  int
	Direction string // IN, OUT
	Rules     []*VFPRule
}

// VFPRule is one VFP rule.
type VFPRule struct {
	Name         string
	FriendlyName string
	Priority     int
	Type         string // allow, block, encap, lbnat, nat, ...
	Flags        string
	Conditions   []VFPCondition
	// Data is extra lines (encap destination, NAT targets).
	Data []string
}

// VFPCondition is one match condition of a rule.
type VFPCondition struct {
	Key, Value string
}
