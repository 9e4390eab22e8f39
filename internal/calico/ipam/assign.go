package ipam

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// EmptyBlockMinReclaimAge is how long after its claim an empty block of
// another host may be taken over (ipam_block_reader_writer.go).
const EmptyBlockMinReclaimAge = time.Minute

// defaultMaxBlocksPerHost is autoAssign's safeguard when neither the
// request nor the IPAMConfiguration sets a limit (ipam.go autoAssign).
const defaultMaxBlocksPerHost = 20

// AutoAssignArgs mirrors libcalico-go's AutoAssignArgs for one IP version.
type AutoAssignArgs struct {
	// Num is the number of addresses; 0 means 1.
	Num    int
	Handle string // "" for none
	Attrs  map[string]string
	Host   string
	// Pools restricts the request to these pool CIDRs; node selectors are
	// then ignored, as upstream does for explicitly requested pools.
	Pools []netip.Prefix
	// Version is 4 or 6; 0 means 4 (or the family of Pools).
	Version          int
	MaxBlocksPerHost int
	Reserved         *HostReservedAttr
	Use              string // Workload or Tunnel; required
	// OS is the operating system of the calling process (upstream's
	// runtime.GOOS, detectOS); "windows" enforces strict affinity.
	OS string
	// NamespaceLabels are the labels of the pod's namespace, for pools with
	// a namespaceSelector; nil for requests without a namespace.
	NamespaceLabels map[string]string
}

// Assignments is libcalico-go's IPAMAssignments.
type Assignments struct {
	IPs          []netip.Addr
	IPVersion    int
	NumRequested int
	Reserved     *HostReservedAttr
	Msgs         []string
}

func (a *Assignments) addMsg(m string) {
	if !slices.Contains(a.Msgs, m) {
		a.Msgs = append(a.Msgs, m)
	}
}

