package linux

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/kubeproxy"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Names Calico and Kubernetes use.
const (
	vxlanDevice = "vxlan.calico"
	// The kernel's fallback IP-in-IP device, which Felix configures
	// (felix/dataplane/linux/ipip_mgr.go); int_dataplane.go
	// ipipMTUOverhead 20.
	ipipDevice   = "tunl0"
	ipipOverhead = 20
	// Felix defaults: felix/config/config_params.go VXLANVNI 4096,
	// VXLANPort 4789; int_dataplane.go vxlanMTUOverhead 50.
	defaultVNI       = 4096
	defaultVXLANPort = 4789
	vxlanOverhead    = 50
	defaultNICMTU    = 1500
	defaultNICName   = "eth0"
	// felix/dataplane/linux/dataplanedefs DefaultRouteProto: the protocol
	// Felix stamps on blackhole and same-subnet routes.
	felixRouteProto = "80"
	// felix/config/config_params.go IPv4NormalRoutePriority.
	workloadRouteMetric = 1024
	// Interface indexes (see the package documentation).
	ifindexLo    = 1
	ifindexNIC   = 2
	ifindexVXLAN = 5
	// The pod side of a veth: eth0 after lo in a fresh namespace.
	podEth0Index = 2
)

// Compile derives the dataplane of every Linux node of c. It does not
// modify c.
func Compile(c *model.Cluster) (map[string]*Node, error) { return CompileFelix(c, nil) }

// CompileFelix is Compile reading the given Felix calculation of the
// cluster (nil: its own), which the nodes' Calico tables render and their
// policy decisions read.
func CompileFelix(c *model.Cluster, calc *felix.Calc) (map[string]*Node, error) {
	x, err := NewCompiler(c, calc)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Node, len(x.cc.linux))
	for _, n := range x.cc.linux {
		out[n.name] = x.cc.compileNode(n)
	}
	return out, nil
}

// Compiler compiles Linux nodes one at a time, when asked: what the nodes
// share (kube-proxy's Service model, Calico's cluster view, the IPAM
// blocks, the Felix calculation) is made once, and a node compiles exactly
// as CompileFelix compiles it. It keeps nothing per node and is safe for
// concurrent use.
type Compiler struct {
	cc *clusterCtx
	// byName is the Linux node of each name; of two with one name, the
	// last, as CompileFelix's map keeps it.
	byName map[string]*nodeInfo
}

// NewCompiler prepares compiling the cluster's Linux nodes, reading the
// given Felix calculation of the cluster (nil: its own).
func NewCompiler(c *model.Cluster, calc *felix.Calc) (*Compiler, error) {
	if calc == nil {
		return NewCompilerLazy(c, nil)
	}
	return NewCompilerLazy(c, func() *felix.Calc { return calc })
}

// NewCompilerLazy is NewCompiler with the Felix calculation asked of calc
// (nil: its own) when a node first needs it: its Calico table or a policy
// decision. Routes, neighbours and links need none.
func NewCompilerLazy(c *model.Cluster, calc func() *felix.Calc) (*Compiler, error) {
	return NewCompilerAfter(nil, c, calc)
}

// NewCompilerAfter is NewCompilerLazy for a cluster that follows prev's
// (a plan's next step): kube-proxy's Service model is prev's when it
// reads the same of both (kubeproxy.SameInputs). A nil prev is
// NewCompilerLazy.
func NewCompilerAfter(prev *Compiler, c *model.Cluster, calc func() *felix.Calc) (*Compiler, error) {
	if c == nil {
		return nil, errors.New("dataplane/linux: nil cluster")
	}
	if calc == nil {
		calc = sync.OnceValue(func() *felix.Calc { return felix.New(c) })
	}
	var kp *kubeproxy.Cluster // nil: its own
	if prev != nil && kubeproxy.SameInputs(prev.cc.c, c) {
		kp = prev.cc.kp
	}
	return newCompiler(c, calc, kp), nil
}

