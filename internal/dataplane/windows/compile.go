package windows

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"
	fc "github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	// calicoNetwork is the HNS network name with windows_use_single_network,
	// which the operator always sets (tigera/operator pkg/render/windows.go).
	calicoNetwork = "Calico"
	// externalNetwork is the network calico-node creates first so HNS builds
	// the external vSwitch (node/windows-packaging/CalicoWindows/node/node-service.ps1).
	externalNetwork      = "External"
	externalPrefix       = "192.168.255.0/30"
	externalGateway      = "192.168.255.1"
	externalVSID         = 9999
	defaultVNI           = 4096
	defaultMACPrefix     = "0E-2A"
	remoteMACPrefix      = "02-11"
	vxlanEncapOverhead   = 50
	defaultNICName       = "Ethernet"
	kubeProxyWindowsName = "kube-proxy-windows"
)

// Compile derives the HNS and VFP state of every Windows node of the
// cluster. It is pure: the cluster is read, never changed. Nodes whose state
// cannot be derived still get an entry, with Warnings saying why.
func Compile(c *model.Cluster) (map[string]*Node, error) {
	if c == nil {
		return nil, fmt.Errorf("no cluster")
	}
	cx, err := newCompiler(c, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]*Node{}
	for _, n := range c.Nodes {
		if n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
			continue
		}
		node, err := cx.node(n)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		out[n.Name] = node
	}
	return out, nil
}

// Compiler compiles Windows nodes one at a time, when asked: a node's HNS
// state holds an endpoint per remote backend and a load balancer per
// service port of the whole cluster, so compiling every node is O(Windows
// nodes × (services + endpoints)) — beyond memory at Kubernetes' scale
// limits — while a trace needs the few nodes it crosses. A node compiles
// exactly as Compile compiles it (what the nodes share, the policy sets,
// does not depend on the order). It is safe for concurrent use.
type Compiler struct {
	cx   *compiler
	mu   sync.Mutex
	done map[*corev1.Node]*Node
}

// NewCompiler prepares compiling the cluster's Windows nodes; it fails
// where Compile fails before compiling any node.
func NewCompiler(c *model.Cluster) (*Compiler, error) { return NewCompilerFelix(c, nil) }

// NewCompilerFelix is NewCompiler reading the given Felix calculation of
// the cluster (nil: its own).
func NewCompilerFelix(c *model.Cluster, calc *fc.Calc) (*Compiler, error) {
	if c == nil {
		return nil, fmt.Errorf("no cluster")
	}
	cx, err := newCompiler(c, calc)
	if err != nil {
		return nil, err
	}
	return &Compiler{cx: cx, done: map[*corev1.Node]*Node{}}, nil
}

// Node compiles n (once), or returns nil when n is not a Windows node.
func (x *Compiler) Node(n *corev1.Node) (*Node, error) {
	if n == nil || n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
		return nil, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if out, ok := x.done[n]; ok {
		return out, nil
	}
	out, err := x.cx.node(n)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	x.done[n] = out
	return out, nil
}

// Endpoints compiles only n's pod endpoints, with the ACLs Felix
// programs on them, and the warnings of that: the networks' routes,
// kube-proxy's state and VFP are left out (an endpoint's ACLs depend on
// none of them, and they are most of a node's cost). Nothing is kept.
func (x *Compiler) Endpoints(n *corev1.Node) ([]*Endpoint, error) {
	if n == nil || n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
		return nil, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	out := &Node{Name: n.Name, Address: nodeAddress(n)}
	nb := &nodeBuild{cx: x.cx, n: n, h: x.cx.hosts[n.Name], out: out, endpointsOnly: true}
	if err := nb.build(); err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	return nb.podEPs, nil
}

// Drop forgets a compiled node, so that walking every node one at a time
// holds one node's state.
func (x *Compiler) Drop(n *corev1.Node) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.done, n)
}

