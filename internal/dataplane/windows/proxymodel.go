package windows

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// proxyModel is what kube-proxy (winkernel, K8s pkg/proxy/winkernel/proxier.go
// syncProxyRules) decides the same way on every Windows node: each service
// port with its backends, their provider addresses, and the plan of a node
// that holds none of them (no backend on it, none of its addresses, none
// routed through its block). A node plans anew only the ports that involve
// it (nodeProxy) and renders its HNS objects when they are read. Holding
// every node's objects is Θ(Windows nodes × (Services + endpoints)); the
// model is Θ(Services + endpoints), plus per node the ports that touch it.
// internal/dataplane/linux shares its kube-proxy model the same way.
type proxyModel struct {
	ports  []*proxyPort
	routes routeIndex
	// Which ports a node's plan may change: by the node an endpoint names,
	// by address (backends and ClusterIPs, for the node's own endpoints) and
	// by the node whose RemoteSubnetRoute gives a backend its provider
	// address (the node's own route is not on the node). Each list is in
	// port order, without repeats.
	byNode  map[string][]int
	byIP    map[string][]int
	byRoute map[string][]int
	// noted lists the ports whose shared plan carries notes, in order;
	// noPA those with a backend no route gives a provider address.
	noted, noPA []int
}

// proxyPort is one service port kube-proxy programs.
type proxyPort struct {
	svc      *corev1.Service
	name     string // namespace/name
	sp       corev1.ServicePort
	portName string
	// clusterIP is the service's first IPv4 ClusterIP.
	clusterIP  string
	targetPort int // the Service's number (0 when named); each backend walked replaces it
	proto      int
	// preserveDIP: the preserve-destination annotation; localDSR: ETP=Local;
	// internalLocal: ITP=Local; affinity: ClientIP session affinity.
	preserveDIP, localDSR, internalLocal, affinity bool
	ingressIPs                                     []string
	bes                                            []backend
	// pa and paNode are each backend's provider address by every block's
	// route ("" when none matches) and the node of that route.
	pa, paNode []string
	// base is the plan on a node the port does not involve.
	base *portPlan
}

// backend is one endpoint of a service port (proxy.Endpoint).
type backend struct {
	ip          string
	port        int32
	node        string
	hasNode     bool   // the endpoint names its node
	key         string // "ip:port", kube-proxy's sort key
	ready       bool
	serving     bool
	terminating bool
}

// portPlan is what one node's kube-proxy does with a service port: the
// backends it takes, which of them are local HNS endpoints, the source VIP
// rule and the load balancers, and what it reports.
type portPlan struct {
	use []int // indexes into bes, in order
	// pa overrides proxyPort.pa per use; nil when the shared one holds.
	pa []string
	// local are positions in use whose endpoint is local to the node.
	local      []int
	targetPort int
	// nodeVIP: a backend is a node IP or outside the cluster, so the load
	// balancers take the node IP as source VIP.
	nodeVIP bool
	lbs     []lbPlan
	notes   []planNote
}

type planNote struct {
	text string
	// once: the text is added only if the node has no such note yet.
	once    bool
	warning bool
}

// lbPlan is one load balancer of a port.
type lbPlan struct {
	kind      string
	vip       string
	extPort   int
	localOnly bool
	// flags; dsrFlag adds LBFlagDSR when the node runs with --enable-dsr.
	flags, pmFlags int
	dsrFlag        bool
}

// planCtx is the node a plan is for: node "" is the shared plan's node.
type planCtx struct {
	node string
	// pre are the node's HNS endpoints before kube-proxy's, by address:
	// true for local ones (pods, the source VIP), false for remote ones
	// (Calico_ep).
	pre map[string]bool
	// plan gives port j's plan on the node, for j before the port planned.
	plan func(j int) *portPlan
}