// newCompiler is the compiler of c over calc, with kube-proxy's model kp
// (nil: its own).
func newCompiler(c *model.Cluster, calc func() *felix.Calc, kp *kubeproxy.Cluster) *Compiler {
	cc := newClusterCtx(c, kp)
	cc.calc = calc
	x := &Compiler{cc: cc, byName: make(map[string]*nodeInfo, len(cc.linux))}
	for _, n := range cc.linux {
		x.byName[n.name] = n
	}
	return x
}

// Node compiles the Linux node named; ok is false when no Linux node has
// that name. Each call compiles anew: the caller keeps the result.
func (x *Compiler) Node(name string) (n *Node, ok bool) {
	ni := x.byName[name]
	if ni == nil {
		return nil, false
	}
	return x.cc.compileNode(ni), true
}

// TunnelAddr is the address of the node's vxlan.calico device, read
// without compiling the node; ok is false when the node has none.
func (x *Compiler) TunnelAddr(name string) (a netip.Addr, ok bool) {
	a, _, _, ok = x.Tunnel(name)
	return a, ok
}

// Tunnel is the node's vxlan.calico device as compileNode creates it,
// read without compiling the node: its address, VNI and destination
// port; ok is false when the node has none.
func (x *Compiler) Tunnel(name string) (a netip.Addr, vni, port int, ok bool) {
	ni := x.byName[name]
	if ni == nil || ni.vtep == nil || !x.cc.anyVX {
		return netip.Addr{}, 0, 0, false
	}
	// compileNode creates the device under the same condition; the NIC's
	// MTU plays no part in it, nor in the VNI and port.
	fc := x.cc.felix(ni, defaultNICMTU)
	if fc.vxlanOff {
		return netip.Addr{}, 0, 0, false
	}
	return ni.vtep.tunnel, fc.vni, fc.port, true
}

// IPIPAddr is the address of the node's tunl0 device, read without
// compiling the node; ok is false when the node has none.
func (x *Compiler) IPIPAddr(name string) (netip.Addr, bool) {
	ni := x.byName[name]
	if ni == nil || ni.windows {
		return netip.Addr{}, false
	}
	// compileNode creates tunl0 under the same condition, which the
	// NIC's MTU plays no part in.
	if fc := x.cc.felix(ni, defaultNICMTU); !fc.ipip {
		return netip.Addr{}, false
	}
	return ni.ipip, true
}

// nodeInfo is what the compiler needs to know about one node.
type nodeInfo struct {
	name    string
	windows bool
	ip      netip.Addr   // InternalIP
	calico  netip.Addr   // projectcalico.org/IPv4Address (Felix's ParentDeviceIp)
	subnet  netip.Prefix // the node's subnet for CrossSubnet decisions
	created time.Time
	host    hybrid.Host
	vtep    *vtep
	// ipip is projectcalico.org/IPv4IPIPTunnelAddr, tunl0's address.
	ipip netip.Addr
	pods []*corev1.Pod // on the pod network, in creation order
}

// vtep is a node's VXLAN tunnel endpoint as Felix's VXLAN resolver sees it
// (felix/calc/vxlan_resolver.go): tunnel address, MAC and parent address.
type vtep struct {
	node   string
	tunnel netip.Addr
	mac    net.HardwareAddr
	host   netip.Addr
	// macDerived is set when no projectcalico.org/VXLANTunnelMACAddr was
	// recorded and the MAC was computed from the node name.
	macDerived bool
}

// pool is an IP pool's routing-relevant settings.
type pool struct {
	name        string
	cidr        netip.Prefix
	vxlanMode   string
	ipipMode    string
	natOutgoing bool
}

// block is an IPAM block and the node it is affine to.
type block struct {
	cidr netip.Prefix
	node string
}