// SortedNodes returns the compiled nodes by name.
func SortedNodes(m map[string]*Node) []*Node {
	out := make([]*Node, 0, len(m))
	for _, n := range m {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// compiler holds what every node's compilation shares.
type compiler struct {
	c          *model.Cluster
	hosts      map[string]*hybrid.Host
	nodes      map[string]*corev1.Node
	pools      []pool
	blocks     []block
	svcCIDRs   []string
	vni        int
	macPrefix  string
	felix      *policysets.Felix
	namespaces map[string]*corev1.Namespace

	// Indexes over the cluster, so that compiling one node does not scan
	// every pod, EndpointSlice or Service of the cluster (each node's
	// compilation did, which made Compile O(nodes × pods) and worse).
	// podsByNode lists c.Pods by spec.nodeName, in c.Pods order.
	podsByNode map[string][]*corev1.Pod
	// slicesBySvc lists c.EndpointSlices by namespace/service-name label,
	// in c.EndpointSlices order.
	slicesBySvc map[string][]*discoveryv1.EndpointSlice
	// kubeDNS is the ClusterIP of kube-system/kube-dns (the last such
	// Service with one), "" when none.
	kubeDNS string
	// kube-proxy's cluster-wide model (proxy), made once.
	proxyOnce  sync.Once
	proxyModel *proxyModel
	// routes are every block's RemoteSubnetRoute (subnetRoutes), made once.
	routesOnce sync.Once
	routes     *clusterRoutes
}

type pool struct {
	prefix netip.Prefix
	spec   calicoapi.IPPoolSpec
}

type block struct {
	name   string
	prefix netip.Prefix
	node   string // affinity host, "" when none
}

func newCompiler(c *model.Cluster, calc *fc.Calc) (*compiler, error) {
	cx := &compiler{
		c:          c,
		hosts:      map[string]*hybrid.Host{},
		nodes:      map[string]*corev1.Node{},
		vni:        defaultVNI,
		macPrefix:  defaultMACPrefix,
		namespaces: map[string]*corev1.Namespace{},
	}
	for i := range c.Hosts {
		cx.hosts[c.Hosts[i].Name] = &c.Hosts[i]
	}
	for _, n := range c.Nodes {
		cx.nodes[n.Name] = n
	}
	for _, ns := range c.Namespaces {
		cx.namespaces[ns.Name] = ns
	}
	cx.podsByNode = map[string][]*corev1.Pod{}
	for _, p := range c.Pods {
		cx.podsByNode[p.Spec.NodeName] = append(cx.podsByNode[p.Spec.NodeName], p)
	}
	cx.slicesBySvc = map[string][]*discoveryv1.EndpointSlice{}
	for _, es := range c.EndpointSlices {
		k := es.Namespace + "/" + es.Labels[discoveryv1.LabelServiceName]
		cx.slicesBySvc[k] = append(cx.slicesBySvc[k], es)
	}
	for _, svc := range c.Services {
		if svc.Namespace == "kube-system" && svc.Name == "kube-dns" && svc.Spec.ClusterIP != "" {
			cx.kubeDNS = svc.Spec.ClusterIP
		}
	}
	for _, p := range c.IPPools {
		pfx, err := netip.ParsePrefix(p.Spec.CIDR)
		if err != nil {
			return nil, fmt.Errorf("IPPool %s: bad cidr %q", p.Name, p.Spec.CIDR)
		}
		cx.pools = append(cx.pools, pool{prefix: pfx.Masked(), spec: p.Spec})
	}
	for _, b := range c.IPAMBlocks {
		pfx, err := netip.ParsePrefix(b.Spec.CIDR)
		if err != nil {
			return nil, fmt.Errorf("IPAMBlock %s: bad cidr %q", b.Name, b.Spec.CIDR)
		}
		bl := block{name: b.Name, prefix: pfx}
		if b.Spec.Affinity != nil {
			bl.node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
		}
		cx.blocks = append(cx.blocks, bl)
	}
	// Blocks as the API lists them: by name.
	sort.Slice(cx.blocks, func(i, j int) bool { return cx.blocks[i].name < cx.blocks[j].name })
	if c.Installation != nil {
		cx.svcCIDRs = c.Installation.Spec.ServiceCIDRs
		if w := c.Installation.Spec.WindowsNodes; w != nil && w.VXLANMACPrefix != "" {
			cx.macPrefix = w.VXLANMACPrefix
		}
	}
	for _, f := range c.FelixConfigs {
		if f.Name == "default" && f.Spec.VXLANVNI != nil {
			cx.vni = *f.Spec.VXLANVNI
		}
	}
	if calc == nil {
		calc = fc.New(c)
	}
	cx.felix = policysets.New(calc)
	return cx, nil
}

// node compiles one Windows node.
func (cx *compiler) node(n *corev1.Node) (*Node, error) {
	h := cx.hosts[n.Name]
	out := &Node{Name: n.Name, Address: nodeAddress(n)}
	nicName := defaultNICName
	if h != nil {
		if h.NIC.Name != "" {
			nicName = h.NIC.Name
		}
		out.HostMAC = windowsMAC(h.NIC.MAC, true)
	}
	if out.HostMAC == "" {
		out.HostMAC = standInMAC(n.Name + "/nic")
		out.Notes = append(out.Notes, fmt.Sprintf("the host NIC's MAC is not observed (hosts[].nic.mac); %s is a stand-in", out.HostMAC))
	}
	if out.Address == "" {
		out.Warnings = append(out.Warnings, "the node has no InternalIP: HNS networks have no management IP")
	}
	nb := &nodeBuild{cx: cx, n: n, h: h, out: out, nicName: nicName}
	if err := nb.build(); err != nil {
		return nil, err
	}
	return out, nil
}

// nodeBuild carries one node's compilation.
type nodeBuild struct {
	cx      *compiler
	n       *corev1.Node
	h       *hybrid.Host
	out     *Node
	nicName string
	// endpointsOnly: build the Calico network's pod endpoints only
	// (Compiler.Endpoints).
	endpointsOnly bool

	block   block
	calico  *Network
	hostEP  *Endpoint
	byIP    map[string]*Endpoint // HNS endpoints by IP, local ones winning (hns.go getAllEndpointsByNetwork)
	podEPs  []*Endpoint
	podOf   map[*Endpoint]*corev1.Pod
	nextCmp int
	// kp is kube-proxy on the node; nil when it programs nothing.
	kp *nodeProxy
}

// proxy is kube-proxy's cluster-wide model, made on first use.
func (cx *compiler) proxy() *proxyModel {
	cx.proxyOnce.Do(func() { cx.proxyModel = newProxyModel(cx) })
	return cx.proxyModel
}

func (nb *nodeBuild) build() error {
	out := nb.out
	nb.byIP = map[string]*Endpoint{}
	nb.podOf = map[*Endpoint]*corev1.Pod{}
	if cniNotInitialized(nb.n) {
		// calico-node-windows makes both networks (node-service.ps1, then
		// startup_windows.go); the kubelet reports no CNI configuration
		// until it has run, so neither exists yet.
		out.Warnings = append(out.Warnings, "the node's network is not ready (NetworkPluginNotReady: cni plugin not initialized): calico-node-windows has not run, so HNS holds neither the External network (the vSwitch) nor the Calico network")
		nb.adapters()
		out.Adapters = out.Adapters[:1] // the host NIC: no vSwitch, no vEthernet adapter
		nb.firewall()
		out.render = nb
		return nil
	}
	out.nets = append(out.nets, nb.externalNetwork())
	out.FirewallRules = append(out.FirewallRules, overlayFirewallRule())
	if !nb.calicoNetwork() {
		nb.adapters()
		nb.firewall()
		out.render = nb
		return nil
	}
	nb.pods()
	if nb.endpointsOnly {
		return nil
	}
	nb.kubeProxy()
	nb.adapters()
	nb.firewall()
	// The Calico network's routes, kube-proxy's endpoints and load
	// balancers, and the VFP ports that mirror them are made when read
	// (render).
	out.render = nb
	return nil
}

// cniNotInitialized says whether the node's Ready condition carries the
// kubelet's "cni plugin not initialized" (pkg/kubelet/kubelet_node_status.go
// takes it from the runtime's NetworkReady condition).
func cniNotInitialized(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue && strings.Contains(c.Message, "reason:NetworkPluginNotReady")
		}
	}
	return false
}

