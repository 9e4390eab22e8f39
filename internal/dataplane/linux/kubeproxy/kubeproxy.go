// Package kubeproxy models kube-proxy's nftables proxier on each Linux
// node (pkg/proxy/nftables/proxier.go): the service ports and endpoints it
// reads once for the cluster, what each node programs for them, and the
// "table ip kube-proxy" it leaves after a full sync. The Linux dataplane
// (internal/dataplane/linux) holds one Node per Linux node.
package kubeproxy

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/nft"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Chain name prefixes and limits of the nftables proxier
// (pkg/proxy/nftables/proxier.go).
const (
	TableName          = "kube-proxy"
	kpChainNameBaseMax = 256 - 16 // knftables.NameLengthMax - chainNamePrefixLengthMax
	defaultMasqBit     = 14       // KubeProxyNFTablesConfiguration.MasqueradeBit default
	defaultServiceCIDR = "10.96.0.0/12"
)

// ServicePort is one service port as kube-proxy programs it on a node.
type ServicePort struct {
	Namespace string
	Name      string
	PortName  string
	Protocol  string // tcp, udp or sctp
	ClusterIP netip.Addr
	Port      int
	NodePort  int
	// ExternalIPs and LoadBalancerIPs lead to the external chain.
	ExternalIPs     []netip.Addr
	LoadBalancerIPs []netip.Addr
	// Chain is the cluster-policy chain ("service-<hash>-ns/name/proto/port").
	Chain string
	// Endpoints are the ready endpoints in the order of the numgen map
	// (sorted by "IP:port", proxy.EndpointsMap ordering).
	Endpoints []ServiceEndpoint
	// NoEndpoints is the verdict for the cluster IP when the service has no
	// usable endpoint: "goto reject-chain" or "drop"; empty otherwise.
	NoEndpoints string
}

// ServiceEndpoint is a backend of a service port.
type ServiceEndpoint struct {
	Addr  netip.AddrPort
	Node  string // spec.nodeName of the endpoint, if any
	Local bool   // on this node
}

// Cluster is the cluster-wide input of every node's proxier.
type Cluster struct {
	enabled      bool
	mode         string
	masqMark     uint32
	masqAll      bool
	localNFT     []string // ifNotLocal match of the local-traffic detector
	localIfNFT   []string // ifLocal match
	serviceCIDRs []netip.Prefix
	ports        []*svcPort
	Notes        []string
	// byVIP and byNodePort list positions in ports by cluster IP, port and
	// protocol, and by node port and protocol, so that a lookup is not a
	// scan of every service port of the cluster; built on first use.
	portIdx    sync.Once
	byVIP      map[vipKey][]int
	byNodePort map[vipKey][]int
}

// vipKey finds service ports: by cluster IP, port and protocol, or (with
// the zero address) by node port and protocol.
type vipKey struct {
	ip    netip.Addr
	port  int
	proto string
}

func (k *Cluster) index() {
	k.portIdx.Do(func() {
		k.byVIP, k.byNodePort = map[vipKey][]int{}, map[vipKey][]int{}
		for i, p := range k.ports {
			vk := vipKey{p.clusterIP, p.port, p.proto}
			k.byVIP[vk] = append(k.byVIP[vk], i)
			nk := vipKey{port: p.nodePort, proto: p.proto}
			k.byNodePort[nk] = append(k.byNodePort[nk], i)
		}
	})
}

type svcPort struct {
	ns, name, portName, proto string
	clusterIP                 netip.Addr
	port, nodePort            int
	externalIPs, lbIPs        []netip.Addr
	sourceRanges              []netip.Prefix
	etpLocal, itpLocal        bool
	affinity                  bool
	eps                       []kpEndpoint
	nameString, chainBase     string
	// service is "namespace/name", made once: TableOf looks every port's
	// up for every node it renders.
	service string
}

// kpEndpoint is an endpoint with the conditions CategorizeEndpoints reads.
type kpEndpoint struct {
	ServiceEndpoint
	ready, serving, terminating bool
}

