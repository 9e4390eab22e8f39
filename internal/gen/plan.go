package gen

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
)

// Fixed facts of every generated cluster.
const (
	clusterName       = "gen"
	domain            = "gen.example.com"
	kubernetesVersion = "v1.37.2"
	containerRuntime  = "containerd://2.2.2"
	linuxOSImage      = "Ubuntu 26.04.1 LTS"
	linuxKernel       = "7.0.0-42-generic"
	windowsOSImage    = "Windows Server 2025 Datacenter"
	windowsKernel     = "10.0.26100.33438"
	windowsBuild      = "10.0.26100"
	serviceCIDR       = "10.96.0.0/12"
	poolName          = "default-ipv4-ippool"
	blockSize         = 26
	runtimeClassName  = "windows-2025"
	agentName         = "node-agent"
	apiPort           = 6443
)

var (
	nodeNet = netip.MustParsePrefix("192.168.0.0/16")
	gateway = netip.MustParseAddr("192.168.0.1")
	// poolBase starts the pod network; its length grows with the node count.
	poolBase = netip.MustParseAddr("10.128.0.0")
	// epoch is when the control plane joined; workers follow 15 s apart.
	epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
)

// host is one machine of the plan.
type host struct {
	name, fqdn   string
	windows      bool
	controlPlane bool
	addr         netip.Addr
	created      time.Time
	cpu, memory  string
	podCIDR      string
	// Calico, when the plan runs IPAM: the VXLAN tunnel address and, on
	// Windows, the DrPort adapter's MAC (the VTEP) and GUID. Only plain Node
	// objects carry the MAC (as calico-node-windows recorded it); the
	// Cluster kind's Windows hosts observe neither, like a fresh join.
	tunnel          netip.Addr
	vtepMAC, drPort string
	nicMAC          string
	// ips are the workload addresses on this host, handed out in order.
	ips  []netip.Addr
	next int
}

func (h *host) os() string {
	if h.windows {
		return "windows"
	}
	return "linux"
}

// namespace is one workload namespace.
type namespace struct {
	name, team, env string
	// enforce is the Pod Security enforce level (restricted or baseline;
	// baseline namespaces warn and audit at restricted).
	enforce string
	// apps[first:last] are its apps.
	first, last int
	policies    int
}

// app is one Deployment with its Services.
type app struct {
	name     string
	ns       int
	windows  bool
	replicas int
	tier     string
	metrics  bool // a second container port named metrics
	image    string
	// firstPod indexes plan.podHost.
	firstPod int
	services int
}

// plan is everything decided before the first document is written.
type plan struct {
	o     Options
	split podSplit
	rng   *rand.Rand

	hosts   []host
	linux   []int // Linux worker indexes into hosts
	windows []int // Windows worker indexes
	pool    netip.Prefix

	namespaces []namespace
	apps       []app
	// podHost is the host of each workload pod in the order they are
	// written: the node agent's (one per Linux worker), then each app's.
	podHost []int32
	// runIPAM: addresses are derived here (observed pods, or the tunnel
	// addresses plain Node objects carry).
	runIPAM bool
}

var (
	teamWords  = []string{"payments", "search", "checkout", "identity", "catalog", "shipping", "billing", "media", "ledger", "reports", "growth", "support", "risk", "pricing", "inventory", "messaging"}
	linuxWords = []string{"web", "api", "cart", "auth", "feed", "queue", "cache", "worker", "gateway", "render", "index", "notify", "export", "ingest", "profile", "session"}
	// Windows images are nanoserver ltsc2025 builds: process isolation
	// needs the host's build (Windows Server 2025, 10.0.26100).
	windowsWords = []string{"aspnet", "orders", "portal", "legacy"}
	linuxImages  = []string{"ghcr.io/example/%s:1.%d", "registry.example.com/%s/app:2.%d", "ghcr.io/example/%s-service:0.%d"}
	tiers        = []string{"web", "api", "worker"}
)

