package windows

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kubeProxyConfig is what kube-proxy (winkernel) runs with on the node.
type kubeProxyConfig struct {
	dsr                   bool
	sourceVIP             string
	forwardHealthCheckVIP bool
	networkName           string
}

// kubeProxy finds kube-proxy on the node and builds what its syncProxyRules
// creates (K8s pkg/proxy/winkernel/proxier.go): a remote endpoint per
// ClusterIP and per backend on another node, and the load balancers.
func (nb *nodeBuild) kubeProxy() {
	pod := nb.kubeProxyPod()
	if pod == nil {
		nb.out.Notes = append(nb.out.Notes, "kube-proxy does not run on the node: no load balancers and no kube-proxy remote endpoints")
		return
	}
	cfg := nb.kubeProxyFlags(pod)
	if cfg.networkName != "" && !strings.EqualFold(cfg.networkName, calicoNetwork) {
		nb.out.Warnings = append(nb.out.Warnings, fmt.Sprintf("kube-proxy's network %q is not the Calico HNS network: it waits for it forever", cfg.networkName))
		return
	}
	if cfg.sourceVIP == "" {
		nb.out.Warnings = append(nb.out.Warnings, "kube-proxy: source-vip flag not set (required on Overlay networks)")
		return
	}
	nb.out.KubeProxy, nb.out.DSR, nb.out.SourceVIP = true, cfg.dsr, cfg.sourceVIP
	if _, ok := nb.byIP[cfg.sourceVIP]; !ok {
		// newSourceVIP: a local endpoint with the source VIP, the host MAC
		// and PA = node IP (start.ps1's source VIP is Calico_ep, which exists).
		ep := &Endpoint{
			ID: hnsID(nb.n.Name + "/endpoint/source-vip/" + cfg.sourceVIP), VirtualNetwork: nb.calico.ID, VirtualNetworkName: nb.calico.Name,
			IPAddress: cfg.sourceVIP, MacAddress: goMAC(nb.out.HostMAC), State: 1,
			Policies: []EndpointPolicy{{Type: PolicyPA, PA: nb.out.Address}}, Kind: KindHost, Owner: "kube-proxy",
		}
		nb.addEndpoint(ep)
	}
	kp := &proxier{nb: nb, cfg: cfg, lbs: map[string]*LoadBalancer{}}
	for _, p := range nb.calico.Policies {
		if pfx, err := netip.ParsePrefix(p.DestinationPrefix); err == nil && p.Type == PolicyRemoteSubnetRoute {
			kp.routes = append(kp.routes, route{pfx, p.ProviderAddress})
		}
	}
	kp.indexRoutes()
	for _, svc := range nb.cx.c.Services {
		kp.service(svc)
	}
	if cfg.forwardHealthCheckVIP {
		nb.out.Notes = append(nb.out.Notes, "kube-proxy --forward-healthcheck-vip: the root HNS endpoint (cbr0) does not exist on a Calico node, so no health-check load balancers")
	}
}

// kubeProxyPod is a running kube-proxy-windows pod on the node.
func (nb *nodeBuild) kubeProxyPod() *corev1.Pod {
	for _, p := range nb.cx.podsByNode[nb.n.Name] {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, o := range p.OwnerReferences {
			if o.Kind == "DaemonSet" && o.Name == kubeProxyWindowsName {
				return p
			}
		}
		if strings.HasPrefix(p.Name, kubeProxyWindowsName+"-") && p.Namespace == "kube-system" {
			return p
		}
	}
	return nil
}