// SameInputs reports whether NewCluster reads the same of a and b, so
// that one Cluster serves both: the kube-proxy configuration (equal), the
// kubeadm networking's pod and service subnets, and the same Services and
// EndpointSlices by pointer (a twin derived from another shares the
// objects it leaves alone). NewCluster reads nothing else (this file).
func SameInputs(a, b *model.Cluster) bool {
	if a == nil || b == nil {
		return false
	}
	if !slices.Equal(a.Services, b.Services) || !slices.Equal(a.EndpointSlices, b.EndpointSlices) ||
		!reflect.DeepEqual(a.Kubeadm.KubeProxy, b.Kubeadm.KubeProxy) {
		return false
	}
	ca, cb := a.Kubeadm.Cluster, b.Kubeadm.Cluster
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Networking.PodSubnet == cb.Networking.PodSubnet && ca.Networking.ServiceSubnet == cb.Networking.ServiceSubnet
}

// NewCluster reads the proxier's configuration and the cluster's service
// ports and endpoints once for every node.
func NewCluster(c *model.Cluster) *Cluster {
	k := &Cluster{masqMark: 1 << defaultMasqBit}
	kp := c.Kubeadm.KubeProxy
	if kp != nil {
		k.mode = string(kp.Mode)
	}
	if k.mode != "nftables" {
		k.Notes = append(k.Notes, fmt.Sprintf("kube-proxy runs in %q mode, not nftables: table ip kube-proxy is not programmed", orDefault(k.mode, "iptables")))
		return k
	}
	k.enabled = true
	if kp.NFTables.MasqueradeBit != nil {
		k.masqMark = 1 << uint(*kp.NFTables.MasqueradeBit)
	}
	k.masqAll = kp.NFTables.MasqueradeAll
	// The local-traffic detector (pkg/proxy/util/localdetector.go). kubeadm
	// fills clusterCIDR from networking.podSubnet
	// (cmd/kubeadm/app/componentconfigs/kubeproxy.go).
	cidr := kp.ClusterCIDR
	if cidr == "" && c.Kubeadm.Cluster != nil {
		cidr = c.Kubeadm.Cluster.Networking.PodSubnet
	}
	switch string(kp.DetectLocalMode) {
	case "", "ClusterCIDR":
		for _, s := range strings.Split(cidr, ",") {
			if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && p.Addr().Is4() {
				k.localNFT = []string{"ip", "saddr", "!=", p.Masked().String()}
				k.localIfNFT = []string{"ip", "saddr", p.Masked().String()}
				break
			}
		}
	case "InterfaceNamePrefix":
		if pfx := kp.DetectLocal.InterfaceNamePrefix; pfx != "" {
			k.localNFT = []string{"iifname", "!=", strconv.Quote(pfx + "*")}
			k.localIfNFT = []string{"iifname", strconv.Quote(pfx + "*")}
		}
	case "BridgeInterface":
		if br := kp.DetectLocal.BridgeInterface; br != "" {
			k.localNFT = []string{"iifname", "!=", strconv.Quote(br)}
			k.localIfNFT = []string{"iifname", strconv.Quote(br)}
		}
	default:
		k.Notes = append(k.Notes, fmt.Sprintf("detectLocalMode %s is not modelled: no local-traffic detector", kp.DetectLocalMode))
	}
	// kube-proxy reads the ServiceCIDR objects; the apiserver's default one
	// is --service-cluster-ip-range, kubeadm's networking.serviceSubnet.
	sub := defaultServiceCIDR
	if c.Kubeadm.Cluster != nil && c.Kubeadm.Cluster.Networking.ServiceSubnet != "" {
		sub = c.Kubeadm.Cluster.Networking.ServiceSubnet
	}
	for _, s := range strings.Split(sub, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && p.Addr().Is4() {
			k.serviceCIDRs = append(k.serviceCIDRs, p.Masked())
		}
	}
	slices := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range c.EndpointSlices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		slices[key] = append(slices[key], s)
	}
	for _, svc := range c.Services {
		k.addService(svc, slices[svc.Namespace+"/"+svc.Name])
	}
	sort.SliceStable(k.ports, func(i, j int) bool {
		a, b := k.ports[i], k.ports[j]
		if a.nameString != b.nameString {
			return a.nameString < b.nameString
		}
		return a.proto < b.proto
	})
	return k
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// addService turns a Service into service ports
// (pkg/proxy/servicechangetracker.go, serviceport.go).
func (k *Cluster) addService(svc *corev1.Service, slices []*discoveryv1.EndpointSlice) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	cip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil || !cip.Is4() {
		return // headless or not IPv4
	}
	if _, other := model.ServiceProxyName(svc); other {
		return // kube-proxy's informers never see it
	}
	for _, sp := range svc.Spec.Ports {
		p := &svcPort{ns: svc.Namespace, name: svc.Name, portName: sp.Name, proto: strings.ToLower(string(orProto(sp.Protocol))),
			clusterIP: cip, port: int(sp.Port), nodePort: int(sp.NodePort)}
		if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			p.nodePort = 0
		}
		for _, e := range svc.Spec.ExternalIPs {
			if a, err := netip.ParseAddr(strings.TrimSpace(e)); err == nil && a.Is4() {
				p.externalIPs = append(p.externalIPs, a)
			}
		}
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			for _, in := range svc.Status.LoadBalancer.Ingress {
				if a, err := netip.ParseAddr(in.IP); err == nil && a.Is4() {
					p.lbIPs = append(p.lbIPs, a)
				}
			}
			for _, r := range svc.Spec.LoadBalancerSourceRanges {
				if pr, err := netip.ParsePrefix(strings.TrimSpace(r)); err == nil && pr.Addr().Is4() {
					p.sourceRanges = append(p.sourceRanges, pr.Masked())
				}
			}
		}
		p.etpLocal = svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal && p.externallyAccessible()
		p.itpLocal = svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
		p.affinity = svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP
		if p.affinity {
			k.Notes = append(k.Notes, fmt.Sprintf("%s/%s has sessionAffinity ClientIP, which the twin renders without affinity", svc.Namespace, svc.Name))
		}
		// proxy.ServicePortName.String(): "ns/name" and ":port" if named.
		p.service = svc.Namespace + "/" + svc.Name
		p.nameString = p.service
		if sp.Name != "" {
			p.nameString += ":" + sp.Name
		}
		p.chainBase = HashAndTruncate(fmt.Sprintf("%s/%s/%s/%s", svc.Namespace, svc.Name, p.proto, sp.Name))
		p.eps = endpointsFor(slices, sp)
		k.ports = append(k.ports, p)
	}
}

