package ipam

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// PodRequest is what the Calico CNI plugin knows at CNI ADD for a pod.
type PodRequest struct {
	Node, Handle string
	Attrs        map[string]string
	// NamespaceLabels are the labels of the pod's namespace (pools'
	// namespaceSelector); nil when the namespace is unknown.
	NamespaceLabels map[string]string
	// PodAnnotations and NamespaceAnnotations are read for
	// calico.AnnotationIPv4Pools and calico.AnnotationIPAddrs.
	PodAnnotations, NamespaceAnnotations map[string]string
}

// AssignPodRequest is CNI ADD with Calico IPAM for a pod
// (cni-plugin/pkg/k8s/k8s.go CmdAddK8s, pkg/ipamplugin/ipam_plugin.go):
//   - cni.projectcalico.org/ipAddrs (a JSON list with at most one IPv4 and
//     one IPv6 address) asks for exactly that address: AssignIP with the
//     Workload use, which claims the address's block for the node when the
//     block does not exist yet (no host reservations are passed on this
//     path, on Windows either);
//   - otherwise cni.projectcalico.org/ipv4pools (a JSON list of pool names
//     or CIDRs; the pod's annotation wins over its namespace's) restricts
//     the auto-assign to those pools, ignoring their node and namespace
//     selectors, after utils.ResolvePools turned names into CIDRs;
//   - otherwise the pools that select both the node and the namespace.
//
// Errors carry the plugin's text.
func (m *IPAM) AssignPodRequest(r PodRequest) (netip.Addr, error) {
	n, err := m.node(r.Node)
	if err != nil {
		return netip.Addr{}, err
	}
	if s := r.PodAnnotations[calico.AnnotationIPAddrs]; s != "" {
		ips, err := parseIPAddrs(s)
		if err != nil {
			return netip.Addr{}, err
		}
		var out netip.Addr
		for _, ip := range ips {
			err := m.AssignIP(AssignIPArgs{IP: ip, Handle: r.Handle, Attrs: r.Attrs, Host: r.Node, Use: UseWorkload, OS: n.OS()})
			if err != nil {
				return netip.Addr{}, fmt.Errorf("error getting IP from IPAM: %s", err)
			}
			if ip.Is4() || !out.IsValid() {
				out = ip
			}
		}
		return out, nil
	}
	v4pools := r.NamespaceAnnotations[calico.AnnotationIPv4Pools]
	if p := r.PodAnnotations[calico.AnnotationIPv4Pools]; p != "" {
		v4pools = p
	}
	var pools []netip.Prefix
	if v4pools != "" {
		var names []string
		if err := json.Unmarshal([]byte(v4pools), &names); err != nil {
			return netip.Addr{}, err
		}
		if pools, err = m.ResolvePools(names, true); err != nil {
			return netip.Addr{}, err
		}
	}
	args := AutoAssignArgs{Num: 1, Handle: r.Handle, Attrs: r.Attrs, Host: r.Node, Use: UseWorkload, OS: n.OS(),
		Pools: pools, NamespaceLabels: r.NamespaceLabels}
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

// ResolvePools turns pool names or CIDRs into CIDRs
// (cni-plugin/internal/pkg/utils/utils.go ResolvePools): a value that
// parses as a CIDR is taken as it is; otherwise it must name a pool,
// enabled or not (AutoAssign then refuses a pool that is not enabled).
func (m *IPAM) ResolvePools(names []string, v4 bool) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range names {
		_, ipnet, perr := net.ParseCIDR(s)
		var cidr netip.Prefix
		if perr == nil {
			a, _ := netip.AddrFromSlice(ipnet.IP)
			ones, _ := ipnet.Mask.Size()
			cidr = netip.PrefixFrom(a.Unmap(), ones)
		} else {
			for _, p := range m.pools {
				if p.Name == s {
					cidr = p.CIDR
				}
			}
			if !cidr.IsValid() {
				return nil, fmt.Errorf("error parsing pool %q: %s", s, perr)
			}
		}
		if v4 && !cidr.Addr().Is4() {
			return nil, fmt.Errorf("%q isn't a IPv4 address", cidr.Addr().String())
		}
		if !v4 && cidr.Addr().Is4() {
			return nil, fmt.Errorf("%q isn't a IPv6 address", cidr.Addr().String())
		}
		out = append(out, cidr)
	}
	return out, nil
}

// parseIPAddrs is validateAndExtractIPs of cni-plugin/pkg/k8s/k8s.go: a
// JSON list, not empty, with at most one address per family.
func parseIPAddrs(s string) ([]netip.Addr, error) {
	var raw []string
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("failed to parse IPs %s for annotation %q: failed to parse '%s' as JSON: %s", s, calico.AnnotationIPAddrs, s, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("annotation %q specified but empty", calico.AnnotationIPAddrs)
	}
	var has4, has6 bool
	var out []netip.Addr
	for _, r := range raw {
		ip := net.ParseIP(r)
		if ip == nil {
			return nil, fmt.Errorf("invalid IP format: %s", r)
		}
		a, _ := netip.AddrFromSlice(ip)
		a = a.Unmap()
		if a.Is4() {
			if has4 {
				return nil, fmt.Errorf("cannot have more than one IPv4 address for %q annotation", calico.AnnotationIPAddrs)
			}
			has4 = true
		} else {
			if has6 {
				return nil, fmt.Errorf("cannot have more than one IPv6 address for %q annotation", calico.AnnotationIPAddrs)
			}
			has6 = true
		}
		out = append(out, a)
	}
	return out, nil
}
