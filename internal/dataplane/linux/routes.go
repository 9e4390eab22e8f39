package linux

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// routes derives the node's main routing table. The routes come in five
// groups, in this order before sorting (routeTo relies on it): the default
// route, the prefix route, the local blocks' blackholes, the local
// workloads, the remote blocks and the borrowed addresses.
func (cc *clusterCtx) routes(ni *nodeInfo, n *Node, nic string, hasVXLAN bool, fc felixCfg) []Route {
	var rs []Route
	if r, ok := cc.defaultRoute(ni, nic); ok {
		rs = append(rs, r)
	}
	if r, ok := cc.prefixRoute(ni, nic); ok {
		rs = append(rs, r)
	}
	for _, b := range cc.blocks {
		if b.node != ni.name {
			continue
		}
		rs = append(rs, cc.blackholeRoute(ni, b))
	}
	for _, p := range ni.pods {
		if r, ok := workloadRoute(ni, p); ok {
			rs = append(rs, r)
		}
	}
	// Remote blocks: the L3 route resolver (felix/calc/l3_route_resolver.go)
	// emits one route per remote affine block; the VXLAN manager programs it
	// via the owner's VTEP (vxlan_mgr.go tunnelRoute) unless the pool is
	// CrossSubnet and the owner shares this node's subnet, in which case the
	// route manager programs a direct route (route_mgr.go noEncapRoute).
	// In IPIP pools BIRD programs them (remoteRoute).
	for _, b := range cc.blocks {
		if b.node == "" || b.node == ni.name {
			continue
		}
		if r, ok := cc.remoteRoute(ni, n, b.cidr, b.node, nic, hasVXLAN, fc, "remote IPAM block"); ok {
			rs = append(rs, r)
		}
	}
	for _, p := range cc.borrowed {
		if r, ok := cc.borrowedRoute(ni, n, p, nic, hasVXLAN, fc); ok {
			rs = append(rs, r)
		}
	}
	cc.ipipNotes(ni, n, fc)
	sortRoutes(rs)
	return rs
}

// ipipNotes say, once per IPIP pool, why the node has no routes to the
// other nodes' blocks in it when it has none: nothing programs them.
func (cc *clusterCtx) ipipNotes(ni *nodeInfo, n *Node, fc felixCfg) {
	for _, pl := range cc.pools {
		if pl.ipipMode == calico.ModeNever || !cc.remoteBlocksIn(pl, ni.name) {
			continue
		}
		switch {
		case pl.vxlanMode != calico.ModeNever:
			n.note(areaRoutes, "IP pool %s sets both ipipMode and vxlanMode, which Calico refuses: its blocks are routed as VXLAN here", pl.cidr)
		case cc.felixRoutesIPIP:
			n.note(areaRoutes, "FelixConfiguration default has Felix program the routes to IPIP pool %s (programClusterRoutes), which the twin does not model: they are left out", pl.cidr)
		case !cc.bgp:
			n.note(areaRoutes, "IP pool %s uses IPIP but BGP is off: BIRD, which programs the routes to IPIP pools, does not run, so this node has no route to the other nodes' blocks in it", pl.cidr)
		case fc.ipipOff:
			n.note(areaRoutes, "FelixConfiguration sets ipipEnabled false: no %s, so BIRD's routes to the other nodes' blocks in IPIP pool %s cannot be programmed", ipipDevice, pl.cidr)
		}
	}
}

// remoteBlocksIn reports whether pool pl holds a block of a node other
// than name.
func (cc *clusterCtx) remoteBlocksIn(pl pool, name string) bool {
	for _, b := range cc.blocks {
		if b.node != "" && b.node != name && pl.cidr.Contains(b.cidr.Addr()) {
			return true
		}
	}
	return false
}

// IPIPPools are the IP pools, as "name (cidr)", that use IPIP (and not
// VXLAN) and hold blocks of two nodes or more: traffic between those
// nodes goes through tunl0.
func IPIPPools(c *model.Cluster) []string {
	blocks := readBlocks(c)
	var out []string
	for _, pl := range readPools(c) {
		if pl.ipipMode == calico.ModeNever || pl.vxlanMode != calico.ModeNever {
			continue
		}
		nodes := map[string]bool{}
		for _, b := range blocks {
			if b.node != "" && pl.cidr.Contains(b.cidr.Addr()) {
				nodes[b.node] = true
			}
		}
		if len(nodes) > 1 {
			out = append(out, fmt.Sprintf("%s (%s)", pl.name, pl.cidr))
		}
	}
	return out
}