// felixCfg is the effective FelixConfiguration for one node.
type felixCfg struct {
	vni, port, mtu int
	vxlanOff       bool
	// ipipMTU is tunl0's MTU; ipip says the node has tunl0 (an IPIP pool,
	// IPIP not turned off, a tunnel address).
	ipipMTU int
	ipipOff bool
	ipip    bool
}

type clusterCtx struct {
	c      *model.Cluster
	nodes  []*nodeInfo
	byName map[string]*nodeInfo
	linux  []*nodeInfo
	pools  []pool
	blocks []block
	// blockIdx finds the block holding an address: one map lookup per
	// distinct block size.
	blockIdx  map[netip.Prefix]block
	blockBits []int
	// borrowed are pods whose address lies outside their node's blocks.
	borrowed []*corev1.Pod
	bgp      bool
	gateway  netip.Addr
	network  netip.Prefix
	anyVX    bool
	anyIPIP  bool
	// felixRoutesIPIP: FelixConfiguration programClusterRoutes has Felix,
	// not BIRD, program the IPIP routes (not modelled).
	felixRoutesIPIP bool
	kp              *kubeproxy.Cluster
	cal             *calicoCluster
	calc            func() *felix.Calc
	// idx holds the lookups' indexes, built on first use.
	idxOnce sync.Once
	idx     *lookupIdx
}

// newClusterCtx reads what c's Linux nodes share, with kube-proxy's
// model kp when given (one made of a cluster kubeproxy.SameInputs finds
// equal in what it reads), else its own.
func newClusterCtx(c *model.Cluster, kp *kubeproxy.Cluster) *clusterCtx {
	cc := &clusterCtx{c: c, byName: map[string]*nodeInfo{}}
	hosts := map[string]hybrid.Host{}
	for _, h := range c.Hosts {
		hosts[h.Name] = h
	}
	if p, err := netip.ParsePrefix(c.Network.CIDR); err == nil {
		cc.network = p.Masked()
	}
	if a, err := netip.ParseAddr(c.Network.Gateway); err == nil {
		cc.gateway = a
	}
	cc.pools = readPools(c)
	for _, pl := range cc.pools {
		if pl.vxlanMode != calico.ModeNever {
			cc.anyVX = true
		}
		if pl.ipipMode != calico.ModeNever {
			cc.anyIPIP = true
		}
	}
	cc.felixRoutesIPIP = felixRoutesIPIP(c)
	cc.bgp = BGPEnabled(c)
	cc.blocks = readBlocks(c)
	sort.Slice(cc.blocks, func(i, j int) bool { return cc.blocks[i].cidr.Addr().Less(cc.blocks[j].cidr.Addr()) })
	cc.blockIdx = make(map[netip.Prefix]block, len(cc.blocks))
	for _, b := range cc.blocks {
		if _, ok := cc.blockIdx[b.cidr]; !ok {
			cc.blockIdx[b.cidr] = b
		}
		if !slices.Contains(cc.blockBits, b.cidr.Bits()) {
			cc.blockBits = append(cc.blockBits, b.cidr.Bits())
		}
	}

	for _, n := range c.Nodes {
		ni := &nodeInfo{name: n.Name, host: hosts[n.Name], created: n.CreationTimestamp.Time}
		ni.windows = n.Labels[corev1.LabelOSStable] == hybrid.OSWindows || (n.Labels[corev1.LabelOSStable] == "" && ni.host.OS == hybrid.OSWindows)
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() && !ni.ip.IsValid() {
					ni.ip = ip
				}
			}
		}
		if !ni.ip.IsValid() {
			ni.ip, _ = netip.ParseAddr(ni.host.Address)
		}
		ni.calico = ni.ip
		ni.subnet = netip.PrefixFrom(ni.ip, 32)
		if cc.network.IsValid() && ni.ip.IsValid() && cc.network.Contains(ni.ip) {
			ni.subnet = netip.PrefixFrom(ni.ip, cc.network.Bits())
		}
		// projectcalico.org/IPv4Address is the address calico-node
		// autodetected, with the subnet's prefix length; Felix uses it as
		// the VTEP's parent address and for same-subnet decisions
		// (felix/calc/vxlan_resolver.go, l3_route_resolver.go).
		if p, err := netip.ParsePrefix(n.Annotations[calico.AnnotationIPv4Address]); err == nil && p.Addr().Is4() {
			ni.calico = p.Addr()
			ni.subnet = p
		}
		if t, err := netip.ParseAddr(n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]); err == nil && t.Is4() && ni.calico.IsValid() {
			v := &vtep{node: n.Name, tunnel: t, host: ni.calico}
			if m, err := net.ParseMAC(n.Annotations[calico.AnnotationVXLANTunnelMACAddr]); err == nil {
				v.mac = m
			} else {
				// vxlan_resolver.go vtepMACForHost: without a recorded
				// MAC every Felix computes the one the node's own Felix
				// gives its device.
				v.mac, _ = net.ParseMAC(felix.VTEPMACForHost(n.Name))
				v.macDerived = true
			}
			ni.vtep = v
		}
		if t, err := netip.ParseAddr(n.Annotations[calico.AnnotationIPv4IPIPTunnelAddr]); err == nil && t.Is4() {
			ni.ipip = t
		}
		cc.nodes = append(cc.nodes, ni)
		cc.byName[n.Name] = ni
		if !ni.windows {
			cc.linux = append(cc.linux, ni)
		}
	}
	for _, p := range c.Pods {
		if !ReadsPod(p) {
			continue
		}
		if ni := cc.byName[p.Spec.NodeName]; ni != nil {
			ni.pods = append(ni.pods, p)
		}
	}
	for _, ni := range cc.nodes {
		sortPods(ni.pods)
		for _, p := range ni.pods {
			ip, _ := netip.ParseAddr(p.Status.PodIP)
			if b, ok := cc.blockOf(ip); ok && b.node != ni.name {
				cc.borrowed = append(cc.borrowed, p)
			}
		}
	}
	cc.kp = kp
	if kp == nil {
		cc.kp = kubeproxy.NewCluster(c)
	}
	cc.cal = newCalicoCluster(cc)
	return cc
}