// render makes the objects build left to reading: the Calico network's
// routes, kube-proxy's objects, then VFP's.
func (nb *nodeBuild) render() {
	if nb.calico != nil {
		nb.calico.Policies = append(nb.calico.Policies, nb.remoteSubnetRoutes()...)
	}
	if nb.kp != nil {
		nb.renderKubeProxy()
	}
	nb.vfp()
}

// externalNetwork is the "External" Overlay network calico-node creates
// before its own so that HNS builds the vSwitch on the host NIC
// (node-service.ps1: New-HNSNetwork -Type Overlay -AddressPrefix
// 192.168.255.0/30 -Gateway 192.168.255.1 -SubnetPolicies VSID 9999).
func (nb *nodeBuild) externalNetwork() *Network {
	return &Network{
		ID:                 hnsID(nb.n.Name + "/network/" + externalNetwork),
		Name:               externalNetwork,
		Type:               "Overlay",
		NetworkAdapterName: nb.nicName,
		ManagementIP:       nb.out.Address,
		Subnets:            []Subnet{{AddressPrefix: externalPrefix, GatewayAddress: externalGateway, VSID: externalVSID}},
		CreatedBy:          "calico-node (node-service.ps1)",
	}
}

// calicoNetwork builds the Calico network and its host endpoint as
// calico-node's startup does (node/pkg/lifecycle/startup/startup_windows.go
// → cni-plugin/pkg/dataplane/windows/dataplane_windows.go SetupVxlanNetwork).
func (nb *nodeBuild) calicoNetwork() bool {
	cx, n, out := nb.cx, nb.n, nb.out
	var found bool
	for _, b := range cx.blocks {
		if b.node == n.Name {
			nb.block, found = b, true
			break
		}
	}
	if !found {
		out.Warnings = append(out.Warnings, "no IPAM block is affine to the node: calico-node-windows has not created the Calico HNS network (no pods, no kube-proxy state)")
		return false
	}
	if cx.vni < defaultVNI {
		out.Warnings = append(out.Warnings, fmt.Sprintf("FelixConfiguration vxlanVNI %d: Windows does not support VXLANVNI < 4096; calico-node cannot create the Calico network", cx.vni))
		return false
	}
	p, ok := cx.poolOf(nb.block.prefix.Addr())
	if ok && p.spec.VXLANMode != calicoapi.ModeAlways {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the node's pool %s is not VXLAN Always (vxlanMode %q): Calico for Windows supports only VXLAN (or BGP without encapsulation, not modeled)", p.prefix, p.spec.VXLANMode))
	}
	gw := nthAddr(nb.block.prefix, 1)
	net := &Network{
		// ensureVxlanNetworkExists asks HNS for a name, a type and a subnet
		// only: no adapter name, so HNS reports none (the vSwitch is the
		// External network's).
		ID:           hnsID(n.Name + "/network/" + calicoNetwork),
		Name:         calicoNetwork,
		Type:         "Overlay",
		ManagementIP: out.Address,
		DrMacAddress: nb.drMAC(),
		Subnets:      []Subnet{{AddressPrefix: nb.block.prefix.String(), GatewayAddress: gw.String(), VSID: cx.vni}},
		CreatedBy:    "calico-node (startup_windows.go SetupVxlanNetwork)",
	}
	// ensureVxlanNetworkExists adds a HostRoute policy once the network exists.
	// Felix's RemoteSubnetRoutes follow when the node is read (render);
	// the warnings for blocks Felix cannot route to are the node's now.
	net.Policies = append(net.Policies, NetworkPolicy{Type: PolicyHostRoute})
	if !nb.endpointsOnly {
		nb.noVTEPWarnings()
	}
	out.nets = append(out.nets, net)
	nb.calico = net

	// <network>_ep at block .2: a remote endpoint with the host NIC's MAC
	// (GetMacAddr formats it as Go's net.HardwareAddr: colons, lower case)
	// and a PA policy to the management IP (createAndAttachVxlanHostEP).
	ip := nthAddr(nb.block.prefix, 2).String()
	ep := &Endpoint{
		ID:                 hnsID(n.Name + "/endpoint/" + calicoNetwork + "_ep"),
		Name:               calicoNetwork + "_ep",
		VirtualNetwork:     net.ID,
		VirtualNetworkName: net.Name,
		IPAddress:          ip,
		MacAddress:         goMAC(out.HostMAC),
		IsRemoteEndpoint:   true,
		State:              1,
		Policies:           []EndpointPolicy{{Type: PolicyPA, PA: out.Address}},
		Kind:               KindHost,
		Owner:              "calico-node",
	}
	nb.addEndpoint(ep)
	nb.hostEP = ep
	return true
}

