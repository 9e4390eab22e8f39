package ipam

import (
	"fmt"
	"net/netip"
)

// Attribute keys on allocations (libcalico-go lib/backend/model/block.go).
const (
	AttrNode                = "node"
	AttrPod                 = "pod"
	AttrNamespace           = "namespace"
	AttrType                = "type"
	AttrTypeVXLAN           = "vxlanTunnelAddress"
	k8sPodNetworkHandlePref = "k8s-pod-network."
)

// PodHandle is the handle the Calico CNI plugin uses for a pod:
// "<network name>.<container ID>" with the network k8s-pod-network
// (cni-plugin/internal/pkg/utils/utils.go GetHandleID).
func PodHandle(containerID string) string { return k8sPodNetworkHandlePref + containerID }

// PodAttrs are the allocation attributes the CNI plugin records
// (ipam_plugin.go). Upstream also records a wall-clock "timestamp", which
// the model leaves out.
func PodAttrs(node, namespace, pod string) map[string]string {
	return map[string]string{AttrNode: node, AttrNamespace: namespace, AttrPod: pod}
}

// VXLANTunnelHandle is calico-node's handle for a node's IPv4 VXLAN tunnel
// address (node/pkg/allocateip/allocateip.go generateHandleAndAttributes).
func VXLANTunnelHandle(node string) string { return "vxlan-tunnel-addr-" + node }

// AssignPod is what the Calico CNI plugin does on CNI ADD for a pod on the
// node (cni-plugin/pkg/ipamplugin/ipam_plugin.go): one IPv4 address for
// the Workload use. On a Windows node (kubernetes.io/os=windows) the plugin
// runs on Windows, so it
//   - reserves x.0-x.2 and the last address of any block it creates
//     (HostReservedAttrIPv4s StartOfBlock 3, EndOfBlock 1);
//   - limits the node to one block: the operator writes
//     "windows_use_single_network": true into the Windows CNI config
//     (tigera/operator pkg/render/windows.go) and the plugin turns that into
//     MaxBlocksPerHost 1 for the request, so a full block ends in
//     ErrBlockLimit rather than a second block or a borrowed address;
//   - fails with ErrStrictAffinity unless strictAffinity is true
//     (GetIPAMConfig on Windows), which also rules out borrowing.
//
// A shortfall becomes the plugin's "failed to request IPv4 addresses: ..."
// error; nothing is ever returned that upstream would not hand out.
func (m *IPAM) AssignPod(node, handle string, attrs map[string]string) (netip.Addr, error) {
	n, err := m.node(node)
	if err != nil {
		return netip.Addr{}, err
	}
	args := AutoAssignArgs{Num: 1, Handle: handle, Attrs: attrs, Host: node, Use: UseWorkload, OS: n.OS()}
	if n.OS() == OSWindows {
		args.Reserved = WindowsReserved()
		args.MaxBlocksPerHost = 1
	}
	ia, err := m.AutoAssign(args)
	if err != nil {
		return netip.Addr{}, err
	}
	if err := ia.PartialFulfillmentError(); err != nil {
		return netip.Addr{}, fmt.Errorf("failed to request IPv4 addresses: %w", err)
	}
	return ia.IPs[0], nil
}

// AssignObserved records an address a pod is known to have (status.podIP)
// under the handle, as the CNI plugin's specific-IP path does (AssignIP with
// use Workload). When the block does not exist yet it is claimed for the
// node; on a Windows node with the Windows reservations, as calico-node
// there would have claimed it at startup.
func (m *IPAM) AssignObserved(node string, addr netip.Addr, handle string, attrs map[string]string) error {
	n, err := m.node(node)
	if err != nil {
		return err
	}
	a := AssignIPArgs{IP: addr, Handle: handle, Attrs: attrs, Host: node, Use: UseWorkload, OS: n.OS()}
	if n.OS() == OSWindows {
		a.Reserved = WindowsReserved()
	}
	return m.AssignIP(a)
}

// EnsureWindowsBlock is calico-node's startup on a Windows node with the
// vxlan or windows-bgp backend: make sure the node owns a block, created
// with the Windows reservations (node/pkg/lifecycle/startup/startup_windows.go).
func (m *IPAM) EnsureWindowsBlock(node string) (netip.Prefix, error) {
	return m.EnsureBlock(BlockArgs{Host: node, Reserved: WindowsReserved(), OS: OSWindows})
}

// VXLANTunnelAddress returns the node's IPv4 VXLAN tunnel address,
// allocating it when needed.
//
// Linux (node/pkg/allocateip/allocateip.go): from the enabled IPv4 pools
// with vxlanMode Always or CrossSubnet that select the node and allow the
// Tunnel use, through an ordinary auto-assign with handle
// "vxlan-tunnel-addr-<node>" and attributes {node, type: vxlanTunnelAddress}.
// On a fresh node this claims the node's first block and takes its first
// ordinal, e.g. 172.21.70.192 of 172.21.70.192/26. An address the handle
// already holds in one of those pools is kept. With no such pool the node
// has no tunnel address (zero Addr) and any old one is released.
//
// Windows (startup_windows.go, cni-plugin/pkg/dataplane/windows
// EnsureVXLANTunnelAddr): the block's .1, the HNS network gateway, which
// sits inside the reserved range and is not allocated separately.
func (m *IPAM) VXLANTunnelAddress(node string) (netip.Addr, error) {
	n, err := m.node(node)
	if err != nil {
		return netip.Addr{}, err
	}
	if n.OS() == OSWindows {
		cidr, err := m.EnsureWindowsBlock(node)
		if err != nil {
			return netip.Addr{}, err
		}
		return nthAddr(cidr, 1), nil
	}
	handle := VXLANTunnelHandle(node)
	var cidrs []netip.Prefix
	for _, p := range m.pools {
		if p.Disabled || p.version() != 4 || !p.allows(UseTunnel) || !p.selectsNode(n.Labels) {
			continue
		}
		if p.VXLANMode == "Always" || p.VXLANMode == "CrossSubnet" {
			cidrs = append(cidrs, p.CIDR)
		}
	}
	if len(cidrs) == 0 {
		m.ReleaseByHandle(handle)
		return netip.Addr{}, nil
	}
	for _, a := range m.IPsByHandle(handle) {
		for _, c := range cidrs {
			if c.Contains(a) {
				return a, nil
			}
		}
	}
	m.ReleaseByHandle(handle)
	ia, err := m.AutoAssign(AutoAssignArgs{
		Num: 1, Handle: handle, Host: node, Pools: cidrs, Use: UseTunnel,
		Attrs: map[string]string{AttrNode: node, AttrType: AttrTypeVXLAN},
	})
	if err != nil {
		return netip.Addr{}, err
	}
	if err := ia.PartialFulfillmentError(); err != nil {
		return netip.Addr{}, err
	}
	return ia.IPs[0], nil
}