// ReadsPod reports whether the state of the node a pod is bound to reads
// it: a pod on the pod network, scheduled, with an address, not finished
// (a workload endpoint: its veth and route, Felix's chains for it). A
// host-network pod (an agent: calico-node, kube-proxy) is read by no part
// of a Linux node's state, whatever its spec or name: rolling an agent out
// changes none of the node's routes or tables. A caller comparing two
// twins (internal/diff) counts only these pods among a node's own inputs.
func ReadsPod(p *corev1.Pod) bool {
	if p.Spec.HostNetwork || p.Spec.NodeName == "" || p.Status.PodIP == "" {
		return false
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	_, err := netip.ParseAddr(p.Status.PodIP)
	return err == nil
}

// readPools are the IPv4 pools as the Linux dataplane reads them.
func readPools(c *model.Cluster) []pool {
	var out []pool
	for _, p := range c.IPPools {
		pr, err := netip.ParsePrefix(p.Spec.CIDR)
		if err != nil || !pr.Addr().Is4() {
			continue
		}
		out = append(out, pool{name: p.Name, cidr: pr.Masked(), vxlanMode: mode(p.Spec.VXLANMode), ipipMode: mode(p.Spec.IPIPMode), natOutgoing: p.Spec.NATOutgoing})
	}
	return out
}

// readBlocks are the IPv4 IPAM blocks and their affine nodes, in input
// order: the block's attributes and allocations are not read.
func readBlocks(c *model.Cluster) []block {
	var out []block
	for _, b := range c.IPAMBlocks {
		pr, err := netip.ParsePrefix(b.Spec.CIDR)
		if err != nil || !pr.Addr().Is4() {
			continue
		}
		node := ""
		if b.Spec.Affinity != nil && strings.HasPrefix(*b.Spec.Affinity, "host:") {
			node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
		}
		out = append(out, block{cidr: pr.Masked(), node: node})
	}
	return out
}

// BGPEnabled reports whether calico-node runs BIRD: the operator's
// Installation decides (calicoNetwork.bgp); without one (manifest
// installs) calico_backend is bird.
func BGPEnabled(c *model.Cluster) bool {
	if in := c.Installation; in != nil && in.Spec.CalicoNetwork != nil && in.Spec.CalicoNetwork.BGP != nil {
		return *in.Spec.CalicoNetwork.BGP == "Enabled"
	}
	return true
}

// readNftables: Felix's table is nftables unless the Installation's
// linuxDataplane names another dataplane.
func readNftables(c *model.Cluster) bool {
	if in := c.Installation; in != nil && in.Spec.CalicoNetwork != nil && in.Spec.CalicoNetwork.LinuxDataplane != nil {
		return *in.Spec.CalicoNetwork.LinuxDataplane == "Nftables"
	}
	return true
}

// Settings are what a Linux node's state reads of the IP pools, the IPAM
// blocks and the Installation, by part: the routing part (links, routes,
// neighbours, FDB) reads the pools' encapsulation, the blocks' CIDRs and
// affinities and whether BIRD runs; Felix's table reads the pools' CIDRs
// and natOutgoing and whether Felix programs nftables. A caller comparing
// two twins (internal/diff) compares these rather than the whole objects:
// a pool's encapsulation changes the routes and never Felix's table, a
// block's allocations neither. The other inputs are whole objects (nodes,
// pods, policies, FelixConfigurations).
type Settings struct {
	Routing RoutingSettings
	Policy  PolicySettings
}

// RoutingSettings: per pool, its CIDR and encapsulation modes; per block,
// its CIDR and node; BGP, which decides only the routes of pools without
// VXLAN (routes.go blackholeRoute, remoteRoute), so it is false when every
// pool has VXLAN.
type RoutingSettings struct {
	Pools, Blocks []string
	BGP           bool
}

// PolicySettings: the pools Felix's sets hold and the natOutgoing ones.
type PolicySettings struct {
	Pools, Masquerade []string
	Nftables          bool
}

// ReadSettings reads the settings as the compiler does (the same helpers).
func ReadSettings(c *model.Cluster) Settings {
	s := Settings{Policy: PolicySettings{Nftables: readNftables(c)}}
	for _, p := range readPools(c) {
		if p.vxlanMode == calico.ModeNever {
			s.Routing.BGP = BGPEnabled(c)
		}
		s.Routing.Pools = append(s.Routing.Pools, p.cidr.String()+" vxlan "+p.vxlanMode+" ipip "+p.ipipMode)
		s.Policy.Pools = append(s.Policy.Pools, p.cidr.String())
		if p.natOutgoing {
			s.Policy.Masquerade = append(s.Policy.Masquerade, p.cidr.String())
		}
	}
	for _, b := range readBlocks(c) {
		s.Routing.Blocks = append(s.Routing.Blocks, b.cidr.String()+" "+b.node)
	}
	return s
}

func mode(s string) string {
	if s == "" {
		return calico.ModeNever
	}
	return s
}

// sortPods orders pods by creation: creationTimestamp, then pod IP (Calico
// IPAM hands out a block's addresses in request order), then name.
func sortPods(ps []*corev1.Pod) {
	// The addresses are parsed once, not per comparison, and the
	// position is the last key: a stable order from a sort with fewer
	// moves. "namespace/name" is made only for pods that tie before it
	// (pods apart in time or address, as a rule, need none).
	type keyed struct {
		p    *corev1.Pod
		addr netip.Addr
		i    int
	}
	ks := make([]keyed, len(ps))
	for i, p := range ps {
		a, _ := netip.ParseAddr(p.Status.PodIP)
		ks[i] = keyed{p, a, i}
	}
	slices.SortFunc(ks, func(x, y keyed) int {
		a, b := x.p, y.p
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			if a.CreationTimestamp.Before(&b.CreationTimestamp) {
				return -1
			}
			return 1
		}
		if c := x.addr.Compare(y.addr); c != 0 {
			return c
		}
		if c := strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name); c != 0 {
			return c
		}
		return x.i - y.i
	})
	for i := range ks {
		ps[i] = ks[i].p
	}
}

