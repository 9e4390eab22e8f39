package reach

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Verdict of a cell.
type Verdict uint8

// Verdicts.
const (
	// NotApplicable: the pair is no connection the matrix models (a pod to
	// itself, a destination that listens on nothing).
	NotApplicable Verdict = iota
	// Allowed: a trace between any source and destination of the cell is
	// delivered.
	Allowed
	// Denied: no such trace is delivered.
	Denied
	// Partial: the answer depends on which pods meet: the Service backend
	// a connection is balanced to, or for a node source whether the pod
	// runs on that node.
	Partial
)

func (v Verdict) String() string {
	switch v {
	case Allowed:
		return "allowed"
	case Denied:
		return "denied"
	case Partial:
		return "partial"
	}
	return "n/a"
}

// Options say what to compute.
type Options struct {
	// Namespace scopes sources and destinations ("default" when empty);
	// AllNamespaces lifts the scope.
	Namespace     string
	AllNamespaces bool
	// From and To select sources and destinations (see Filter); several
	// add up.
	From, To []classes.Filter
	// Port: only this destination port (a pod's port, a Service's port);
	// 0: every port each destination serves.
	Port int
	// Proto: only this protocol; "": TCP and UDP as the destinations
	// declare them.
	Proto trace.Proto
	// Nodes adds a source row for every node (its host network: the
	// kubelet, host-networked pods).
	Nodes bool
	// Workers evaluates rows in parallel (default GOMAXPROCS).
	Workers int
	// everyCell computes every row cell by cell (tests compare it with
	// rows copied from templates).
	everyCell bool
}

// Filter selects sources (--from) or destinations (--to); see
// classes.Filter for the forms it takes.
type Filter = classes.Filter

// ParseFilter reads one --from or --to value; ns is -n's namespace.
func ParseFilter(s, ns string) (Filter, error) { return classes.ParseFilter(s, ns) }

// Source is a row: a class of pods, or a node.
type Source struct {
	// Kind is "pods" or "node".
	Kind  string
	Label string
	// Namespace, OS, Labels and Pods describe a class; Nodes are where its
	// pods run (the node itself for a node row).
	Namespace string
	OS        string
	Labels    map[string]string
	Pods      []string
	// Workloads are each pod's workload (deploy/NS/NAME, pod/NS/NAME…),
	// in Pods' order.
	Workloads []string
	Nodes     []string
	class     *classes.Class
	node      *classes.NodeInfo
}

// Destination is a column: a class of pods at one port, or a Service's
// ClusterIP at one of its ports.
type Destination struct {
	// Kind is "pods" or "service".
	Kind      string
	Label     string
	Namespace string
	Name      string
	Proto     trace.Proto
	// Port is the destination port (0 for ICMP, or for pods that listen on
	// nothing).
	Port int
	// TargetPort describes a Service port's target ("8080", "http").
	TargetPort string
	OS         string
	Pods       []string
	// Workloads are each pod's workload, in Pods' order (none for a
	// Service).
	Workloads []string
	class     *classes.Class
	itpLocal  bool
	noListen  bool
	selfNA    bool
	vipAddr   netip.Addr
	svcTarget trace.Target
	// tgt is a pod column as a target; gviews a Service column's view
	// from each node group (nil: per source node).
	tgt    target
	gviews []*svcView
}

// Cell is one source × destination answer.
type Cell struct {
	Verdict Verdict
	// Reason indexes Matrix.Reasons: why the cell is not allowed, or for
	// an allowed cell the source's egress decision (or the only one).
	Reason int32
	// Also is an allowed cell's second reason, the destination's ingress
	// decision; -1 when none.
	Also int32
}

// Reason says why: the failing hop of a representative trace (its node
// and component) and the reason it gave, or the deciding NetworkPolicy.
type Reason struct {
	Hop  string `json:"hop,omitempty"`
	Text string `json:"reason"`
	// NotModeled: the trace stopped where the twin does not model what
	// happens (trace.NotModeled), so the verdict is not known.
	NotModeled bool `json:"notModeled,omitempty"`
}

