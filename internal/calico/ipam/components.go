package ipam

import (
	"net/netip"
	"slices"
)

// Attribute keys on allocations (libcalico-go lib/backend/model/block.go).
const (
	AttrNode                = "node"
	AttrPod                 = "pod"
	AttrNamespace           = "namespace"
	AttrType                = "type"
	AttrTypeVXLAN           = "vxlanTunnelAddress"
	AttrTypeIPIP            = "ipipTunnelAddress"
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
	return m.AssignPodRequest(PodRequest{Node: node, Handle: handle, Attrs: attrs})
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
	if err := m.AssignIP(a); err != nil {
		return err
	}
	// AssignIP succeeded, so an enabled pool holds addr and gives its block.
	if p := poolFor(m.enabledPools(versionOf(netip.PrefixFrom(addr, 0))), addr); p != nil {
		if cidr := netip.PrefixFrom(addr, p.BlockSize).Masked(); !m.loaded[cidr] {
			m.inferred[cidr] = true
		}
	}
	return nil
}

// SettleObserved gives the blocks known only from observed addresses the
// free list their history left: a free address below the highest one in
// use was handed out and released before, and a release puts an address
// at the end of the block's Unallocated list (ipam_block.go release and
// garbageCollect), so it is reused only after every address never handed
// out. The gaps go to the end in address order. Call it once the observed
// addresses and the tunnel addresses are recorded, before new pods.
// Blocks read from IPAMBlock objects keep their own list.
func (m *IPAM) SettleObserved() {
	for cidr := range m.inferred {
		if b, ok := m.blocks[cidr]; ok && !m.loaded[cidr] {
			b.deferGaps()
		}
	}
}

// EnsureWindowsBlock is calico-node's startup on a Windows node with the
// vxlan or windows-bgp backend: make sure the node owns a block, created
// with the Windows reservations (node/pkg/lifecycle/startup/startup_windows.go).
func (m *IPAM) EnsureWindowsBlock(node string) (netip.Prefix, error) {
	return m.EnsureBlock(BlockArgs{Host: node, Reserved: WindowsReserved(), OS: OSWindows})
}

// VXLANTunnelAddress returns the node's IPv4 VXLAN tunnel address,
// allocating it when needed, for a node that records none.
//
// Linux: TunnelAddress with AttrTypeVXLAN; on a fresh node this claims the
// node's first block and takes its first ordinal, e.g. 172.21.70.192 of
// 172.21.70.192/26.
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
	return m.TunnelAddress(node, AttrTypeVXLAN, netip.Addr{})
}

// TunnelTypes are the IPv4 tunnel addresses calico-node on Linux reconciles,
// in its order (node/pkg/allocateip/allocateip.go reconcileTunnelAddrs;
// WireGuard is not modelled).
var TunnelTypes = []string{AttrTypeIPIP, AttrTypeVXLAN}

// TunnelHandle is calico-node's handle for a node's tunnel address of the
// given type (allocateip.go generateHandleAndAttributes).
func TunnelHandle(node, attrType string) string {
	if attrType == AttrTypeIPIP {
		return IPIPTunnelHandle(node)
	}
	return VXLANTunnelHandle(node)
}

// IPIPTunnelHandle is calico-node's handle for a node's IPIP tunnel address.
func IPIPTunnelHandle(node string) string { return "ipip-tunnel-addr-" + node }

// tunnelAttrs are the attributes of a tunnel allocation.
func tunnelAttrs(node, attrType string) map[string]string {
	return map[string]string{AttrNode: node, AttrType: attrType}
}

// tunnelPools is determineEnabledPoolCIDRs (allocateip.go): the IPv4 pools,
// in name order, that allow the Tunnel use, select the node, are not
// disabled and have the encapsulation (ipipMode or vxlanMode Always or
// CrossSubnet). The Allocatable condition is not looked at here; AutoAssign
// then refuses a pool GetEnabledPools skipped.
func (m *IPAM) tunnelPools(n Node, attrType string) []netip.Prefix {
	var cidrs []netip.Prefix
	for _, p := range m.pools {
		if p.Disabled || p.version() != 4 || !p.allows(UseTunnel) || !p.selectsNode(n.Labels) {
			continue
		}
		mode := p.VXLANMode
		if attrType == AttrTypeIPIP {
			mode = p.IPIPMode
		}
		if mode == "Always" || mode == "CrossSubnet" {
			cidrs = append(cidrs, p.CIDR)
		}
	}
	return cidrs
}

// TunnelAddress is what calico-node on a Linux node does for one tunnel
// type at startup (allocateip.go ensureHostTunnelAddress and
// removeHostTunnelAddr), given the address the node records (zero for
// none). It returns the address the node records afterwards: zero when no
// pool asks for that tunnel (any old allocation is released), the current
// one when it is still this node's allocation of that type in one of the
// pools, and otherwise a new one from an auto-assign over those pools with
// handle "<type>-tunnel-addr-<node>", after the old one (if it was ours) is
// released. That is how a pool migration moves the tunnel address: once
// the old pool is disabled, the address is no longer in a valid pool.
func (m *IPAM) TunnelAddress(node, attrType string, current netip.Addr) (netip.Addr, error) {
	n, err := m.node(node)
	if err != nil {
		return netip.Addr{}, err
	}
	handle := TunnelHandle(node, attrType)
	if !current.IsValid() {
		// An input may leave out the Node's annotation while IPAM records
		// the allocation: the handle's address stands for what the Node
		// recorded (upstream would release it and assign a new one).
		if held := m.IPsByHandle(handle); len(held) > 0 {
			current = held[0]
		}
	}
	cidrs := m.tunnelPools(n, attrType)
	if len(cidrs) == 0 {
		// removeHostTunnelAddr: release by handle; an address without
		// handle and attributes is an old tunnel address and is released too.
		if m.ReleaseByHandle(handle) == 0 && current.IsValid() {
			if o, ok := m.Lookup(current); ok && !o.Cooldown && len(o.Attrs) == 0 && o.Handle == "" {
				m.ReleaseIPs(current)
			}
		}
		return netip.Addr{}, nil
	}
	release := !current.IsValid()
	if current.IsValid() {
		o, ok := m.Lookup(current) // GetAssignmentAttributes
		switch {
		case !ok || o.Cooldown:
			release = true // not assigned: assign a new one
		case o.Attrs[AttrType] == attrType && o.Attrs[AttrNode] == node:
			if slices.ContainsFunc(cidrs, func(c netip.Prefix) bool { return c.Contains(current) }) {
				return current, nil
			}
			release = true // wrong pool: release it and reassign
		case len(o.Attrs) == 0 && o.Handle == "":
			// An old tunnel address without metadata: re-assigned to the
			// handle (correctAllocationWithHandle), else a new one.
			m.ReleaseIPs(current)
			err := m.AssignIP(AssignIPArgs{IP: current, Handle: handle, Attrs: tunnelAttrs(node, attrType), Host: node})
			if err == nil {
				return current, nil
			}
		}
		// Otherwise the address belongs to something else: a new one.
	}
	if release {
		m.ReleaseByHandle(handle)
	}
	ia, err := m.AutoAssign(AutoAssignArgs{
		Num: 1, Handle: handle, Host: node, Pools: cidrs, Use: UseTunnel,
		Attrs: tunnelAttrs(node, attrType),
	})
	if err != nil {
		return netip.Addr{}, err
	}
	if err := ia.PartialFulfillmentError(); err != nil {
		return netip.Addr{}, err
	}
	return ia.IPs[0], nil
}