func newPlan(o Options) (*plan, error) {
	s, err := o.split()
	if err != nil {
		return nil, err
	}
	p := &plan{
		o:       o,
		split:   s,
		rng:     rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)),
		runIPAM: o.ObservedIPs || o.PlainNodes,
	}
	p.planHosts()
	p.planNamespaces()
	p.planApps()
	p.planServices()
	p.planPolicies()
	if o.ObservedIPs {
		p.place()
	}
	if p.runIPAM {
		if err := p.assignAddresses(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// vxlanMode is the pool's VXLAN mode as the operator sets it from the
// Installation's encapsulation (VXLANCrossSubnet before a migration).
func vxlanMode(o Options) string {
	if o.BeforeMigration {
		return calico.ModeCrossSubnet
	}
	return calico.ModeAlways
}

// poolPrefix: one /24 pod CIDR per node must fit the pod subnet (the
// controller manager's default node-cidr-mask-size), which also leaves four
// /26 blocks per node for Calico; never smaller than /16.
func poolPrefix(nodes int) netip.Prefix {
	bitsLen := min(16, 24-log2ceil(nodes))
	return netip.PrefixFrom(poolBase, bitsLen)
}

func addrAdd(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func pad(i, width int) string {
	s := strconv.Itoa(i)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

func (p *plan) planHosts() {
	o := p.o
	p.pool = poolPrefix(o.Nodes)
	width := max(3, len(strconv.Itoa(max(p.split.linuxWorkers, p.split.windowsWorkers))))
	p.hosts = make([]host, 0, o.Nodes)
	add := func(name string, windows, cp bool) {
		i := len(p.hosts)
		h := host{
			name: name, fqdn: name + "." + domain, windows: windows, controlPlane: cp,
			addr:    addrAdd(nodeNet.Addr(), 10+i),
			created: epoch.Add(time.Duration(i) * 15 * time.Second),
		}
		switch {
		case cp:
			h.cpu, h.memory = "8", "32Gi"
		case windows:
			h.cpu, h.memory = "8", "32Gi"
		default:
			h.cpu, h.memory = "16", "64Gi"
		}
		// The controller manager hands out /24s of the pod subnet in join order.
		h.podCIDR = netip.PrefixFrom(addrAdd(p.pool.Addr(), i<<8), 24).String()
		if windows {
			h.nicMAC = p.mac("00-15-5D", '-', true)
			h.vtepMAC = p.mac("00:15:5d", ':', false)
			h.drPort = p.guid()
		}
		p.hosts = append(p.hosts, h)
	}
	add(clusterName+"-cp-1", false, true)
	for i := 1; i <= p.split.linuxWorkers; i++ {
		p.linux = append(p.linux, len(p.hosts))
		add(clusterName+"-linux-"+pad(i, width), false, false)
	}
	for i := 1; i <= p.split.windowsWorkers; i++ {
		p.windows = append(p.windows, len(p.hosts))
		add(clusterName+"-win-"+pad(i, width), true, false)
	}
}

// mac is a Hyper-V MAC (OUI 00:15:5D) with three random bytes.
func (p *plan) mac(oui string, sep byte, upper bool) string {
	v := p.rng.Uint32()
	f := "%02x"
	if upper {
		f = "%02X"
	}
	b := []byte(oui)
	for i := 0; i < 3; i++ {
		b = append(b, sep)
		b = fmt.Appendf(b, f, byte(v>>(8*i)))
	}
	return string(b)
}

func (p *plan) guid() string {
	a, b := p.rng.Uint64(), p.rng.Uint64()
	return fmt.Sprintf("%08X-%04X-%04X-%04X-%012X", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}

func (p *plan) planNamespaces() {
	p.namespaces = make([]namespace, p.o.Namespaces)
	for i := range p.namespaces {
		team := teamWords[p.rng.IntN(len(teamWords))]
		ns := namespace{name: team + "-" + strconv.Itoa(i+1), team: team, env: "prod", enforce: "restricted"}
		if p.rng.IntN(5) == 0 {
			ns.enforce = "baseline"
		}
		if p.rng.IntN(3) == 0 {
			ns.env = "staging"
		}
		p.namespaces[i] = ns
	}
}

// planApps cuts the Deployment pods into apps of 1-8 replicas (Linux) or
// 1-4 (Windows), spreads them over the namespaces and orders them by
// namespace, the order they are written in.
func (p *plan) planApps() {
	var apps []app
	k := 0
	cut := func(total, maxReplicas int, windows bool) {
		for total > 0 {
			k++
			r := min(total, 1+p.rng.IntN(maxReplicas))
			total -= r
			a := app{replicas: r, windows: windows, ns: p.rng.IntN(len(p.namespaces)), tier: tiers[p.rng.IntN(len(tiers))]}
			if windows {
				word := windowsWords[p.rng.IntN(len(windowsWords))]
				a.name = word + "-" + strconv.Itoa(k)
				a.image = "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025"
				if word != "aspnet" {
					a.image = fmt.Sprintf("registry.example.com/win/%s:1.%d-nanoserver-ltsc2025", word, p.rng.IntN(20))
				}
				a.tier = "web"
			} else {
				word := linuxWords[p.rng.IntN(len(linuxWords))]
				a.name = word + "-" + strconv.Itoa(k)
				a.image = fmt.Sprintf(linuxImages[p.rng.IntN(len(linuxImages))], word, p.rng.IntN(20))
				a.metrics = p.rng.IntN(2) == 0
			}
			apps = append(apps, a)
		}
	}
	cut(p.split.linuxPods, 8, false)
	cut(p.split.windowsPods, 4, true)
	// Group by namespace, keeping creation order inside each (counting sort).
	count := make([]int, len(p.namespaces)+1)
	for _, a := range apps {
		count[a.ns+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	for i := range p.namespaces {
		p.namespaces[i].first, p.namespaces[i].last = count[i], count[i+1]
	}
	p.apps = make([]app, len(apps))
	for _, a := range apps {
		p.apps[count[a.ns]] = a
		count[a.ns]++
	}
	// Pod indexes: the agent's pods come first.
	n := p.split.agentPods()
	for i := range p.apps {
		p.apps[i].firstPod = n
		n += p.apps[i].replicas
	}
}

// planServices gives every app its Services: with fewer Services than apps,
// apps spread evenly get one; with more, each gets one and some more.
func (p *plan) planServices() {
	s, d := p.o.Services, len(p.apps)
	if s == 0 || d == 0 {
		return
	}
	if s <= d {
		for i := 0; i < s; i++ {
			p.apps[i*d/s].services++
		}
		return
	}
	for i := range p.apps {
		p.apps[i].services = s / d
		if i < s%d {
			p.apps[i].services++
		}
	}
}

func (p *plan) planPolicies() {
	k := len(p.namespaces)
	for i := range p.namespaces {
		p.namespaces[i].policies = p.o.Policies / k
		if i < p.o.Policies%k {
			p.namespaces[i].policies++
		}
	}
}

// place puts every workload pod on a node: the agent's on each Linux worker,
// Deployment pods round-robin over the workers of their OS from a random
// start, so that no Linux worker gets more than 100 and no Windows worker
// more than 58.
func (p *plan) place() {
	total := p.split.agentPods() + p.split.deploymentPods()
	p.podHost = make([]int32, 0, total)
	if p.split.agent {
		for _, h := range p.linux {
			p.podHost = append(p.podHost, int32(h))
		}
	}
	var curL, curW int
	if len(p.linux) > 0 {
		curL = p.rng.IntN(len(p.linux))
	}
	if len(p.windows) > 0 {
		curW = p.rng.IntN(len(p.windows))
	}
	for _, a := range p.apps {
		for r := 0; r < a.replicas; r++ {
			if a.windows {
				p.podHost = append(p.podHost, int32(p.windows[curW]))
				curW = (curW + 1) % len(p.windows)
			} else {
				p.podHost = append(p.podHost, int32(p.linux[curL]))
				curL = (curL + 1) % len(p.linux)
			}
		}
	}
}

// assignAddresses runs Calico IPAM (internal/calico/ipam, the twin's own
// model) over the cluster's history: each node's calico-node claims its
// first block as the node joins (the Linux VXLAN tunnel address, the
// Windows block with its reservations), then the CNI plugin gives each
// node's pods their addresses. The addresses are therefore ones Calico
// could have handed out: from blocks affine to the pod's node, found by each
// host's seeded walk over the pool.
func (p *plan) assignAddresses() error {
	m, err := ipam.New([]ipam.Pool{{
		Name: poolName, CIDR: p.pool, BlockSize: blockSize, NodeSelector: "all()", VXLANMode: vxlanMode(p.o),
	}}, ipam.Config{StrictAffinity: !p.o.BeforeMigration, AutoAllocateBlocks: true, Now: epoch})
	if err != nil {
		return err
	}
	for i := range p.hosts {
		h := &p.hosts[i]
		m.SetNode(h.name, map[string]string{corev1.LabelOSStable: h.os(), corev1.LabelHostname: h.name})
	}
	// What VXLANTunnelAddress does on a node that has no address yet, without
	// its search of every block for an earlier one (quadratic in the nodes):
	// Linux auto-assigns one address for the Tunnel use, claiming the node's
	// first block; Windows claims the block with its reservations and uses
	// its .1.
	for i := range p.hosts {
		h := &p.hosts[i]
		if h.windows {
			cidr, err := m.EnsureWindowsBlock(h.name)
			if err != nil {
				return fmt.Errorf("calico-node-windows on %s: %w", h.name, err)
			}
			h.tunnel = addrAdd(cidr.Addr(), 1)
			continue
		}
		ia, err := m.AutoAssign(ipam.AutoAssignArgs{
			Num: 1, Handle: ipam.VXLANTunnelHandle(h.name), Host: h.name, Pools: []netip.Prefix{p.pool}, Use: ipam.UseTunnel,
			Attrs: map[string]string{ipam.AttrNode: h.name, ipam.AttrType: ipam.AttrTypeVXLAN},
		})
		if err == nil {
			err = ia.PartialFulfillmentError()
		}
		if err != nil {
			return fmt.Errorf("calico-node on %s: %w", h.name, err)
		}
		h.tunnel = ia.IPs[0]
	}
	if len(p.podHost) == 0 {
		return nil
	}
	count := make([]int, len(p.hosts))
	for _, h := range p.podHost {
		count[h]++
	}
	for i := range p.hosts {
		if count[i] == 0 {
			continue
		}
		h := &p.hosts[i]
		args := ipam.AutoAssignArgs{Num: count[i], Host: h.name, Use: ipam.UseWorkload, OS: h.os()}
		if h.windows {
			args.Reserved = ipam.WindowsReserved()
			args.MaxBlocksPerHost = 1
		}
		ia, err := m.AutoAssign(args)
		if err == nil {
			err = ia.PartialFulfillmentError()
		}
		if err != nil {
			return fmt.Errorf("addresses for %d pods on %s: %w", count[i], h.name, err)
		}
		h.ips = ia.IPs
	}
	return nil
}

// podIP hands out the next address of the host.
func (h *host) podIP() string {
	a := h.ips[h.next]
	h.next++
	return a.String()
}

// suffix is a 5-character name suffix from Kubernetes' alphabet
// (k8s.io/apimachinery/pkg/util/rand: no vowels, no 0/1/3).
func (p *plan) suffix() string {
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	v := p.rng.Uint64()
	for i := range b {
		b[i] = alphanums[v%uint64(len(alphanums))]
		v /= uint64(len(alphanums))
	}
	return string(b[:])
}

// templateHash is a pod-template-hash as the Deployment controller spells
// it (rand.SafeEncodeString of a decimal FNV-32a value), drawn at random:
// observed ReplicaSet names are values the twin takes, not derives.
func (p *plan) templateHash() string {
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	s := []byte(strconv.FormatUint(uint64(p.rng.Uint32()), 10))
	for i, c := range s {
		s[i] = alphanums[int(c)%len(alphanums)]
	}
	return string(s)
}
