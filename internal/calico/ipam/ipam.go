// Package ipam is Calico IPAM as libcalico-go implements it, as a pure,
// deterministic model: the same pools, nodes and calls give the same
// blocks, affinities and addresses as a real cluster.
//
// What it follows (projectcalico/calico, identical on release-v3.33 and
// master 87c15906):
//   - libcalico-go/lib/ipam/ipam.go: autoAssign (affine blocks, new block
//     claims, borrowing from other hosts' blocks without strict affinity),
//     AssignIP, ReleaseIPs, EnsureBlock, GetIPAMConfig, pool selection.
//   - libcalico-go/lib/ipam/ipam_block.go: ordinal hand-out, reservations,
//     release and cooldown garbage collection.
//   - libcalico-go/lib/ipam/ipam_block_reader_writer.go: the host-seeded
//     random walk over a pool's blocks, findUsableBlock, empty block reclaim,
//     claimAffineBlock, releaseBlockAffinity.
//   - cni-plugin/pkg/ipamplugin/ipam_plugin.go (AssignPod): what the CNI
//     plugin asks for on Linux and on Windows; cni-plugin/pkg/k8s/k8s.go and
//     internal/pkg/utils/utils.go (AssignPodRequest): the ipv4pools and
//     ipAddrs annotations, ResolvePools; lib/ipam/pools.go
//     SelectsNamespace.
//   - node/pkg/allocateip/allocateip.go (TunnelAddress: IPIP and VXLAN
//     tunnel addresses kept, moved or removed) and
//     node/pkg/lifecycle/startup/startup_windows.go (VXLANTunnelAddress).
//   - kube-controllers/pkg/controllers/ippool/pool_controller.go and
//     lib/clientv3/client.go filterIPPool (Allocatable): a pool overlapping
//     an older one is not used.
//
// Not modelled: IPReservation resources (upstream skips their ranges when
// handing out addresses; the model does not), IPAMHandle objects, KubeVirt
// address persistence, LoadBalancer ("virtual") affinities, concurrent
// writers (every datastore write succeeds first time). The walk over pools
// of one-address blocks (/32, /128) is seeded from the wall clock upstream,
// so which block such a pool hands out is not predictable (see
// Config.SmallBlockSeed).
//
// Time: nothing reads the wall clock. The model keeps a logical clock that
// starts at Config.Now and moves only with Advance; it stamps affinity
// claim times, release cooldowns and new blocks' sequence numbers, exactly
// where upstream calls time.Now.
package ipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
)

// Allowed uses of a pool (projectcalico.org/v3 IPPoolAllowedUse).
const (
	UseWorkload = "Workload"
	UseTunnel   = "Tunnel"
)

// OS label values.
const (
	OSLinux   = "linux"
	OSWindows = "windows"
)

// Errors with upstream's text (libcalico-go lib/ipam/ipam.go).
var (
	ErrBlockLimit      = errors.New("cannot allocate new block due to per host block limit")
	ErrNoQualifiedPool = errors.New("cannot find a qualified ippool")
	ErrStrictAffinity  = errors.New("global strict affinity should not be false for Windows node")
	ErrUseRequired     = errors.New("must specify the intended use when assigning an IP")
)

// Pool is an enabled or disabled IP pool as IPAM sees it.
type Pool struct {
	Name string
	CIDR netip.Prefix
	// BlockSize is the prefix length of its blocks; 0 means 26 (IPv4) or
	// 122 (IPv6), the projectcalico.org/v3 defaults.
	BlockSize    int
	NodeSelector string // "" selects every node, like all()
	// NamespaceSelector ("" selects every namespace) is matched against the
	// labels of the pod's namespace (lib/ipam/pools.go SelectsNamespace).
	NamespaceSelector string
	Disabled          bool
	// Unallocatable is the Allocatable=False condition calico-kube-controllers
	// sets on a pool that overlaps an older one: GetEnabledPools skips it
	// (lib/clientv3/client.go filterIPPool).
	Unallocatable bool
	// VXLANMode and IPIPMode (Always, CrossSubnet, Never or "") decide
	// whether nodes get a VXLAN or an IPIP tunnel address from this pool.
	VXLANMode string
	IPIPMode  string
	// AllowedUses defaults to Workload and Tunnel.
	AllowedUses []string
	// AssignmentMode Automatic (default) or Manual; Manual pools are only
	// used when asked for by CIDR.
	AssignmentMode string
}

