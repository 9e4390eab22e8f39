// Package engine builds the twin: from a Snapshot of observed objects it
// derives what kubeadm, the Tigera operator, Calico IPAM, the controllers,
// admission and the scheduler would produce. Observed values always win;
// derived ones fill the gaps. Build is pure: no I/O, no clock, no randomness.
package engine

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// defaultVersion is the Kubernetes release the twin models when the input
// names none.
const defaultVersion = "v1.37.2"

// builder carries the state of one Build.
type builder struct {
	in      *input
	c       *model.Cluster
	hosts   []plannedHost
	version string
	// ref is the reference time: the newest creationTimestamp in the input.
	// Derived objects are stamped with it so that ages stay meaningful.
	ref metav1.Time
	// podsNotReady are the nodes whose pods the node lifecycle controller
	// marks not Ready (hostFailure).
	podsNotReady map[string]bool

	// Indexes, built once the lists they cover stop changing; the twin must
	// stay near-linear at Kubernetes' scale limits.
	nodeIdx map[string]*corev1.Node
	nsIdx   map[string]*corev1.Namespace
	rcIdx   map[string]*nodev1.RuntimeClass
	// assumedNS are the namespaces the input does not hold but its objects
	// are in; the twin takes them to exist unless the input holds other
	// Namespaces (then they are missing, as NamespaceLifecycle finds).
	assumedNS map[string]bool
	// saIdx holds, per namespace with ServiceAccounts in the input, the
	// names of its accounts (ServiceAccount admission); built on first use.
	saIdx map[string]map[string]bool
	// saNoted are the ServiceAccounts already noted as taken to exist.
	saNoted map[string]bool
	// hostIdx is the position in hosts by name (the first of a name).
	hostIdx map[string]int
	// calicoNodes are the Calico Node resources by Kubernetes node name.
	calicoNodes map[string]*calico.Node
	// d is what a Derive reuses of the previous twin; nil in Build.
	d *derivation
	// own: BuildOwned, whose twin no derivation starts from.
	own bool
	// carry is what this build keeps for a derivation from its twin.
	carry carried
	// marks are the fields it marks derived (derive_marks.go).
	marks marks
}

// Build derives the cluster from the snapshot, which it leaves as it was.
func Build(s *model.Snapshot) (*model.Cluster, error) {
	return build(s, false, nil)
}

// BuildOwned is Build for a caller that hands the snapshot over: its typed
// objects become the cluster's observed objects without a copy, and Build
// changes them, so the snapshot must not be read afterwards. The commands
// load, build and drop the snapshot: copying every pod and controller only
// to drop the originals cost Build time and held the objects twice.
func BuildOwned(s *model.Snapshot) (*model.Cluster, error) {
	return build(s, true, nil)
}

func build(s *model.Snapshot, own bool, d *derivation) (*model.Cluster, error) {
	in, err := collect(s, own, d)
	if err != nil {
		return nil, err
	}
	b := &builder{in: in, c: in.c, version: defaultVersion, d: d, own: own}
	if k := d.previous(); k != nil {
		b.marks.after(k.marks, k.fields, len(b.c.Pods))
	} else {
		b.marks.list.size = len(b.c.Pods)
	}
	if cc := b.c.Kubeadm.Cluster; cc != nil && cc.KubernetesVersion != "" {
		b.version = cc.KubernetesVersion
	}
	b.ref = newestTimestamp(in)
	// Calico's Node resources are the Nodes' annotations under the
	// Kubernetes datastore: read before the hosts are read back from them.
	b.observeCalicoNodes()
	if err := b.registeredNames(); err != nil {
		return nil, err
	}
	if b.hosts, err = planHosts(in); err != nil {
		return nil, err
	}
	steps := []func() error{
		b.nodes,
		b.kubeadmAddons,
		b.operator,
		b.unmodelled,
		b.actions,
		b.namespaces,
		b.priorityClasses,
		b.workloads,
		b.network,
		b.podStatus,
		func() error { b.markPodsNotReady(); return nil },
		b.services,
		b.controllerStatus,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
		if d != nil && d.broken {
			return nil, errUnsettled
		}
	}
	b.stamp()
	b.sort()
	b.finishMarks()
	if !own {
		if d != nil {
			b.carry.settled = d.carried()
		}
		b.carry.cluster, b.carry.clusterInput = in.cluster, in.clusterInput
		remember(b.c, &b.carry)
	}
	return b.c, nil
}