// felix returns the effective Felix settings of a node: FelixConfiguration
// "node.<name>" over "default" over Felix's defaults.
func (cc *clusterCtx) felix(ni *nodeInfo, nicMTU int) felixCfg {
	f := felixCfg{vni: defaultVNI, port: defaultVXLANPort}
	apply := func(s calico.FelixConfigurationSpec) {
		if s.VXLANVNI != nil {
			f.vni = *s.VXLANVNI
		}
		if s.VXLANPort != nil {
			f.port = *s.VXLANPort
		}
		if s.VXLANMTU != nil {
			f.mtu = *s.VXLANMTU
		}
		if s.VXLANEnabled != nil {
			f.vxlanOff = !*s.VXLANEnabled
		}
		if s.IPIPMTU != nil {
			f.ipipMTU = *s.IPIPMTU
		}
		if s.IPIPEnabled != nil {
			f.ipipOff = !*s.IPIPEnabled
		}
	}
	for _, name := range []string{"default", "node." + ni.name} {
		for _, fc := range cc.c.FelixConfigs {
			if fc.Name == name {
				apply(fc.Spec)
			}
		}
	}
	// int_dataplane.go ConfigureDefaultMTUs: VXLANMTU 0 means the host
	// MTU less the VXLAN overhead.
	if f.mtu == 0 {
		f.mtu = nicMTU - vxlanOverhead
	}
	if f.ipipMTU == 0 {
		f.ipipMTU = nicMTU - ipipOverhead
	}
	// Felix enables IPIP when a pool uses it unless configured off
	// (felix/calc/encapsulation_resolver.go); ipip_mgr.go gives tunl0 the
	// node's IPIP tunnel address, without which it has none to give.
	f.ipip = cc.anyIPIP && !f.ipipOff && ni.ipip.IsValid()
	return f
}