// Stats are what the computation took.
type Stats struct {
	Pods       int // eligible pods
	Classes    int
	NodeGroups int
	Traces     int // representative traces walked
	Cells      int
	// Stored are the cells held: template and node rows whole, copied
	// rows where they differ from their template.
	Stored int
	// Templates are the source rows computed cell by cell; the others
	// copy what holds for them from a template.
	Templates   int
	Rounds      int // 2 when a node group had to be split by node
	SplitGroups []string
	// Mismatches are cells where a representative trace disagreed with the
	// composed answer (the trace's answer is used); a bug if not empty.
	Mismatches []string
}

// Matrix is the reachability matrix.
type Matrix struct {
	Sources      []Source
	Destinations []Destination
	Reasons      []Reason
	Stats        Stats
	// Notes say what the matrix leaves out.
	Notes []string
	// ASCII prints the text matrix with ASCII symbols (+ x ~ .), for
	// anything that is not a terminal.
	ASCII bool
	// rows hold the cells, one per source (At, Row).
	rows []row
}

// row is one source's cells. A template row, a node row (and every row
// when the options ask for every cell) holds them all; a row that shares
// its template's signature holds only the columns where it differs, in
// order: every other cell is the template's, with the template source's
// "no NetworkPolicy selects … for egress" reason (fromEg) made its own
// (toEg). A copied row is then the size of what sets it apart, and the
// matrix of a large cluster is its templates' rows and those differences.
type row struct {
	cells        []Cell
	tmpl         int
	fromEg, toEg int32
	diffCols     []int32
	diffCells    []Cell
}

// copied is a template cell as the copying row holds it.
func (r *row) copied(c Cell) Cell {
	if c.Verdict == Allowed && c.Reason == r.fromEg {
		c.Reason = r.toEg
	}
	return c
}

// At is the cell of source i and destination j.
func (m *Matrix) At(i, j int) Cell {
	r := &m.rows[i]
	if r.cells != nil {
		return r.cells[j]
	}
	if k, ok := slices.BinarySearch(r.diffCols, int32(j)); ok {
		return r.diffCells[k]
	}
	return r.copied(m.rows[r.tmpl].cells[j])
}

// Row is source i's cells in destination order, made in buf (reused when
// large enough) for a copied row; the caller must not change them.
func (m *Matrix) Row(i int, buf []Cell) []Cell {
	r := &m.rows[i]
	if r.cells != nil {
		return r.cells
	}
	buf = append(buf[:0], m.rows[r.tmpl].cells...)
	if r.fromEg != r.toEg {
		for j := range buf {
			buf[j] = r.copied(buf[j])
		}
	}
	for k, j := range r.diffCols {
		buf[j] = r.diffCells[k]
	}
	return buf
}

// Held reports how source i's row is held: whole (tmpl is i), or as
// its template row tmpl's cells but for the columns diff, ascending.
// Every cell of a copied row outside diff has its template's verdict, and
// a cell that is not allowed its template's reason (At): what a reader
// that counts verdicts and reasons per row may compute once per template.
func (m *Matrix) Held(i int) (tmpl int, diff []int32) {
	r := &m.rows[i]
	if r.cells != nil {
		return i, nil
	}
	return r.tmpl, r.diffCols
}

// NumCells is the number of cells: sources × destinations.
func (m *Matrix) NumCells() int { return len(m.Sources) * len(m.Destinations) }

