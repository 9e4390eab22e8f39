package check

import (
	"sort"
	"strconv"
	"strings"
	"sync"

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
	ix   *index
	// images memoizes imageMismatches for the two image rules.
	images *[]*imageMismatch
	// calico holds the pods as Calico selectors see them (calicoPods).
	calicoOnce sync.Once
	calico     *calicoPodSet
}

// NewContext wraps a cluster for the rules.
func NewContext(c *model.Cluster, expectWindows bool, kubeconfigs []*Kubeconfig) *Context {
	return &Context{Cluster: c, ExpectWindows: expectWindows, Kubeconfigs: kubeconfigs}
}

func (x *Context) idx() *index {
	x.once.Do(func() { x.ix = buildIndex(x.Cluster) })
	return x.ix
}

// HasWindows reports whether the cluster has Windows nodes or lists Windows
// hosts.
func (x *Context) HasWindows() bool { return x.idx().hasWindows }

// WindowsPlanned reports whether Windows nodes exist or are expected: the
// flag says so, a Windows node or host is listed, or the Installation asks
// the operator for a Windows dataplane (calicoNetwork.windowsDataplane HNS
// exists only to serve Windows nodes).
func (x *Context) WindowsPlanned() bool {
	if x.ExpectWindows || x.HasWindows() {
		return true
	}
	cn := calicoNetwork(x.Cluster.Installation)
	return cn.WindowsDataplane != nil && *cn.WindowsDataplane == calicooperator.WindowsHNS
}

// WindowsNodes are the nodes labelled kubernetes.io/os=windows, by name.
func (x *Context) WindowsNodes() []*corev1.Node { return x.idx().windowsNodes }

// Node returns the node named name, or nil.
func (x *Context) Node(name string) *corev1.Node { return x.idx().nodes[name] }

// Namespace returns the namespace named name, or nil.
func (x *Context) Namespace(name string) *corev1.Namespace { return x.idx().namespaces[name] }

// Host returns the Cluster kind's host named name, or nil.
func (x *Context) Host(name string) *hybrid.Host { return x.idx().hosts[name] }

type nsName struct{ ns, name string }

// endpoint is one address of a Service's EndpointSlices.
type endpoint struct {
	addr, node string
}

// workload is something that makes pods: a Deployment, DaemonSet,
// StatefulSet, a ReplicaSet of no Deployment, or a pod of no controller the
// twin models. Findings about pods are reported on it, once, not per pod.
type workload struct {
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
	hostProcess bool
	// intent: the workload is meant for Windows: it declares it, or it runs
	// there with Windows-only images. A Linux workload that lands on a
	// Windows node by accident (HYB045, HYB037) is not.
	intent bool
}

// windows reports whether the workload's pods are meant for or run on
// Windows nodes.
func (w *workload) windows() bool { return w.declaresWindows || w.onWindows }

func (w *workload) field(rest string) string {
	if rest == "" {
		return w.Field
	}
	return w.Field + "." + rest
}

type index struct {
	nodes        map[string]*corev1.Node
	windowsNodes []*corev1.Node
	// onWindows names the Windows nodes (a pod's node, read once per pod).
	onWindows   map[string]bool
	hasWindows  bool
	hosts       map[string]*hybrid.Host
	namespaces  map[string]*corev1.Namespace
	podsByNode  map[string][]*corev1.Pod
	runtimes    map[string]*nodev1.RuntimeClass
	configMaps  map[nsName]*corev1.ConfigMap
	services    map[nsName]*corev1.Service
	endpoints   map[nsName][]endpoint
	workloads   []*workload
	byWorkload  map[model.Key]*workload
	podWorkload map[model.Key]*workload // built on first use
	daemonSets  map[nsName]*appsv1.DaemonSet
	// firstOfKind is the observed object of each group and kind that comes
	// first in the input (the singletons: ClusterConfiguration, Cluster).
	firstOfKind map[[2]string]model.Key
	// blocks maps a node to the CIDR of the block it has affinity to
	// (built on first use).
	blocks map[string]string
	// kubeletKey is the cluster-wide KubeletConfiguration's key (found on
	// first use).
	kubeletKey     *model.Key
	kubeletKeyDone bool
	// skips holds the rule IDs and names each object's skip-checks
	// annotation lists.
	skips map[model.Key]map[string]bool
}

func isWindowsNode(n *corev1.Node) bool { return hybrid.NodeOS(n) == hybrid.OSWindows }

func buildIndex(c *model.Cluster) *index {
	ix := &index{
		nodes:       make(map[string]*corev1.Node, len(c.Nodes)),
		onWindows:   map[string]bool{},
		hosts:       map[string]*hybrid.Host{},
		namespaces:  make(map[string]*corev1.Namespace, len(c.Namespaces)),
		podsByNode:  make(map[string][]*corev1.Pod, len(c.Nodes)),
		runtimes:    map[string]*nodev1.RuntimeClass{},
		configMaps:  make(map[nsName]*corev1.ConfigMap, len(c.ConfigMaps)),
		services:    make(map[nsName]*corev1.Service, len(c.Services)),
		endpoints:   make(map[nsName][]endpoint, len(c.Services)),
		byWorkload:  make(map[model.Key]*workload, len(c.Deployments)+len(c.DaemonSets)+len(c.StatefulSets)+len(c.ReplicaSets)),
		daemonSets:  map[nsName]*appsv1.DaemonSet{},
		firstOfKind: map[[2]string]model.Key{},
	}
	for _, n := range c.Nodes {
		ix.nodes[n.Name] = n
		if isWindowsNode(n) {
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
			ix.podsByNode[p.Spec.NodeName] = append(ix.podsByNode[p.Spec.NodeName], p)
		}
	}
	for _, rc := range c.RuntimeClasses {
		ix.runtimes[rc.Name] = rc
	}
	for _, cm := range c.ConfigMaps {
		ix.configMaps[nsName{cm.Namespace, cm.Name}] = cm
	}
	for _, s := range c.Services {
		ix.services[nsName{s.Namespace, s.Name}] = s
	}
	ix.indexEndpoints(c)
	ix.indexWorkloads(c)
	ix.indexOrigins(c)
	ix.skips = skipAnnotations(c)
	return ix
}