// drMAC is the DrPort adapter's MAC as HNS prints DrMacAddress: the node's
// observed VTEP MAC (Calico records the DrPort's MAC as the node's
// VXLANTunnelMACAddr, dataplane_windows.go EnsureVXLANTunnelAddr), or the
// placeholder the engine wrote there, which every other node's view uses too.
func (nb *nodeBuild) drMAC() string {
	mac := nb.n.Annotations[calico.AnnotationVXLANTunnelMACAddr]
	if nb.h != nil && nb.h.Observed.VXLANTunnelMAC != "" {
		mac = nb.h.Observed.VXLANTunnelMAC
	}
	if m := windowsMAC(mac, true); m != "" {
		if nb.n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] != "" {
			nb.out.Notes = append(nb.out.Notes, fmt.Sprintf("the DrPort adapter's MAC is not observed (hosts[].observed.vxlanTunnelMAC); %s is the node's placeholder VTEP MAC, which every node uses", m))
		}
		return m
	}
	m := standInMAC(nb.n.Name + "/drport")
	nb.out.Notes = append(nb.out.Notes, fmt.Sprintf("the DrPort adapter's MAC is not observed and the node records no VTEP MAC; %s is a stand-in that no other node knows", m))
	return m
}

// remoteSubnetRoutes are the RemoteSubnetRoute policies Felix's
// vxlanManager adds (felix/dataplane/windows/vxlan_mgr.go): one per remote
// VXLAN block whose node has a VTEP, other Windows nodes' included (the
// manager keeps every VXLANTunnelEndpointUpdate but its own node's, and the
// calc graph's VXLAN resolver sends one for every node with a tunnel
// address, felix/calc/vxlan_resolver.go), {DestinationPrefix: block,
// ProviderAddress: the node's address, DistributedRouterMacAddress: its VTEP
// MAC with ':' replaced by '-', IsolationId: the VNI}.
//
// Order. HNS lists network policies in the order they were added, and Felix
// adds them one request at a time while ranging over a Go set built from a
// Go map (the calc graph also flushes routes from a map, event_sequencer.go),
// so the real order is random per start. The twin needs a fixed rule: routes
// sort by their VTEP MAC, descending. For Linux peers the MAC is Felix's
// hash of the node name (vtepMACForHost), so this is a name-seeded
// pseudo-random order like the real one; it is the rule that reproduces the
// lab's observed order (seed 000: 172.21.211.0/26, 172.21.70.192/26,
// 172.21.172.0/26), which join order (master first) and prefix order do not.
func (nb *nodeBuild) remoteSubnetRoutes() []NetworkPolicy {
	all := nb.cx.subnetRoutes()
	// Every block's route but the node's own, in the shared order: the
	// order rule is a total order, so filtering the sorted routes is
	// sorting the node's.
	out := make([]NetworkPolicy, 0, len(all.routes))
	for _, r := range all.routes {
		if r.Node != nb.n.Name {
			out = append(out, r)
		}
	}
	return out
}

