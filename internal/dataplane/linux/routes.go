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
	// The routes to IPIP pools are BIRD's (via tunl0), which the twin does
	// not model: they are counted per pool and said once.
	var ipip unmodelledIPIP
	for _, b := range cc.blocks {
		if b.node == "" || b.node == ni.name {
			continue
		}
		if cc.skipIPIP(&ipip, b.cidr, "blocks") {
			continue
		}
		if r, ok := cc.remoteRoute(ni, n, b.cidr, b.node, nic, hasVXLAN, fc, "remote IPAM block"); ok {
			rs = append(rs, r)
		}
	}
	for _, p := range cc.borrowed {
		if ip, err := netip.ParseAddr(p.Status.PodIP); err == nil && p.Spec.NodeName != ni.name && cc.skipIPIP(&ipip, netip.PrefixFrom(ip, ip.BitLen()), "borrowed addresses") {
			continue
		}
		if r, ok := cc.borrowedRoute(ni, n, p, nic, hasVXLAN, fc); ok {
			rs = append(rs, r)
		}
	}
	for _, u := range ipip {
		n.note(areaRoutes, "%d %s of other nodes in IPIP pool %s have no route here: the twin does not model IPIP, whose routes BIRD programs via tunl0", u.count, u.what, u.pool)
	}
	sortRoutes(rs)
	return rs
}

// unmodelledIPIP counts, per pool and kind, the remote destinations in
// IPIP pools a node's table leaves out, in the order first met.
type unmodelledIPIP []ipipCount

type ipipCount struct {
	pool  netip.Prefix
	what  string
	count int
}

// skipIPIP reports whether dst is in an IPIP pool, counting it in u.
func (cc *clusterCtx) skipIPIP(u *unmodelledIPIP, dst netip.Prefix, what string) bool {
	pl, ok := cc.poolOf(dst)
	if !ok || pl.ipipMode == calico.ModeNever {
		return false
	}
	for i := range *u {
		if (*u)[i].pool == pl.cidr && (*u)[i].what == what {
			(*u)[i].count++
			return true
		}
	}
	*u = append(*u, ipipCount{pl.cidr, what, 1})
	return true
}

// UnroutedIPIPPools are the IP pools, as "name (cidr)", that use IPIP and
// hold blocks of two nodes or more: the routes between those nodes are
// BIRD's, via tunl0, which the twin does not model, so the nodes' tables
// leave them out (routes) and traces stop there (UnmodelledRoute).
func UnroutedIPIPPools(c *model.Cluster) []string {
	blocks := readBlocks(c)
	var out []string
	for _, pl := range readPools(c) {
		if pl.ipipMode == calico.ModeNever {
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

// UnmodelledRoute says why the twin cannot tell the route this node takes
// to dst, when it cannot: dst is in an IPIP pool and not on this node
// (BIRD routes it via tunl0, which the twin does not model).
func (n *Node) UnmodelledRoute(dst netip.Addr) (string, bool) {
	cc := n.cc
	if cc == nil {
		return "", false
	}
	pl, ok := cc.poolOf(netip.PrefixFrom(dst, dst.BitLen()))
	if !ok || pl.ipipMode == calico.ModeNever {
		return "", false
	}
	if b, ok := cc.blockOf(dst); !ok || b.node == n.Name || b.node == "" {
		return "", false // this node's block, or no block: the table says
	}
	if len(n.podsWithIP(dst)) > 0 {
		return "", false // a local pod's borrowed address
	}
	return fmt.Sprintf("%s is in IPIP pool %s on another node: the twin does not model IPIP, whose routes BIRD programs via tunl0", dst, pl.cidr), true
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
	case pl.ipipMode != calico.ModeNever:
		return Route{}, false // not modelled: see routes and UnmodelledRoute
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
