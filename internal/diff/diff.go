// Package diff is the differential twin: it compares two built twins — a
// cluster before and after a change (a what-if, a plan step) — and reports
// every difference that matters, semantically (sets of routes, nftables
// elements and rules, HNS objects; not text): per node, what its dataplane
// gains and loses; per workload, what changes in its pod template and which
// pods a rollout restarts; TigeraStatus; objects added, removed or changed;
// and which pod classes (and nodes) gain or lose connectivity, with the
// reason internal/reach gives.
//
// The computation is pure: it reads the two clusters and never changes
// them. Everything it returns is sorted, so two runs give the same Result.
package diff

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Options say what to compare.
type Options struct {
	// NoReach leaves out the reachability difference (the costliest part:
	// two reach matrices).
	NoReach bool
	// Reach scopes the reachability difference; nil means every namespace
	// (reach -A). Node rows (Nodes: true, the host network as a source)
	// cost a row per node: minutes at 1,000 nodes.
	Reach *reach.Options
	// NoDataplane leaves out the per-node dataplane difference.
	NoDataplane bool
	// EveryPart renders every part of every node's dataplane, whatever
	// its inputs: the slow reference the comparison by inputs is tested
	// against.
	EveryPart bool
}

// Twin is one built cluster prepared for comparison: its digest (the
// objects' hashes), its plane (the nodes' compiled dataplanes, each node
// compiled when first read), its trace engine and its reach matrix are
// made on first use and kept, so a caller comparing a chain of twins (a
// plan's steps) makes each once; a twin's digest reuses the hashes of the
// objects it shares with the twin compared before it.
// A Twin is safe for use by one comparison at a time.
type Twin struct {
	c *model.Cluster

	// pl is the twin's compiled dataplanes, each node compiled when first
	// read: a comparison reads only the nodes and parts whose inputs
	// differ, and the trace engine (reach, the console) reads the same
	// plane.
	plOnce sync.Once
	pl     *plane.Plane
	plErr  error
	// plMade is set once pl is made (a later twin may then follow it).
	plMade atomic.Bool
	// follows is the twin compared before this one (CompareTwins), and
	// donor a plane made for an earlier twin: this twin's plane is made
	// after the first of them that is made (plane.Follow: it shares what
	// the inputs leave equal). When this twin is followed in turn, follows
	// is resolved to donor, so a chain of twins holds at most one twin and
	// one plane per twin; both are cleared once the plane is made.
	follows *Twin
	donor   *plane.Plane

	// linuxFrom is the twin whose plane the node comparison reads for
	// this one's Linux nodes (see comparedPlane), nil for its own.
	linuxFrom *Twin

	engOnce sync.Once
	eng     *trace.Engine
	engErr  error

	digOnce sync.Once
	dig     *digest
	// digPrev is the digest dig was made after, digMatch the pairing of
	// the twin's objects with its objects by pointer.
	digPrev  *digest
	digMatch []int32

	inOnce sync.Once
	in     *nodeInputs

	wlOnce sync.Once
	wl     map[ObjectRef]workload

	ownedOnce sync.Once
	owned     map[ObjectRef][]string

	// nodes are the node states read so far (see nodeState).
	nodesMu sync.Mutex
	nodes   map[string]*nodeParts
	// shared are the routing lines all nodes of a class share (routing.go).
	shared sharedCache

	reachMu  sync.Mutex
	reachKey string
	matrix   *reach.Matrix
	reachErr error
	// keys are matrix's rows and columns by key, made on first use.
	keys *reachKeys
}

// NewTwin prepares a built cluster for comparison; nothing is compiled yet.
// The cluster must not be changed afterwards.
func NewTwin(c *model.Cluster) *Twin { return &Twin{c: c} }

// Cluster is the twin's cluster.
func (t *Twin) Cluster() *model.Cluster { return t.c }

// plane is the twin's plane, made on first use; it compiles no node yet.
func (t *Twin) plane() (*plane.Plane, error) {
	t.plOnce.Do(func() {
		prev := t.donorBefore()
		t.follows, t.donor = nil, nil
		t.pl, t.plErr = plane.Follow(prev, t.c)
		t.plMade.Store(true)
	})
	return t.pl, t.plErr
}

// donorBefore is the plane this twin's may follow, the newest made of:
// the twin it follows' (madePlane), the one its node comparison reads
// (linuxFrom), the donor.
func (t *Twin) donorBefore() *plane.Plane {
	if f := t.follows; f != nil {
		if p := f.madePlane(); p != nil {
			return p
		}
	}
	if l := t.linuxFrom; l != nil && l.plMade.Load() {
		return l.pl
	}
	return t.donor
}