// noVTEPWarnings are the warnings for other nodes' blocks Felix cannot
// route to (no VTEP).
func (nb *nodeBuild) noVTEPWarnings() {
	for _, w := range nb.cx.subnetRoutes().noVTEP {
		if w.node != nb.n.Name {
			nb.out.Warnings = append(nb.out.Warnings, w.text)
		}
	}
}

// clusterRoutes are the RemoteSubnetRoutes of every VXLAN block with a
// node, sorted (remoteSubnetRoutes), and the warnings for blocks whose
// node has no VTEP in block order: every Windows node's routes are these
// but its own block's, so they are made once.
type clusterRoutes struct {
	routes []NetworkPolicy
	noVTEP []struct{ node, text string }
}

func (cx *compiler) subnetRoutes() *clusterRoutes {
	cx.routesOnce.Do(func() {
		all := &clusterRoutes{}
		for _, b := range cx.blocks {
			if b.node == "" {
				continue
			}
			p, ok := cx.poolOf(b.prefix.Addr())
			if !ok || p.spec.VXLANMode == "" || p.spec.VXLANMode == calicoapi.ModeNever {
				continue // only VXLAN pools' routes reach the manager
			}
			peer := cx.nodes[b.node]
			if peer == nil {
				continue
			}
			mac, ok := cx.vtepMAC(peer)
			if !ok {
				all.noVTEP = append(all.noVTEP, struct{ node, text string }{b.node,
					fmt.Sprintf("no VTEP for node %s (no VXLAN tunnel address or MAC): Felix skips the route to %s", peer.Name, b.prefix)})
				continue
			}
			all.routes = append(all.routes, NetworkPolicy{
				Type:                        PolicyRemoteSubnetRoute,
				DestinationPrefix:           b.prefix.String(),
				ProviderAddress:             nodeAddress(peer),
				DistributedRouterMacAddress: strings.ReplaceAll(mac, ":", "-"),
				IsolationID:                 cx.vni,
				Node:                        peer.Name,
			})
		}
		sortRemoteSubnetRoutes(all.routes)
		cx.routes = all
	})
	return cx.routes
}

