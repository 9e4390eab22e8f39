// Package hybrid defines the project's own Cluster kind: the physical facts of
// a hybrid cluster that no Kubernetes object records — the hosts, how and in
// which order they join, and the node network with its firewalls.
package hybrid

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Group and Version of the Cluster kind.
const (
	Group   = "hybrid.kubectl-hybrid.io"
	Version = "v1alpha1"
)

// VTEPMACPlaceholderAnnotation marks a Node whose
// projectcalico.org/VXLANTunnelMACAddr the twin wrote as a placeholder: a
// Windows node's VTEP MAC is its DrPort adapter's, which HNS picks when
// calico-node-windows creates the Calico network and no algorithm derives.
// The value says so; every view reads the one placeholder MAC.
const VTEPMACPlaceholderAnnotation = Group + "/vxlan-tunnel-mac"

// OS names as kubernetes.io/os spells them.
const (
	OSLinux   = "linux"
	OSWindows = "windows"
)

// Cluster is the hosts and the physical network of one cluster.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterSpec `json:"spec"`
}

// ClusterSpec lists hosts in join order: the first joins first (kubeadm init
// for the control plane), which decides who claims IPAM blocks first.
type ClusterSpec struct {
	Network Network `json:"network"`
	Hosts   []Host  `json:"hosts"`
}

// Network is the node network all hosts share.
type Network struct {
	// CIDR of the node network, e.g. 192.168.10.0/24.
	CIDR string `json:"cidr"`
	// Gateway is the default route's next hop.
	Gateway string `json:"gateway,omitempty"`
	// DNS maps names the hosts resolve (the API endpoint, the router) to addresses.
	DNS []DNSRecord `json:"dns,omitempty"`
	// Firewall says what the host firewalls and the network between the hosts
	// let through. Empty means everything is allowed.
	Firewall []FirewallRule `json:"firewall,omitempty"`
}

// DNSRecord is one A record of the node network's DNS.
type DNSRecord struct {
	Name    string `json:"name"`
	Address string `json:"address"`
}

// FirewallRule allows or blocks traffic to hosts. Rules are read in order, the
// first match wins, and anything unmatched is allowed (the lab's Linux
// firewalls are off; Windows Defender Firewall rules are listed explicitly).
type FirewallRule struct {
	Name string `json:"name,omitempty"`
	// Hosts the rule applies to (inbound); empty means every host.
	Hosts []string `json:"hosts,omitempty"`
	// From is a list of CIDRs the traffic comes from; empty means anywhere.
	From     []string `json:"from,omitempty"`
	Protocol string   `json:"protocol"` // TCP, UDP, ICMP or IPIP (IP protocol 4)
	Ports    []int32  `json:"ports,omitempty"`
	Action   string   `json:"action"` // Allow or Block
}

// Host is one machine that joins the cluster.
type Host struct {
	// Name is the node name (kubeadm nodeRegistration.name or the hostname).
	Name string `json:"name"`
	FQDN string `json:"fqdn,omitempty"`
	// Address is the node's InternalIP on the node network.
	Address string `json:"address"`
	OS      string `json:"os"` // linux or windows
	Arch    string `json:"arch,omitempty"`
	// OSImage as the kubelet reports it (status.nodeInfo.osImage).
	OSImage string `json:"osImage,omitempty"`
	// KernelVersion as the kubelet reports it: the Linux kernel release, or the
	// full Windows version with its update revision (10.0.26100.33438).
	KernelVersion string `json:"kernelVersion,omitempty"`
	// ContainerRuntime as runtime://version, e.g. containerd://2.2.2.
	ContainerRuntime string `json:"containerRuntime,omitempty"`
	KubeletVersion   string `json:"kubeletVersion,omitempty"`
	NIC              NIC    `json:"nic,omitempty"`
	CPU              string `json:"cpu,omitempty"`    // e.g. "2"
	Memory           string `json:"memory,omitempty"` // e.g. 4Gi
	// Join names the kubeadm document the host joins with: "init" for the
	// InitConfiguration, else the metadata.name or nodeRegistration.name of a
	// JoinConfiguration. Empty means a plain `kubeadm join` with defaults.
	Join string `json:"join,omitempty"`
	// Patches names the kubelet configuration patch documents (by
	// metadata.name or file base name) applied at join.
	Patches []string `json:"patches,omitempty"`
	// Observed values no algorithm derives.
	Observed HostObserved `json:"observed,omitempty"`
}

// NIC is the host's network adapter on the node network.
type NIC struct {
	Name string `json:"name,omitempty"` // ens18, Ethernet
	MAC  string `json:"mac,omitempty"`
	MTU  int32  `json:"mtu,omitempty"`
}

// HostObserved are values seen on the running host.
type HostObserved struct {
	// VXLANTunnelMAC is the VTEP MAC (projectcalico.org/VXLANTunnelMACAddr):
	// vxlan.calico's MAC on Linux, the DrPort adapter's MAC on Windows.
	VXLANTunnelMAC string `json:"vxlanTunnelMAC,omitempty"`
	// DrPortName is the Windows distributed router port adapter's GUID.
	DrPortName string `json:"drPortName,omitempty"`
	// CreationTimestamp of the Node object.
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}