// madePlane is the twin's plane when made, else the one it would follow;
// nil when none is made.
func (t *Twin) madePlane() *plane.Plane {
	if t.plMade.Load() {
		return t.pl
	}
	return t.donorBefore()
}

// comparedPlane is the plane the node comparison reads: the twin's own,
// or that of an earlier twin whose Linux nodes compile from the same
// inputs (takeLinuxPlane), whose nodes and Felix are then compiled once
// for both.
func (t *Twin) comparedPlane() (*plane.Plane, error) {
	if t.linuxFrom != nil {
		return t.linuxFrom.plane()
	}
	return t.plane()
}

// takeLinuxPlane makes the node comparison read before's plane for the
// twin, when neither has a Windows node and their Linux parts' inputs
// (routing, proxy, policy) and what plane.New, Felix and the Linux
// compilers read besides (the reach inputs: reachKinds) agree: the
// compiled Linux nodes are then equal, and so are the reach matrices
// (reachMatrix takes before's). Called before the twin's nodes are read.
func (t *Twin) takeLinuxPlane(before *Twin) {
	da, db := before.digest(), t.digest()
	if da.routing != db.routing || da.proxy != db.proxy || da.policy != db.policy || da.reach != db.reach ||
		hasWindowsNode(before) || hasWindowsNode(t) {
		return
	}
	t.linuxFrom = before
	if before.linuxFrom != nil {
		t.linuxFrom = before.linuxFrom
	}
}

// Engine is the twin's trace engine, made on first use over the twin's
// plane: the nodes the comparison compiled are not compiled again, and a
// walk compiles the others it crosses.
func (t *Twin) Engine() (*trace.Engine, error) {
	t.engOnce.Do(func() {
		p, err := t.plane()
		if err != nil {
			t.engErr = err
			return
		}
		t.eng, t.engErr = trace.FromPlane(p)
	})
	return t.eng, t.engErr
}

// LinuxNode is the compiled dataplane of the twin's Linux node named, nil
// when it has none: compiled on first use, once for the comparison, the
// trace engine and the caller.
func (t *Twin) LinuxNode(name string) (*linux.Node, error) {
	p, err := t.plane()
	if err != nil {
		return nil, err
	}
	return p.Linux(name), nil
}

// reachMatrix is the twin's reach matrix for opt, made once per options,
// with its rows and columns by key.
func (t *Twin) reachMatrix(opt reach.Options) (*reach.Matrix, *reachKeys, error) {
	key := fmt.Sprintf("%+v", opt)
	t.reachMu.Lock()
	defer t.reachMu.Unlock()
	if t.reachKey != key || t.matrix == nil && t.reachErr == nil {
		// A twin compared through an earlier twin's plane (takeLinuxPlane)
		// reads the same reach inputs, without a Windows node: its matrix
		// is that twin's, made on that plane, whose nodes the comparison
		// has compiled, instead of on a plane of its own.
		if l := t.linuxFrom; l != nil {
			m, keys, err := l.reachMatrix(opt)
			if err != nil {
				return nil, nil, err
			}
			t.reachKey, t.matrix, t.keys, t.reachErr = key, m, keys, nil
			return m, keys, nil
		}
		e, err := t.Engine()
		if err != nil {
			return nil, nil, err
		}
		t.reachKey, t.keys = key, nil
		t.matrix, t.reachErr = reach.Compute(e, opt)
	}
	if t.reachErr != nil {
		return nil, nil, t.reachErr
	}
	if t.keys == nil {
		t.keys = &reachKeys{sources: sourceKeys(t.matrix), dests: destKeys(t.matrix)}
	}
	return t.matrix, t.keys, nil
}

// adoptReach gives the twin before's reach matrix for opt, when before
// has made it and the twin none: the caller has found that the two read
// the same inputs (sameReachInputs), so the matrices are equal. A plan's
// step that changes nothing reach reads then costs its next step no
// matrix either.
func (t *Twin) adoptReach(before *Twin, opt reach.Options) {
	key := fmt.Sprintf("%+v", opt)
	before.reachMu.Lock()
	m, keys := before.matrix, before.keys
	ok := m != nil && before.reachKey == key
	before.reachMu.Unlock()
	if !ok {
		return
	}
	t.reachMu.Lock()
	defer t.reachMu.Unlock()
	if t.matrix == nil && t.reachErr == nil {
		t.matrix, t.keys, t.reachKey = m, keys, key
	}
}

// Compare reports what changes from before to after, two clusters built by
// engine.Build or engine.BuildOwned (a base, and the base with what-if
// files layered on it). It is CompareTwins on fresh twins.
func Compare(before, after *model.Cluster, opts Options) (*Result, error) {
	if before == nil || after == nil {
		return nil, fmt.Errorf("diff: nil cluster")
	}
	return CompareTwins(NewTwin(before), NewTwin(after), opts)
}