// poolOf returns the pool that holds p.
func (cc *clusterCtx) poolOf(p netip.Prefix) (pool, bool) {
	for _, pl := range cc.pools {
		if pl.cidr.Contains(p.Addr()) && pl.cidr.Bits() <= p.Bits() {
			return pl, true
		}
	}
	return pool{}, false
}

// blockOf returns the block that holds a.
func (cc *clusterCtx) blockOf(a netip.Addr) (block, bool) {
	for _, bits := range cc.blockBits {
		if p, err := a.Prefix(bits); err == nil {
			if b, ok := cc.blockIdx[p]; ok {
				return b, true
			}
		}
	}
	return block{}, false
}

func (cc *clusterCtx) compileNode(ni *nodeInfo) *Node {
	n := &Node{Name: ni.name, IP: ni.ip, calc: cc.calc}
	nicName := ni.host.NIC.Name
	if nicName == "" {
		nicName = defaultNICName
		n.note(areaHost, "the host NIC name is not given; assumed %s", nicName)
	}
	nicMTU := int(ni.host.NIC.MTU)
	if nicMTU == 0 {
		nicMTU = defaultNICMTU
	}
	fc := cc.felix(ni, nicMTU)
	hasVXLAN := cc.anyVX && !fc.vxlanOff && ni.vtep != nil
	if cc.anyVX && ni.vtep == nil {
		n.note(areaVXLAN, "no VXLAN tunnel address recorded for %s: Felix has no VTEP and creates no %s", ni.name, vxlanDevice)
	}
	if cc.anyIPIP && !fc.ipipOff && !ni.ipip.IsValid() {
		n.note(areaIPIP, "no IPIP tunnel address recorded for %s (%s): %s has no address, and BIRD routes no IPIP pool's block through it", ni.name, calico.AnnotationIPv4IPIPTunnelAddr, ipipDevice)
	}

	// Links.
	n.links = append(n.links, Link{Index: ifindexLo, Name: "lo", Kind: KindLoopback, MTU: 65536,
		MAC: net.HardwareAddr{0, 0, 0, 0, 0, 0}, Qdisc: "noqueue", State: "UNKNOWN",
		Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}})
	nicMAC, err := net.ParseMAC(ni.host.NIC.MAC)
	if err != nil {
		nicMAC = standInMAC("nic/" + ni.name)
		n.note(areaNIC, "the MAC of %s is not given; %s is a locally administered stand-in", nicName, nicMAC)
	}
	nic := Link{Index: ifindexNIC, Name: nicName, Kind: KindEthernet, MTU: nicMTU, MAC: nicMAC,
		Qdisc: "fq_codel", State: "UP", LinkLocal: linkLocal(nicMAC)}
	if ni.ip.IsValid() {
		nic.Addrs = []netip.Prefix{netip.PrefixFrom(ni.ip, ni.subnet.Bits())}
	}
	n.links = append(n.links, nic)
	if hasVXLAN {
		n.links = append(n.links, Link{Index: ifindexVXLAN, Name: vxlanDevice, Kind: KindVXLAN, MTU: fc.mtu,
			MAC: ni.vtep.mac, Qdisc: "noqueue", State: "UNKNOWN",
			Addrs:     []netip.Prefix{netip.PrefixFrom(ni.vtep.tunnel, 32)},
			LinkLocal: linkLocal(ni.vtep.mac),
			VXLAN:     &VXLANConfig{VNI: fc.vni, Local: ni.vtep.host, Parent: nicName, DstPort: fc.port}})
	}
	next := ifindexVXLAN + 1
	if fc.ipip {
		// The kernel makes tunl0 when the ipip module loads; the twin
		// gives it vxlan.calico's index, or the one after it on a node
		// with both (see the package documentation).
		at := ifindexVXLAN
		if hasVXLAN {
			at = next
			next++
		}
		n.links = append(n.links, Link{Index: at, Name: ipipDevice, Kind: KindIPIP, MTU: fc.ipipMTU,
			Qdisc: "noqueue", State: "UNKNOWN", Addrs: []netip.Prefix{netip.PrefixFrom(ni.ipip, 32)}})
	}
	podMTU := fc.mtu
	if !hasVXLAN {
		podMTU = nicMTU
	}
	for _, p := range ni.pods {
		// cni-plugin/pkg/dataplane/linux/dataplane_linux.go: the host end
		// is named by VethNameForWorkload and given MAC ee:ee:ee:ee:ee:ee.
		n.links = append(n.links, Link{Index: next, Name: VethName(p.Namespace, p.Name), Kind: KindVeth, MTU: podMTU,
			MAC: net.HardwareAddr{0xee, 0xee, 0xee, 0xee, 0xee, 0xee}, Qdisc: "noqueue", State: "UP",
			LinkLocal: linkLocal(net.HardwareAddr{0xee, 0xee, 0xee, 0xee, 0xee, 0xee}),
			Peer:      &VethPeer{Index: podEth0Index, NetNS: netnsName(p), Pod: p.Namespace + "/" + p.Name}})
		next++
	}

	// The routing table and the VXLAN neighbour and FDB entries hold an
	// entry per other node: built for every node they are O(nodes²) in time
	// and memory (gigabytes at 5,000 nodes), so they are derived on first
	// use (see Node.derive); the lookups a trace makes are answered
	// without building them (RouteTo, NeighborFor, FDBFor).
	n.cc, n.ni, n.nic, n.hasVXLAN, n.fc = cc, ni, nicName, hasVXLAN, fc
	n.notesAt = len(n.notes)
	n.kp = cc.kp.ForNode(ni.name, ni.ip)
	n.kpNotes = cc.kp.Notes
	n.cal = cc.cal.forNode(ni, n)
	return n
}