// analyzer holds one computation.
type analyzer struct {
	// Prep holds the nodes, classes and policies the cells are
	// computed over.
	*classes.Prep
	opt Options

	calicoInRules []calicoInRule

	// Path knowledge learned from representative traces.
	mu       sync.RWMutex
	know     map[pathKey]*knowledge
	svcKnow  map[svcKey]stageRes
	hostIDs  map[netip.AddrPort]int32
	hosts    []hostTarget
	probeMu  sync.Mutex
	keyMu    map[pathKey]*sync.Mutex
	traces   atomic.Int64
	mismatch []string
	split    map[int]bool

	rmu      sync.Mutex
	reasons  []Reason
	reasonID map[Reason]int32
	// egressIDs are the reasons that name their source (markEgress).
	egressIDs map[int32]bool
	// inRules and protects index the ingress rules (indexIngress).
	inRules  []*classes.Rule
	protects map[*classes.Npol][]int32
	// cols are the matrix's columns; bcByGroup indexes their backends
	// (backendCols).
	cols      []Destination
	bcMu      sync.Mutex
	bcByGroup map[int][][]int32
	// podCols are each class's pod columns (indexPodCols).
	podCols [][]int32

	viewMu  sync.Mutex
	lxViews map[int]map[svcPortKey]*svcView
	wnViews map[int]map[svcPortKey]*svcView

	lmu      sync.Mutex
	listen   map[listenKey]decision
	colIndex map[listenKey]int
}

// Compute builds the matrix for the cluster the engine walks.
func Compute(e *trace.Engine, opt Options) (*Matrix, error) {
	if e == nil {
		return nil, errors.New("reach: nil engine")
	}
	for _, f := range opt.To {
		if f.Kind == "node" {
			return nil, fmt.Errorf("--to %s: nodes are sources only (--nodes); pods on a node are not a destination filter", f.Text)
		}
	}
	an := newAnalyzer(e, opt)
	var m *Matrix
	var splitNodes []string
	for round := 1; ; round++ {
		an.prepare()
		m = an.matrix()
		m.Stats.Rounds = round
		m.Stats.SplitGroups = splitNodes
		if len(an.split) == 0 || round == 2 {
			break
		}
		// Same-node and cross-node paths differ inside a node group: its
		// nodes are not alike after all. Split it by node and start over.
		for g := range an.split {
			for _, n := range an.Groups[g] {
				an.Isolate[n.Name] = true
				splitNodes = append(splitNodes, n.Name)
			}
		}
	}
	sort.Strings(m.Stats.SplitGroups)
	if len(an.split) > 0 {
		m.Notes = append(m.Notes, "after splitting by node, same-node and cross-node paths still differ inside a node group; cells where they do are partial")
	}
	return m, nil
}

