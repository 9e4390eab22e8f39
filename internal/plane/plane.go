// Package plane is the compiled twin of one built cluster, between the
// engine and the faces (trace, reach, exec, get, diff): it owns the
// cluster's indexes and each node's dataplane, Linux (routes, neighbours,
// FDB, nftables tables: internal/dataplane/linux) or Windows (HNS and VFP:
// internal/dataplane/windows), compiled on first use and kept. What the
// nodes share, kube-proxy's Service model, Felix's calculation and the
// IPAM blocks, is made once for all of them.
//
// A command builds one Plane; it is safe for concurrent use, so that a
// long-running server can keep it warm.
package plane

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Plane holds one cluster's indexes and its nodes' compiled dataplanes.
type Plane struct {
	c *model.Cluster
	// calc is the Felix calculation, made on first use: a node's routes
	// and links need none of it.
	calc func() *felix.Calc
	lxc  *linux.Compiler

	// The Windows compiler is made on first use: making it can fail (a
	// bad IPPool or IPAMBlock CIDR), which a Linux-only question must not.
	wincOnce sync.Once
	winc     *windows.Compiler
	wincErr  error

	mu  sync.Mutex
	lx  map[string]*lxEntry
	win map[string]*winEntry
	// gen counts the planes Reuse made before this one.
	gen int

	// Compiles counted, for the tests and benchmarks that show a question
	// about one node compiles one node.
	lxCompiles, winCompiles atomic.Int64

	nodeByName map[string]*corev1.Node // the last of a name, as compiled
	// The other indexes are made on first use: a question about one node
	// needs none of them. A plane that follows another whose cluster has
	// the same inputs shares them (Follow).
	ixOf   func() *idx
	podsOf func() *podIndex
}

type lxEntry struct {
	once sync.Once
	n    *linux.Node
	// gen is the plane that compiled it; done is set once it has.
	gen  int
	done atomic.Bool
}

type winEntry struct {
	once sync.Once
	n    *windows.Node
	err  error
	gen  int
	done atomic.Bool
}

// idx holds the cluster's indexes. Each keeps the order of the cluster's
// lists, or the first or last match of a scan over them, as said.
type idx struct {
	podByIP     map[netip.Addr]*corev1.Pod
	hostNetByIP map[string][]*corev1.Pod       // host-network pods by status.podIP
	svcByName   map[string]*corev1.Service     // "ns/name": the first
	svcByIP     map[netip.Addr]*corev1.Service // by ClusterIP: the last
	slicesBySvc map[string][]*discoveryv1.EndpointSlice
	rsByNS      map[string][]*appsv1.ReplicaSet
	nicByNode   map[string]string // the first host entry's NIC name
	mtuByNode   map[string]int    // the last host entry's NIC MTU
}

// New indexes c and prepares compiling its nodes; it compiles none.
func New(c *model.Cluster) (*Plane, error) { return newPlane(c, nil, nil) }

// newPlane is New with the Felix calculation calc (nil: the cluster's own,
// made on first use), and the Linux compiler made after prevLx
// (linux.NewCompilerAfter; nil: none).
func newPlane(c *model.Cluster, calc func() *felix.Calc, prevLx *linux.Compiler) (*Plane, error) {
	if c == nil {
		return nil, errors.New("plane: nil cluster")
	}
	// One Felix calculation: the Linux tables and decisions and the
	// Windows ACLs read it.
	if calc == nil {
		calc = sync.OnceValue(func() *felix.Calc { return felix.New(c) })
	}
	lxc, err := linux.NewCompilerAfter(prevLx, c, calc)
	if err != nil {
		return nil, fmt.Errorf("compiling the Linux dataplane: %w", err)
	}
	p := &Plane{c: c, calc: calc, lxc: lxc, lx: map[string]*lxEntry{}, win: map[string]*winEntry{}}
	p.nodeByName = make(map[string]*corev1.Node, len(c.Nodes))
	for _, n := range c.Nodes {
		p.nodeByName[n.Name] = n
	}
	// The closures hold the cluster, not the plane: a plane that shares
	// them (Follow) keeps no other plane's compiled nodes alive.
	nodeByName := p.nodeByName
	p.ixOf = sync.OnceValue(func() *idx { return index(c, nodeByName) })
	p.podsOf = sync.OnceValue(func() *podIndex { return podIndexes(c) })
	return p, nil
}