// PoolFromCalico converts a projectcalico.org IPPool.
func PoolFromCalico(p *calico.IPPool) (Pool, error) {
	cidr, err := netip.ParsePrefix(p.Spec.CIDR)
	if err != nil {
		return Pool{}, fmt.Errorf("IPPool %s: %w", p.Name, err)
	}
	return Pool{
		Name: p.Name, CIDR: cidr, BlockSize: p.Spec.BlockSize, NodeSelector: p.Spec.NodeSelector,
		NamespaceSelector: p.Spec.NamespaceSelector, Disabled: p.Spec.Disabled,
		VXLANMode: p.Spec.VXLANMode, IPIPMode: p.Spec.IPIPMode, AllowedUses: p.Spec.AllowedUses,
		AssignmentMode: p.Spec.AssignmentMode,
	}, nil
}

type pool struct {
	Pool
	sel       selector.Selector
	nsSel     selector.Selector
	numBlocks *big.Int
	blockSpan *big.Int // addresses per block
}

func (p *pool) version() int {
	if p.CIDR.Addr().Is4() {
		return 4
	}
	return 6
}

func (p *pool) allows(use string) bool { return slices.Contains(p.AllowedUses, use) }

// selectsNode evaluates the pool's nodeSelector against the node's labels
// (libcalico-go lib/ipam/pools.go SelectsNode).
func (p *pool) selectsNode(labels map[string]string) bool { return p.sel.Evaluate(labels) }

// selectsNamespace evaluates the pool's namespaceSelector against the
// namespace's labels; a request without a namespace (tunnel addresses) is
// evaluated against no labels (lib/ipam/pools.go SelectsNamespace).
func (p *pool) selectsNamespace(labels map[string]string) bool {
	if p.NamespaceSelector == "" {
		return true
	}
	if labels == nil {
		labels = map[string]string{}
	}
	return p.nsSel.Evaluate(labels)
}

// Config is the cluster's IPAMConfiguration plus the model's own knobs.
type Config struct {
	StrictAffinity     bool
	AutoAllocateBlocks bool
	MaxBlocksPerHost   int
	IPCooldownSeconds  int
	// Now is where the logical clock starts (zero is allowed).
	Now time.Time
	// SmallBlockSeed replaces upstream's wall-clock seed of the block walk
	// for pools whose blocks hold one address.
	SmallBlockSeed int64
}

// DefaultConfig is what GetIPAMConfig returns when no IPAMConfiguration
// exists: strictAffinity false, autoAllocateBlocks true, no block limit.
func DefaultConfig() Config { return Config{AutoAllocateBlocks: true} }

// ConfigFrom reads an IPAMConfiguration; nil gives DefaultConfig.
// autoAllocateBlocks defaults to true (its CRD default).
func ConfigFrom(c *calico.IPAMConfiguration) Config {
	cfg := DefaultConfig()
	if c == nil {
		return cfg
	}
	cfg.StrictAffinity = c.Spec.StrictAffinity
	if c.Spec.AutoAllocateBlocks != nil {
		cfg.AutoAllocateBlocks = *c.Spec.AutoAllocateBlocks
	}
	cfg.MaxBlocksPerHost = int(c.Spec.MaxBlocksPerHost)
	cfg.IPCooldownSeconds = int(c.Spec.IPCooldownSeconds)
	return cfg
}

// Node is a node as pool selection sees it: its name and labels. Its OS is
// the kubernetes.io/os label.
type Node struct {
	Name   string
	Labels map[string]string
}

// OS is the node's kubernetes.io/os label.
func (n Node) OS() string { return n.Labels[corev1.LabelOSStable] }

type affKey struct {
	host string
	cidr netip.Prefix
}

// BlockAffinity states.
const (
	StateConfirmed       = "confirmed"
	StatePending         = "pending"
	StatePendingDeletion = "pendingDeletion"
)

type affinity struct{ state string }