// stamp gives every object without a creationTimestamp the reference time:
// the API server sets it on create, and the twin's "now" is the newest
// moment the input records.
func (b *builder) stamp() {
	c := b.c
	stampAll(b.ref, c.Nodes)
	stampAll(b.ref, c.Namespaces)
	stampAll(b.ref, c.Pods)
	stampAll(b.ref, c.Deployments)
	stampAll(b.ref, c.ReplicaSets)
	stampAll(b.ref, c.DaemonSets)
	stampAll(b.ref, c.StatefulSets)
	stampAll(b.ref, c.Services)
	stampAll(b.ref, c.EndpointSlices)
	stampAll(b.ref, c.NetworkPolicies)
	stampAll(b.ref, c.RuntimeClasses)
	stampAll(b.ref, c.PriorityClasses)
	stampAll(b.ref, c.ConfigMaps)
	stampAll(b.ref, c.ServiceAccounts)
	stampAll(b.ref, c.CSRs)
	stampAll(b.ref, c.TigeraStatuses)
	stampAll(b.ref, c.IPPools)
	stampAll(b.ref, c.IPAMBlocks)
	stampAll(b.ref, c.BlockAffinities)
	stampAll(b.ref, c.FelixConfigs)
}

func stampAll[T metav1.Object](t metav1.Time, objs []T) {
	if t.IsZero() {
		return
	}
	for _, o := range objs {
		if ts := o.GetCreationTimestamp(); ts.IsZero() {
			o.SetCreationTimestamp(t)
		}
	}
}

func (b *builder) note(sev model.Severity, k model.Key, format string, args ...any) {
	b.c.Notes = append(b.c.Notes, model.Note{Severity: sev, Object: k, Message: fmt.Sprintf(format, args...)})
}

// serviceSubnet is kubeadm's networking.serviceSubnet (default 10.96.0.0/12).
func (b *builder) serviceSubnet() string {
	if cc := b.c.Kubeadm.Cluster; cc != nil && cc.Networking.ServiceSubnet != "" {
		return strings.Split(cc.Networking.ServiceSubnet, ",")[0]
	}
	// Without kubeadm's configuration (a managed cluster: EKS, AKS, GKE) the
	// Installation's serviceCIDRs state the cluster's service range
	// (operator api/v1 InstallationSpec.ServiceCIDRs).
	if inst := b.c.Installation; inst != nil && len(inst.Spec.ServiceCIDRs) > 0 {
		return inst.Spec.ServiceCIDRs[0]
	}
	return defaultServiceCIDR
}

func (b *builder) podSubnet() string {
	if cc := b.c.Kubeadm.Cluster; cc != nil {
		return cc.Networking.PodSubnet
	}
	return ""
}

// nodes derives each host's kubelet configuration and Node object.
func (b *builder) nodes() error {
	c := b.c
	cidrs := podCIDRs(b.podSubnet(), len(b.hosts))
	var out []*corev1.Node
	made := b.kubeletsMade()
	for i, h := range b.hosts {
		kc, err := made.of(h, func() (*kubeletv1beta1.KubeletConfiguration, error) {
			return effectiveKubelet(c.Kubeadm.Kubelet, b.in.kubeletPatches, h.Patches)
		})
		if err != nil {
			return errorAt(b.in.clusterOrigin, "host %s: %v", h.Name, err)
		}
		c.Kubeadm.NodeKubelet[h.Name] = kc
		if c.Kubeadm.CRISockets == nil {
			c.Kubeadm.CRISockets = map[string]string{}
		}
		c.Kubeadm.CRISockets[h.Name] = criSocket(h)
		if h.observed != nil {
			out = append(out, h.observed)
			continue
		}
		n, err := deriveNode(h, kc, b.version)
		if err != nil {
			return errorAt(b.in.clusterOrigin, "host %s: kubelet configuration: %v", h.Name, err)
		}
		b.applyCalicoNode(n)
		if n.CreationTimestamp.IsZero() {
			n.CreationTimestamp = b.ref
		}
		if i < len(cidrs) {
			n.Spec.PodCIDR = cidrs[i]
			n.Spec.PodCIDRs = []string{cidrs[i]}
		}
		out = append(out, n)
	}
	made.done()
	// Observed nodes that no host names (a Cluster kind listing fewer hosts
	// than the cluster has) are kept as they are.
	named := map[string]bool{}
	for _, h := range b.hosts {
		named[h.Name] = true
	}
	for _, n := range c.Nodes {
		if !named[n.Name] {
			out = append(out, n)
		}
	}
	c.Nodes = out
	if b.in.cluster != nil && len(b.in.cluster.Spec.Hosts) > 0 {
		c.Hosts = append([]hybrid.Host(nil), b.in.cluster.Spec.Hosts...)
	} else {
		for _, h := range b.hosts {
			c.Hosts = append(c.Hosts, h.Host)
		}
	}
	if b.in.cluster != nil {
		c.Network = b.in.cluster.Spec.Network
	}
	b.nodeNetwork()
	b.unmatchedCalicoNodes()
	return nil
}