// ix is the indexes, made on first use.
func (p *Plane) ix() *idx { return p.ixOf() }

type nsName struct{ ns, name string }

// groupPods lists the pods by key, in order, each list a run of one
// array.
func groupPods(pods []*corev1.Pod, key func(*corev1.Pod) string) map[string][]*corev1.Pod {
	n := map[string]int{}
	for _, p := range pods {
		n[key(p)]++
	}
	all := make([]*corev1.Pod, len(pods))
	out := make(map[string][]*corev1.Pod, len(n))
	off := 0
	for k, c := range n {
		out[k] = all[off : off : off+c]
		off += c
	}
	for _, p := range pods {
		k := key(p)
		out[k] = append(out[k], p)
	}
	return out
}

// podIndex holds the pods by name and grouped, made on first use apart
// from idx: a walk reads pods by address, which is most of what reach asks.
type podIndex struct {
	byName map[nsName]*corev1.Pod // the first of a name
	byNS   map[string][]*corev1.Pod
	byNode map[string][]*corev1.Pod // by spec.nodeName, every pod
}

func (p *Plane) pods() *podIndex { return p.podsOf() }

// podIndexes makes the pod index. It reads the cluster's pods alone
// (their namespaces, names and nodes).
func podIndexes(c *model.Cluster) *podIndex {
	x := &podIndex{}
	x.byName = make(map[nsName]*corev1.Pod, len(c.Pods))
	for _, pod := range c.Pods {
		key := nsName{pod.Namespace, pod.Name}
		if _, ok := x.byName[key]; !ok {
			x.byName[key] = pod
		}
	}
	x.byNS = groupPods(c.Pods, func(p *corev1.Pod) string { return p.Namespace })
	x.byNode = groupPods(c.Pods, func(p *corev1.Pod) string { return p.Spec.NodeName })
	return x
}

// index makes the other indexes. It reads the cluster's pods, the
// Nodes' names, Services, EndpointSlices, ReplicaSets and each Host's
// name and NIC name and MTU (sameIndexInputs).
func index(c *model.Cluster, nodeByName map[string]*corev1.Node) *idx {
	x := &idx{}
	x.hostNetByIP, x.podByIP = map[string][]*corev1.Pod{}, make(map[netip.Addr]*corev1.Pod, len(c.Pods))
	for _, pod := range c.Pods {
		if pod.Spec.HostNetwork {
			x.hostNetByIP[pod.Status.PodIP] = append(x.hostNetByIP[pod.Status.PodIP], pod)
			continue
		}
		if pod.Status.PodIP == "" || pod.Spec.NodeName == "" ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		// A pod bound to a node that does not exist runs nowhere (the pod
		// garbage collector deletes it: kubernetes
		// pkg/controller/podgc/gc_controller.go gcOrphaned); its address
		// answers nothing.
		if nodeByName[pod.Spec.NodeName] == nil {
			continue
		}
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
			x.podByIP[a] = pod
		}
	}
	x.svcByName, x.svcByIP = map[string]*corev1.Service{}, map[netip.Addr]*corev1.Service{}
	for _, s := range c.Services {
		if _, ok := x.svcByName[s.Namespace+"/"+s.Name]; !ok {
			x.svcByName[s.Namespace+"/"+s.Name] = s
		}
		if a, err := netip.ParseAddr(s.Spec.ClusterIP); err == nil {
			x.svcByIP[a] = s
		}
	}
	x.slicesBySvc = map[string][]*discoveryv1.EndpointSlice{}
	for _, es := range c.EndpointSlices {
		k := es.Namespace + "/" + es.Labels[discoveryv1.LabelServiceName]
		x.slicesBySvc[k] = append(x.slicesBySvc[k], es)
	}
	x.rsByNS = map[string][]*appsv1.ReplicaSet{}
	for _, r := range c.ReplicaSets {
		x.rsByNS[r.Namespace] = append(x.rsByNS[r.Namespace], r)
	}
	x.nicByNode, x.mtuByNode = map[string]string{}, map[string]int{}
	for _, h := range c.Hosts {
		if _, ok := x.nicByNode[h.Name]; !ok && h.NIC.Name != "" {
			x.nicByNode[h.Name] = h.NIC.Name
		}
		if h.NIC.MTU > 0 {
			x.mtuByNode[h.Name] = int(h.NIC.MTU)
		}
	}
	return x
}