// kubeProxyFlags reads the container's kube-proxy flags. The sig-windows-tools
// start.ps1 (hostprocess/calico/kube-proxy) always adds --enable-dsr=true,
// takes --source-vip from Calico_ep's address and sets KUBE_NETWORK=Calico;
// explicit flags in the pod override that, then the kubeadm
// KubeProxyConfiguration's winkernel section fills the rest.
func (nb *nodeBuild) kubeProxyFlags(p *corev1.Pod) kubeProxyConfig {
	cfg := kubeProxyConfig{networkName: calicoNetwork}
	startPS1 := false
	var args []string
	for _, c := range p.Spec.Containers {
		args = append(append(args, c.Command...), c.Args...)
	}
	if p.Spec.Containers == nil {
		// A pod stub without a spec: the lab's DaemonSet runs start.ps1.
		startPS1 = true
	}
	for _, a := range args {
		if strings.Contains(a, "start.ps1") {
			startPS1 = true
		}
	}
	if kc := nb.cx.c.Kubeadm.KubeProxy; kc != nil && !startPS1 {
		cfg.dsr = kc.Winkernel.EnableDSR
		cfg.sourceVIP = kc.Winkernel.SourceVip
		cfg.forwardHealthCheckVIP = kc.Winkernel.ForwardHealthCheckVip
		if kc.Winkernel.NetworkName != "" {
			cfg.networkName = kc.Winkernel.NetworkName
		}
	}
	if startPS1 {
		cfg.dsr = true
		if nb.hostEP != nil {
			cfg.sourceVIP = nb.hostEP.IPAddress
		}
	}
	for _, a := range args {
		k, v, hasV := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") {
			continue
		}
		switch k {
		case "enable-dsr":
			cfg.dsr = !hasV || v == "true"
		case "source-vip":
			cfg.sourceVIP = v
		case "forward-healthcheck-vip":
			cfg.forwardHealthCheckVIP = !hasV || v == "true"
		case "network-name":
			cfg.networkName = v
		}
	}
	return cfg
}

// proxier is one node's kube-proxy sync.
type proxier struct {
	nb  *nodeBuild
	cfg kubeProxyConfig
	// lbs is the load balancer cache by identifier (protocol, ports, VIP,
	// backend set), as hns.go findLoadBalancerID keys it.
	lbs map[string]*LoadBalancer
	// routes are the network's remote subnet routes, parsed once.
	routes []route
	// routeIdx finds routes for providerAddress: by prefix (one entry per
	// prefix length in routeBits) and by provider address, each to the
	// position of the last such route in routes. Scanning every route per
	// backend made a node's load balancers O(backends × nodes).
	routeIdx  map[netip.Prefix]int
	routeBits []int
	routeByPA map[string]int
	// unmaskedIdx lists routes whose prefix has host bits set (see
	// unmasked); nil until first asked.
	unmaskedIdx []int
}

type route struct {
	prefix netip.Prefix
	pa     string
}

// backend is one endpoint of a service port (proxy.Endpoint).
type backend struct {
	ip          string
	port        int32
	local       bool
	node        string
	hasNode     bool   // the endpoint names its node
	key         string // "ip:port", kube-proxy's sort key
	ready       bool
	serving     bool
	terminating bool
}