func (b *builder) nodeByName(name string) *corev1.Node {
	if b.nodeIdx == nil {
		b.nodeIdx = make(map[string]*corev1.Node, len(b.c.Nodes))
		for _, n := range b.c.Nodes {
			b.nodeIdx[n.Name] = n
		}
	}
	return b.nodeIdx[name]
}

// hostByName finds a planned host. network and tunnel ask per pod and per
// node: an index, not a scan of every host (hosts do not change once
// planned).
func (b *builder) hostByName(name string) *plannedHost {
	if b.hostIdx == nil {
		b.hostIdx = make(map[string]int, len(b.hosts))
		for i := range b.hosts {
			if _, ok := b.hostIdx[b.hosts[i].Name]; !ok {
				b.hostIdx[b.hosts[i].Name] = i
			}
		}
	}
	if i, ok := b.hostIdx[name]; ok {
		return &b.hosts[i]
	}
	return nil
}

// sort orders every list the way kubectl lists them; a derivation takes
// the previous build's order where a list's names come alike
// (derive_sort.go).
func (b *builder) sort() {
	c := b.c
	var o orders
	if !b.own {
		o = make(orders, 20)
		b.carry.orders = o
	}
	prev := b.d.orders()
	sortAs(o, prev, 0, c.Nodes)
	sortAs(o, prev, 1, c.Namespaces)
	sortAs(o, prev, 2, c.Pods)
	sortAs(o, prev, 3, c.Deployments)
	sortAs(o, prev, 4, c.ReplicaSets)
	sortAs(o, prev, 5, c.DaemonSets)
	sortAs(o, prev, 6, c.StatefulSets)
	sortAs(o, prev, 7, c.Services)
	sortAs(o, prev, 8, c.EndpointSlices)
	sortAs(o, prev, 9, c.NetworkPolicies)
	sortAs(o, prev, 10, c.RuntimeClasses)
	sortAs(o, prev, 11, c.PriorityClasses)
	sortAs(o, prev, 12, c.ConfigMaps)
	sortAs(o, prev, 13, c.ServiceAccounts)
	sortAs(o, prev, 14, c.CSRs)
	sortAs(o, prev, 15, c.TigeraStatuses)
	sortAs(o, prev, 16, c.IPPools)
	sortAs(o, prev, 17, c.IPAMBlocks)
	sortAs(o, prev, 18, c.BlockAffinities)
	sortAs(o, prev, 19, c.CalicoNodes)
}

// sortObjs orders objects by namespace and name, stably.
func sortObjs[T metav1.Object](s []T) {
	sortPerm(s)
}

// sortPerm is sortObjs giving the order it made: the i-th object is the
// perm[i]-th before; nil when s was in order already.
func sortPerm[T metav1.Object](s []T) []int {
	// Keyed once and sorted with the position as the last key: the order
	// of a stable sort, without its merges' moves or a method call per
	// comparison.
	type keyed struct {
		ns, name string
		i        int
		o        T
	}
	ks := make([]keyed, len(s))
	for i, o := range s {
		ks[i] = keyed{o.GetNamespace(), o.GetName(), i, o}
	}
	cmp := func(a, b keyed) int {
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return a.i - b.i
	}
	if slices.IsSortedFunc(ks, cmp) {
		return nil
	}
	slices.SortFunc(ks, cmp)
	perm := make([]int, len(ks))
	for i := range ks {
		s[i] = ks[i].o
		perm[i] = ks[i].i
	}
	return perm
}