// Cluster is the built cluster the plane compiles.
func (p *Plane) Cluster() *model.Cluster { return p.c }

// Felix is the one Felix calculation of the cluster, which the Linux
// tables and decisions and the Windows ACLs read.
func (p *Plane) Felix() *felix.Calc { return p.calc() }

// Node is the Node named (the last of that name), or nil.
func (p *Plane) Node(name string) *corev1.Node { return p.nodeByName[name] }

// IsWindows says whether the node named is labelled kubernetes.io/os=windows.
func (p *Plane) IsWindows(name string) bool {
	n := p.nodeByName[name]
	return n != nil && n.Labels[corev1.LabelOSStable] == hybrid.OSWindows
}

// Pod is the pod ns/name (the first of that name), or nil.
func (p *Plane) Pod(ns, name string) *corev1.Pod { return p.pods().byName[nsName{ns, name}] }

// PodsInNamespace lists a namespace's pods in the cluster's order.
func (p *Plane) PodsInNamespace(ns string) []*corev1.Pod { return p.pods().byNS[ns] }

// PodsOnNode lists the pods bound to a node (host-network ones and
// finished ones too) in the cluster's order.
func (p *Plane) PodsOnNode(name string) []*corev1.Pod { return p.pods().byNode[name] }

// PodByIP is the pod on the pod network that answers at a: bound to an
// existing node, neither Succeeded nor Failed (the last such pod).
func (p *Plane) PodByIP(a netip.Addr) *corev1.Pod { return p.ix().podByIP[a] }

// HostNetworkPods lists the host-network pods whose status.podIP is ip.
func (p *Plane) HostNetworkPods(ip string) []*corev1.Pod { return p.ix().hostNetByIP[ip] }

// Service is the Service ns/name (the first of that name), or nil.
func (p *Plane) Service(ns, name string) *corev1.Service { return p.ix().svcByName[ns+"/"+name] }

// ServiceByIP is the Service whose ClusterIP is a (the last), or nil.
func (p *Plane) ServiceByIP(a netip.Addr) *corev1.Service { return p.ix().svcByIP[a] }

// EndpointSlices lists the EndpointSlices of Service ns/name (by their
// kubernetes.io/service-name label) in the cluster's order.
func (p *Plane) EndpointSlices(ns, name string) []*discoveryv1.EndpointSlice {
	return p.ix().slicesBySvc[ns+"/"+name]
}

// ReplicaSets lists a namespace's ReplicaSets in the cluster's order.
func (p *Plane) ReplicaSets(ns string) []*appsv1.ReplicaSet { return p.ix().rsByNS[ns] }

// NIC is the name of the node's host NIC, "" when the input gives none.
func (p *Plane) NIC(node string) string { return p.ix().nicByNode[node] }

// MTU is the MTU of the node's host NIC; ok is false when none is given.
func (p *Plane) MTU(node string) (mtu int, ok bool) {
	mtu, ok = p.ix().mtuByNode[node]
	return mtu, ok
}

// Linux is the compiled dataplane of the Linux node named, compiled on
// first use; nil when no Linux node has that name.
func (p *Plane) Linux(name string) *linux.Node {
	p.mu.Lock()
	e := p.lx[name]
	if e == nil {
		e = &lxEntry{}
		p.lx[name] = e
	}
	p.mu.Unlock()
	e.once.Do(func() {
		if n, ok := p.lxc.Node(name); ok {
			p.lxCompiles.Add(1)
			e.n = n
		}
		e.gen = p.gen
		e.done.Store(true)
	})
	return e.n
}

// HasLinux says whether a Linux node has that name (Linux compiles one),
// without compiling it.
func (p *Plane) HasLinux(name string) bool { return p.lxc.Has(name) }