// service programs every port of a service (syncProxyRules' loop body).
func (kp *proxier) service(svc *corev1.Service) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return
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
	nb := kp.nb
	name := svc.Namespace + "/" + svc.Name
	preserveDIP := svc.Annotations["preserve-destination"] == "true"
	localTrafficDSR := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	internalLocal := svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
	affinity := svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP
	var ingressIPs []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if _, err := netip.ParseAddr(in.IP); err == nil {
			ingressIPs = append(ingressIPs, in.IP)
		}
	}
	for _, sp := range svc.Spec.Ports {
		// The ClusterIP as a remote endpoint with the host MAC and PA = node
		// IP, once per ClusterIP (svcInfo.remoteEndpoint).
		if _, ok := nb.byIP[clusterIP]; !ok {
			nb.addEndpoint(&Endpoint{
				ID: hnsID(nb.n.Name + "/remote-endpoint/" + clusterIP), VirtualNetwork: nb.calico.ID, VirtualNetworkName: nb.calico.Name,
				IPAddress: clusterIP, MacAddress: goMAC(nb.out.HostMAC), IsRemoteEndpoint: true, State: 1,
				Policies: []EndpointPolicy{{Type: PolicyPA, PA: nb.out.Address}}, Kind: KindClusterIP, Owner: "kube-proxy",
			})
		}
		bes := kp.backends(svc, sp)
		allTerminating, allNonServing := false, false
		someServing := true
		if len(ingressIPs) > 0 {
			allTerminating, allNonServing = terminatingState(bes, localTrafficDSR)
			someServing = !allNonServing
		}
		targetPort := 0
		if sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal > 0 {
			targetPort = sp.TargetPort.IntValue()
		}
		var eps, local []*Endpoint
		var ips, localIPs []string
		containsNodeIP, containsPublicIP := false, false
		for _, be := range bes {
			if internalLocal && localTrafficDSR && !be.local {
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
			if targetPort == 0 {
				// Named target port: the first endpoint's port serves all.
				targetPort = int(be.port)
			}
			ep := kp.endpointFor(be)
			if ep == nil {
				continue
			}
			if !be.local {
				pa := kp.providerAddress(be.ip)
				containsNodeIP = containsNodeIP || be.ip == pa
				containsPublicIP = containsPublicIP || pa == ""
			}
			eps = append(eps, ep)
			ips = append(ips, be.ip)
			if !ep.IsRemoteEndpoint {
				local = append(local, ep)
				localIPs = append(localIPs, be.ip)
			}
		}
		portName := sp.Name
		if portName == "" {
			portName = strconv.Itoa(int(sp.Port))
		}
		if len(eps) == 0 {
			nb.out.Notes = append(nb.out.Notes, fmt.Sprintf("service %s port %s has no usable endpoints: kube-proxy applies no policy", name, portName))
			continue
		}
		sourceVIP := kp.cfg.sourceVIP
		if containsNodeIP || containsPublicIP {
			// proxier.go: backends that are node IPs or outside the cluster
			// get the node IP as source VIP.
			sourceVIP = nb.out.Address
		}
		dist := DistributionNone
		if affinity {
			dist = DistributionSourceIP
		}
		proto := protocolEnum(sp.Protocol)
		available := !allTerminating && !allNonServing
		mk := func(kind, vip string, extPort int, sel []*Endpoint, selIPs []string, flags, pmFlags int) {
			kp.loadBalancer(&LoadBalancer{
				SourceVIP: sourceVIP, Protocol: proto, InternalPort: targetPort, ExternalPort: extPort,
				DistributionType: dist, PortMappingFlags: pmFlags, Flags: flags,
				Service: name, PortName: portName, Kind: kind, Backends: selIPs,
			}, vip, sel)
		}
		// ClusterIP: every backend, or the local ones with ITP=Local; DSR
		// per --enable-dsr.
		cipEPs, cipIPs := eps, ips
		if internalLocal {
			cipEPs, cipIPs = local, localIPs
		}
		if len(cipEPs) > 0 {
			mk(LBClusterIP, clusterIP, int(sp.Port), cipEPs, cipIPs, boolFlag(kp.cfg.dsr, LBFlagDSR), 0)
		}
		// NodePort: no frontend VIP; local backends only with
		// preserve-destination or ETP=Local.
		if sp.NodePort > 0 {
			sel, selIPs := eps, ips
			if preserveDIP || localTrafficDSR {
				sel, selIPs = local, localIPs
			}
			if len(sel) > 0 && available {
				mk(LBNodePort, "", int(sp.NodePort), sel, selIPs, boolFlag(localTrafficDSR, LBFlagDSR), PortMappingVipExternalIP|PortMappingLocalRoutedVIP)
			}
		}
		for _, eip := range svc.Spec.ExternalIPs {
			sel, selIPs := eps, ips
			if localTrafficDSR {
				sel, selIPs = local, localIPs
			}
			if len(sel) > 0 && available {
				mk(LBExternalIP, eip, int(sp.Port), sel, selIPs, boolFlag(localTrafficDSR, LBFlagDSR), PortMappingVipExternalIP)
			}
		}
		for _, iip := range ingressIPs {
			sel, selIPs := eps, ips
			if preserveDIP || localTrafficDSR {
				sel, selIPs = local, localIPs
			}
			pm := PortMappingVipExternalIP
			if preserveDIP {
				pm |= PortMappingUseMux | PortMappingPreserveDIP
			}
			if len(sel) > 0 {
				mk(LBIngressIP, iip, int(sp.Port), sel, selIPs, boolFlag(preserveDIP || localTrafficDSR, LBFlagDSR), pm)
			}
		}
	}
}