// indexEndpoints collects each Service's endpoint addresses once, with the
// node they are on, from its EndpointSlices.
func (ix *index) indexEndpoints(c *model.Cluster) {
	seen := map[nsName]map[string]bool{}
	for _, s := range c.EndpointSlices {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := nsName{s.Namespace, svc}
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
			ix.endpoints[k] = append(ix.endpoints[k], endpoint{addr: e.Addresses[0], node: node})
		}
	}
}

// controllerOf is the kind and name of an object's controlling owner.
func controllerOf(m metav1.Object) (string, string) {
	for _, r := range m.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return r.Kind, r.Name
		}
	}
	if refs := m.GetOwnerReferences(); len(refs) == 1 {
		return refs[0].Kind, refs[0].Name
	}
	return "", ""
}

func (ix *index) indexWorkloads(c *model.Cluster) {
	add := func(w *workload) {
		ix.workloads = append(ix.workloads, w)
		ix.byWorkload[w.Key] = w
	}
	for _, d := range c.Deployments {
		add(&workload{Key: model.Key{Group: "apps", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name},
			Meta: &d.ObjectMeta, PodMeta: &d.Spec.Template.ObjectMeta, Spec: &d.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, d := range c.DaemonSets {
		ix.daemonSets[nsName{d.Namespace, d.Name}] = d
		add(&workload{Key: model.Key{Group: "apps", Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name},
			Meta: &d.ObjectMeta, PodMeta: &d.Spec.Template.ObjectMeta, Spec: &d.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, s := range c.StatefulSets {
		add(&workload{Key: model.Key{Group: "apps", Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name},
			Meta: &s.ObjectMeta, PodMeta: &s.Spec.Template.ObjectMeta, Spec: &s.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	rsOwner := make(map[nsName]model.Key, len(c.ReplicaSets))
	for _, rs := range c.ReplicaSets {
		k := model.Key{Group: "apps", Kind: "ReplicaSet", Namespace: rs.Namespace, Name: rs.Name}
		if kind, name := controllerOf(rs); kind == "Deployment" {
			dk := model.Key{Group: "apps", Kind: "Deployment", Namespace: rs.Namespace, Name: name}
			if _, ok := ix.byWorkload[dk]; ok {
				rsOwner[nsName{rs.Namespace, rs.Name}] = dk
				continue
			}
		}
		rsOwner[nsName{rs.Namespace, rs.Name}] = k
		add(&workload{Key: k, Meta: &rs.ObjectMeta, PodMeta: &rs.Spec.Template.ObjectMeta, Spec: &rs.Spec.Template.Spec, Field: "spec.template.spec"})
	}
	for _, p := range c.Pods {
		var owner model.Key
		switch kind, name := controllerOf(p); kind {
		case "ReplicaSet":
			owner = rsOwner[nsName{p.Namespace, name}]
		case "DaemonSet", "StatefulSet":
			owner = model.Key{Group: "apps", Kind: kind, Namespace: p.Namespace, Name: name}
		}
		w, ok := ix.byWorkload[owner]
		if !ok {
			w = &workload{Key: model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				Meta: &p.ObjectMeta, PodMeta: &p.ObjectMeta, Spec: &p.Spec, Field: "spec"}
			add(w)
		}
		w.Pods = append(w.Pods, p)
		if ix.onWindows[p.Spec.NodeName] {
			w.onWindows = true
		}
	}
	for _, w := range ix.workloads {
		w.hostProcess = hostProcess(w.Spec)
		w.declaresWindows = w.hostProcess || specTargetsOS(w.Spec, ix.runtimes, hybrid.OSWindows)
		w.intent = w.declaresWindows || (w.onWindows && windowsOnlyImages(w.Spec))
	}
}

// specTargetsOS reports whether a pod spec pins itself to an OS: spec.os,
// a kubernetes.io/os node selector or required affinity, or the node
// selector of its RuntimeClass.
func specTargetsOS(spec *corev1.PodSpec, runtimes map[string]*nodev1.RuntimeClass, os string) bool {
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

// hostProcess reports whether any container of the spec is a Windows
// HostProcess container (its own setting, else the pod's).
func hostProcess(spec *corev1.PodSpec) bool {
	var pod *bool
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		pod = sc.WindowsOptions.HostProcess
	}
	hp := false
	eachContainer(spec, func(c *corev1.Container, _ string) {
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

// eachContainer visits init then regular containers with their field path
// relative to the pod spec ("initContainers[0]", "containers[1]").
func eachContainer(spec *corev1.PodSpec, f func(c *corev1.Container, path string)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i], "initContainers["+itoa(i)+"]")
	}
	for i := range spec.Containers {
		f(&spec.Containers[i], "containers["+itoa(i)+"]")
	}
}

// indexOrigins records, per group and kind, the observed object that comes
// first in the input.
func (ix *index) indexOrigins(c *model.Cluster) {
	best := map[[2]string]model.Origin{}
	for k, o := range c.Origins {
		gk := [2]string{k.Group, k.Kind}
		b, ok := best[gk]
		if !ok || originLess(o, b) || (o == b && keyLess(k, ix.firstOfKind[gk])) {
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

func keyLess(a, b model.Key) bool {
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
	k, ok := x.idx().firstOfKind[[2]string{group, kind}]
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

// sortedKeys returns a map's string keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
