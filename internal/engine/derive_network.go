package engine

import (
	"net/netip"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
)

// netMemo is what a build's network stage keeps for a Derive from its
// twin: IPAM's state once the observed history is replayed (the input's
// IPAMBlocks and BlockAffinities, then every observed pod address) with
// what that replay read, and IPAM's final state with the objects rendered
// from it.
type netMemo struct {
	in ipamHistory
	// observed is the state after the replay; final the state the twin's
	// IPAMBlocks and BlockAffinities render (blocks, affs). Neither is
	// changed after the build: a derivation restores a copy.
	observed *ipam.IPAM
	final    *ipam.IPAM
	blocks   []*calico.IPAMBlock
	affs     []*calico.BlockAffinity
	// restored: this build restored the replay from the previous twin's.
	restored bool
}

// ipamHistory is everything the replay of the observed history reads
// (network: ipam.New, SetNode, Load, cleanupDeletedNodes, AssignObserved).
type ipamHistory struct {
	// pools as IPAM gets them, their encapsulation modes cleared: only
	// tunnel addresses read those, and they come after the replay.
	pools []ipam.Pool
	// cfg with StrictAffinity cleared (strict holds it): the replay reads
	// it only where the state says so (ipam.StrictAffinityRead). cfg.Now
	// is the reference time.
	cfg    ipam.Config
	strict bool
	nodes  []nodeJoin
	// blocks and affs are the input's IPAMBlocks and BlockAffinities.
	blocks []*calico.IPAMBlock
	affs   []*calico.BlockAffinity
	pods   []observedAddr
	// quiet: the replay said nothing (no node cleanup, no address that
	// did not fit), so a derivation that skips it misses no note.
	quiet bool
}

// nodeJoin is what the replay reads of a node: its name (IPAM's node
// list), its OS (Windows reservations) and when it joined (the clock).
type nodeJoin struct {
	name, os string
	joined   time.Time
	known    bool // joined is set
}

// observedAddr is one observed pod address as the replay records it.
type observedAddr struct {
	pod                   *corev1.Pod // for the note of a failure
	node, namespace, name string
	uid                   types.UID
	addr                  netip.Addr
}

// history collects what the replay will read.
func (b *builder) history(pools []ipam.Pool, cfg ipam.Config, joinedAt map[string]time.Time) ipamHistory {
	c := b.c
	h := ipamHistory{cfg: replayConfig(cfg), strict: cfg.StrictAffinity, blocks: c.IPAMBlocks, affs: c.BlockAffinities}
	h.pools = make([]ipam.Pool, len(pools))
	for i, p := range pools {
		h.pools[i] = replayPool(p)
	}
	h.nodes = make([]nodeJoin, len(c.Nodes))
	for i, n := range c.Nodes {
		t, ok := joinedAt[n.Name]
		h.nodes[i] = nodeJoin{name: n.Name, os: n.Labels[corev1.LabelOSStable], joined: t, known: ok}
	}
	// A derivation's observed addresses are mostly the previous build's,
	// the same pods in the same order: its list is shared as long as they
	// are.
	pods := sharedPrefix[observedAddr]{size: len(c.Pods)}
	if prev := b.d.network(); prev != nil {
		pods.prev = prev.in.pods
	}
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Spec.NodeName == "" || b.d.keptOnPodNetwork(p) {
			continue // a kept pod's address is asked for again (network)
		}
		a, ok := parseAddr(p.Status.PodIP)
		if !ok || !inPools(pools, a) {
			continue
		}
		pods.add(observedAddr{pod: p, node: p.Spec.NodeName, namespace: p.Namespace, name: p.Name, uid: p.UID, addr: a})
	}
	h.pods, _ = pods.list()
	return h
}

// replays reports whether replaying the history now gives the state the
// replay of was left: the same inputs, read the same way. strictRead is
// whether was's replay read strictAffinity.
func (was *ipamHistory) replays(now *ipamHistory, strictRead bool) bool {
	if !was.quiet || was.cfg != now.cfg || (was.strict != now.strict && strictRead) ||
		len(was.pods) != len(now.pods) || !slices.Equal(was.nodes, now.nodes) ||
		!objeq.Equal(&was.pools, &now.pools) ||
		!objeq.Equal(&was.blocks, &now.blocks) || !objeq.Equal(&was.affs, &now.affs) {
		return false
	}
	for i := range was.pods {
		a, b := &was.pods[i], &now.pods[i]
		if a.addr != b.addr || a.node != b.node || a.namespace != b.namespace || a.name != b.name || a.uid != b.uid {
			return false
		}
	}
	return true
}