// LinuxTunnel is the address of the Linux node's vxlan.calico device,
// read without compiling the node.
func (p *Plane) LinuxTunnel(name string) (netip.Addr, bool) { return p.lxc.TunnelAddr(name) }

// LinuxIPIP is the address of the Linux node's tunl0, read without
// compiling the node.
func (p *Plane) LinuxIPIP(name string) (netip.Addr, bool) { return p.lxc.IPIPAddr(name) }

// LinuxVXLAN is the VNI and destination port of the Linux node's
// vxlan.calico device, read without compiling the node.
func (p *Plane) LinuxVXLAN(name string) (vni, port int, ok bool) {
	_, vni, port, ok = p.lxc.Tunnel(name)
	return vni, port, ok
}

// LinuxNodes compiles every Linux node (those not compiled yet) and
// returns them by name.
func (p *Plane) LinuxNodes() map[string]*linux.Node {
	out := map[string]*linux.Node{}
	for _, n := range p.c.Nodes {
		if ln := p.Linux(n.Name); ln != nil {
			out[n.Name] = ln
		}
	}
	return out
}

// WindowsCompiler is the plane's one compiler of Windows nodes.
func (p *Plane) WindowsCompiler() (*windows.Compiler, error) {
	p.wincOnce.Do(func() {
		p.winc, p.wincErr = windows.NewCompilerFelix(p.c, p.calc())
	})
	return p.winc, p.wincErr
}

// Windows is the compiled HNS and VFP state of the Windows node named,
// compiled on first use; nil, nil when no Windows node has that name.
func (p *Plane) Windows(name string) (*windows.Node, error) {
	k8s := p.nodeByName[name]
	if k8s == nil || k8s.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
		return nil, nil
	}
	x, err := p.WindowsCompiler()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	e := p.win[name]
	if e == nil {
		e = &winEntry{}
		p.win[name] = e
	}
	p.mu.Unlock()
	e.once.Do(func() {
		p.winCompiles.Add(1)
		e.n, e.err = x.Node(k8s)
		e.gen = p.gen
		e.done.Store(true)
	})
	return e.n, e.err
}

// WindowsNodes compiles every Windows node (those not compiled yet) and
// returns them by name; it fails as windows.Compile fails.
func (p *Plane) WindowsNodes() (map[string]*windows.Node, error) {
	out := map[string]*windows.Node{}
	if _, err := p.WindowsCompiler(); err != nil {
		return nil, err
	}
	for _, n := range p.c.Nodes {
		if n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
			continue
		}
		wn, err := p.Windows(n.Name)
		if err != nil {
			return nil, err
		}
		if wn != nil {
			out[n.Name] = wn
		}
	}
	return out, nil
}

// eagerWindowsWork bounds Windows nodes × (Services + endpoints) for which
// Warm compiles every Windows node (a few hundred MB of HNS state at
// most); beyond it each compiles on first use.
const eagerWindowsWork = 1 << 18

// Warm makes the indexes and compiles every Linux node, and every Windows
// node of a cluster small enough (eagerWindowsWork), so that the questions
// that follow (a trace's walk, say) find them made. Compile errors are
// left for the question that asks for the node. It reports whether it
// compiled the Windows nodes.
func (p *Plane) Warm() (windowsToo bool) {
	p.ix()
	p.LinuxNodes()
	winNodes, work := 0, len(p.c.Services)
	for _, es := range p.c.EndpointSlices {
		work += len(es.Endpoints)
	}
	for _, n := range p.c.Nodes {
		if n.Labels[corev1.LabelOSStable] == hybrid.OSWindows {
			winNodes++
		}
	}
	if winNodes*work > eagerWindowsWork {
		return false
	}
	_, _ = p.WindowsNodes()
	return true
}

// Compiled counts the nodes compiled so far, per OS.
type Compiled struct{ Linux, Windows int }

// Compiled says how many nodes the plane has compiled.
func (p *Plane) Compiled() Compiled {
	return Compiled{Linux: int(p.lxCompiles.Load()), Windows: int(p.winCompiles.Load())}
}