// newestTimestamp is the latest creationTimestamp among observed objects.
func newestTimestamp(in *input) metav1.Time {
	var t metav1.Time
	see := func(x metav1.Time) {
		if t.Before(&x) {
			t = x
		}
	}
	if in.cluster != nil {
		for _, h := range in.cluster.Spec.Hosts {
			if h.Observed.CreationTimestamp != nil {
				see(*h.Observed.CreationTimestamp)
			}
		}
	}
	c := in.c
	for _, n := range c.Nodes {
		see(n.CreationTimestamp)
	}
	for _, p := range c.Pods {
		see(p.CreationTimestamp)
	}
	for _, r := range c.CSRs {
		see(r.CreationTimestamp)
	}
	return t
}

// namespaces makes sure every namespace an object lives in exists, with the
// namespaces kubeadm and the operator create.
func (b *builder) namespaces() error {
	c := b.c
	have := map[string]bool{}
	for _, ns := range c.Namespaces {
		have[ns.Name] = true
	}
	observed := len(c.Namespaces) > 0
	b.assumedNS = map[string]bool{}
	assume := func(name string) {
		if observed && name != "" && !have[name] {
			b.assumedNS[name] = true
		}
	}
	add := func(name string, labels map[string]string) {
		if name == "" || have[name] {
			return
		}
		have[name] = true
		l := map[string]string{corev1.LabelMetadataName: name}
		for k, v := range labels {
			l[k] = v
		}
		c.Namespaces = append(c.Namespaces, &corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, CreationTimestamp: b.ref},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		})
	}
	for _, name := range []string{"default", "kube-node-lease", "kube-public", "kube-system"} {
		add(name, nil)
	}
	if c.Installation != nil {
		add("tigera-operator", map[string]string{"name": "tigera-operator", "pod-security.kubernetes.io/enforce": "privileged"})
	}
	for _, p := range c.Pods {
		assume(p.Namespace)
		add(p.Namespace, nil)
	}
	for _, d := range c.Deployments {
		add(d.Namespace, nil)
	}
	for _, d := range c.DaemonSets {
		add(d.Namespace, nil)
	}
	for _, s := range c.Services {
		add(s.Namespace, nil)
	}
	for _, cm := range c.ConfigMaps {
		add(cm.Namespace, nil)
	}
	for _, ns := range c.Namespaces {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		if _, ok := ns.Labels[corev1.LabelMetadataName]; !ok {
			// The API server sets this label on every namespace
			// (pkg/registry/core/namespace/strategy.go).
			ns.Labels[corev1.LabelMetadataName] = ns.Name
		}
		if ns.Status.Phase == "" {
			ns.Status.Phase = corev1.NamespaceActive
		}
	}
	return nil
}

// priorityClasses adds the PriorityClasses kube-apiserver creates at start
// (pkg/registry/scheduling/rest/storage_scheduling.go), unless the input
// holds them.
func (b *builder) priorityClasses() error {
	for _, pc := range admission.SystemPriorityClasses() {
		found := false
		for _, have := range b.c.PriorityClasses {
			found = found || have.Name == pc.Name
		}
		if !found {
			b.c.PriorityClasses = append(b.c.PriorityClasses, pc)
		}
	}
	return nil
}

// namespace finds a namespace; the index is rebuilt when the list grew.
func (b *builder) namespace(name string) *corev1.Namespace {
	if len(b.nsIdx) != len(b.c.Namespaces) {
		b.nsIdx = make(map[string]*corev1.Namespace, len(b.c.Namespaces))
		for _, ns := range b.c.Namespaces {
			b.nsIdx[ns.Name] = ns
		}
	}
	return b.nsIdx[name]
}

// hasDeployment etc. tell whether the input already holds an object, which
// then wins over the derived one.
func hasDeployment(c *model.Cluster, ns, name string) bool {
	return model.Holds(c.Deployments, ns, name)
}
func hasDaemonSet(c *model.Cluster, ns, name string) bool { return model.Holds(c.DaemonSets, ns, name) }
func hasService(c *model.Cluster, ns, name string) bool   { return model.Holds(c.Services, ns, name) }
func hasConfigMap(c *model.Cluster, ns, name string) bool { return model.Holds(c.ConfigMaps, ns, name) }