func newAnalyzer(e *trace.Engine, opt Options) *analyzer {
	if opt.Namespace == "" {
		opt.Namespace = "default"
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	an := &analyzer{opt: opt, Prep: &classes.Prep{E: e, C: e.Cluster(), Filters: append(append([]classes.Filter(nil), opt.From...), opt.To...),
		NodeByName: map[string]*classes.NodeInfo{}, NodeByIP: map[netip.Addr]*classes.NodeInfo{}, BlockBits: map[int]bool{}, Isolate: map[string]bool{}}}
	an.StartACLCompiler()
	an.LoadNodes()
	an.CompilePolicies()
	an.HasCalico = an.E.Felix().HasCalicoPolicies()
	return an
}

// prepare groups the nodes, classifies the pods and resolves the policies
// over the classes.
func (an *analyzer) prepare() {
	an.reset()
	an.GroupNodes()
	an.BuildClasses()
	an.ResolvePolicies()
	an.prepareReasons()
	an.coverACLReps()
	var reps []netip.Addr
	for _, c := range an.Classes {
		if c.ACLIn || c.ACLOut {
			reps = append(reps, c.RepIP)
		}
	}
	an.LoadACLs(reps)
	for _, c := range an.Classes {
		if c.ACLIn || c.ACLOut {
			c.ACL = an.EndpointACLs(c.RepIP)
		}
	}
}

// coverACLReps picks the representatives of the Windows classes whose
// ACLs are needed so that few nodes hold them (greedy set cover: the node
// with the most classes not yet covered first); each node compiled costs.
func (an *analyzer) coverACLReps() {
	var need []*classes.Class
	count := map[int]int{}
	for _, c := range an.Classes {
		if c.ACLIn || c.ACLOut {
			need = append(need, c)
			for n := range c.ByNode {
				count[n]++
			}
		}
	}
	done := make([]bool, len(need))
	for left := len(need); left > 0; {
		best := -1
		for n, k := range count {
			if k > 0 && (best < 0 || k > count[best] || k == count[best] && n < best) {
				best = n
			}
		}
		if best < 0 {
			break
		}
		for i, c := range need {
			ms, ok := c.ByNode[best]
			if done[i] || !ok {
				continue
			}
			done[i] = true
			left--
			c.RepIdx = ms[0]
			c.Rep, c.RepIP = c.Members[ms[0]].Pod, c.Members[ms[0]].IP
			for n := range c.ByNode {
				count[n]--
			}
		}
	}
}

func (an *analyzer) reset() {
	an.know = map[pathKey]*knowledge{}
	an.keyMu = map[pathKey]*sync.Mutex{}
	an.svcKnow = map[svcKey]stageRes{}
	an.hostIDs = map[netip.AddrPort]int32{}
	an.hosts = nil
	an.split = map[int]bool{}
	an.mismatch = nil
	an.reasons = nil
	an.reasonID = map[Reason]int32{}
	an.lxViews = map[int]map[svcPortKey]*svcView{}
	an.wnViews = map[int]map[svcPortKey]*svcView{}
	an.Acls = map[netip.Addr]*classes.EndpointACLs{}
	an.AddrSets = windows.NewACLListCache()
	an.listen = map[listenKey]decision{}
}

// intern returns the index of a reason.
func (an *analyzer) intern(r Reason) int32 {
	an.rmu.Lock()
	defer an.rmu.Unlock()
	if id, ok := an.reasonID[r]; ok {
		return id
	}
	id := int32(len(an.reasons))
	an.reasons = append(an.reasons, r)
	an.reasonID[r] = id
	return id
}

func (an *analyzer) inScope(ns string) bool { return an.opt.AllNamespaces || ns == an.opt.Namespace }

// selected reports whether something passes filters: with none, what is in
// scope; else what some filter matches (label selectors within scope).
func (an *analyzer) selected(fs []classes.Filter, ns string, match func(classes.Filter) bool) bool {
	if len(fs) == 0 {
		return an.inScope(ns)
	}
	for _, f := range fs {
		if match(f) && (f.Explicit() || an.inScope(ns)) {
			return true
		}
	}
	return false
}

// matrix lays out rows and columns and fills the cells.
func (an *analyzer) matrix() *Matrix {
	m := &Matrix{}
	for _, c := range an.Classes {
		c := c
		if !an.selected(an.opt.From, c.NS, func(f classes.Filter) bool { return f.MatchClass(c, an.C.Services) }) {
			continue
		}
		m.Sources = append(m.Sources, an.classSource(c))
	}
	sort.SliceStable(m.Sources, func(i, j int) bool { return m.Sources[i].Label < m.Sources[j].Label })
	nodeFilters := false
	for _, f := range an.opt.From {
		nodeFilters = nodeFilters || f.Kind == "node"
	}
	for _, n := range an.Nodes {
		pick := an.opt.Nodes && !nodeFilters
		for _, f := range an.opt.From {
			pick = pick || f.MatchNode(n.Name)
		}
		if pick {
			m.Sources = append(m.Sources, Source{Kind: "node", Label: "node/" + n.Name, OS: n.OS(), Nodes: []string{n.Name}, node: n})
		}
	}
	m.Destinations = an.columns()
	an.prepareColumns(m.Destinations)
	nd := len(m.Destinations)
	m.rows = make([]row, len(m.Sources))
	// Rows whose sources share a signature (sourceSignature) take most
	// cells from the first of them, the template: templates and node rows
	// first, then the others, which keep only where they differ.
	an.indexIngress()
	an.indexCalicoIngress()
	an.cols, an.bcByGroup = m.Destinations, nil
	an.indexPodCols()
	tmplOf := make([]int, len(m.Sources))
	// nonCopy lists, per template row, the columns it could not mark
	// copyable.
	nonCopy := make([][]int32, len(m.Sources))
	bySig := map[string]int{}
	var first, rest []int
	for i, s := range m.Sources {
		tmplOf[i] = -1
		if s.class == nil || an.opt.everyCell {
			first = append(first, i)
			continue
		}
		sig := an.sourceSignature(s.class)
		if t, ok := bySig[sig]; ok {
			tmplOf[i] = t
			rest = append(rest, i)
			continue
		}
		bySig[sig] = i
		first = append(first, i)
	}
	for _, phase := range [][]int{first, rest} {
		var wg sync.WaitGroup
		var crashed crash.Group
		next := make(chan int)
		for w := 0; w < an.opt.Workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A worker that panicked still takes its share of the
				// rows, unread, so that the sender never blocks.
				defer func() {
					for range next {
					}
				}()
				defer crashed.Recover()
				wk := an.newWorker()
				var copyable []bool
				for i := range next {
					r := &m.rows[i]
					if t := tmplOf[i]; t >= 0 {
						wk.rowFrom(&m.Sources[i], m.Destinations, r, t, &m.Sources[t], m.rows[t].cells, nonCopy[t])
						continue
					}
					r.cells = make([]Cell, nd)
					if m.Sources[i].class == nil || an.opt.everyCell {
						wk.row(&m.Sources[i], m.Destinations, r.cells, nil)
						continue
					}
					if len(copyable) != nd {
						copyable = make([]bool, nd)
					}
					clear(copyable)
					wk.row(&m.Sources[i], m.Destinations, r.cells, copyable)
					nonCopy[i] = unmarked(copyable)
				}
			}()
		}
		for _, i := range phase {
			next <- i
		}
		close(next)
		wg.Wait()
		crashed.Repanic()
	}
	m.Stats.Templates = len(bySig)
	m.Reasons = an.reasons
	pods := 0
	for _, c := range an.Classes {
		pods += len(c.Members)
	}
	m.Stats.Pods, m.Stats.Classes, m.Stats.NodeGroups = pods, len(an.Classes), len(an.Groups)
	m.Stats.Traces, m.Stats.Cells = int(an.traces.Load()), m.NumCells()
	for _, r := range m.rows {
		m.Stats.Stored += len(r.cells) + len(r.diffCells)
	}
	m.Stats.Mismatches = an.mismatch
	hostNet := 0
	for _, p := range an.C.Pods {
		if p.Spec.HostNetwork {
			hostNet++
		}
	}
	// Cells whose trace stopped where the twin does not model what
	// happens read denied or partial; the reader is told how many. The
	// cells are read only when some reason says so.
	if slices.ContainsFunc(m.Reasons, func(r Reason) bool { return r.NotModeled }) {
		n, why := 0, ""
		m.EachRow(func(_ int, cells []Cell) {
			for _, c := range cells {
				if c.Verdict != Allowed && m.NotModeled(c) {
					if n++; why == "" {
						why, _ = m.Why(c)
					}
				}
			}
		})
		if n > 0 {
			m.Notes = append(m.Notes, fmt.Sprintf("%d cells count as denied or partial where a trace stops at what the twin does not model, so their verdict is not known (%s)", n, why))
		}
	}
	switch {
	case hostNet > 0 && an.opt.Nodes:
		m.Notes = append(m.Notes, fmt.Sprintf("%d host-network pods are their nodes' host network: the node rows stand for them as sources; they have no rows or columns of their own", hostNet))
	case hostNet > 0:
		m.Notes = append(m.Notes, fmt.Sprintf("%d host-network pods are their nodes' host network, not rows or columns (--nodes adds node rows)", hostNet))
	}
	return m
}