func orProto(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// endpointsFor collects the endpoints of one service port from its
// EndpointSlices (pkg/proxy/endpointslicecache.go): the slice port with the
// service port's name and protocol (a slice port without one is TCP, the API
// server's default), each endpoint's first address with its conditions
// (ready and serving when unset, newEndpointSliceInfo), deduplicated and
// sorted by "IP:port" as proxy.EndpointsMap keeps them.
func endpointsFor(slices []*discoveryv1.EndpointSlice, sp corev1.ServicePort) []kpEndpoint {
	seen := map[netip.AddrPort]bool{}
	var out []kpEndpoint
	for _, s := range slices {
		for _, pp := range s.Ports {
			name := ""
			if pp.Name != nil {
				name = *pp.Name
			}
			proto := corev1.ProtocolTCP
			if pp.Protocol != nil {
				proto = *pp.Protocol
			}
			if name != sp.Name || proto != orProto(sp.Protocol) || pp.Port == nil || *pp.Port == 0 {
				continue
			}
			for _, e := range s.Endpoints {
				if len(e.Addresses) == 0 {
					continue
				}
				ip, err := netip.ParseAddr(e.Addresses[0])
				if err != nil || !ip.Is4() {
					continue
				}
				ap := netip.AddrPortFrom(ip, uint16(*pp.Port))
				if seen[ap] {
					continue
				}
				seen[ap] = true
				ep := kpEndpoint{ServiceEndpoint: ServiceEndpoint{Addr: ap},
					ready:       e.Conditions.Ready == nil || *e.Conditions.Ready,
					serving:     e.Conditions.Serving == nil || *e.Conditions.Serving,
					terminating: e.Conditions.Terminating != nil && *e.Conditions.Terminating}
				if e.NodeName != nil {
					ep.Node = *e.NodeName
				}
				out = append(out, ep)
			}
		}
	}
	// Ordered by "ip:port" as text, each endpoint's made once, not per
	// comparison.
	keyed := make([]struct {
		key string
		ep  kpEndpoint
	}, len(out))
	for i, ep := range out {
		keyed[i].key, keyed[i].ep = ep.Addr.String(), ep
	}
	sort.SliceStable(keyed, func(i, j int) bool { return keyed[i].key < keyed[j].key })
	for i := range keyed {
		out[i] = keyed[i].ep
	}
	return out
}

func (p *svcPort) externallyAccessible() bool {
	return p.nodePort != 0 || len(p.externalIPs) > 0 || len(p.lbIPs) > 0
}

// HashAndTruncate prefixes a name with 8 base32 characters of its SHA-256
// and cuts it to the chain-name budget (proxier.go hashAndTruncate).
func HashAndTruncate(name string) string {
	h := sha256.Sum256([]byte(name))
	name = base32.StdEncoding.EncodeToString(h[:])[:8] + "-" + name
	if len(name) > kpChainNameBaseMax {
		name = name[:kpChainNameBaseMax-3] + "..."
	}
	return name
}

// Node is one node's proxier state.
type Node struct {
	k      *Cluster
	node   string
	nodeIP netip.Addr
}

// ForNode is the proxier of the node with the name and address, nil when
// kube-proxy does not run in nftables mode.
func (k *Cluster) ForNode(name string, ip netip.Addr) *Node {
	if !k.enabled {
		return nil
	}
	return &Node{k: k, node: name, nodeIP: ip}
}

// portView is a service port seen from one node (proxy.CategorizeEndpoints
// without topology hints).
type portView struct {
	p                                      *svcPort
	cluster, local, reachable              []ServiceEndpoint
	hasEndpoints, hasInternal, hasExternal bool
	usesCluster, usesLocal, usesExternal   bool
	internalChain, externalChain           string
	internalVerdict, externalVerdict       string
	clusterChain, localChain, fwChain      string
	usesFirewall                           bool
}

// view is CategorizeEndpoints (pkg/proxy/topology.go) without topology:
// Ready endpoints, or, where there are none (for the cluster, then
// separately for the node's own), the serving terminating ones.
func (kn *Node) view(p *svcPort) portView {
	v := portView{p: p}
	usesClusterEps := !p.itpLocal || (p.externallyAccessible() && !p.etpLocal)
	usesLocalEps := p.itpLocal || p.etpLocal
	filter := func(keep func(e kpEndpoint) bool) []ServiceEndpoint {
		var out []ServiceEndpoint
		for _, e := range p.eps {
			if keep(e) {
				se := e.ServiceEndpoint
				se.Local = e.Node == kn.node
				out = append(out, se)
			}
		}
		return out
	}
	servingTerminating := func(e kpEndpoint) bool { return e.serving && e.terminating }
	if usesClusterEps {
		v.cluster = filter(func(e kpEndpoint) bool { return e.ready })
		if len(v.cluster) == 0 {
			v.cluster = filter(servingTerminating)
		}
		v.hasEndpoints = len(v.cluster) > 0
	}
	fallback := false
	if usesLocalEps {
		localReady, localST := false, false
		for _, e := range p.eps {
			if e.ready || servingTerminating(e) {
				v.hasEndpoints = true
				localReady = localReady || e.ready && e.Node == kn.node
				localST = localST || !e.ready && e.Node == kn.node
			}
		}
		switch {
		case localReady:
			v.local = filter(func(e kpEndpoint) bool { return e.Node == kn.node && e.ready })
		case localST:
			fallback = true
			v.local = filter(func(e kpEndpoint) bool { return e.Node == kn.node && servingTerminating(e) })
		}
	}
	switch {
	case !usesLocalEps:
		v.reachable = v.cluster
	case !usesClusterEps:
		v.reachable = v.local
	case !fallback:
		v.reachable = v.cluster
	default:
		// Both lists, merged by endpoint (local terminating ones are
		// not among the cluster's ready ones).
		seen := map[netip.AddrPort]bool{}
		for _, e := range append(append([]ServiceEndpoint(nil), v.cluster...), v.local...) {
			if !seen[e.Addr] {
				seen[e.Addr] = true
				v.reachable = append(v.reachable, e)
			}
		}
		sort.SliceStable(v.reachable, func(i, j int) bool { return v.reachable[i].Addr.String() < v.reachable[j].Addr.String() })
	}
	v.clusterChain = "service-" + p.chainBase
	v.localChain = "local-" + p.chainBase
	v.fwChain = "firewall-" + p.chainBase
	v.usesCluster = len(v.cluster) > 0 && usesClusterEps
	v.usesLocal = len(v.local) > 0 && usesLocalEps
	v.internalChain, v.hasInternal = v.clusterChain, v.hasEndpoints
	if p.itpLocal {
		v.internalChain, v.hasInternal = v.localChain, len(v.local) > 0
	}
	v.externalChain, v.hasExternal = "external-"+p.chainBase, v.hasEndpoints
	if p.etpLocal && len(v.local) == 0 {
		v.hasExternal = false
	}
	v.usesExternal = v.hasEndpoints && p.externallyAccessible()
	if !v.hasEndpoints {
		v.internalVerdict, v.externalVerdict = "goto reject-chain", "goto reject-chain"
	} else {
		if !v.hasInternal {
			v.internalVerdict = "drop"
		}
		if !v.hasExternal {
			v.externalVerdict = "drop"
		}
	}
	v.usesFirewall = len(p.lbIPs) > 0 && len(p.sourceRanges) > 0
	return v
}

// ServicePorts returns the service ports kube-proxy programs on the node,
// in the twin's ServicePortName order; nil when kube-proxy does not run in
// nftables mode.
func (kn *Node) ServicePorts() []ServicePort {
	if kn == nil {
		return nil
	}
	var out []ServicePort
	for _, p := range kn.k.ports {
		out = append(out, kn.servicePort(p))
	}
	return out
}

func (kn *Node) servicePort(p *svcPort) ServicePort {
	v := kn.view(p)
	sp := ServicePort{Namespace: p.ns, Name: p.name, PortName: p.portName, Protocol: p.proto, ClusterIP: p.clusterIP,
		Port: p.port, NodePort: p.nodePort, ExternalIPs: p.externalIPs, LoadBalancerIPs: p.lbIPs,
		Chain: v.clusterChain, NoEndpoints: v.internalVerdict}
	eps := v.cluster
	if p.itpLocal {
		eps = v.local
	}
	sp.Endpoints = append(sp.Endpoints, eps...)
	return sp
}

// HasServicePorts reports whether ServicePorts() is non-nil: kube-proxy
// runs in nftables mode and programs at least one service port.
func (kn *Node) HasServicePorts() bool { return kn != nil && len(kn.k.ports) > 0 }

// ServicePortsFor returns the entries of ServicePorts() with the cluster
// IP, port and protocol (lower case, as ServicePort spells it), in order,
// without building the others.
func (kn *Node) ServicePortsFor(ip netip.Addr, port int, proto string) []ServicePort {
	if kn == nil {
		return nil
	}
	kn.k.index()
	var out []ServicePort
	for _, i := range kn.k.byVIP[vipKey{ip, port, proto}] {
		out = append(out, kn.servicePort(kn.k.ports[i]))
	}
	return out
}

// ServicePortsByNodePort returns the entries of ServicePorts() with the
// node port and protocol, in order, without building the others.
func (kn *Node) ServicePortsByNodePort(port int, proto string) []ServicePort {
	if kn == nil {
		return nil
	}
	kn.k.index()
	var out []ServicePort
	for _, i := range kn.k.byNodePort[vipKey{port: port, proto: proto}] {
		out = append(out, kn.servicePort(kn.k.ports[i]))
	}
	return out
}

// ServiceDNAT returns what kube-proxy's ruleset does with a new connection
// from a pod to dst over proto: the DNAT candidates (any one is chosen by
// numgen random), or a verdict ("reject", "drop") when the service has no
// usable endpoint; ok is false when dst is not a service address.
func (kn *Node) ServiceDNAT(dst netip.AddrPort, proto string) (eps []netip.AddrPort, verdict string, ok bool) {
	if kn == nil {
		return nil, "", false
	}
	proto = strings.ToLower(proto)
	kn.k.index()
	// The first service port with the address (an index, not a scan).
	for _, i := range kn.k.byVIP[vipKey{dst.Addr(), int(dst.Port()), proto}] {
		p := kn.k.ports[i]
		v := kn.view(p)
		if v.internalVerdict == "goto reject-chain" {
			return nil, "reject", true
		}
		if v.internalVerdict != "" {
			return nil, v.internalVerdict, true
		}
		src := v.cluster
		if p.itpLocal {
			src = v.local
		}
		for _, e := range src {
			eps = append(eps, e.Addr)
		}
		return eps, "dnat", true
	}
	return nil, "", false
}

// Table builds "table ip kube-proxy" (family "ip") or "table ip6
// kube-proxy" (family "ip6", which holds no services in an IPv4 cluster)
// as the 1.37 proxier leaves it after its first full sync: setupNFTables
// creates the base chains, the jump chains and the sets and maps, then
// syncProxyRules adds each service port's elements and chains.
func (kn *Node) Table(family string) *nft.Table { return kn.TableOf(family, nil) }

// TableOf is Table holding only the ports of the Services keep names
// ("namespace/name"), and every chain and set the table always has; nil
// keeps every Service.
func (kn *Node) TableOf(family string, keep map[string]bool) *nft.Table {
	k := kn.k
	ipX, addrType := "ip", "ipv4_addr"
	if family == "ip6" {
		ipX, addrType = "ip6", "ipv6_addr"
	}
	mark := fmt.Sprintf("0x%08x", k.masqMark)
	masqRule := "meta mark set meta mark | " + mark
	t := &nft.Table{Family: family, Name: TableName, Comment: "rules for kube-proxy"}

	// Base chains (proxier.go nftablesBaseChains): filter chains before DNAT
	// at dstnat-10, filter chains after DNAT at filter priority, NAT chains.
	for _, bc := range []struct {
		name, typ, hook string
		prio            int
	}{
		{"filter-prerouting-pre-dnat", "filter", "prerouting", -110},
		{"filter-output-pre-dnat", "filter", "output", -110},
		{"filter-input", "filter", "input", 0},
		{"filter-forward", "filter", "forward", 0},
		{"filter-output", "filter", "output", 0},
		{"nat-prerouting", "nat", "prerouting", -100},
		{"nat-output", "nat", "output", -100},
		{"nat-postrouting", "nat", "postrouting", 100},
	} {
		t.Chains = append(t.Chains, &nft.Chain{Name: bc.name, Type: bc.typ, Hook: bc.hook, Priority: nft.Priority(bc.hook, bc.prio)})
	}
	ensure := func(name string) *nft.Chain {
		if c := t.Chain(name); c != nil {
			return c
		}
		c := &nft.Chain{Name: name}
		t.Chains = append(t.Chains, c)
		return c
	}
	// nftablesJumpChains, in order: each target chain is created on first
	// use and the jump rule appended to the base chain.
	for _, j := range []struct{ dst, src, extra string }{
		{"nodeport-endpoints-check", "filter-input", "ct state new "},
		{"service-endpoints-check", "filter-input", "ct state new "},
		{"service-endpoints-check", "filter-forward", "ct state new "},
		{"service-endpoints-check", "filter-output", "ct state new "},
		{"firewall-check", "filter-prerouting-pre-dnat", "ct state new "},
		{"firewall-check", "filter-output-pre-dnat", "ct state new "},
		{"services", "nat-output", ""},
		{"services", "nat-prerouting", ""},
		{"masquerading", "nat-postrouting", ""},
		{"cluster-ips-check", "filter-forward", "ct state new "},
		{"cluster-ips-check", "filter-output", "ct state new "},
	} {
		ensure(j.dst)
		src := t.Chain(j.src)
		src.Rules = append(src.Rules, j.extra+"jump "+j.dst)
	}
	// Hairpin: a connection DNATed back to its own source is masqueraded
	// (kubernetes#136499: the hairpin-connections set replaced the
	// per-endpoint "ip saddr <ep> jump mark-for-masquerade" rules).
	hairpin := &nft.Set{Name: "hairpin-connections", KeyType: addrType + " . " + addrType + " . inet_proto . inet_service", Comment: "service hairpin connections"}
	t.Sets = append(t.Sets, hairpin)
	masq := t.Chain("masquerading")
	masq.Rules = append(masq.Rules,
		fmt.Sprintf("meta mark & %s != 0x00000000 meta mark set meta mark ^ %s masquerade fully-random", mark, mark),
		fmt.Sprintf("ct status dnat %s saddr . %s daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random", ipX, ipX))

	clusterIPs := &nft.Set{Name: "cluster-ips", KeyType: addrType, Comment: "Active ClusterIPs"}
	t.Sets = append(t.Sets, clusterIPs)
	cic := t.Chain("cluster-ips-check")
	cic.Rules = append(cic.Rules, ipX+" daddr @cluster-ips reject comment \"Reject traffic to invalid ports of ClusterIPs\"")
	var cidrs []netip.Prefix
	if family == "ip" {
		cidrs = k.serviceCIDRs
	}
	if len(cidrs) > 0 {
		cic.Rules = append(cic.Rules, fmt.Sprintf("%s daddr %s drop comment \"Drop traffic to unallocated ClusterIPs\"", ipX, nft.PrefixList(cidrs)))
	}
	// nodePortAddresses defaults to "primary" in nftables mode
	// (cmd/kube-proxy/app/server.go): the node IP of this family.
	nodePortIPs := &nft.Set{Name: "nodeport-ips", KeyType: addrType, Comment: "IPs that accept NodePort traffic"}
	t.Sets = append(t.Sets, nodePortIPs)
	if family == "ip" && kn.nodeIP.Is4() {
		nodePortIPs.Add(nft.Elem{Key: kn.nodeIP.String(), SortKey: nft.KeyAddr(kn.nodeIP)})
	}
	noEPServices := &nft.Set{IsMap: true, Name: "no-endpoint-services", KeyType: addrType + " . inet_proto . inet_service", ValType: "verdict",
		Comment: "vmap to drop or reject packets to services with no endpoints"}
	noEPNodePorts := &nft.Set{IsMap: true, Name: "no-endpoint-nodeports", KeyType: "inet_proto . inet_service", ValType: "verdict",
		Comment: "vmap to drop or reject packets to service nodeports with no endpoints"}
	t.Sets = append(t.Sets, noEPServices, noEPNodePorts)
	reject := ensure("reject-chain")
	reject.Comment = "helper for @no-endpoint-services / @no-endpoint-nodeports"
	reject.Rules = append(reject.Rules, "reject")
	t.Chain("service-endpoints-check").Rules = append(t.Chain("service-endpoints-check").Rules,
		ipX+" daddr . meta l4proto . th dport vmap @no-endpoint-services")
	t.Chain("nodeport-endpoints-check").Rules = append(t.Chain("nodeport-endpoints-check").Rules,
		ipX+" daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports")
	firewallIPs := &nft.Set{IsMap: true, Name: "firewall-ips", KeyType: addrType + " . inet_proto . inet_service", ValType: "verdict",
		Comment: "destinations that are subject to LoadBalancerSourceRanges"}
	t.Sets = append(t.Sets, firewallIPs)
	t.Chain("firewall-check").Rules = append(t.Chain("firewall-check").Rules,
		ipX+" daddr . meta l4proto . th dport vmap @firewall-ips")
	serviceIPs := &nft.Set{IsMap: true, Name: "service-ips", KeyType: addrType + " . inet_proto . inet_service", ValType: "verdict",
		Comment: "ClusterIP, ExternalIP and LoadBalancer IP traffic"}
	serviceNodePorts := &nft.Set{IsMap: true, Name: "service-nodeports", KeyType: "inet_proto . inet_service", ValType: "verdict",
		Comment: "NodePort traffic"}
	t.Sets = append(t.Sets, serviceIPs, serviceNodePorts)
	svcs := t.Chain("services")
	// Traffic to a cluster IP from outside the cluster is marked for
	// masquerade once, here (kubernetes#135800 moved it out of every
	// service chain).
	local := k.localNFT
	if family == "ip6" {
		local = nil
	}
	switch {
	case k.masqAll:
		svcs.Rules = append(svcs.Rules, fmt.Sprintf("%s daddr @cluster-ips %s", ipX, masqRule))
	case len(local) > 0:
		svcs.Rules = append(svcs.Rules, fmt.Sprintf("%s daddr @cluster-ips %s %s comment \"masquerade clusterIP traffic from outside cluster\"", ipX, strings.Join(local, " "), masqRule))
	}
	svcs.Rules = append(svcs.Rules,
		ipX+" daddr . meta l4proto . th dport vmap @service-ips",
		ipX+" daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports")

	if family != "ip" {
		return t
	}
	for _, p := range k.ports {
		if keep != nil && !keep[p.service] {
			continue
		}
		v := kn.view(p)
		key := func(a netip.Addr) (string, []byte) {
			return fmt.Sprintf("%s . %s . %d", a, p.proto, p.port), nft.Key(nft.KeyAddr(a), nft.KeyU8(nft.ProtoNum(p.proto)), nft.KeyU16(p.port))
		}
		for _, e := range v.reachable {
			if e.Local {
				a, port := e.Addr.Addr(), int(e.Addr.Port())
				hairpin.Add(nft.Elem{Key: fmt.Sprintf("%s . %s . %s . %d", a, a, p.proto, port),
					SortKey: nft.Key(nft.KeyAddr(a), nft.KeyAddr(a), nft.KeyU8(nft.ProtoNum(p.proto)), nft.KeyU16(port))})
			}
		}
		if v.usesCluster {
			ensure(v.clusterChain)
		}
		if v.usesLocal {
			ensure(v.localChain)
		}
		if v.usesExternal {
			ensure(v.externalChain)
		}
		if v.usesFirewall {
			ensure(v.fwChain)
		}
		ks, kb := key(p.clusterIP)
		clusterIPs.Add(nft.Elem{Key: p.clusterIP.String(), SortKey: nft.KeyAddr(p.clusterIP)})
		if v.hasInternal {
			serviceIPs.Add(nft.Elem{Key: ks, SortKey: kb, Value: "goto " + v.internalChain})
		} else {
			noEPServices.Add(nft.Elem{Key: ks, SortKey: kb, Value: v.internalVerdict, Comment: p.nameString})
		}
		for _, a := range p.externalIPs {
			ks, kb := key(a)
			if v.hasEndpoints {
				serviceIPs.Add(nft.Elem{Key: ks, SortKey: kb, Value: "goto " + v.externalChain})
			}
			if !v.hasExternal {
				noEPServices.Add(nft.Elem{Key: ks, SortKey: kb, Value: v.externalVerdict, Comment: p.nameString})
			}
		}
		for _, a := range p.lbIPs {
			ks, kb := key(a)
			if v.hasEndpoints {
				serviceIPs.Add(nft.Elem{Key: ks, SortKey: kb, Value: "goto " + v.externalChain})
			}
			if v.usesFirewall {
				firewallIPs.Add(nft.Elem{Key: ks, SortKey: kb, Value: "goto " + v.fwChain})
			}
			if !v.hasExternal {
				noEPServices.Add(nft.Elem{Key: ks, SortKey: kb, Value: v.externalVerdict, Comment: p.nameString})
			}
		}
		if p.nodePort != 0 {
			nk := fmt.Sprintf("%s . %d", p.proto, p.nodePort)
			nb := nft.Key(nft.KeyU8(nft.ProtoNum(p.proto)), nft.KeyU16(p.nodePort))
			if v.hasEndpoints {
				serviceNodePorts.Add(nft.Elem{Key: nk, SortKey: nb, Value: "goto " + v.externalChain})
			}
			if !v.hasExternal {
				noEPNodePorts.Add(nft.Elem{Key: nk, SortKey: nb, Value: v.externalVerdict, Comment: p.nameString})
			}
		}
		if v.usesExternal {
			ext := t.Chain(v.externalChain)
			if !p.etpLocal {
				ext.Rules = append(ext.Rules, masqRule)
			} else {
				if len(k.localIfNFT) > 0 {
					ext.Rules = append(ext.Rules, fmt.Sprintf("%s goto %s comment \"short-circuit pod traffic\"", strings.Join(k.localIfNFT, " "), v.clusterChain))
				}
				ext.Rules = append(ext.Rules,
					fmt.Sprintf("fib saddr type local %s comment \"masquerade local traffic\"", masqRule),
					fmt.Sprintf("fib saddr type local goto %s comment \"short-circuit local traffic\"", v.clusterChain))
			}
			if v.hasExternal {
				target := v.clusterChain
				if p.etpLocal {
					target = v.localChain
				}
				ext.Rules = append(ext.Rules, "goto "+target)
			}
		}
		if v.usesFirewall {
			t.Chain(v.fwChain).Rules = append(t.Chain(v.fwChain).Rules, fmt.Sprintf("ip saddr != %s drop", nft.PrefixList(p.sourceRanges)))
		}
		if v.usesCluster {
			t.Chain(v.clusterChain).Rules = append(t.Chain(v.clusterChain).Rules, dnatRule(p.proto, v.cluster))
		}
		if v.usesLocal {
			t.Chain(v.localChain).Rules = append(t.Chain(v.localChain).Rules, dnatRule(p.proto, v.local))
		}
	}
	return t
}

// dnatRule is the service chain's DNAT as nft lists it: a plain "dnat to"
// for one endpoint (kubernetes#140723, #140960), otherwise a numgen map
// over the endpoints in EndpointsMap order.
func dnatRule(proto string, eps []ServiceEndpoint) string {
	if len(eps) == 1 {
		return fmt.Sprintf("meta l4proto %s dnat to %s", proto, eps[0].Addr)
	}
	parts := make([]string, len(eps))
	for i, e := range eps {
		parts[i] = fmt.Sprintf("%d : %s . %d", i, e.Addr.Addr(), e.Addr.Port())
	}
	return fmt.Sprintf("meta l4proto %s dnat ip to numgen random mod %d map { %s }", proto, len(eps), strings.Join(parts, ", "))
}