// backends are the endpoints of one service port from its EndpointSlices,
// ordered by "ip:port" as kube-proxy's endpoints map sorts them. They are
// the same on every node but for which are local, so the compiler derives
// them once per service port (under the Compiler's lock) and each node
// marks its own.
func (kp *proxier) backends(svc *corev1.Service, sp corev1.ServicePort) []backend {
	cx := kp.nb.cx
	key := svc.Namespace + "/" + svc.Name + "\x00" + sp.Name
	all, ok := cx.backendCache[key]
	if !ok {
		all = kp.clusterBackends(svc, sp)
		if cx.backendCache == nil {
			cx.backendCache = map[string][]backend{}
		}
		cx.backendCache[key] = all
	}
	if all == nil {
		return nil
	}
	out := make([]backend, len(all))
	for i, be := range all {
		be.local = be.hasNode && be.node == kp.nb.n.Name
		out[i] = be
	}
	return out
}

// clusterBackends is backends without the local marks.
func (kp *proxier) clusterBackends(svc *corev1.Service, sp corev1.ServicePort) []backend {
	seen := map[string]bool{}
	var out []backend
	for _, es := range kp.nb.cx.slicesBySvc[svc.Namespace+"/"+svc.Name] {
		if es.Namespace != svc.Namespace || es.Labels[discoveryv1.LabelServiceName] != svc.Name || es.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		var port *int32
		for _, p := range es.Ports {
			pn := ""
			if p.Name != nil {
				pn = *p.Name
			}
			if pn == sp.Name && p.Port != nil {
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
			ready := e.Conditions.Ready == nil || *e.Conditions.Ready
			be := backend{
				ip: e.Addresses[0], port: *port, ready: ready, serving: ready,
				terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating,
			}
			if e.Conditions.Serving != nil {
				be.serving = *e.Conditions.Serving
			}
			if e.NodeName != nil {
				be.node, be.hasNode = *e.NodeName, true
			}
			be.key = key
			out = append(out, be)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// terminatingState is isAllEndpointsTerminating and isAllEndpointsNonServing,
// which ignore remote backends with ETP=Local (KEP-1669).
func terminatingState(bes []backend, localDSR bool) (allTerminating, allNonServing bool) {
	allTerminating, allNonServing = true, true
	for _, be := range bes {
		if localDSR && !be.local {
			continue
		}
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

// endpointFor finds the HNS endpoint of a backend, creating kube-proxy's
// remote endpoint for one on another node: MAC conjured from "02-11" and the
// address, PA = the RemoteSubnetRoute's provider address, or the node IP
// when none matches ("assuming it is a public IP").
func (kp *proxier) endpointFor(be backend) *Endpoint {
	nb := kp.nb
	if ep, ok := nb.byIP[be.ip]; ok {
		return ep
	}
	if be.local {
		nb.out.Warnings = appendOnce(nb.out.Warnings, fmt.Sprintf("kube-proxy: local endpoint %s not found on network %s (a host-network backend on this node has no HNS endpoint)", be.ip, calicoNetwork))
		return nil
	}
	pa := kp.providerAddress(be.ip)
	if pa == "" {
		nb.out.Notes = appendOnce(nb.out.Notes, fmt.Sprintf("kube-proxy: no provider address for %s, assuming it is a public IP (PA = node IP)", be.ip))
		pa = nb.out.Address
	}
	a := netip.MustParseAddr(be.ip).As4()
	ep := &Endpoint{
		ID: hnsID(nb.n.Name + "/remote-endpoint/" + be.ip), VirtualNetwork: nb.calico.ID, VirtualNetworkName: nb.calico.Name,
		IPAddress:  be.ip,
		MacAddress: macFrom(remoteMACPrefix, a),
		// conjureMac: "not sent on the wire".
		IsRemoteEndpoint: true, State: 1,
		Policies: []EndpointPolicy{{Type: PolicyPA, PA: pa}}, Kind: KindRemote, Owner: "kube-proxy", Node: be.node,
	}
	nb.addEndpoint(ep)
	return ep
}

// providerAddress is findRemoteSubnetProviderAddress: the PA of the remote
// subnet route containing ip, or whose PA is ip; "" when none.
func (kp *proxier) providerAddress(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	// The last route (in routes order) that contains a or has ip as its
	// PA, as a scan keeping the last match finds it. A route's prefix is
	// unmasked when the network policy gives it so: such a route is found
	// by a.Prefix only if it equals its masked form, so unmasked ones are
	// checked one by one.
	last := -1
	if i, ok := kp.routeByPA[ip]; ok {
		last = i
	}
	for _, bits := range kp.routeBits {
		if p, err := a.Prefix(bits); err == nil {
			if i, ok := kp.routeIdx[p]; ok && i > last {
				last = i
			}
		}
	}
	for _, i := range kp.unmasked() {
		if i > last && kp.routes[i].prefix.Contains(a) {
			last = i
		}
	}
	if last < 0 {
		return ""
	}
	return kp.routes[last].pa
}

// indexRoutes builds providerAddress's indexes of routes.
func (kp *proxier) indexRoutes() {
	kp.routeIdx, kp.routeByPA = map[netip.Prefix]int{}, map[string]int{}
	for i, r := range kp.routes {
		kp.routeIdx[r.prefix] = i
		kp.routeByPA[r.pa] = i
		if !slices.Contains(kp.routeBits, r.prefix.Bits()) {
			kp.routeBits = append(kp.routeBits, r.prefix.Bits())
		}
	}
}

// unmasked lists the routes whose prefix has host bits set.
func (kp *proxier) unmasked() []int {
	if kp.unmaskedIdx == nil {
		kp.unmaskedIdx = []int{}
		for i, r := range kp.routes {
			if r.prefix != r.prefix.Masked() {
				kp.unmaskedIdx = append(kp.unmaskedIdx, i)
			}
		}
	}
	return kp.unmaskedIdx
}

// loadBalancer creates (or reuses, for the same identifier) an HNS load
// balancer (hns.go getLoadBalancer) and reports the VFP destination limit.
func (kp *proxier) loadBalancer(lb *LoadBalancer, vip string, eps []*Endpoint) {
	nb := kp.nb
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	// fmt.Sprintf("%d/%d/%d/%s/%s", …) spelled out: one per service port
	// and node.
	var kb strings.Builder
	kb.WriteString(strconv.Itoa(lb.Protocol))
	kb.WriteByte('/')
	kb.WriteString(strconv.Itoa(lb.InternalPort))
	kb.WriteByte('/')
	kb.WriteString(strconv.Itoa(lb.ExternalPort))
	kb.WriteByte('/')
	kb.WriteString(vip)
	kb.WriteByte('/')
	for i, id := range sorted {
		if i > 0 {
			kb.WriteByte(',')
		}
		kb.WriteString(id)
	}
	key := kb.String()
	if _, ok := kp.lbs[key]; ok {
		return
	}
	if vip != "" {
		lb.FrontendVIPs = []string{vip}
	}
	lb.EndpointIDs = ids
	lb.ID = hnsID(nb.n.Name + "/loadbalancer/" + lb.Service + "/" + lb.PortName + "/" + string(lb.Kind) + "/" + vip)
	if n := len(ids); n > maxVFPLBTarget {
		lb.Warnings = append(lb.Warnings, fmt.Sprintf("%d backends: a VFP load balancer rule takes at most %d destinations on Windows Server 2019 (hcnCreateLoadBalancer: \"Unable to initialize VFP LB rule: invalid number of destinations\", kubernetes/kubernetes#98680); later builds raise the limit — not applied here", n, maxVFPLBTarget))
	}
	kp.lbs[key] = lb
	nb.out.LoadBalancers = append(nb.out.LoadBalancers, lb)
}

// protocolEnum is proxier.go Enum.
func protocolEnum(p corev1.Protocol) int {
	switch p {
	case corev1.ProtocolUDP:
		return 17
	case corev1.ProtocolSCTP:
		return 132
	}
	return 6
}

func boolFlag(b bool, f int) int {
	if b {
		return f
	}
	return 0
}