// PartialFulfillmentError is nil when every requested address was given,
// and otherwise upstream's message, e.g. "Assigned 0 out of 1 requested
// IPv4 addresses; No IPs available in pools: [172.21.0.0/16]".
func (a *Assignments) PartialFulfillmentError() error {
	if len(a.IPs) >= a.NumRequested {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Assigned %d out of %d requested IPv%d addresses", len(a.IPs), a.NumRequested, a.IPVersion)
	for _, m := range a.Msgs {
		fmt.Fprintf(&b, "; %v", m)
	}
	if a.Reserved != nil {
		fmt.Fprintf(&b, "; HostReservedAttr: %v", a.Reserved.Handle)
	}
	return errors.New(b.String())
}

// noFreeBlocks is upstream's noFreeBlocksError.
type noFreeBlocks struct{}

func (noFreeBlocks) Error() string { return "No Free Blocks" }

type staleAffinity string

func (e staleAffinity) Error() string { return string(e) }

type blockNotEmpty netip.Prefix

func (e blockNotEmpty) Error() string { return fmt.Sprintf("block '%v' is not empty", netip.Prefix(e)) }

type claimConflict struct{ b *block }

func (e claimConflict) Error() string {
	if e.b.affinity != nil {
		return fmt.Sprintf("%v already claimed by %v", e.b.cidr, *e.b.affinity)
	}
	return fmt.Sprintf("%v already claimed", e.b.cidr)
}

func handlePtr(h string) *string {
	if h == "" {
		return nil
	}
	return &h
}

// AutoAssign assigns addresses the way ipam.go autoAssign does: first from
// the host's affine blocks (in BlockAffinity name order), then from a newly
// claimed block found by the host's random walk, and, without strict
// affinity, finally by borrowing from any existing block in walk order.
// Errors that upstream returns (rather than records) are returned; a
// shortfall is only visible through PartialFulfillmentError.
func (m *IPAM) AutoAssign(a AutoAssignArgs) (*Assignments, error) {
	if a.Use == "" {
		return nil, ErrUseRequired
	}
	num := a.Num
	if num == 0 {
		num = 1
	}
	version := a.Version
	if version == 0 {
		version = 4
		if len(a.Pools) > 0 && a.Pools[0].Addr().Is6() {
			version = 6
		}
	}
	cfg, err := m.ipamConfig(a.OS)
	if err != nil {
		return nil, err
	}
	pools, affBlocks, err := m.prepareAffinityBlocksForHost(a.Pools, version, a.Host, a.Reserved, a.Use, a.NamespaceLabels)
	if err != nil {
		return nil, err
	}
	numOwned := len(affBlocks)

	// The stricter of the per-request and global limits, else 20.
	maxBlocks := a.MaxBlocksPerHost
	if cfg.MaxBlocksPerHost > 0 && maxBlocks > 0 && maxBlocks > cfg.MaxBlocksPerHost {
		maxBlocks = cfg.MaxBlocksPerHost
	} else if maxBlocks == 0 {
		maxBlocks = cfg.MaxBlocksPerHost
	}
	if maxBlocks == 0 {
		maxBlocks = defaultMaxBlocksPerHost
	}

	ia := &Assignments{IPVersion: version, NumRequested: num, Reserved: a.Reserved}
	st := &assignState{host: a.Host, pools: pools, remaining: affBlocks, rsvd: a.Reserved, allowNewClaim: true}
	handle := handlePtr(a.Handle)

	for len(ia.IPs) < num {
		rem := num - len(ia.IPs)
		if maxBlocks > 0 && numOwned >= maxBlocks {
			st.allowNewClaim = false
		}
		b, newlyClaimed, err := m.findOrClaimBlock(st, cfg, 1)
		if err != nil {
			if errors.As(err, &noFreeBlocks{}) {
				if cfg.StrictAffinity {
					ia.addMsg("No more free affine blocks and strict affinity enabled")
				}
				break
			}
			if errors.Is(err, ErrBlockLimit) {
				ia.addMsg(fmt.Sprintf("Need to allocate an IPAM block but could not - limit of %d blocks reached for this node", maxBlocks))
				return ia, ErrBlockLimit
			}
			return ia, err
		}
		if newlyClaimed {
			numOwned++
		}
		ips, err := m.assignFromExistingBlock(b, rem, handle, a.Attrs, a.Host, cfg.StrictAffinity)
		if err != nil {
			ia.addMsg("Failed to assign IPs in newly allocated block")
			continue
		}
		ia.IPs = append(ia.IPs, ips...)
	}

	// Without strict affinity the last resort is any block of the pool,
	// visited in the host's walk order (ipam.go autoAssign, non-affine
	// path). Only existing blocks can be borrowed from.
	rem := num - len(ia.IPs)
	if !cfg.StrictAffinity && rem != 0 {
		var exhausted []string
		for _, p := range pools {
			var existing []netip.Prefix
			for cidr := range m.blocks {
				if p.CIDR.Contains(cidr.Addr()) && cidr.Bits() == p.BlockSize {
					existing = append(existing, cidr)
				}
			}
			for _, cidr := range p.inWalkOrder(a.Host, m.cfg.SmallBlockSeed, existing) {
				if rem == 0 {
					break
				}
				ips, err := m.assignFromExistingBlock(m.blocks[cidr], rem, handle, a.Attrs, a.Host, false)
				if err != nil || len(ips) == 0 {
					continue
				}
				ia.IPs = append(ia.IPs, ips...)
				rem = num - len(ia.IPs)
			}
			if rem > 0 {
				exhausted = append(exhausted, p.CIDR.String())
			}
		}
		if len(exhausted) > 0 {
			ia.addMsg(fmt.Sprintf("No IPs available in pools: %v", exhausted))
		}
	}
	return ia, nil
}

type assignState struct {
	host          string
	pools         []*pool
	remaining     []netip.Prefix
	rsvd          *HostReservedAttr
	allowNewClaim bool
}

// findOrClaimBlock returns an affine block with at least minFree free
// addresses, or claims a new one (ipam.go blockAssignState.findOrClaimBlock).
func (m *IPAM) findOrClaimBlock(st *assignState, cfg Config, minFree int) (*block, bool, error) {
	for len(st.remaining) > 0 {
		cidr := st.remaining[0]
		st.remaining = st.remaining[1:]
		aff, ok := m.affs[affKey{st.host, cidr}]
		if !ok {
			continue
		}
		b, err := m.blockFromAffinity(st.host, cidr, aff, st.rsvd)
		if err != nil {
			continue
		}
		if m.view(b).numFree() >= minFree {
			return b, false, nil
		}
	}
	if !st.allowNewClaim {
		return nil, false, ErrBlockLimit
	}
	if !cfg.AutoAllocateBlocks {
		return nil, false, errors.New("failed to find or claim a block")
	}
	subnet, err := m.findUsableBlock(st.host, st.pools)
	if err != nil {
		return nil, false, err
	}
	aff := m.pendingAffinity(st.host, subnet)
	b, err := m.blockFromAffinity(st.host, subnet, aff, st.rsvd)
	if err != nil {
		return nil, false, err
	}
	if n := m.view(b).numFree(); n < minFree {
		return nil, false, fmt.Errorf("Block '%s' has %d free ips which is less than %d ips required.", subnet, n, minFree)
	}
	return b, true, nil
}

// pendingAffinity creates the host's affinity for the block in state
// pending, or returns the existing one, marking it pending unless it is
// confirmed (ipam_block_reader_writer.go getPendingAffinity).
func (m *IPAM) pendingAffinity(host string, cidr netip.Prefix) *affinity {
	k := affKey{host, cidr}
	if a, ok := m.affs[k]; ok {
		if a.state != StateConfirmed {
			a.state = StatePending
		}
		return a
	}
	a := &affinity{state: StatePending}
	m.putAff(k, a)
	return a
}

// blockFromAffinity loads the block an affinity points at, creating
// (claiming) it when it does not exist, dropping the affinity when the
// block belongs to someone else, and confirming a pending affinity
// (ipam.go getBlockFromAffinity).
func (m *IPAM) blockFromAffinity(host string, cidr netip.Prefix, aff *affinity, rsvd *HostReservedAttr) (*block, error) {
	b, ok := m.blocks[cidr]
	if !ok {
		aff.state = StatePending
		return m.claimAffineBlock(host, cidr, aff, rsvd)
	}
	if b.affinity == nil || *b.affinity != affinityOf(host) {
		m.dropAff(affKey{host, cidr})
		return nil, staleAffinity(fmt.Sprintf("Affinity is stale: %s %s", host, cidr))
	}
	if aff.state != StateConfirmed && aff.state != "" {
		b.write()
		aff.state = StateConfirmed
	}
	return b, nil
}

// claimAffineBlock creates the block with the host's reservations, affine
// to the host, and confirms the affinity
// (ipam_block_reader_writer.go claimAffineBlock).
func (m *IPAM) claimAffineBlock(host string, cidr netip.Prefix, aff *affinity, rsvd *HostReservedAttr) (*block, error) {
	if b, ok := m.blocks[cidr]; ok {
		if b.affinity != nil && *b.affinity == affinityOf(host) {
			aff.state = StateConfirmed
			return b, nil
		}
		m.dropAff(affKey{host, cidr})
		return nil, claimConflict{b}
	}
	b := newBlock(cidr, rsvd, m.now)
	s := affinityOf(host)
	b.affinity = &s
	t := m.now
	b.claimTime = &t
	m.blocks[cidr] = b
	for _, a := range b.attrs {
		m.noteHandle(a.handle, cidr)
	}
	aff.state = StateConfirmed
	return b, nil
}

// findUsableBlock walks each pool from the host's seeded start and returns
// the first block that does not exist yet, or one of the host's own with
// room; failing that it reclaims an empty block of another host claimed at
// least a minute ago (ipam_block_reader_writer.go findUsableBlock).
func (m *IPAM) findUsableBlock(host string, pools []*pool) (netip.Prefix, error) {
	if len(pools) == 0 {
		return netip.Prefix{}, fmt.Errorf("no configured Calico pools for host:%s", host)
	}
	var empty []netip.Prefix
	for _, p := range pools {
		var found netip.Prefix
		p.walk(host, m.cfg.SmallBlockSeed, func(cidr netip.Prefix) bool {
			b, ok := m.blocks[cidr]
			if !ok {
				found = cidr
				return false
			}
			v := m.view(b)
			if v.affinity != nil && *v.affinity == affinityOf(host) && v.numFree() != 0 {
				found = cidr
				return false
			}
			if v.empty() && v.numFree() != 0 {
				empty = append(empty, cidr)
			}
			return true
		})
		if found.IsValid() {
			return found, nil
		}
	}
	for _, cidr := range empty {
		b := m.blocks[cidr]
		if b.claimTime != nil && m.now.Sub(*b.claimTime) < EmptyBlockMinReclaimAge {
			continue
		}
		seq := b.seq
		if err := m.releaseBlockAffinity(b.host(), cidr, true, &seq); err != nil {
			continue
		}
		return cidr, nil
	}
	return netip.Prefix{}, noFreeBlocks{}
}

// releaseBlockAffinity drops a host's affinity to a block, deleting the
// block when it is empty and otherwise leaving it without affinity
// (ipam_block_reader_writer.go releaseBlockAffinity).
func (m *IPAM) releaseBlockAffinity(host string, cidr netip.Prefix, requireEmpty bool, requiredSeq *uint64) error {
	k := affKey{host, cidr}
	aff, ok := m.affs[k]
	if !ok {
		return fmt.Errorf("resource does not exist: BlockAffinity(%s) with error: not found", AffinityName(host, cidr))
	}
	b, ok := m.blocks[cidr]
	if !ok {
		return fmt.Errorf("resource does not exist: IPAMBlock(%s) with error: not found", BlockName(cidr))
	}
	v := m.view(b)
	if requiredSeq != nil && *requiredSeq != v.seq {
		return errors.New("IPAM block updated since we last read it")
	}
	if v.affinity != nil && *v.affinity != affinityOf(host) {
		m.dropAff(k)
		return claimConflict{v}
	}
	if requireEmpty && !v.empty() {
		return blockNotEmpty(cidr)
	}
	*b = *v
	aff.state = StatePendingDeletion
	if b.empty() {
		delete(m.blocks, cidr)
	} else {
		b.affinity = nil
		b.claimTime = nil
		b.write()
	}
	m.dropAff(k)
	return nil
}

// assignFromExistingBlock hands out addresses from one block and writes it
// (ipam.go assignFromExistingBlock).
func (m *IPAM) assignFromExistingBlock(b *block, num int, handle *string, attrs map[string]string, host string, affinityCheck bool) ([]netip.Addr, error) {
	c := m.view(b)
	ips, err := c.autoAssign(num, handle, host, attrs, affinityCheck)
	if err != nil || len(ips) == 0 {
		return nil, err
	}
	*b = *c
	b.write()
	m.noteHandle(handle, b.cidr)
	return ips, nil
}

// view is blockFromBackend: the block as a reader sees it, garbage
// collected. Callers write it back (*b = *v) only where upstream writes the
// block. Cloning the block on every read made each assignment allocate a
// copy of the whole block (and each walk step over existing blocks one
// more); the block itself is returned when garbage collection would change
// nothing, and a copy only when a cooldown ended or an attribute is
// unreferenced. That is safe because every caller either writes back what
// it changed or fails before changing anything (see block.assign).
func (m *IPAM) view(b *block) *block {
	if !referenceMode && !b.needsGC(m.now, m.cfg.IPCooldownSeconds) {
		return b
	}
	c := b.clone()
	c.garbageCollect(m.now, m.cfg.IPCooldownSeconds)
	return c
}

// affineBlocks lists the host's affinities of one IP version in the order
// the Kubernetes datastore lists BlockAffinity objects: by name. It reads
// the per-host index: scanning every affinity per call was O(nodes) per
// pod.
func (m *IPAM) affineBlocks(host string, version int) []netip.Prefix {
	var out []netip.Prefix
	if referenceMode {
		for k := range m.affs {
			if k.host == host && (k.cidr.Addr().Is4() == (version == 4)) {
				out = append(out, k.cidr)
			}
		}
	}
	for cidr := range m.affsByHost[host] {
		if !referenceMode && cidr.Addr().Is4() == (version == 4) {
			out = append(out, cidr)
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		return strings.Compare(AffinityName(host, a), AffinityName(host, b))
	})
	return out
}

// maxPrefixLen is the longest block prefix that leaves room for the host
// reservations (ipam.go getMaxPrefixLen): 29 for Windows' four addresses.
func maxPrefixLen(version int, r *HostReservedAttr) (int, error) {
	total := 32
	if version == 6 {
		total = 128
	}
	if r == nil {
		return total, nil
	}
	n := uint(r.StartOfBlock + r.EndOfBlock)
	l := 0
	if n > 0 {
		l = total - bits.Len(n)
	}
	if l <= 0 {
		return 0, errors.New("HostReservedAttr has wrong parameters")
	}
	return l, nil
}

// determinePools returns the pools a request may use and all enabled pools
// (ipam.go determinePools): requested pools unconditionally, else the
// Automatic pools that select both the node and the namespace. Note the
// upstream quirk kept here: pools whose block size is too small for the
// reservation only matter when all of them are; otherwise they still
// qualify.
func (m *IPAM) determinePools(requested []netip.Prefix, version int, node Node, nsLabels map[string]string, maxPrefix int) ([]*pool, []*pool, error) {
	enabled := m.enabledPools(version)
	qualified := 0
	for _, p := range enabled {
		if p.BlockSize <= maxPrefix {
			qualified++
		}
	}
	if qualified == 0 {
		return nil, enabled, ErrNoQualifiedPool
	}
	var out []*pool
	for _, r := range requested {
		p := m.poolByCIDR(version, r)
		if p == nil || p.BlockSize > maxPrefix {
			return nil, enabled, fmt.Errorf("the given pool (%s) does not exist, or is not enabled", r.Masked())
		}
		out = append(out, p)
	}
	if len(requested) > 0 {
		return out, enabled, nil
	}
	for _, p := range enabled {
		if p.AssignmentMode != "Automatic" || !p.selectsNode(node.Labels) || !p.selectsNamespace(nsLabels) {
			continue
		}
		out = append(out, p)
	}
	return out, enabled, nil
}

// prepareAffinityBlocksForHost returns the pools the request may use and
// the host's affine blocks inside them, releasing empty affine blocks of
// pools that no longer select the node (ipam.go).
func (m *IPAM) prepareAffinityBlocksForHost(requested []netip.Prefix, version int, host string, rsvd *HostReservedAttr, use string, nsLabels map[string]string) ([]*pool, []netip.Prefix, error) {
	node, err := m.node(host)
	if err != nil {
		return nil, nil, err
	}
	maxPrefix, err := maxPrefixLen(version, rsvd)
	if err != nil {
		return nil, nil, err
	}
	selecting, all, err := m.determinePools(requested, version, node, nsLabels, maxPrefix)
	if err != nil {
		return nil, nil, err
	}
	if len(selecting) == 0 {
		return nil, nil, fmt.Errorf("no configured Calico pools for node %s", host)
	}
	var allowed []*pool
	for _, p := range selecting {
		if p.allows(use) {
			allowed = append(allowed, p)
		}
	}
	if len(allowed) == 0 {
		return nil, nil, fmt.Errorf("%w, no pools match the required use (%v)", ErrNoQualifiedPool, use)
	}
	var inAllowed, toCheck []netip.Prefix
	for _, cidr := range m.affineBlocks(host, version) {
		if poolFor(allowed, cidr.Addr()) != nil {
			inAllowed = append(inAllowed, cidr)
		} else if poolFor(selecting, cidr.Addr()) == nil {
			toCheck = append(toCheck, cidr)
		}
	}
	for _, cidr := range toCheck {
		p := poolFor(all, cidr.Addr())
		if p == nil || p.selectsNode(node.Labels) {
			continue
		}
		_ = m.releaseBlockAffinity(host, cidr, true, nil)
	}
	return allowed, inAllowed, nil
}

// AssignIPArgs mirrors libcalico-go's AssignIPArgs.
type AssignIPArgs struct {
	IP       netip.Addr
	Handle   string
	Attrs    map[string]string
	Host     string
	Reserved *HostReservedAttr
	Use      string // optional; checked against the pool's allowed uses
	OS       string
}

// AssignIP takes one specific address for the host, claiming the block for
// the host if it does not exist yet (ipam.go AssignIP). With strict
// affinity the block must be the host's.
func (m *IPAM) AssignIP(a AssignIPArgs) error {
	version := 4
	if a.IP.Is6() {
		version = 6
	}
	p := poolFor(m.enabledPools(version), a.IP)
	if p == nil {
		return errors.New("The provided IP address is not in a configured pool\n")
	}
	if a.Use != "" && !p.allows(a.Use) {
		return fmt.Errorf("IP address %s is in IP pool %q, which is not allowed for use %q (allowedUses: %v)", a.IP, p.Name, a.Use, p.AllowedUses)
	}
	if a.OS == OSWindows {
		m.strictRead = true
	}
	cfg, err := m.ipamConfig(a.OS)
	if err != nil {
		return err
	}
	cidr := netip.PrefixFrom(a.IP, p.BlockSize).Masked()
	b, ok := m.blocks[cidr]
	if !ok {
		// A new block must hold the host's reservation: upstream's newBlock
		// would index past a block smaller than it (automatic assignment
		// never gets there, determinePools skips such pools).
		maxPrefix, err := maxPrefixLen(version, a.Reserved)
		if err != nil {
			return err
		}
		if p.BlockSize > maxPrefix {
			return fmt.Errorf("%w: IP pool %q has blockSize %d, and a /%d block cannot hold the host's %d reserved addresses (the longest block prefix that can is /%d)",
				ErrNoQualifiedPool, p.Name, p.BlockSize, p.BlockSize, a.Reserved.StartOfBlock+a.Reserved.EndOfBlock, maxPrefix)
		}
		aff := m.pendingAffinity(a.Host, cidr)
		if b, err = m.claimAffineBlock(a.Host, cidr, aff, a.Reserved); err != nil {
			return err
		}
	}
	if b.affinity == nil || *b.affinity != affinityOf(a.Host) {
		m.strictRead = true // block.assign's affinity check
	}
	c := m.view(b)
	h := handlePtr(a.Handle)
	if err := c.assign(cfg.StrictAffinity, a.IP, h, a.Attrs, a.Host); err != nil {
		return err
	}
	*b = *c
	b.write()
	m.noteHandle(h, b.cidr)
	return nil
}

// BlockArgs mirrors libcalico-go's BlockArgs (IPv4 only here).
type BlockArgs struct {
	Host     string
	Pools    []netip.Prefix
	Reserved *HostReservedAttr
	OS       string
}

// EnsureBlock returns the host's block, claiming one when it has none
// (ipam.go ensureBlock): the first affine block is returned even when it
// is full, since it asks for zero free addresses.
func (m *IPAM) EnsureBlock(a BlockArgs) (netip.Prefix, error) {
	cfg, err := m.ipamConfig(a.OS)
	if err != nil {
		return netip.Prefix{}, err
	}
	pools, aff, err := m.prepareAffinityBlocksForHost(a.Pools, 4, a.Host, a.Reserved, UseWorkload, nil)
	if err != nil {
		return netip.Prefix{}, err
	}
	st := &assignState{host: a.Host, pools: pools, remaining: aff, rsvd: a.Reserved, allowNewClaim: true}
	b, _, err := m.findOrClaimBlock(st, cfg, 0)
	if err != nil {
		return netip.Prefix{}, err
	}
	return b.cidr, nil
}

// ReleaseIPs frees addresses and returns those that were not allocated
// (ipam.go ReleaseIPs, releaseIPsFromBlock). A block left empty and without
// affinity is deleted; a block whose pool no longer selects its node loses
// its affinity when empty (ensureConsistentAffinity).
func (m *IPAM) ReleaseIPs(addrs ...netip.Addr) []netip.Addr {
	var skipped []netip.Addr
	byBlock := map[netip.Prefix][]netip.Addr{}
	var order []netip.Prefix
	for _, a := range addrs {
		var cidr netip.Prefix
		if p := poolFor(m.pools, a); p != nil {
			cidr = netip.PrefixFrom(a, p.BlockSize).Masked()
		} else {
			for c := range m.blocks {
				if c.Contains(a) {
					cidr = c
				}
			}
			if !cidr.IsValid() {
				skipped = append(skipped, a)
				continue
			}
		}
		if _, ok := byBlock[cidr]; !ok {
			order = append(order, cidr)
		}
		byBlock[cidr] = append(byBlock[cidr], a)
	}
	for _, cidr := range order {
		b, ok := m.blocks[cidr]
		if !ok {
			skipped = append(skipped, byBlock[cidr]...)
			continue
		}
		c := m.view(b)
		sk := c.release(byBlock[cidr], m.now, m.cfg.IPCooldownSeconds)
		skipped = append(skipped, sk...)
		if len(sk) == len(byBlock[cidr]) {
			continue
		}
		*b = *c
		m.afterRelease(b)
	}
	return skipped
}

// ReleaseByHandle frees every address held by the handle. Only the blocks
// the handle index names are visited (in block order, as a scan of all
// blocks would visit them): calico-node calls this once per node at
// startup, and visiting every block made startup O(nodes × blocks).
func (m *IPAM) ReleaseByHandle(handle string) int {
	handle = sanitizeHandle(handle)
	n := 0
	for _, cidr := range m.blocksWithHandle(handle) {
		b := m.blocks[cidr]
		c := m.view(b)
		if k := c.releaseByHandle(handle, m.now, m.cfg.IPCooldownSeconds); k > 0 {
			n += k
			*b = *c
			m.afterRelease(b)
		}
	}
	return n
}

func (m *IPAM) afterRelease(b *block) {
	if b.empty() && b.affinity == nil {
		delete(m.blocks, b.cidr)
		return
	}
	b.write()
	host := b.host()
	if host == "" {
		return
	}
	node, ok := m.nodes[host]
	if !ok {
		return
	}
	if p := poolFor(m.enabledPools(versionOf(b.cidr)), b.cidr.Addr()); p != nil && !p.selectsNode(node.Labels) {
		_ = m.releaseBlockAffinity(host, b.cidr, true, nil)
	}
}

func versionOf(p netip.Prefix) int {
	if p.Addr().Is4() {
		return 4
	}
	return 6
}

// IPsByHandle lists the addresses a handle holds, in block then ordinal
// order.
func (m *IPAM) IPsByHandle(handle string) []netip.Addr {
	var out []netip.Addr
	// The handle index names every block that can match; "" (which no
	// caller passes) keeps the scan of every block.
	cidrs := m.blocksWithHandle(handle)
	if handle == "" {
		cidrs = m.sortedBlocks()
	}
	for _, cidr := range cidrs {
		b := m.blocks[cidr]
		for o := range b.allocations {
			if b.handleOf(o) == handle {
				if a := b.allocations[o]; b.attrs[*a].releasedAt == nil {
					out = append(out, nthAddr(b.cidr, o))
				}
			}
		}
	}
	return out
}

// Owner describes who holds an address.
type Owner struct {
	Handle string
	Attrs  map[string]string
	Block  netip.Prefix
	// Reserved is true for the Windows reservation, Cooldown for a
	// released address not yet free again.
	Reserved, Cooldown bool
}

// Lookup tells who holds addr; ok is false when nobody does.
func (m *IPAM) Lookup(addr netip.Addr) (Owner, bool) {
	for cidr, b := range m.blocks {
		if !cidr.Contains(addr) {
			continue
		}
		o, _ := ordinalOf(cidr, addr)
		a := b.allocations[o]
		if a == nil {
			return Owner{}, false
		}
		at := b.attrs[*a]
		return Owner{Handle: b.handleOf(o), Attrs: at.active, Block: cidr, Reserved: b.isReserved(*a), Cooldown: at.releasedAt != nil}, true
	}
	return Owner{}, false
}

func (m *IPAM) sortedBlocks() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(m.blocks))
	for c := range m.blocks {
		out = append(out, c)
	}
	slices.SortFunc(out, comparePrefix)
	return out
}

// comparePrefix orders blocks by address, then prefix length.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}
