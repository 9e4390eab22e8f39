package rule

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	calicooperator "github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Context is what a rule's Check reads: the built cluster, what the user
// said about it, and indexes shared by all rules, built on first use.
type Context struct {
	Cluster *model.Cluster
	// ExpectWindows: Windows nodes are planned even if none is listed.
	ExpectWindows bool
	// Kubeconfigs are the files named with --kubeconfig-files, in order.
	Kubeconfigs []*Kubeconfig

	once sync.Once
	ix   *Index
	// memo holds what a family of rules computes once per run (Memo).
	memoMu sync.Mutex
	memo   map[any]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
}

// Memo returns build's value, computed on the first call with key: an
// index that only some rules read, shared by them and built once per run.
// Keys are values of types of the caller's own (struct{} types).
func (x *Context) Memo(key any, build func() any) any {
	x.memoMu.Lock()
	e, ok := x.memo[key]
	if !ok {
		if x.memo == nil {
			x.memo = map[any]*memoEntry{}
		}
		e = &memoEntry{}
		x.memo[key] = e
	}
	x.memoMu.Unlock()
	e.once.Do(func() { e.v = build() })
	return e.v
}

// NewContext wraps a cluster for the rules.
func NewContext(c *model.Cluster, expectWindows bool, kubeconfigs []*Kubeconfig) *Context {
	return &Context{Cluster: c, ExpectWindows: expectWindows, Kubeconfigs: kubeconfigs}
}

// Idx is the indexes every rule shares, built on first use.
func (x *Context) Idx() *Index {
	x.once.Do(func() { x.ix = buildIndex(x.Cluster) })
	return x.ix
}

// HasWindows reports whether the cluster has Windows nodes or lists Windows
// hosts.
func (x *Context) HasWindows() bool { return x.Idx().hasWindows }

// WindowsPlanned reports whether Windows nodes exist or are expected: the
// flag says so, a Windows node or host is listed, or the Installation asks
// the operator for a Windows dataplane (calicoNetwork.windowsDataplane HNS
// exists only to serve Windows nodes).
func (x *Context) WindowsPlanned() bool {
	if x.ExpectWindows || x.HasWindows() {
		return true
	}
	cn := CalicoNetwork(x.Cluster.Installation)
	return cn.WindowsDataplane != nil && *cn.WindowsDataplane == calicooperator.WindowsHNS
}

// WindowsNodes are the nodes labelled kubernetes.io/os=windows, by name.
func (x *Context) WindowsNodes() []*corev1.Node { return x.Idx().windowsNodes }

// Node returns the node named name, or nil.
func (x *Context) Node(name string) *corev1.Node { return x.Idx().nodes[name] }

// Namespace returns the namespace named name, or nil.
func (x *Context) Namespace(name string) *corev1.Namespace { return x.Idx().namespaces[name] }

// Host returns the Cluster kind's host named name, or nil.
func (x *Context) Host(name string) *hybrid.Host { return x.Idx().hosts[name] }

// NSName is a namespaced name, the key of the namespaced indexes.
type NSName struct{ NS, Name string }

// Endpoint is one address of a Service's EndpointSlices.
type Endpoint struct {
	addr, Node string
}

// Workload is something that makes pods: a Deployment, DaemonSet,
// StatefulSet, a ReplicaSet of no Deployment, or a pod of no controller the
// twin models. Findings about pods are reported on it, once, not per pod.
type Workload struct {
	Key model.Key
	// Meta is the object's metadata; PodMeta the template's (or the pod's).
	Meta    *metav1.ObjectMeta
	PodMeta *metav1.ObjectMeta
	Spec    *corev1.PodSpec
	// Field is the path to the pod spec: "spec.template.spec" or "spec".
	Field string
	Pods  []*corev1.Pod
	// declaresWindows: the spec itself targets Windows (os.name, an OS
	// node selector or affinity, a Windows RuntimeClass, hostProcess).
	declaresWindows bool
	// onWindows: at least one of its pods is on a Windows node.
	onWindows   bool
	HostProcess bool
	// Intent: the workload is meant for Windows: it declares it, or it runs
	// there with Windows-only images. A Linux workload that lands on a
	// Windows node by accident (HYB045, HYB037) is not.
	Intent bool
}