// sortRemoteSubnetRoutes applies the twin's order rule (see remoteSubnetRoutes).
func sortRemoteSubnetRoutes(rs []NetworkPolicy) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := strings.ToLower(rs[i].DistributedRouterMacAddress), strings.ToLower(rs[j].DistributedRouterMacAddress)
		if a != b {
			return a > b
		}
		return rs[i].DestinationPrefix < rs[j].DestinationPrefix
	})
}

// vtepMAC is the VTEP MAC Felix's VXLAN resolver uses for a node: the
// projectcalico.org/VXLANTunnelMACAddr annotation, else the MAC Felix
// derives from the node name, for Windows nodes too (felix/calc/
// vxlan_resolver.go vtepMACForHost does not look at the OS): a Windows node
// that has not recorded its DrPort's MAC is routed to with a MAC that is not
// its DrPort's (check HYB071). A node without a VXLAN tunnel address has no
// VTEP.
func (cx *compiler) vtepMAC(n *corev1.Node) (string, bool) {
	if n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] == "" {
		return "", false
	}
	if m := n.Annotations[calico.AnnotationVXLANTunnelMACAddr]; m != "" {
		return strings.ToLower(m), true
	}
	if h := cx.hosts[n.Name]; h != nil && h.Observed.VXLANTunnelMAC != "" {
		return strings.ToLower(h.Observed.VXLANTunnelMAC), true
	}
	return fc.VTEPMACForHost(n.Name), true
}

// pods creates the pod endpoints the Calico CNI plugin creates
// (dataplane_windows.go createAndAttachContainerEP) and the pods' HNS
// namespaces, in creation order; the twin takes address order within the
// block as creation order (Calico IPAM hands ordinals out in sequence).
func (nb *nodeBuild) pods() {
	cx, n := nb.cx, nb.n
	var pods []*corev1.Pod
	for _, p := range cx.podsByNode[n.Name] {
		if p.Spec.HostNetwork || p.Status.PodIP == "" ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // finished pods' sandboxes (and endpoints) are gone
		}
		a, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil || !nb.block.prefix.Contains(a) {
			continue
		}
		pods = append(pods, p)
	}
	sort.SliceStable(pods, func(i, j int) bool {
		return netip.MustParseAddr(pods[i].Status.PodIP).Less(netip.MustParseAddr(pods[j].Status.PodIP))
	})
	nb.nextCmp = 2 // compartment 1 is the host's
	for _, p := range pods {
		nb.pod(p)
	}
}