// IPAM is the model. It is not safe for concurrent use.
type IPAM struct {
	cfg    Config
	now    time.Time
	pools  []*pool // sorted by name, as GetEnabledPools returns them
	nodes  map[string]Node
	blocks map[netip.Prefix]*block
	affs   map[affKey]*affinity

	// Indexes, so that per-node and per-pod calls do not scan every block
	// or affinity of the cluster (5,000 nodes: thousands of each).
	// affsByHost holds the keys of affs by host; putAff and dropAff keep
	// it exact.
	affsByHost map[string]map[netip.Prefix]struct{}
	// byHandle holds, by sanitized handle, the first block that may have
	// an attribute with that handle, moreHandles the others: a superset
	// (attributes dropped by garbage collection and deleted blocks are not
	// removed), so readers still check each block and find exactly what a
	// scan of all blocks finds. Nearly every handle (one per pod) lives in
	// one block: a set per handle cost a map each.
	byHandle    map[string]netip.Prefix
	moreHandles map[string][]netip.Prefix
	// handlesBase, when set, holds the entries of byHandle a restored
	// model took from the state it was restored from (Restore), which
	// never changes: byHandle holds only the handles noted since.
	handlesBase map[string]netip.Prefix

	// loaded holds the blocks read from IPAMBlock objects; inferred those
	// the model built from observed pod addresses alone (AssignObserved),
	// whose free list SettleObserved reorders.
	loaded, inferred map[netip.Prefix]bool
	// strictRead: an AssignIP's outcome depended on strictAffinity
	// (StrictAffinityRead).
	strictRead bool
}

// New builds a model over the given pools (enabled and disabled).
func New(pools []Pool, cfg Config) (*IPAM, error) {
	m := &IPAM{cfg: cfg, now: cfg.Now, nodes: map[string]Node{}, blocks: map[netip.Prefix]*block{}, affs: map[affKey]*affinity{},
		affsByHost: map[string]map[netip.Prefix]struct{}{}, byHandle: map[string]netip.Prefix{}, moreHandles: map[string][]netip.Prefix{},
		loaded: map[netip.Prefix]bool{}, inferred: map[netip.Prefix]bool{}}
	for _, p := range pools {
		pp, err := newPool(p)
		if err != nil {
			return nil, &PoolError{Pool: p.Name, Err: err}
		}
		m.pools = append(m.pools, pp)
	}
	sort.SliceStable(m.pools, func(i, j int) bool { return m.pools[i].Name < m.pools[j].Name })
	return m, nil
}

// PoolError is a pool New refuses, named so that callers can say where the
// pool came from.
type PoolError struct {
	Pool string
	Err  error
}

func (e *PoolError) Error() string { return e.Err.Error() }
func (e *PoolError) Unwrap() error { return e.Err }

func newPool(p Pool) (*pool, error) {
	if !p.CIDR.IsValid() {
		return nil, fmt.Errorf("IP pool %q has no CIDR", p.Name)
	}
	p.CIDR = p.CIDR.Masked()
	bits := p.CIDR.Addr().BitLen()
	if p.BlockSize == 0 {
		p.BlockSize = 26
		if bits == 128 {
			p.BlockSize = 122
		}
	}
	// Block size limits of IPPool validation (libcalico-go
	// lib/validator/v3): 20-32 for IPv4, 116-128 for IPv6.
	lo := 20
	if bits == 128 {
		lo = 116
	}
	if p.BlockSize < lo || p.BlockSize > bits {
		return nil, fmt.Errorf("IP pool %q: block size %d is out of range %d-%d", p.Name, p.BlockSize, lo, bits)
	}
	if p.BlockSize < p.CIDR.Bits() {
		return nil, fmt.Errorf("IP pool %q: block size /%d is larger than the pool %s", p.Name, p.BlockSize, p.CIDR)
	}
	if len(p.AllowedUses) == 0 {
		p.AllowedUses = []string{UseWorkload, UseTunnel}
	}
	if p.AssignmentMode == "" {
		p.AssignmentMode = "Automatic"
	}
	sel, err := selector.Parse(p.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("IP pool %q: nodeSelector %q: %w", p.Name, p.NodeSelector, err)
	}
	nsSel, err := selector.Parse(p.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("IP pool %q: namespaceSelector %q: %w", p.Name, p.NamespaceSelector, err)
	}
	return &pool{
		Pool:      p,
		sel:       sel,
		nsSel:     nsSel,
		numBlocks: pow2(p.BlockSize - p.CIDR.Bits()),
		blockSpan: pow2(bits - p.BlockSize),
	}, nil
}

// SetNode registers a node (or replaces its labels). Pool selection and
// the per-OS behaviour of AssignPod read these labels.
func (m *IPAM) SetNode(name string, labels map[string]string) {
	m.nodes[name] = Node{Name: name, Labels: labels}
}

// Config returns the configuration in force.
func (m *IPAM) Config() Config { return m.cfg }

// Now is the logical clock.
func (m *IPAM) Now() time.Time { return m.now }