// Windows reports whether the workload's pods are meant for or run on
// Windows nodes.
func (w *Workload) Windows() bool { return w.declaresWindows || w.onWindows }

// Path is the path of a field of the pod spec ("containers[0].image").
func (w *Workload) Path(rest string) string {
	if rest == "" {
		return w.Field
	}
	return w.Field + "." + rest
}

// Index holds the lookups rules share: nodes, hosts, namespaces, pods by
// node, Services and their endpoints, workloads, and what each object's
// skip-checks annotation lists.
type Index struct {
	nodes        map[string]*corev1.Node
	windowsNodes []*corev1.Node
	// onWindows names the Windows nodes (a pod's node, read once per pod).
	onWindows   map[string]bool
	hasWindows  bool
	hosts       map[string]*hybrid.Host
	namespaces  map[string]*corev1.Namespace
	PodsByNode  map[string][]*corev1.Pod
	Runtimes    map[string]*nodev1.RuntimeClass
	ConfigMaps  map[NSName]*corev1.ConfigMap
	Services    map[NSName]*corev1.Service
	Endpoints   map[NSName][]Endpoint
	Workloads   []*Workload
	ByWorkload  map[model.Key]*Workload
	podWorkload map[model.Key]*Workload // built on first use
	DaemonSets  map[NSName]*appsv1.DaemonSet
	// firstOfKind is the observed object of each group and kind that comes
	// first in the input (the singletons: ClusterConfiguration, Cluster).
	firstOfKind map[[2]string]model.Key
	// blocks maps a node to the CIDR of the block it has affinity to
	// (built on first use).
	blocks map[string]string
	// KubeletKey is the cluster-wide KubeletConfiguration's key (found on
	// first use).
	KubeletKey     *model.Key
	KubeletKeyDone bool
	// skips holds the rule IDs and names each object's skip-checks
	// annotation lists.
	skips map[model.Key]map[string]bool
}

// IsWindowsNode reports whether a node runs Windows: its OS label, else its
// node info.
func IsWindowsNode(n *corev1.Node) bool { return hybrid.NodeOS(n) == hybrid.OSWindows }

func buildIndex(c *model.Cluster) *Index {
	ix := &Index{
		nodes:       make(map[string]*corev1.Node, len(c.Nodes)),
		onWindows:   map[string]bool{},
		hosts:       map[string]*hybrid.Host{},
		namespaces:  make(map[string]*corev1.Namespace, len(c.Namespaces)),
		PodsByNode:  make(map[string][]*corev1.Pod, len(c.Nodes)),
		Runtimes:    map[string]*nodev1.RuntimeClass{},
		ConfigMaps:  make(map[NSName]*corev1.ConfigMap, len(c.ConfigMaps)),
		Services:    make(map[NSName]*corev1.Service, len(c.Services)),
		Endpoints:   make(map[NSName][]Endpoint, len(c.Services)),
		ByWorkload:  make(map[model.Key]*Workload, len(c.Deployments)+len(c.DaemonSets)+len(c.StatefulSets)+len(c.ReplicaSets)),
		DaemonSets:  map[NSName]*appsv1.DaemonSet{},
		firstOfKind: map[[2]string]model.Key{},
	}
	for _, n := range c.Nodes {
		ix.nodes[n.Name] = n
		if IsWindowsNode(n) {
			ix.windowsNodes = append(ix.windowsNodes, n)
			ix.onWindows[n.Name] = true
			ix.hasWindows = true
		}
	}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		ix.hosts[h.Name] = h
		if h.OS == hybrid.OSWindows {
			ix.hasWindows = true
		}
	}
	for _, ns := range c.Namespaces {
		ix.namespaces[ns.Name] = ns
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			ix.PodsByNode[p.Spec.NodeName] = append(ix.PodsByNode[p.Spec.NodeName], p)
		}
	}
	for _, rc := range c.RuntimeClasses {
		ix.Runtimes[rc.Name] = rc
	}
	for _, cm := range c.ConfigMaps {
		ix.ConfigMaps[NSName{cm.Namespace, cm.Name}] = cm
	}
	for _, s := range c.Services {
		ix.Services[NSName{s.Namespace, s.Name}] = s
	}
	ix.indexEndpoints(c)
	ix.indexWorkloads(c)
	ix.indexOrigins(c)
	ix.skips = skipAnnotations(c)
	return ix
}