// noteArea says which commands' output a note explains (Node.RouteNotes
// and the like).
type noteArea uint8

const (
	areaHost      noteArea = iota // the host NIC's name: every ip command
	areaNIC                       // the host NIC's link: ip link, ip addr
	areaVXLAN                     // vxlan.calico: ip link, addr, route, neigh, fdb
	areaIPIP                      // tunl0: ip link, addr, route
	areaRoutes                    // ip route
	areaL2                        // ip neigh, bridge fdb
	areaCalico                    // nft: table ip calico
	areaKubeProxy                 // nft: table ip kube-proxy
)

type nodeNote struct {
	area noteArea
	text string
}

func (n *Node) note(area noteArea, format string, args ...any) {
	n.notes = append(n.notes, nodeNote{area: area, text: fmt.Sprintf(format, args...)})
}

// VethName is the host-side interface name Calico gives a pod:
// "cali" and the first 11 hex digits of SHA-1("<namespace>.<pod>")
// (libcalico-go/lib/backend/k8s/conversion/workload_endpoint_default.go
// VethNameForWorkload with the default prefix).
func VethName(namespace, pod string) string {
	// The first 11 hex digits need the first 6 bytes of the hash.
	h := sha1.Sum([]byte(namespace + "." + pod))
	var b [len("cali") + 12]byte
	copy(b[:], "cali")
	hex.Encode(b[len("cali"):], h[:6])
	return string(b[:len("cali")+11])
}