// reachOptions are the reach options a comparison with opts computes
// the matrices with.
func reachOptions(opts Options) reach.Options {
	if opts.Reach != nil {
		return *opts.Reach
	}
	return reach.Options{AllNamespaces: true}
}

// PrepareReach computes the twin's reach matrix as a comparison with
// opts reads it, so that a caller who knows the comparison will need it
// can have it made ahead, on a CPU that would otherwise wait. Nothing
// when opts leave reach out. A failure is kept and reported by the
// comparison too. It must not run at the same time as a comparison that
// reads the twin.
func (t *Twin) PrepareReach(opts Options) error {
	if opts.NoReach {
		return nil
	}
	_, _, err := t.reachMatrix(reachOptions(opts))
	return err
}

// ipipNotes say which of the twin's IP pools have routes Felix programs
// with programClusterRoutes, which its node states leave out
// (linux.FelixRoutedIPIPPools).
func ipipNotes(which string, c *model.Cluster) []string {
	var out []string
	for _, p := range linux.FelixRoutedIPIPPools(c) {
		out = append(out, fmt.Sprintf("the %s twin's routes between nodes in IPIP pool %s are left out: Felix programs them (FelixConfiguration programClusterRoutes), which the twin does not model", which, p))
	}
	return out
}

// CompareTwins is Compare over prepared twins, reusing what each has
// compiled already (a plan compares step k with k+1, then k+1 with k+2).
// It links the two twins (the after twin's plane follows the before
// twin's): comparisons that share a twin must not run at the same time.
func CompareTwins(before, after *Twin, opts Options) (*Result, error) {
	if before == nil || after == nil || before.c == nil || after.c == nil {
		return nil, fmt.Errorf("diff: nil twin")
	}
	r := &Result{}
	// The after twin's plane shares with the before twin's what their
	// inputs leave equal (plane.Follow), when the before one is made first.
	if !before.plMade.Load() && before.follows != nil {
		before.donor, before.follows = before.donorBefore(), nil
	}
	if !after.plMade.Load() && after != before {
		after.follows = before
	}
	// The after twin's digest reuses the before twin's hashes of the
	// objects both hold (a plan's step twin shares those it leaves alone).
	da := before.digest()
	db := after.digestAfter(da)
	r.Objects = compareObjectsMatched(da, db, after.matchWith(da))
	r.Deferred = deferredChanges(r.Objects, after.c)
	r.Workloads = compareWorkloadsOf(before.podsByController, before.workloads(), after.workloads(), da, db)
	r.TigeraStatus = compareTigeraStatus(before.c, after.c)
	after.takeLinuxPlane(before)
	// The dataplanes and reachability are functions of the objects the
	// twin compiles them from: when none of those differ, neither does
	// anything compiled from them, and nothing is compiled.
	same := da.all == db.all
	// The reach difference and the nodes' differences read the twins'
	// planes, each made once for both (sync.Once), and write nothing the
	// other reads: they run side by side, so that one's serial parts (the
	// reach matrix's classes, a node's Felix inputs) leave the other CPUs
	// work.
	// A panic in the reach goroutine is raised again here (internal/crash).
	var reached chan error
	var crashed crash.Group
	waitReach := func() error {
		if reached == nil {
			return nil
		}
		err := <-reached
		crashed.Repanic()
		return err
	}
	if !opts.NoReach {
		r.Reach = &ReachDiff{}
		ro := reachOptions(opts)
		// The matrices are functions of what reach reads (reachKinds):
		// when none of it differs they are equal, none is computed, and
		// the after twin holds the before twin's for the next comparison.
		if sameReachInputs(before, after) {
			after.adoptReach(before, ro)
		} else {
			reached = make(chan error, 1)
			go func() {
				var err error
				defer func() { reached <- err }()
				defer crashed.Recover()
				var rd *ReachDiff
				if rd, err = compareReach(before, after, ro); err == nil {
					r.Reach = rd
				}
			}()
		}
	}
	if !opts.NoDataplane && !same {
		p, gate := changedParts(da, db), true
		if opts.EveryPart {
			p, gate = everything, false
		}
		nodes, err := compareNodes(before, after, p, gate, natDeferred(r.Deferred))
		if err != nil {
			_ = waitReach()
			return nil, err
		}
		r.Nodes = nodes
		if len(nodes) > 0 {
			r.NodeNotes = append(ipipNotes("before", before.c), ipipNotes("after", after.c)...)
		}
	}
	if err := waitReach(); err != nil {
		return nil, err
	}
	return r, nil
}