// kubeadmAddons adds what kubeadm init creates: the control plane's static
// pods, CoreDNS, the Linux kube-proxy, the kubernetes Service, and the
// kubelet-serving CSRs of nodes whose kubelets ask for serving certificates.
func (b *builder) kubeadmAddons() error {
	c := b.c
	if c.Kubeadm.Init == nil && c.Kubeadm.Cluster == nil {
		return nil // not a kubeadm cluster as far as the input tells
	}
	sr, err := controllers.NewServiceRange(b.serviceSubnet())
	if err != nil {
		return errorAt(model.Origin{}, "ClusterConfiguration: networking.serviceSubnet: %v", err)
	}
	first, dnsIP := sr.Nth(1).String(), sr.Nth(10).String()
	if !hasService(c, "default", "kubernetes") {
		addr, port := b.apiAdvertise()
		svc, slice := controllers.KubernetesService(first, addr, port)
		svc.CreationTimestamp, slice.CreationTimestamp = b.ref, b.ref
		c.Services = append(c.Services, svc)
		c.EndpointSlices = append(c.EndpointSlices, slice)
	}
	domain := defaultDNSDomain
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.DNSDomain != "" {
		domain = cc.Networking.DNSDomain
	}
	d, svc, cm := coreDNS(dnsIP, domain)
	if !hasDeployment(c, "kube-system", "coredns") {
		c.Deployments = append(c.Deployments, d)
	}
	if !hasService(c, "kube-system", "kube-dns") {
		c.Services = append(c.Services, svc)
	}
	if !hasConfigMap(c, "kube-system", "coredns") {
		c.ConfigMaps = append(c.ConfigMaps, cm)
	}
	if !hasDaemonSet(c, "kube-system", "kube-proxy") {
		c.DaemonSets = append(c.DaemonSets, kubeProxy(b.version))
	}
	for _, h := range b.hosts {
		if h.controlPlane && h.observed == nil {
			for _, p := range staticPods(h.Name, b.version) {
				if !b.hasPod(p.Namespace, p.Name) {
					c.Pods = append(c.Pods, p)
				}
			}
		}
	}
	// Each kubelet decides from its own configuration: the cluster-wide one
	// with that node's kubeadm patches applied. The nodes that have a
	// serving CSR are collected once (a scan of every CSR per host was
	// O(nodes²)); a host adds only its own.
	hasCSR := map[string]bool{}
	for _, r := range c.CSRs {
		if r.Spec.SignerName == "kubernetes.io/kubelet-serving" {
			if node, ok := strings.CutPrefix(r.Spec.Username, "system:node:"); ok {
				hasCSR[node] = true
			}
		}
	}
	for _, h := range b.hosts {
		if kc := c.Kubeadm.NodeKubelet[h.Name]; kc != nil && kc.ServerTLSBootstrap && !hasCSR[h.Name] {
			ts := b.ref
			if h.Observed.CreationTimestamp != nil {
				ts = *h.Observed.CreationTimestamp
			}
			c.CSRs = append(c.CSRs, kubeletServingCSR(h.Name, ts))
		}
	}
	for _, name := range []string{"coredns", "kube-proxy"} {
		if !b.hasServiceAccount("kube-system", name) {
			c.ServiceAccounts = append(c.ServiceAccounts, &corev1.ServiceAccount{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", CreationTimestamp: b.ref},
			})
		}
	}
	return nil
}

func (b *builder) hasPod(ns, name string) bool {
	for _, p := range b.c.Pods {
		if p.Namespace == ns && p.Name == name {
			return true
		}
	}
	return false
}

func (b *builder) hasServiceAccount(ns, name string) bool {
	for _, s := range b.c.ServiceAccounts {
		if s.Namespace == ns && s.Name == name {
			return true
		}
	}
	return false
}

// apiAdvertise is the control plane's advertise address and port.
func (b *builder) apiAdvertise() (string, int32) {
	port := int32(6443)
	if in := b.c.Kubeadm.Init; in != nil {
		if in.LocalAPIEndpoint.BindPort != 0 {
			port = in.LocalAPIEndpoint.BindPort
		}
		if in.LocalAPIEndpoint.AdvertiseAddress != "" {
			return in.LocalAPIEndpoint.AdvertiseAddress, port
		}
	}
	for _, h := range b.hosts {
		if h.controlPlane {
			return h.Address, port
		}
	}
	return "", port
}

func addrOf(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

func isWindows(n *corev1.Node) bool { return n.Labels[corev1.LabelOSStable] == hybrid.OSWindows }

func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

var _ = appsv1.DefaultDeploymentUniqueLabelKey