// indexEndpoints collects each Service's endpoint addresses once, with the
// node they are on, from its EndpointSlices.
func (ix *Index) indexEndpoints(c *model.Cluster) {
	seen := map[NSName]map[string]bool{}
	for _, s := range c.EndpointSlices {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := NSName{s.Namespace, svc}
		if seen[k] == nil {
			seen[k] = map[string]bool{}
		}
		for _, e := range s.Endpoints {
			if len(e.Addresses) == 0 || seen[k][e.Addresses[0]] {
				continue
			}
			if e.Conditions.Serving != nil && !*e.Conditions.Serving && e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			seen[k][e.Addresses[0]] = true
			node := ""
			if e.NodeName != nil {
				node = *e.NodeName
			}
			ix.Endpoints[k] = append(ix.Endpoints[k], Endpoint{addr: e.Addresses[0], Node: node})
		}
	}
}

// ControllerOf is the kind and name of an object's controlling owner.
func ControllerOf(m metav1.Object) (string, string) {
	return controllers.ControllerOf(m)
}

func (ix *Index) indexWorkloads(c *model.Cluster) {
	add := func(w *Workload) {
		ix.Workloads = append(ix.Workloads, w)
		ix.ByWorkload[w.Key] = w
	}
	for _, d := range c.Deployments {
		add(&Workload{Key: model.Key{Group: "apps", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name},
			Meta: &d.ObjectMeta, PodMeta: &d.Spec.Template.ObjectMeta, Spec: &d.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, d := range c.DaemonSets {
		ix.DaemonSets[NSName{d.Namespace, d.Name}] = d
		add(&Workload{Key: model.Key{Group: "apps", Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name},
			Meta: &d.ObjectMeta, PodMeta: &d.Spec.Template.ObjectMeta, Spec: &d.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, s := range c.StatefulSets {
		add(&Workload{Key: model.Key{Group: "apps", Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name},
			Meta: &s.ObjectMeta, PodMeta: &s.Spec.Template.ObjectMeta, Spec: &s.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	rsOwner := make(map[NSName]model.Key, len(c.ReplicaSets))
	for _, rs := range c.ReplicaSets {
		k := model.Key{Group: "apps", Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name}
		if kind, name := ControllerOf(rs); kind == "Deployment" {
			dk := model.Key{Group: "apps", Kind: "Deployment", Namespace: rs.Namespace, Name: name}
			if _, ok := ix.ByWorkload[dk]; ok {
				rsOwner[NSName{rs.Namespace, rs.Name}] = dk
				continue
			}
		}
		rsOwner[NSName{rs.Namespace, rs.Name}] = k
		add(&Workload{Key: k, Meta: &rs.ObjectMeta, PodMeta: &rs.Spec.Template.ObjectMeta, Spec: &rs.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, p := range c.Pods {
		var owner model.Key
		switch kind, name := ControllerOf(p); kind {
		case "ReplicaSet":
			owner = rsOwner[NSName{p.Namespace, name}]
		case "DaemonSet", "StatefulSet":
			owner = model.Key{Group: "apps", Kind: kind, Namespace: p.Namespace, Name: name}
		}
		w, ok := ix.ByWorkload[owner]
		if !ok {
			w = &Workload{Key: model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				Meta: &p.ObjectMeta, PodMeta: &p.ObjectMeta, Spec: &p.Spec, Field: "spec"}
			add(w)
		}
		w.Pods = append(w.Pods, p)
		if ix.onWindows[p.Spec.NodeName] {
			w.onWindows = true
		}
	}
	for _, w := range ix.Workloads {
		w.HostProcess = HostProcess(w.Spec)
		w.declaresWindows = w.HostProcess || SpecTargetsOS(w.Spec, ix.Runtimes, hybrid.OSWindows)
		w.Intent = w.declaresWindows || (w.onWindows && WindowsOnlyImages(w.Spec))
	}
}

// SpecTargetsOS reports whether a pod spec pins itself to an OS: spec.os,
// a kubernetes.io/os node selector or required affinity, or the node
// selector of its RuntimeClass.
func SpecTargetsOS(spec *corev1.PodSpec, runtimes map[string]*nodev1.RuntimeClass, os string) bool {
	if spec.OS != nil && string(spec.OS.Name) == os {
		return true
	}
	if spec.NodeSelector[corev1.LabelOSStable] == os || (os == hybrid.OSWindows && spec.NodeSelector[corev1.LabelWindowsBuild] != "") {
		return true
	}
	if spec.RuntimeClassName != nil {
		if rc := runtimes[*spec.RuntimeClassName]; rc != nil && rc.Scheduling != nil && rc.Scheduling.NodeSelector[corev1.LabelOSStable] == os {
			return true
		}
	}
	return affinityPinsOS(spec.Affinity, os)
}

// affinityPinsOS: every required node selector term has a kubernetes.io/os
// In expression with os as the only value.
func affinityPinsOS(a *corev1.Affinity, os string) bool {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		pinned := false
		for _, e := range t.MatchExpressions {
			if e.Key == corev1.LabelOSStable && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 && e.Values[0] == os {
				pinned = true
			}
		}
		if !pinned {
			return false
		}
	}
	return true
}

// HostProcess reports whether any container of the spec is a Windows
// HostProcess container (its own setting, else the pod's).
func HostProcess(spec *corev1.PodSpec) bool {
	var pod *bool
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		pod = sc.WindowsOptions.HostProcess
	}
	hp := false
	EachContainer(spec, func(c *corev1.Container, _ string) {
		own := pod
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil && c.SecurityContext.WindowsOptions.HostProcess != nil {
			own = c.SecurityContext.WindowsOptions.HostProcess
		}
		if own != nil && *own {
			hp = true
		}
	})
	return hp
}

// EachContainer visits init then regular containers with their field path
// relative to the pod spec ("initContainers[0]", "containers[1]").
func EachContainer(spec *corev1.PodSpec, f func(c *corev1.Container, path string)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i], "initContainers["+itoa(i)+"]")
	}
	for i := range spec.Containers {
		f(&spec.Containers[i], "containers["+itoa(i)+"]")
	}
}

// indexOrigins records, per group and kind, the observed object that comes
// first in the input.
func (ix *Index) indexOrigins(c *model.Cluster) {
	best := map[[2]string]model.Origin{}
	for k, o := range c.Origins {
		gk := [2]string{k.Group, k.Kind}
		b, ok := best[gk]
		if !ok || originLess(o, b) || (o == b && KeyLess(k, ix.firstOfKind[gk])) {
			best[gk] = o
			ix.firstOfKind[gk] = k
		}
	}
}

func originLess(a, b model.Origin) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Doc != b.Doc {
		return a.Doc < b.Doc
	}
	return a.Line < b.Line
}

// KeyLess orders keys by group, kind, namespace and name.
func KeyLess(a, b model.Key) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// observedOfKind is the first observed object of a group and kind.
func (x *Context) observedOfKind(group, kind string) (model.Key, bool) {
	k, ok := x.Idx().firstOfKind[[2]string{group, kind}]
	return k, ok
}

// SkipAnnotation lists the rule IDs or names whose findings on the object
// (or on objects derived from it) are suppressed.
const SkipAnnotation = "kubectl-hybrid.io/skip-checks"

// skipAnnotations reads the skip-checks annotation of every object that
// carries one.
func skipAnnotations(c *model.Cluster) map[model.Key]map[string]bool {
	out := map[model.Key]map[string]bool{}
	eachObject(c, func(k model.Key, m metav1.Object) {
		v, ok := m.GetAnnotations()[SkipAnnotation]
		if !ok {
			return
		}
		set := map[string]bool{}
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			set[f] = true
		}
		out[k] = set
	})
	return out
}

// eachObject visits every object of the cluster that has metadata, keyed as
// the loader keys them.
func eachObject(c *model.Cluster, f func(model.Key, metav1.Object)) {
	visit := func(group, kind string, m metav1.Object) {
		if m == nil {
			return
		}
		f(model.Key{Group: group, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}, m)
	}
	for _, o := range c.Nodes {
		visit("", "Node", o)
	}
	for _, o := range c.Namespaces {
		visit("", "Namespace", o)
	}
	for _, o := range c.Pods {
		visit("", "Pod", o)
	}
	for _, o := range c.Services {
		visit("", "Service", o)
	}
	for _, o := range c.ConfigMaps {
		visit("", "ConfigMap", o)
	}
	for _, o := range c.Deployments {
		visit("apps", "Deployment", o)
	}
	for _, o := range c.ReplicaSets {
		visit("apps", "ReplicaSet", o)
	}
	for _, o := range c.DaemonSets {
		visit("apps", "DaemonSet", o)
	}
	for _, o := range c.StatefulSets {
		visit("apps", "StatefulSet", o)
	}
	for _, o := range c.NetworkPolicies {
		visit("networking.k8s.io", "NetworkPolicy", o)
	}
	for _, o := range c.RuntimeClasses {
		visit("node.k8s.io", "RuntimeClass", o)
	}
	for _, o := range c.CSRs {
		visit("certificates.k8s.io", "CertificateSigningRequest", o)
	}
	if c.Installation != nil {
		visit("operator.tigera.io", "Installation", c.Installation)
	}
	for _, o := range c.IPPools {
		visit("projectcalico.org", "IPPool", o)
	}
	if c.IPAMConfig != nil {
		visit("projectcalico.org", "IPAMConfiguration", c.IPAMConfig)
	}
	for _, o := range c.FelixConfigs {
		visit("projectcalico.org", "FelixConfiguration", o)
	}
	for _, o := range c.CalicoPolicies {
		visit("projectcalico.org", "NetworkPolicy", o)
	}
	for _, o := range c.GlobalNetworkPolicies {
		visit("projectcalico.org", "GlobalNetworkPolicy", o)
	}
	if k := c.Kubeadm.Init; k != nil {
		visit("kubeadm.k8s.io", "InitConfiguration", k)
	}
	if k := c.Kubeadm.Cluster; k != nil {
		visit("kubeadm.k8s.io", "ClusterConfiguration", k)
	}
	for _, j := range c.Kubeadm.Joins {
		m := j.ObjectMeta
		if m.Name == "" {
			m.Name = j.NodeRegistration.Name // the loader's key for an unnamed join
		}
		visit("kubeadm.k8s.io", "JoinConfiguration", &m)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// SortedKeys returns a map's string keys in order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BlockOf finds the block with affinity to node (built on first use).
func (ix *Index) BlockOf(node string, c *model.Cluster) string {
	if ix.blocks == nil {
		ix.blocks = map[string]string{}
		for _, b := range c.IPAMBlocks {
			if b.Spec.Affinity != nil && strings.HasPrefix(*b.Spec.Affinity, "host:") && !b.Spec.Deleted {
				n := strings.TrimPrefix(*b.Spec.Affinity, "host:")
				if _, ok := ix.blocks[n]; !ok {
					ix.blocks[n] = b.Spec.CIDR
				}
			}
		}
	}
	return ix.blocks[node]
}