// replay runs the observed history on m, or restores what the previous
// twin's replay left when it read the same; it returns the state after it
// (nil for an owned build, which no derivation starts from) and whether
// it was restored.
func (b *builder) replay(m *ipam.IPAM, h *ipamHistory, joinedAt map[string]time.Time) (*ipam.IPAM, bool, error) {
	c := b.c
	if prev := b.d.network(); prev != nil && prev.in.replays(h, prev.observed.StrictAffinityRead()) {
		m.Restore(prev.observed)
		// The other phases read every node's labels.
		for _, n := range c.Nodes {
			m.SetNode(n.Name, n.Labels)
		}
		h.quiet = true
		return prev.observed, true, nil
	}
	for _, n := range c.Nodes {
		m.SetNode(n.Name, n.Labels)
	}
	if err := m.Load(c.IPAMBlocks, c.BlockAffinities); err != nil {
		return nil, false, err
	}
	h.quiet = !b.cleanupDeletedNodes(m)
	// Observed addresses first: they say which blocks history gave out.
	for _, o := range h.pods {
		if t, ok := joinedAt[o.node]; ok {
			m.SetNow(t) // the block was claimed when the node joined
		}
		if err := m.AssignObserved(o.node, o.addr, ipam.PodHandle(containerID(o.pod)), ipam.PodAttrs(o.node, o.namespace, o.name)); err != nil {
			b.note(model.Warning, keyOf(o.pod), "observed address %s does not fit Calico IPAM: %v", o.addr, err)
			h.quiet = false
		}
	}
	if b.own {
		return nil, false, nil
	}
	return m.Clone(), false, nil
}

// render sets the twin's IPAMBlocks and BlockAffinities from IPAM's final
// state, sharing the previous twin's objects where they render alike (the
// comparison of the two twins then skips them), and keeps the memo.
func (b *builder) render(m *ipam.IPAM, h ipamHistory, observed *ipam.IPAM, restored bool) {
	c := b.c
	if prev := b.d.network(); prev != nil && prev.in.cfg.Now == h.cfg.Now {
		// Equal reference times: the shared objects carry the stamp
		// this build gives (stamp sets only an unset creationTimestamp).
		c.IPAMBlocks = m.BlocksReusing(prev.final, prev.blocks)
		c.BlockAffinities = m.AffinitiesReusing(prev.affs)
	} else {
		c.IPAMBlocks = m.Blocks()
		c.BlockAffinities = m.Affinities()
	}
	if observed != nil {
		b.carry.net = &netMemo{in: h, observed: observed, final: m, blocks: c.IPAMBlocks, affs: c.BlockAffinities, restored: restored}
	}
}

// network is the previous twin's memo, nil in a Build.
func (d *derivation) network() *netMemo {
	if d == nil {
		return nil
	}
	return d.net
}

// sameIPAMInputs reports whether IPAM gets the pools and configuration
// (strictAffinity aside) the previous twin's network stage gave it: only
// then may a derivation keep DaemonSet pods on the pod network, whose
// addresses it checks afterwards (keptAddress); where the pools changed
// they would mostly differ, and the derivation would give way to a full
// build.
func (b *builder) sameIPAMInputs() bool {
	prev := b.d.network()
	c := b.c
	if prev == nil || len(c.IPPools) != len(prev.in.pools) {
		return false
	}
	allocatable := ipam.Allocatable(c.IPPools)
	for i, p := range c.IPPools {
		pp, err := ipamPool(p, allocatable)
		if err != nil || !reflect.DeepEqual(replayPool(pp), prev.in.pools[i]) {
			return false
		}
	}
	return replayConfig(b.ipamConfig()) == prev.in.cfg
}

// replayPool is a pool as the replay reads it: its encapsulation modes
// cleared, since only tunnel addresses read those, after the replay.
func replayPool(p ipam.Pool) ipam.Pool {
	p.VXLANMode, p.IPIPMode = "", ""
	return p
}

// replayConfig is IPAM's configuration as the replay reads it:
// strictAffinity cleared (ipamHistory.strict holds it; the replay reads it
// only where ipam.StrictAffinityRead says).
func replayConfig(cfg ipam.Config) ipam.Config {
	cfg.StrictAffinity = false
	return cfg
}