// standInMAC is a deterministic locally administered unicast MAC.
func standInMAC(seed string) net.HardwareAddr {
	s := sha256.Sum256([]byte(seed))
	return net.HardwareAddr{0x02, s[0], s[1], s[2], s[3], s[4]}
}

// linkLocal is the kernel's EUI-64 link-local address of a MAC
// (net/ipv6/addrconf.c addrconf_ifid_eui48).
func linkLocal(mac net.HardwareAddr) netip.Prefix {
	if len(mac) != 6 {
		return netip.Prefix{}
	}
	var b [16]byte
	b[0], b[1] = 0xfe, 0x80
	b[8], b[9], b[10] = mac[0]^0x02, mac[1], mac[2]
	b[11], b[12] = 0xff, 0xfe
	b[13], b[14], b[15] = mac[3], mac[4], mac[5]
	return netip.PrefixFrom(netip.AddrFrom16(b), 64)
}

// netnsName is a stand-in for the name containerd gives a pod's network
// namespace, "cni-" and a random UUID; here the UUID is derived from the
// pod so that output is stable.
func netnsName(p *corev1.Pod) string {
	s := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
	s[6] = s[6]&0x0f | 0x40
	s[8] = s[8]&0x3f | 0x80
	// "cni-%x-%x-%x-%x-%x" of s[0:4], s[4:6], s[6:8], s[8:10], s[10:16],
	// written without fmt: every pod of every compiled node has one.
	b := make([]byte, 0, len("cni-")+36)
	b = append(b, "cni-"...)
	for i, part := range [][]byte{s[0:4], s[4:6], s[6:8], s[8:10], s[10:16]} {
		if i > 0 {
			b = append(b, '-')
		}
		b = hex.AppendEncode(b, part)
	}
	return string(b)
}

// Has says whether a Linux node has that name: whether Node compiles one.
func (x *Compiler) Has(name string) bool { return x.byName[name] != nil }