// pod builds one pod's endpoint, policies and namespace.
func (nb *nodeBuild) pod(p *corev1.Pod) {
	cx, out := nb.cx, nb.out
	sid, observed := sandboxID(p)
	if !observed {
		out.Notes = append(out.Notes, fmt.Sprintf("%s/%s: the sandbox ID is a stand-in (containerd makes it random); give the observed one in the pod annotation %s", p.Namespace, p.Name, SandboxIDAnnotation))
	}
	ip := netip.MustParseAddr(p.Status.PodIP)
	b4 := ip.As4()
	ep := &Endpoint{
		ID:                 hnsID(nb.n.Name + "/endpoint/" + p.Status.PodIP),
		Name:               sid + "_" + calicoNetwork,
		VirtualNetwork:     nb.calico.ID,
		VirtualNetworkName: nb.calico.Name,
		IPAddress:          p.Status.PodIP,
		MacAddress:         macFrom(cx.macPrefix, b4),
		PrefixLength:       nb.block.prefix.Bits(),
		GatewayAddress:     nthAddr(nb.block.prefix, 1).String(),
		EncapOverhead:      vxlanEncapOverhead,
		State:              3,
		Kind:               KindPod,
		Owner:              "calico-cni",
		Pod:                p.Namespace + "/" + p.Name,
		SandboxID:          sid,
	}
	ep.DNSServerList, ep.DNSSuffix = nb.dns(p)
	ep.Policies = nb.cniPolicies(ip)
	acls, report, warns := cx.felix.EndpointACLs(p, nb.out.Address)
	for i := range acls {
		ep.Policies = append(ep.Policies, EndpointPolicy{Type: PolicyACL, ACL: &acls[i]})
	}
	ep.ACLCount, ep.ACLReport = len(acls), report
	for _, w := range warns {
		out.Warnings = append(out.Warnings, ep.Pod+": "+w)
	}
	ns := &Namespace{
		ID:          hnsID(nb.n.Name + "/namespace/" + ep.Pod),
		NamespaceID: nb.nextCmp,
		Type:        "Host",
		EndpointIDs: []string{ep.ID},
		Pod:         ep.Pod,
	}
	nb.nextCmp++
	ep.NamespaceID = ns.ID
	out.Namespaces = append(out.Namespaces, ns)
	nb.addEndpoint(ep)
	nb.podEPs = append(nb.podEPs, ep)
	nb.podOf[ep] = p
}

// cniPolicies are the pod endpoint's policies before Felix's ACLs, in the
// order the plugin sends them:
//   - the net conf's OutBoundNAT with the service CIDRs as exceptions
//     (tigera/operator render/windows.go), to which winpol
//     CalculateEndpointPolicies appends every IP pool's CIDR; dropped when
//     the pod's pool has natOutgoing off;
//   - one SDNROUTE per service CIDR with NeedEncap (render/windows.go), which
//     HNS's V1 view calls ROUTE;
//   - PA = the management IP (VXLAN mode);
//   - OutBoundNAT with Destinations = the pod's own IP: loopback DSR, when
//     the Windows build supports it (install_windows.go: 1809 ≥ 17763.1432
//     or ≥ 1903/18317).
func (nb *nodeBuild) cniPolicies(ip netip.Addr) []EndpointPolicy {
	cx := nb.cx
	var pols []EndpointPolicy
	nat := true
	if p, ok := cx.poolOf(ip); ok {
		nat = p.spec.NATOutgoing
	}
	if nat {
		exc := slices.Clone(cx.svcCIDRs)
		for _, p := range cx.pools {
			exc = append(exc, p.prefix.String())
		}
		pols = append(pols, EndpointPolicy{Type: PolicyOutBoundNAT, ExceptionList: exc})
	}
	for _, cidr := range cx.svcCIDRs {
		pols = append(pols, EndpointPolicy{Type: PolicyRoute, DestinationPrefix: cidr, NeedEncap: true})
	}
	pols = append(pols, EndpointPolicy{Type: PolicyPA, PA: nb.out.Address})
	if nb.loopbackDSR() {
		pols = append(pols, EndpointPolicy{Type: PolicyOutBoundNAT, Destinations: []string{ip.String()}})
	}
	return pols
}