// Advance moves the logical clock, letting cooldowns expire and making
// recently claimed empty blocks reclaimable (EmptyBlockMinReclaimAge).
func (m *IPAM) Advance(d time.Duration) { m.now = m.now.Add(d) }

// SetNow sets the logical clock. A caller replaying a cluster's history
// (observed addresses, then node joins, then new pods) sets it to when
// each step happened, so that claim times follow the join order.
func (m *IPAM) SetNow(t time.Time) { m.now = t }

func (m *IPAM) node(host string) (Node, error) {
	n, ok := m.nodes[host]
	if !ok {
		// libcalico-go's ErrorResourceDoesNotExist for a missing Node.
		return Node{}, fmt.Errorf("resource does not exist: Node(%s) with error: nodes %q not found", host, host)
	}
	return n, nil
}

// ipamConfig is GetIPAMConfig: a caller running on Windows (the CNI plugin
// or calico-node there) gets ErrStrictAffinity unless strictAffinity is on.
func (m *IPAM) ipamConfig(os string) (Config, error) {
	if os == OSWindows && !m.cfg.StrictAffinity {
		return Config{}, ErrStrictAffinity
	}
	return m.cfg, nil
}

// enabledPools of one IP version, in name order: GetEnabledPools, which
// skips disabled pools and those whose Allocatable condition is False
// (lib/clientv3/client.go filterIPPool).
func (m *IPAM) enabledPools(version int) []*pool {
	var out []*pool
	for _, p := range m.pools {
		if !p.Disabled && !p.Unallocatable && p.version() == version {
			out = append(out, p)
		}
	}
	return out
}

// poolFor returns the first pool (name order) containing addr.
func poolFor(pools []*pool, addr netip.Addr) *pool {
	for _, p := range pools {
		if p.CIDR.Contains(addr) {
			return p
		}
	}
	return nil
}

func (m *IPAM) poolByCIDR(version int, cidr netip.Prefix) *pool {
	for _, p := range m.enabledPools(version) {
		if p.CIDR == cidr.Masked() {
			return p
		}
	}
	return nil
}

// referenceMode turns the indexes and IPAM.view's in-place reads off: every
// lookup scans as upstream's datastore list does and every read copies the
// block. Only tests set it, to check that both give the same results.
var referenceMode bool

// putAff records an affinity, keeping affsByHost in step.
func (m *IPAM) putAff(k affKey, a *affinity) {
	m.affs[k] = a
	set := m.affsByHost[k.host]
	if set == nil {
		set = map[netip.Prefix]struct{}{}
		m.affsByHost[k.host] = set
	}
	set[k.cidr] = struct{}{}
}

// dropAff deletes an affinity, keeping affsByHost in step.
func (m *IPAM) dropAff(k affKey) {
	delete(m.affs, k)
	if set := m.affsByHost[k.host]; set != nil {
		delete(set, k.cidr)
		if len(set) == 0 {
			delete(m.affsByHost, k.host)
		}
	}
}

// noteHandle records that the block may hold an attribute with the handle
// (see byHandle).
func (m *IPAM) noteHandle(h *string, cidr netip.Prefix) {
	if h == nil {
		return
	}
	key := sanitizeHandle(*h)
	first, ok := m.firstBlock(key)
	switch {
	case !ok:
		m.byHandle[key] = cidr
	case first != cidr && !slices.Contains(m.moreHandles[key], cidr):
		m.moreHandles[key] = append(m.moreHandles[key], cidr)
	}
}

// firstBlock is byHandle's entry for the handle, else handlesBase's.
func (m *IPAM) firstBlock(handle string) (netip.Prefix, bool) {
	if first, ok := m.byHandle[handle]; ok {
		return first, true
	}
	first, ok := m.handlesBase[handle]
	return first, ok
}

// blocksWithHandle lists, in sortedBlocks order, the existing blocks that
// may hold the (sanitized) handle.
func (m *IPAM) blocksWithHandle(handle string) []netip.Prefix {
	if referenceMode {
		return m.sortedBlocks()
	}
	first, ok := m.firstBlock(handle)
	if !ok {
		return nil
	}
	cands := append(append(make([]netip.Prefix, 0, 1+len(m.moreHandles[handle])), first), m.moreHandles[handle]...)
	out := cands[:0]
	for _, c := range cands {
		if _, ok := m.blocks[c]; ok {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, comparePrefix)
	return out
}