// newProxyModel derives every service port kube-proxy programs, in Services
// order, and their shared plans.
func newProxyModel(cx *compiler) *proxyModel {
	m := &proxyModel{byNode: map[string][]int{}, byIP: map[string][]int{}, byRoute: map[string][]int{}}
	for _, r := range cx.subnetRoutes().routes {
		if pfx, err := netip.ParsePrefix(r.DestinationPrefix); err == nil {
			m.routes.add(route{prefix: pfx, pa: r.ProviderAddress, node: r.Node})
		}
	}
	for _, svc := range cx.c.Services {
		m.service(cx, svc)
	}
	ctx := &planCtx{plan: func(j int) *portPlan { return m.ports[j].base }}
	for i, p := range m.ports {
		p.base = m.plan(ctx, i)
		if len(p.base.notes) > 0 {
			m.noted = append(m.noted, i)
		}
	}
	return m
}

// service adds a service's ports (syncProxyRules' loop over svcPortMap).
func (m *proxyModel) service(cx *compiler, svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return
	}
	if _, other := model.ServiceProxyName(svc); other {
		return // kube-proxy's informers never see it
	}
	clusterIP := ""
	for _, ip := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
		if a, err := netip.ParseAddr(ip); err == nil && a.Is4() {
			clusterIP = a.String()
			break
		}
	}
	if clusterIP == "" {
		return // the IPv4 proxier only programs IPv4 services
	}
	var ingressIPs []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if _, err := netip.ParseAddr(in.IP); err == nil {
			ingressIPs = append(ingressIPs, in.IP)
		}
	}
	for _, sp := range svc.Spec.Ports {
		p := &proxyPort{
			svc: svc, name: svc.Namespace + "/" + svc.Name, sp: sp, portName: sp.Name, clusterIP: clusterIP,
			proto:         protocolEnum(sp.Protocol),
			preserveDIP:   svc.Annotations["preserve-destination"] == "true",
			localDSR:      svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal,
			internalLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
			affinity:      svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP,
			ingressIPs:    ingressIPs,
		}
		if p.portName == "" {
			p.portName = strconv.Itoa(int(sp.Port))
		}
		if sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal > 0 {
			p.targetPort = sp.TargetPort.IntValue()
		}
		p.bes = backendsOf(cx.slicesBySvc[p.name], svc, sp)
		i := len(m.ports)
		m.ports = append(m.ports, p)
		m.touch(m.byIP, clusterIP, i)
		p.pa, p.paNode = make([]string, len(p.bes)), make([]string, len(p.bes))
		for b, be := range p.bes {
			m.touch(m.byIP, be.ip, i)
			if be.hasNode {
				m.touch(m.byNode, be.node, i)
			}
			if r := m.routes.lookup(be.ip, ""); r >= 0 {
				p.pa[b], p.paNode[b] = m.routes.all[r].pa, m.routes.all[r].node
				m.touch(m.byRoute, p.paNode[b], i)
			} else {
				m.noPA = appendPort(m.noPA, i)
			}
		}
	}
}

// touch adds port i to idx[k] once.
func (m *proxyModel) touch(idx map[string][]int, k string, i int) {
	idx[k] = appendPort(idx[k], i)
}

// appendPort adds port i to a list of ports in order, once (ports are
// added in order, so a repeat can only be the last).
func appendPort(l []int, i int) []int {
	if len(l) > 0 && l[len(l)-1] == i {
		return l
	}
	return append(l, i)
}