// loopbackDSR is the CNI install's DSR check on the node's Windows build.
func (nb *nodeBuild) loopbackDSR() bool {
	kv := nb.n.Status.NodeInfo.KernelVersion
	if nb.h != nil && nb.h.KernelVersion != "" {
		kv = nb.h.KernelVersion
	}
	k := hybrid.ParseWindowsKernel(kv)
	if k.Build == "" {
		return true // unknown build: assume a current one
	}
	return k.Number >= 18317 || (k.Number == 17763 && k.Revision >= 1432)
}

// dns is what the runtime gives the CNI plugin for the pod: the cluster DNS
// servers and the pod's search list (kubelet ClusterFirst policy).
func (nb *nodeBuild) dns(p *corev1.Pod) (servers, suffix string) {
	kc := nb.cx.c.Kubeadm.NodeKubelet[nb.n.Name]
	if kc == nil {
		kc = nb.cx.c.Kubeadm.Kubelet
	}
	domain := "cluster.local"
	var dns []string
	if kc != nil {
		dns = kc.ClusterDNS
		if kc.ClusterDomain != "" {
			domain = kc.ClusterDomain
		}
	}
	if len(dns) == 0 {
		// The CNI net conf's DNS: the operator fills it with kube-dns's
		// ClusterIP (tigera/operator render/windows.go K8sDNSServers).
		if nb.cx.kubeDNS != "" {
			dns = []string{nb.cx.kubeDNS}
		}
	}
	return strings.Join(dns, ","), strings.Join([]string{p.Namespace + ".svc." + domain, "svc." + domain, domain}, ",")
}

// addEndpoint records an endpoint in HNS order and in the by-IP index,
// where a local endpoint wins over a remote one with the same address.
func (nb *nodeBuild) addEndpoint(ep *Endpoint) {
	nb.out.eps = append(nb.out.eps, ep)
	if old, ok := nb.byIP[ep.IPAddress]; ok && !old.IsRemoteEndpoint {
		return
	}
	nb.byIP[ep.IPAddress] = ep
}

// poolOf is the IP pool containing a.
func (cx *compiler) poolOf(a netip.Addr) (pool, bool) {
	for _, p := range cx.pools {
		if p.prefix.Contains(a) {
			return p, true
		}
	}
	return pool{}, false
}

func nodeAddress(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// nthAddr is the n-th address of a prefix (dataplane_windows.go getNthIP).
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// windowsMAC formats a MAC the way Windows (Get-NetAdapter, HNS's
// DrMacAddress) prints it: upper case with dashes; "" if s is not a MAC.
func windowsMAC(s string, upper bool) string {
	hw, err := net.ParseMAC(strings.ReplaceAll(s, "-", ":"))
	if err != nil || len(hw) != 6 {
		return ""
	}
	out := strings.ReplaceAll(hw.String(), ":", "-")
	if upper {
		out = strings.ToUpper(out)
	}
	return out
}

// goMAC formats a MAC as Go's net.HardwareAddr.String does (colons, lower
// case): what Calico's GetMacAddr and kube-proxy's hostMac hand to HNS.
func goMAC(s string) string {
	hw, err := net.ParseMAC(strings.ReplaceAll(s, "-", ":"))
	if err != nil {
		return s
	}
	return hw.String()
}

// standInMAC is a MAC in Hyper-V's 00-15-5D range derived from a name, for
// values only the host knows.
func standInMAC(name string) string {
	u := uuid5(hnsNamespace, name)
	return fmt.Sprintf("00-15-5D-%02X-%02X-%02X", u[0], u[1], u[2])
}

func appendOnce(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
