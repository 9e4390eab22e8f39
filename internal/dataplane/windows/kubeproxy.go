package windows

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// kubeProxyConfig is what kube-proxy (winkernel) runs with on the node.
type kubeProxyConfig struct {
	dsr                   bool
	sourceVIP             string
	forwardHealthCheckVIP bool
	networkName           string
}

// kubeProxy finds kube-proxy on the node and plans what its syncProxyRules
// creates (K8s pkg/proxy/winkernel/proxier.go): a remote endpoint per
// ClusterIP and per backend on another node, and the load balancers. The
// objects are made when read (renderKubeProxy).
func (nb *nodeBuild) kubeProxy() {
	pod := nb.kubeProxyPod()
	if pod == nil {
		nb.out.KubeProxyDown = "kube-proxy does not run on the node: no load balancers and no kube-proxy remote endpoints"
		nb.out.Notes = append(nb.out.Notes, nb.out.KubeProxyDown)
		return
	}
	cfg := nb.kubeProxyFlags(pod)
	if cfg.networkName == "" {
		// getNetworkName (pkg/proxy/winkernel/proxier.go, NewProxier): the
		// flag, else KUBE_NETWORK, else kube-proxy exits at start.
		nb.out.KubeProxyDown = noNetworkName
		nb.out.Warnings = append(nb.out.Warnings, noNetworkName)
		return
	}
	if !strings.EqualFold(cfg.networkName, calicoNetwork) {
		nb.out.KubeProxyDown = fmt.Sprintf("kube-proxy's network %q is not the Calico HNS network: it waits for it forever", cfg.networkName)
		nb.out.Warnings = append(nb.out.Warnings, nb.out.KubeProxyDown)
		return
	}
	if cfg.sourceVIP == "" {
		nb.out.KubeProxyDown = "kube-proxy: source-vip flag not set (required on Overlay networks)"
		nb.out.Warnings = append(nb.out.Warnings, nb.out.KubeProxyDown)
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
	nb.kp = &nodeProxy{m: nb.cx.proxy(), cfg: cfg, plans: map[int]*portPlan{}}
	nb.planPorts(nb.kp)
	if cfg.forwardHealthCheckVIP {
		nb.out.Notes = append(nb.out.Notes, "kube-proxy --forward-healthcheck-vip: the root HNS endpoint (cbr0) does not exist on a Calico node, so no health-check load balancers")
	}
}

// noNetworkName is the warning of a kube-proxy that knows no HNS network.
const noNetworkName = `kube-proxy exits at start: neither --network-name nor the KUBE_NETWORK environment variable is set ("Environment variable KUBE_NETWORK and network-flag not initialized"): no load balancers and no kube-proxy remote endpoints`

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
// KubeProxyConfiguration's winkernel section fills the rest. Without
// start.ps1 the network is --network-name, the configuration's networkName
// or the container's KUBE_NETWORK, else none.
func (nb *nodeBuild) kubeProxyFlags(p *corev1.Pod) kubeProxyConfig {
	var cfg kubeProxyConfig
	startPS1 := false
	var args []string
	env := ""
	for _, c := range p.Spec.Containers {
		args = append(append(args, c.Command...), c.Args...)
		for _, e := range c.Env {
			if e.Name == "KUBE_NETWORK" {
				env = e.Value
				if e.ValueFrom != nil {
					// A reference the twin does not resolve: taken to name
					// the Calico network.
					env = calicoNetwork
				}
			}
		}
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
	if cfg.networkName == "" {
		cfg.networkName = env
	}
	if startPS1 {
		cfg.networkName = calicoNetwork
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

// nodeProxy is kube-proxy on one node: its flags, and its own plans for the
// ports that involve the node; every other port follows the shared plan.
type nodeProxy struct {
	m     *proxyModel
	cfg   kubeProxyConfig
	plans map[int]*portPlan
}

// plan is port i's plan on the node.
func (kp *nodeProxy) plan(i int) *portPlan {
	if pl, ok := kp.plans[i]; ok {
		return pl
	}
	return kp.m.ports[i].base
}

// planPorts plans the ports that involve the node, in order (a plan may
// look at earlier ports' plans), and adds kube-proxy's notes and warnings
// in port order.
func (nb *nodeBuild) planPorts(kp *nodeProxy) {
	pre := make(map[string]bool, len(nb.byIP))
	for ip, ep := range nb.byIP {
		pre[ip] = !ep.IsRemoteEndpoint
	}
	ctx := &planCtx{node: nb.n.Name, pre: pre, plan: kp.plan}
	touched := kp.m.touched(nb.n.Name, pre)
	for _, i := range touched {
		kp.plans[i] = kp.m.plan(ctx, i)
	}
	ports := append(append(slices.Clone(touched), kp.m.noted...), kp.m.noPA...)
	slices.Sort(ports)
	once := map[string]bool{}
	add := func(n planNote) {
		if n.once {
			if once[n.text] {
				return
			}
			once[n.text] = true
		}
		if n.warning {
			nb.out.Warnings = append(nb.out.Warnings, n.text)
		} else {
			nb.out.Notes = append(nb.out.Notes, n.text)
		}
	}
	for _, i := range slices.Compact(ports) {
		p, pl := kp.m.ports[i], kp.plan(i)
		// A backend without a provider address is noted where kube-proxy
		// creates its endpoint: its first use on the node, unless the
		// node already has an endpoint with the address.
		for k, b := range pl.use {
			ip := p.bes[b].ip
			if _, ok := pre[ip]; !ok && p.paOf(pl, k) == "" && !kp.m.clusterIPBy(ip, i) {
				add(planNote{text: fmt.Sprintf("kube-proxy: no provider address for %s, assuming it is a public IP (PA = node IP)", ip), once: true})
			}
		}
		for _, n := range pl.notes {
			add(n)
		}
	}
}

// renderKubeProxy makes the HNS objects of the node's plans, in the order
// kube-proxy creates them: per service port the ClusterIP's remote
// endpoint, the backends' remote endpoints (MAC conjured from "02-11" and
// the address, "not sent on the wire"; PA = the RemoteSubnetRoute's provider
// address, or the node IP when none matches), then the load balancers.
func (nb *nodeBuild) renderKubeProxy() {
	kp, out := nb.kp, nb.out
	seen := map[string]bool{}
	for i, p := range kp.m.ports {
		if _, ok := nb.byIP[p.clusterIP]; !ok {
			// The ClusterIP as a remote endpoint with the host MAC and PA =
			// node IP, once per ClusterIP (svcInfo.remoteEndpoint).
			nb.addEndpoint(&Endpoint{
				ID: hnsID(nb.n.Name + "/remote-endpoint/" + p.clusterIP), VirtualNetwork: nb.calico.ID, VirtualNetworkName: nb.calico.Name,
				IPAddress: p.clusterIP, MacAddress: goMAC(out.HostMAC), IsRemoteEndpoint: true, State: 1,
				Policies: []EndpointPolicy{{Type: PolicyPA, PA: out.Address}}, Kind: KindClusterIP, Owner: "kube-proxy",
			})
		}
		pl := kp.plan(i)
		if len(pl.use) == 0 {
			continue
		}
		eps := make([]*Endpoint, len(pl.use))
		ips := make([]string, len(pl.use))
		for k, b := range pl.use {
			be := p.bes[b]
			ep, ok := nb.byIP[be.ip]
			if !ok {
				pa := p.paOf(pl, k)
				if pa == "" {
					pa = out.Address
				}
				ep = &Endpoint{
					ID: hnsID(nb.n.Name + "/remote-endpoint/" + be.ip), VirtualNetwork: nb.calico.ID, VirtualNetworkName: nb.calico.Name,
					IPAddress: be.ip, MacAddress: macFrom(remoteMACPrefix, netip.MustParseAddr(be.ip).As4()),
					IsRemoteEndpoint: true, State: 1,
					Policies: []EndpointPolicy{{Type: PolicyPA, PA: pa}}, Kind: KindRemote, Owner: "kube-proxy", Node: be.node,
				}
				nb.addEndpoint(ep)
			}
			eps[k], ips[k] = ep, be.ip
		}
		sourceVIP := kp.cfg.sourceVIP
		if pl.nodeVIP {
			sourceVIP = out.Address
		}
		dist := DistributionNone
		if p.affinity {
			dist = DistributionSourceIP
		}
		for _, l := range pl.lbs {
			sel, selIPs := eps, ips
			if l.localOnly {
				sel, selIPs = make([]*Endpoint, len(pl.local)), make([]string, len(pl.local))
				for k, u := range pl.local {
					sel[k], selIPs[k] = eps[u], ips[u]
				}
			}
			flags := l.flags
			if l.dsrFlag {
				flags |= boolFlag(kp.cfg.dsr, LBFlagDSR)
			}
			nb.loadBalancer(seen, &LoadBalancer{
				SourceVIP: sourceVIP, Protocol: p.proto, InternalPort: pl.targetPort, ExternalPort: l.extPort,
				DistributionType: dist, PortMappingFlags: l.pmFlags, Flags: flags,
				Service: p.name, PortName: p.portName, Kind: l.kind, Backends: selIPs,
			}, l.vip, sel)
		}
	}
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

// loadBalancer creates (or reuses, for the same identifier) an HNS load
// balancer (hns.go getLoadBalancer) and reports the VFP destination limit.
// seen holds the identifiers of the node's load balancers so far.
func (nb *nodeBuild) loadBalancer(seen map[string]bool, lb *LoadBalancer, vip string, eps []*Endpoint) {
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
	if seen[key] {
		return
	}
	seen[key] = true
	if vip != "" {
		lb.FrontendVIPs = []string{vip}
	}
	lb.EndpointIDs = ids
	lb.ID = hnsID(nb.n.Name + "/loadbalancer/" + lb.Service + "/" + lb.PortName + "/" + string(lb.Kind) + "/" + vip)
	if n := len(ids); n > maxVFPLBTarget {
		lb.Warnings = append(lb.Warnings, fmt.Sprintf("%d backends: a VFP load balancer rule takes at most %d destinations on Windows Server 2019 (hcnCreateLoadBalancer: \"Unable to initialize VFP LB rule: invalid number of destinations\", kubernetes/kubernetes#98680); later builds raise the limit — not applied here", n, maxVFPLBTarget))
	}
	nb.out.lbs = append(nb.out.lbs, lb)
}

// KubeProxyNotes are kube-proxy's notes and warnings on one service port
// ("ns/name", the port's name or number) on the node.
func (n *Node) KubeProxyNotes(service, portName string) []string {
	prefix := "service " + service + " port " + portName
	var out []string
	for _, s := range append(slices.Clone(n.Warnings), n.Notes...) {
		if rest, ok := strings.CutPrefix(s, prefix); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ":")) {
			out = append(out, s)
		}
	}
	return out
}