// FelixRoutedIPIPPools are IPIPPools when the default FelixConfiguration
// has Felix, not BIRD, program the cluster's routes (programClusterRoutes),
// which the twin does not model: the nodes' tables leave those routes out.
func FelixRoutedIPIPPools(c *model.Cluster) []string {
	if !felixRoutesIPIP(c) {
		return nil
	}
	return IPIPPools(c)
}

// felixRoutesIPIP reads programClusterRoutes of the default
// FelixConfiguration: Enabled or EnabledIPIPOnly has Felix program the
// routes to IPIP pools.
func felixRoutesIPIP(c *model.Cluster) bool {
	for _, fc := range c.FelixConfigs {
		if v := fc.Spec.ProgramClusterRoutes; fc.Name == "default" && v != nil && (*v == "Enabled" || *v == "EnabledIPIPOnly") {
			return true
		}
	}
	return false
}

// defaultRoute: netplan writes "routes: - to: default via: <gw>";
// systemd-networkd installs it with RTPROT_STATIC.
func (cc *clusterCtx) defaultRoute(ni *nodeInfo, nic string) (Route, bool) {
	if !cc.gateway.IsValid() || !ni.ip.IsValid() {
		return Route{}, false
	}
	return Route{Type: RouteUnicast, Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: cc.gateway, Dev: nic,
		Proto: "static", Owner: "netplan",
		Why: "the node's default route (netplan/systemd-networkd, RTPROT_STATIC)"}, true
}

// prefixRoute is net/ipv4/fib_frontend.c fib_add_ifaddr: the prefix route
// of an interface address, proto kernel, scope link, preferred source.
func (cc *clusterCtx) prefixRoute(ni *nodeInfo, nic string) (Route, bool) {
	if !ni.ip.IsValid() || ni.subnet.Bits() >= 32 {
		return Route{}, false
	}
	return Route{Type: RouteUnicast, Dst: ni.subnet.Masked(), Dev: nic, Proto: "kernel", Scope: "link",
		Src: ni.ip, Owner: "kernel", Why: fmt.Sprintf("prefix route of %s on %s (fib_add_ifaddr)", netip.PrefixFrom(ni.ip, ni.subnet.Bits()), nic)}, true
}

// blackholeRoute is a local block's route: felix/dataplane/linux/route_mgr.go
// blackholeRoutes, one blackhole per local IPAM block, RTN_BLACKHOLE with
// DefaultRouteProto 80. With BGP and a pool Felix does not route (IPIP or
// no encapsulation) BIRD owns the blackhole instead (proto bird).
func (cc *clusterCtx) blackholeRoute(ni *nodeInfo, b block) Route {
	pl, _ := cc.poolOf(b.cidr)
	proto, owner, why := felixRouteProto, "felix", "blackhole for the node's own IPAM block (route_mgr.go blackholeRoutes)"
	if cc.bgp && pl.vxlanMode == calico.ModeNever {
		proto, owner, why = "bird", "bird", "blackhole BIRD exports for the node's own block (confd bird.cfg static route)"
	}
	return Route{Type: RouteBlackhole, Dst: b.cidr, Proto: proto, Owner: owner, Why: why, Node: ni.name}
}

// workloadRoute is a local workload's route: felix/dataplane/linux/
// endpoint_mgr.go routes each workload's /32 to its cali interface, scope
// link, priority IPv4NormalRoutePriority (1024); the CNI plugin's
// metric-less route is replaced when Felix takes the interface over.
func workloadRoute(ni *nodeInfo, p *corev1.Pod) (Route, bool) {
	ip, _ := netip.ParseAddr(p.Status.PodIP)
	if !ip.Is4() {
		return Route{}, false
	}
	return Route{Type: RouteUnicast, Dst: netip.PrefixFrom(ip, 32), Dev: VethName(p.Namespace, p.Name),
		Scope: "link", Metric: workloadRouteMetric, Owner: "felix",
		Why:  "route to a local workload (endpoint_mgr.go, IPv4NormalRoutePriority)",
		Node: ni.name, Pod: p.Namespace + "/" + p.Name}, true
}

// borrowedRoute: a pod whose address sits in another node's block gets a
// /32 to its own node.
func (cc *clusterCtx) borrowedRoute(ni *nodeInfo, n *Node, p *corev1.Pod, nic string, hasVXLAN bool, fc felixCfg) (Route, bool) {
	if p.Spec.NodeName == ni.name {
		return Route{}, false
	}
	ip, _ := netip.ParseAddr(p.Status.PodIP)
	if !ip.Is4() {
		return Route{}, false
	}
	r, ok := cc.remoteRoute(ni, n, netip.PrefixFrom(ip, 32), p.Spec.NodeName, nic, hasVXLAN, fc, "borrowed address of "+p.Namespace+"/"+p.Name)
	if ok {
		r.Pod = p.Namespace + "/" + p.Name
	}
	return r, ok
}