// unmarked lists the columns a template row could not mark copyable, in
// a slice of their exact number (it is kept for the matrix's lifetime).
func unmarked(copyable []bool) []int32 {
	n := 0
	for _, ok := range copyable {
		if !ok {
			n++
		}
	}
	out := make([]int32, 0, n)
	for j, ok := range copyable {
		if !ok {
			out = append(out, int32(j))
		}
	}
	return out
}

func (an *analyzer) classSource(c *classes.Class) Source {
	s := Source{Kind: "pods", Label: c.Label, Namespace: c.NS, OS: c.OS, Labels: c.Common, class: c, Nodes: make([]string, len(c.Nodes))}
	s.Pods, s.Workloads = members(c)
	// c.Nodes are the members' nodes, each once (a name is one node's).
	for i, n := range c.Nodes {
		s.Nodes[i] = an.Nodes[n].Name
	}
	sort.Strings(s.Nodes)
	return s
}

// members are a class's pods' names and workloads, in its members' order.
func members(c *classes.Class) (pods, workloads []string) {
	pods, workloads = make([]string, len(c.Members)), make([]string, len(c.Members))
	for i, mb := range c.Members {
		pods[i], workloads[i] = mb.Pod.Name, mb.Workload
	}
	return pods, workloads
}

// columns lists the destinations: each selected class at each port it
// serves, then each selected Service at each of its ports.
func (an *analyzer) columns() []Destination {
	// At most a column per class and port (one for a class with none),
	// and per Service port.
	n := 0
	for _, c := range an.Classes {
		n += max(1, len(c.Ports))
	}
	for _, s := range an.C.Services {
		n += max(1, len(s.Spec.Ports))
	}
	out := make([]Destination, 0, n)
	opt := an.opt
	for _, c := range an.Classes {
		c := c
		if !an.selected(opt.To, c.NS, func(f classes.Filter) bool { return f.Kind != "svc" && f.MatchClass(c, nil) }) {
			continue
		}
		base := Destination{Kind: "pods", Label: c.Label, Namespace: c.NS, OS: c.OS, class: c}
		base.Pods, base.Workloads = members(c)
		base.selfNA = len(c.Members) == 1
		add := func(proto trace.Proto, port int) {
			d := base
			d.Proto, d.Port = proto, port
			out = append(out, d)
		}
		switch {
		case opt.Proto == trace.ICMP:
			add(trace.ICMP, 0)
		case opt.Port > 0:
			add(orProto(opt.Proto), opt.Port)
		default:
			n := 0
			for _, p := range c.Ports {
				if opt.Proto == "" || strings.EqualFold(p.Proto, string(opt.Proto)) {
					if pr, ok := trace.ParseProto(p.Proto); ok {
						add(pr, p.Port)
						n++
					}
				}
			}
			if n == 0 {
				d := base
				d.noListen = true
				d.Proto = opt.Proto
				out = append(out, d)
			}
		}
	}
	for _, s := range an.C.Services {
		s := s
		vip, err := netip.ParseAddr(s.Spec.ClusterIP)
		if err != nil || s.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		if !an.selected(opt.To, s.Namespace, func(f classes.Filter) bool { return f.MatchService(s) }) {
			continue
		}
		base := Destination{Kind: "service", Label: "svc/" + s.Namespace + "/" + s.Name, Namespace: s.Namespace, Name: s.Name,
			vipAddr: vip, itpLocal: s.Spec.InternalTrafficPolicy != nil && *s.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
			svcTarget: trace.Target{Kind: trace.KindService, Given: "svc/" + s.Namespace + "/" + s.Name, Service: s, Addr: vip}}
		if opt.Proto == trace.ICMP {
			d := base
			d.Proto = trace.ICMP
			out = append(out, d)
			continue
		}
		for _, sp := range s.Spec.Ports {
			pr, _ := trace.ParseProto(string(orTCP(sp.Protocol)))
			if pr == "" || opt.Proto != "" && pr != opt.Proto || opt.Port > 0 && int(sp.Port) != opt.Port {
				continue
			}
			d := base
			d.Proto, d.Port = pr, int(sp.Port)
			d.TargetPort = sp.TargetPort.String()
			if d.TargetPort == "0" || d.TargetPort == "" {
				d.TargetPort = fmt.Sprint(sp.Port)
			}
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Kind != b.Kind {
			return a.Kind == "pods"
		}
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.Proto < b.Proto
	})
	return out
}

func orProto(p trace.Proto) trace.Proto {
	if p == "" {
		return trace.TCP
	}
	return p
}

func orTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}