// backendsOf are the endpoints of one service port from its EndpointSlices,
// ordered by "ip:port" as kube-proxy's endpoints map sorts them
// (pkg/proxy/endpointslicecache.go endpointInfoByServicePort,
// endpointsMapFromEndpointInfo). A slice port belongs to the service port
// with its name and protocol; the API server defaults a slice port's
// protocol to TCP. Ready and serving default to true when unset
// (newEndpointSliceInfo).
func backendsOf(slices []*discoveryv1.EndpointSlice, svc *corev1.Service, sp corev1.ServicePort) []backend {
	seen := map[string]bool{}
	var out []backend
	for _, es := range slices {
		if es.Namespace != svc.Namespace || es.Labels[discoveryv1.LabelServiceName] != svc.Name || es.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var port *int32
		for _, p := range es.Ports {
			pn := ""
			if p.Name != nil {
				pn = *p.Name
			}
			proto := corev1.ProtocolTCP
			if p.Protocol != nil {
				proto = *p.Protocol
			}
			if pn == sp.Name && proto == orTCP(sp.Protocol) && p.Port != nil && *p.Port != 0 {
				port = p.Port
				break
			}
		}
		if port == nil {
			continue
		}
		for _, e := range es.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			key := e.Addresses[0] + ":" + strconv.Itoa(int(*port))
			if seen[key] {
				continue
			}
			seen[key] = true
			be := backend{
				ip: e.Addresses[0], port: *port, key: key,
				ready:       e.Conditions.Ready == nil || *e.Conditions.Ready,
				serving:     e.Conditions.Serving == nil || *e.Conditions.Serving,
				terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating,
			}
			if e.NodeName != nil {
				be.node, be.hasNode = *e.NodeName, true
			}
			out = append(out, be)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// touched lists, in order, the ports whose plan on a node may differ from
// the shared one: those naming the node, holding one of its endpoints'
// addresses, or routed through its block.
func (m *proxyModel) touched(node string, pre map[string]bool) []int {
	var out []int
	out = append(out, m.byNode[node]...)
	out = append(out, m.byRoute[node]...)
	for ip := range pre {
		out = append(out, m.byIP[ip]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// plan is syncProxyRules' loop body for port i on ctx's node: which backends
// the port takes (and which HNS endpoints it finds or creates for them), the
// source VIP and the load balancers, as proxier.go does them.
func (m *proxyModel) plan(ctx *planCtx, i int) *portPlan {
	p := m.ports[i]
	pl := &portPlan{targetPort: p.targetPort}
	local := func(be backend) bool { return ctx.node != "" && be.hasNode && be.node == ctx.node }
	allTerminating, allNonServing := false, false
	someServing, weighed := true, 0
	if len(p.ingressIPs) > 0 {
		allTerminating, allNonServing, weighed = terminatingState(p.bes, p.localDSR, local)
		someServing = !allNonServing
	}
	for b, be := range p.bes {
		isLocal := local(be)
		if p.internalLocal && p.localDSR && !isLocal {
			continue
		}
		if someServing {
			if !allTerminating && !be.ready {
				continue
			}
			if !be.serving {
				continue
			}
		}
		// The load balancer's internal port is the port of the last
		// backend walked, whatever the Service's targetPort says
		// (kubernetes#132647: "svcInfo.targetPort == 0 ||
		// svcInfo.targetPort != int(ep.port)"); one port serves all.
		pl.targetPort = int(be.port)
		// A local backend's endpoint is the node's own (or missing): its
		// provider address matters only for a remote one.
		pa := p.pa[b]
		if !isLocal {
			pa = m.providerAddress(ctx, p, b)
		}
		// endpointFor: an existing HNS endpoint with the address, else a
		// remote one kube-proxy creates — unless the backend is local.
		epLocal, exists := ctx.pre[be.ip]
		if !exists && isLocal && !m.made(ctx, i, be.ip, pl) {
			pl.notes = append(pl.notes, planNote{text: fmt.Sprintf("kube-proxy: local endpoint %s not found on network %s (a host-network backend on this node has no HNS endpoint)", be.ip, calicoNetwork), once: true, warning: true})
			continue
		}
		if !isLocal {
			// proxier.go: backends that are node IPs or outside the
			// cluster get the node IP as source VIP.
			pl.nodeVIP = pl.nodeVIP || be.ip == pa || pa == ""
		}
		if pa != p.pa[b] && pl.pa == nil {
			pl.pa = make([]string, len(pl.use), len(p.bes))
			for k, u := range pl.use {
				pl.pa[k] = p.pa[u]
			}
		}
		if pl.pa != nil {
			pl.pa = append(pl.pa, pa)
		}
		pl.use = append(pl.use, b)
		if epLocal {
			pl.local = append(pl.local, len(pl.use)-1)
		}
	}
	if len(pl.use) == 0 {
		pl.notes = append(pl.notes, planNote{text: fmt.Sprintf("service %s port %s has no usable endpoints: kube-proxy applies no policy", p.name, p.portName)})
		return pl
	}
	// endpointsAvailableForLB gates every load balancer but the ClusterIP
	// one (loadbalancer.go manageLoadbalancer).
	available := !allTerminating && !allNonServing
	if !available && weighed > 0 {
		pl.notes = append(pl.notes, planNote{text: fmt.Sprintf("service %s port %s: every endpoint kube-proxy weighs for external traffic is terminating or not serving, so it makes only the ClusterIP load balancer (a kube-proxy that made the others before keeps them where HNS can update load balancers: not known offline)", p.name, p.portName)})
	}
	hasLocal := len(pl.local) > 0
	add := func(kind, vip string, extPort int, localOnly bool, flags, pm int, dsrFlag bool) {
		pl.lbs = append(pl.lbs, lbPlan{kind: kind, vip: vip, extPort: extPort, localOnly: localOnly, flags: flags, pmFlags: pm, dsrFlag: dsrFlag})
	}
	// ClusterIP: every backend, or the local ones with ITP=Local; DSR per
	// --enable-dsr.
	if !p.internalLocal || hasLocal {
		add(LBClusterIP, p.clusterIP, int(p.sp.Port), p.internalLocal, 0, 0, true)
	}
	// NodePort: no frontend VIP; local backends only with
	// preserve-destination or ETP=Local.
	if p.sp.NodePort > 0 {
		lo := p.preserveDIP || p.localDSR
		if (!lo || hasLocal) && available {
			add(LBNodePort, "", int(p.sp.NodePort), lo, boolFlag(p.localDSR, LBFlagDSR), PortMappingVipExternalIP|PortMappingLocalRoutedVIP, false)
		}
	}
	for _, eip := range p.svc.Spec.ExternalIPs {
		if (!p.localDSR || hasLocal) && available {
			add(LBExternalIP, eip, int(p.sp.Port), p.localDSR, boolFlag(p.localDSR, LBFlagDSR), PortMappingVipExternalIP, false)
		}
	}
	for _, iip := range p.ingressIPs {
		lo := p.preserveDIP || p.localDSR
		pm := PortMappingVipExternalIP
		if p.preserveDIP {
			pm |= PortMappingUseMux | PortMappingPreserveDIP
		}
		if (!lo || hasLocal) && available {
			add(LBIngressIP, iip, int(p.sp.Port), lo, boolFlag(lo, LBFlagDSR), pm, false)
		}
	}
	return pl
}

// providerAddress is findRemoteSubnetProviderAddress on ctx's node, whose
// own block has no route there.
func (m *proxyModel) providerAddress(ctx *planCtx, p *proxyPort, b int) string {
	if ctx.node == "" || p.paNode[b] != ctx.node {
		return p.pa[b]
	}
	if r := m.routes.lookup(p.bes[b].ip, ctx.node); r >= 0 {
		return m.routes.all[r].pa
	}
	return ""
}

// paOf is the provider address of the k-th backend pl uses.
func (p *proxyPort) paOf(pl *portPlan, k int) string {
	if pl.pa != nil {
		return pl.pa[k]
	}
	return p.pa[pl.use[k]]
}

// clusterIPBy reports whether a port up to i has ip as its ClusterIP (and so
// an HNS endpoint for it).
func (m *proxyModel) clusterIPBy(ip string, i int) bool {
	for _, j := range m.byIP[ip] {
		if j > i {
			break
		}
		if m.ports[j].clusterIP == ip {
			return true
		}
	}
	return false
}

// made reports whether kube-proxy has an HNS endpoint for ip on ctx's node
// when it reaches port i: a ClusterIP endpoint or a backend's remote one
// made by an earlier port (or earlier in this one, pl).
func (m *proxyModel) made(ctx *planCtx, i int, ip string, pl *portPlan) bool {
	if m.clusterIPBy(ip, i) {
		return true
	}
	p := m.ports[i]
	for _, u := range pl.use {
		if p.bes[u].ip == ip {
			return true
		}
	}
	for _, j := range m.byIP[ip] {
		if j >= i {
			break
		}
		q := m.ports[j]
		for _, u := range ctx.plan(j).use {
			if q.bes[u].ip == ip {
				return true
			}
		}
	}
	return false
}

// terminatingState is isAllEndpointsTerminating and isAllEndpointsNonServing,
// which ignore remote backends with ETP=Local (KEP-1669); weighed counts the
// backends they look at.
func terminatingState(bes []backend, localDSR bool, local func(backend) bool) (allTerminating, allNonServing bool, weighed int) {
	allTerminating, allNonServing = true, true
	for _, be := range bes {
		if localDSR && !local(be) {
			continue
		}
		weighed++
		if be.serving {
			allNonServing = false
		}
		if !be.ready && !be.terminating {
			continue
		}
		if !be.terminating {
			allTerminating = false
		}
	}
	return
}

// routeIndex finds the remote subnet route findRemoteSubnetProviderAddress
// finds: the last one (in the network's order) that contains an address or
// has it as provider address. Routes are indexed by prefix (one entry per
// prefix length in bits) and by provider address, each to the position of
// the last such route; scanning every route per backend made a node's load
// balancers O(backends × nodes).
type routeIndex struct {
	all    []route
	byPfx  map[netip.Prefix]int
	bits   []int
	byPA   map[string]int
	unmask []int // routes whose prefix has host bits set
}

type route struct {
	prefix netip.Prefix
	pa     string
	node   string
}

func (ri *routeIndex) add(r route) {
	if ri.byPfx == nil {
		ri.byPfx, ri.byPA = map[netip.Prefix]int{}, map[string]int{}
	}
	i := len(ri.all)
	ri.all = append(ri.all, r)
	ri.byPfx[r.prefix] = i
	ri.byPA[r.pa] = i
	if !slices.Contains(ri.bits, r.prefix.Bits()) {
		ri.bits = append(ri.bits, r.prefix.Bits())
	}
	if r.prefix != r.prefix.Masked() {
		// A prefix with host bits set is found by a.Prefix only if it
		// equals its masked form: such routes are checked one by one.
		ri.unmask = append(ri.unmask, i)
	}
}

// lookup is the index of the route for ip, skipping node skip's routes (a
// node's network has every block's route but its own); -1 when none.
func (ri *routeIndex) lookup(ip, skip string) int {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return -1
	}
	last := -1
	if i, ok := ri.byPA[ip]; ok {
		last = i
	}
	for _, bits := range ri.bits {
		if p, err := a.Prefix(bits); err == nil {
			if i, ok := ri.byPfx[p]; ok && i > last {
				last = i
			}
		}
	}
	for _, i := range ri.unmask {
		if i > last && ri.all[i].prefix.Contains(a) {
			last = i
		}
	}
	if last >= 0 && skip != "" && ri.all[last].node == skip {
		// The index keeps only the last route per key: scan the rest.
		for i := last - 1; i >= 0; i-- {
			r := ri.all[i]
			if r.node != skip && (r.prefix.Contains(a) || r.pa == ip) {
				return i
			}
		}
		return -1
	}
	return last
}

// orTCP is a protocol with the API server's default.
func orTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}