// remoteRoute is the route to dst, which lives on node owner.
func (cc *clusterCtx) remoteRoute(ni *nodeInfo, n *Node, dst netip.Prefix, owner, nic string, hasVXLAN bool, fc felixCfg, what string) (Route, bool) {
	on := cc.byName[owner]
	if on == nil {
		n.note(areaRoutes, "%s %s is affine to %s, which is not a node: no route", what, dst, owner)
		return Route{}, false
	}
	pl, ok := cc.poolOf(dst)
	if !ok {
		return Route{}, false
	}
	sameSubnet := on.calico.IsValid() && ni.subnet.Masked().Contains(on.calico)
	direct := func(proto, who, why string) Route {
		return Route{Type: RouteUnicast, Dst: dst, Via: on.calico, Dev: nic, Proto: proto, OnLink: proto == felixRouteProto,
			Owner: who, Why: why, Node: owner}
	}
	switch {
	case pl.ipipMode != calico.ModeNever && pl.vxlanMode == calico.ModeNever:
		return cc.ipipRoute(pl, on, dst, nic, sameSubnet, fc, what)
	case pl.vxlanMode == calico.ModeAlways || (pl.vxlanMode == calico.ModeCrossSubnet && !sameSubnet):
		if !hasVXLAN {
			n.note(areaRoutes, "%s %s needs VXLAN but this node has no %s", what, dst, vxlanDevice)
			return Route{}, false
		}
		if on.vtep == nil {
			n.note(areaRoutes, "%s %s: %s has no VTEP yet, so Felix holds the route back (vxlan_mgr.go tunnelRoute)", what, dst, owner)
			return Route{}, false
		}
		// routetable TargetTypeVXLAN: gateway the owner's tunnel address,
		// RTNH_F_ONLINK, the VXLAN MTU, DeviceRouteProtocol (boot).
		return Route{Type: RouteUnicast, Dst: dst, Via: on.vtep.tunnel, Dev: vxlanDevice, OnLink: true, MTU: fc.mtu,
			Owner: "felix", Why: fmt.Sprintf("%s of %s via its VTEP (vxlan_mgr.go tunnelRoute)", what, owner), Node: owner}, true
	case pl.vxlanMode == calico.ModeCrossSubnet && sameSubnet:
		// routetable TargetTypeNoEncap: gateway the owner's address on
		// the parent device, RTNH_F_ONLINK, proto 80.
		return direct(felixRouteProto, "felix", fmt.Sprintf("%s of %s in this subnet, unencapsulated (route_mgr.go noEncapRoute)", what, owner)), true
	case !sameSubnet:
		n.note(areaRoutes, "%s %s of %s is in an unencapsulated pool across subnets: no route", what, dst, owner)
		return Route{}, false
	case cc.bgp:
		return direct("bird", "bird", fmt.Sprintf("%s of %s learned over BGP from its BIRD", what, owner)), true
	default:
		return direct(felixRouteProto, "felix", fmt.Sprintf("%s of %s in this subnet, unencapsulated (route_mgr.go noEncapRoute)", what, owner)), true
	}
}

// ipipRoute is BIRD's route to dst in IPIP pool pl, learned from its
// owner on over BGP: calico-node's confd template bird_ipam.cfg sets
// krt_tunnel to tunl0 for the pool (with CrossSubnet only when the BGP
// next hop is outside this node's subnet), and BIRD installs a tunnel
// route onlink via the owner's address. Without BGP, with Felix programming the
// cluster routes (not modelled) or without tunl0 there is none
// (ipipNotes says why).
func (cc *clusterCtx) ipipRoute(pl pool, on *nodeInfo, dst netip.Prefix, nic string, sameSubnet bool, fc felixCfg, what string) (Route, bool) {
	if !cc.bgp || cc.felixRoutesIPIP {
		return Route{}, false
	}
	if pl.ipipMode == calico.ModeCrossSubnet && sameSubnet {
		return Route{Type: RouteUnicast, Dst: dst, Via: on.calico, Dev: nic, Proto: "bird", Owner: "bird",
			Why: fmt.Sprintf("%s of %s in this subnet, learned over BGP from its BIRD (IPIP CrossSubnet: no tunnel)", what, on.name), Node: on.name}, true
	}
	if !fc.ipip {
		return Route{}, false
	}
	return Route{Type: RouteUnicast, Dst: dst, Via: on.calico, Dev: ipipDevice, Proto: "bird", OnLink: true, Owner: "bird",
		Why: fmt.Sprintf("%s of %s learned over BGP from its BIRD, through %s (bird_ipam.cfg krt_tunnel)", what, on.name, ipipDevice), Node: on.name}, true
}
