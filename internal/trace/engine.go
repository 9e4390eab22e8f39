package trace

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
)

// Engine walks packets and names through one built cluster. It reads the
// compiled state of its plane, where each node compiles when a trace
// first crosses it.
type Engine struct {
	c *model.Cluster
	p *plane.Plane
	// win is the plane's Windows compiler: made in FromPlane when the
	// cluster has a Windows node, else on first use (WindowsCompiler), so
	// that a Linux-only cluster's engine never makes it.
	win     *windows.Compiler
	winOnce sync.Once
	// dns is CoreDNS, made on the first name a walk resolves (server):
	// most walks, and reach's, resolve none.
	dns     *dns.Server
	dnsOnce sync.Once
	felix   *felix.Calc

	nodes map[string]*node
	byIP  map[netip.Addr]*node // node addresses and Linux VTEP addresses

	pools       []pool
	svcCIDRs    []netip.Prefix
	clusterCIDR netip.Prefix // kube-proxy's local-traffic detector
	nodeNet     netip.Prefix
	gateway     netip.Addr
}

type pool struct {
	cidr        netip.Prefix
	natOutgoing bool
}

// node is one node as the walk sees it.
type node struct {
	name    string
	windows bool
	ip      netip.Addr
	k8s     *corev1.Node
	p       *plane.Plane
	// win is a Windows node's HNS state, compiled on first use (see w):
	// compiling every Windows node up front is O(Windows nodes × (services
	// + endpoints)), while a trace crosses a few nodes.
	win     *windows.Node
	winOnce sync.Once
	// vtep is a Linux node's vxlan.calico address, tunl its tunl0
	// address.
	vtep, tunl netip.Addr
	// build is a Windows node's OS build (26100 for Windows Server 2025).
	build        int
	controlPlane bool
	// winEPs are a Windows node's HNS endpoints by address, a local one
	// winning over a remote one (kube-proxy's getAllEndpointsByNetwork).
	winEPs map[netip.Addr]*windows.Endpoint
	// winLBs are a Windows node's load balancers by protocol and external
	// port, in LoadBalancers order (findLB).
	winLBs map[lbKey][]*windows.LoadBalancer
}

type lbKey struct{ proto, port int }

// InputError is a source or destination the engine cannot use; the CLI
// exits 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// IsInputError reports whether err is an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// New builds the plane of c, compiles its nodes (plane.Warm: every Linux
// node, and the Windows nodes of a small cluster) and makes an engine over
// it, for commands that trace many paths.
func New(c *model.Cluster) (*Engine, error) {
	if c == nil {
		return nil, errors.New("trace: nil cluster")
	}
	p, err := plane.New(c)
	if err != nil {
		return nil, err
	}
	e, err := FromPlane(p)
	if err != nil {
		return nil, err
	}
	if p.Warm() {
		// With the Windows nodes compiled, their endpoint and load
		// balancer indexes too (node.w).
		for _, name := range e.sortedNodes() {
			e.nodes[name].w()
		}
	}
	return e, nil
}

// FromPlane makes an engine over a plane; the walks compile the nodes
// they cross that are not compiled yet.
func FromPlane(p *plane.Plane) (*Engine, error) {
	if p == nil {
		return nil, errors.New("trace: nil plane")
	}
	c := p.Cluster()
	e := &Engine{
		c: c, p: p,
		felix: p.Felix(),
		nodes: map[string]*node{},
		byIP:  map[netip.Addr]*node{},
	}
	// Only a Windows node has HNS state: with one, a compiler that cannot
	// be made fails the engine here, as every walk to it would fail.
	if hybrid.HasWindowsNode(c.Nodes) {
		win, err := p.WindowsCompiler()
		if err != nil {
			return nil, fmt.Errorf("compiling the Windows dataplane: %w", err)
		}
		e.win = win
		e.winOnce.Do(func() {})
	}
	for _, n := range c.Nodes {
		nd := &node{name: n.Name, k8s: n, p: p, windows: n.Labels[corev1.LabelOSStable] == hybrid.OSWindows}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && !nd.ip.IsValid() {
				nd.ip, _ = netip.ParseAddr(a.Address)
			}
		}
		if _, ok := n.Labels[wellknown.LabelControlPlane]; ok {
			nd.controlPlane = true
		}
		if nd.windows {
			nd.build = hybrid.ParseWindowsKernel(n.Status.NodeInfo.KernelVersion).Number
		} else {
			if a, ok := p.LinuxTunnel(n.Name); ok {
				nd.vtep = a
				e.byIP[nd.vtep] = nd
			}
			if a, ok := p.LinuxIPIP(n.Name); ok {
				nd.tunl = a
				e.byIP[nd.tunl] = nd
			}
		}
		e.nodes[n.Name] = nd
		if nd.ip.IsValid() {
			e.byIP[nd.ip] = nd
		}
	}
	for _, pl := range c.IPPools {
		if pr, err := netip.ParsePrefix(pl.Spec.CIDR); err == nil {
			e.pools = append(e.pools, pool{cidr: pr.Masked(), natOutgoing: pl.Spec.NATOutgoing})
		}
	}
	sub := "10.96.0.0/12"
	podSub := ""
	if cc := c.Kubeadm.Cluster; cc != nil {
		if cc.Networking.ServiceSubnet != "" {
			sub = cc.Networking.ServiceSubnet
		}
		podSub = cc.Networking.PodSubnet
	}
	for _, s := range strings.Split(sub, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil {
			e.svcCIDRs = append(e.svcCIDRs, p.Masked())
		}
	}
	if kp := c.Kubeadm.KubeProxy; kp != nil && kp.ClusterCIDR != "" {
		podSub = kp.ClusterCIDR
	}
	for _, s := range strings.Split(podSub, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(s)); err == nil && p.Addr().Is4() {
			e.clusterCIDR = p.Masked()
			break
		}
	}
	if p, err := netip.ParsePrefix(c.Network.CIDR); err == nil {
		e.nodeNet = p.Masked()
	}
	e.gateway, _ = netip.ParseAddr(c.Network.Gateway)
	return e, nil
}

// server is the engine's CoreDNS, made on first use.
func (e *Engine) server() *dns.Server {
	e.dnsOnce.Do(func() { e.dns = dns.NewServer(e.c) })
	return e.dns
}

// Plane is the compiled twin the engine reads.
func (e *Engine) Plane() *plane.Plane { return e.p }

// Cluster is the cluster the engine walks.
func (e *Engine) Cluster() *model.Cluster { return e.c }

func (e *Engine) inPools(a netip.Addr) bool {
	for _, p := range e.pools {
		if p.cidr.Contains(a) {
			return true
		}
	}
	return false
}

func (e *Engine) natPool(a netip.Addr) bool {
	for _, p := range e.pools {
		if p.cidr.Contains(a) {
			return p.natOutgoing
		}
	}
	return false
}

func (e *Engine) inServiceCIDR(a netip.Addr) bool {
	for _, p := range e.svcCIDRs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (e *Engine) nodeOS(nd *node) string {
	if nd != nil && nd.windows {
		return hybrid.OSWindows
	}
	return hybrid.OSLinux
}

// Source is where a trace starts: a pod, a node, or an address outside
// the cluster.
type Source struct {
	Kind TargetKind // pod, node, external
	Pod  *corev1.Pod
	Node string
	Addr netip.Addr
}

// Target is where a trace goes: a pod, a node, a Service, an address or a
// DNS name.
type Target struct {
	Kind    TargetKind // pod, node, service, ip, name
	Given   string
	Name    string // DNS name for Kind name
	Addr    netip.Addr
	Pod     *corev1.Pod
	Node    string
	Service *corev1.Service
}

// splitRef reads KIND/NAME or KIND/NAMESPACE/NAME.
func splitRef(s, ns string) (kind, namespace, name string, ok bool) {
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		return strings.ToLower(parts[0]), ns, parts[1], parts[1] != ""
	case 3:
		return strings.ToLower(parts[0]), parts[1], parts[2], parts[1] != "" && parts[2] != ""
	}
	return "", "", "", false
}

// names reports whether word is a resource name of the kind (the
// registry's plural, singular and short names: "po", "deploy", "svc").
func names(word, group, kind string) bool {
	k, ok := registry.ForResource(word)
	return ok && k.Group == group && k.Kind == kind
}

func isPodKind(k string) bool    { return names(k, "", "Pod") }
func isDeployKind(k string) bool { return names(k, "apps", "Deployment") }
func isNodeKind(k string) bool   { return names(k, "", "Node") }
func isSvcKind(k string) bool    { return names(k, "", "Service") }

// NotFoundError is a named object that does not exist (kubectl's wording).
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// FindPod resolves pod/NAME, or deploy/NAME to the first running pod of
// the Deployment (kubectl exec deploy/NAME picks one).
func (e *Engine) FindPod(kind, ns, name string) (*corev1.Pod, error) {
	if isPodKind(kind) {
		if p := e.p.Pod(ns, name); p != nil {
			return p, nil
		}
		return nil, &NotFoundError{fmt.Sprintf("Error from server (NotFound): pods %q not found", name)}
	}
	pods, ok := e.DeploymentPods(ns, name)
	if !ok {
		return nil, &NotFoundError{fmt.Sprintf("Error from server (NotFound): deployments.apps %q not found", name)}
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning {
			return p, nil
		}
	}
	return nil, &NotFoundError{fmt.Sprintf("error: unable to upgrade connection: no running pod of deployment %s", name)}
}

// DeploymentPods are the pods of a Deployment's ReplicaSets in the twin's
// pod order; ok is false when no ReplicaSet belongs to the Deployment.
func (e *Engine) DeploymentPods(ns, name string) (pods []*corev1.Pod, ok bool) {
	var rs []string
	for _, r := range e.p.ReplicaSets(ns) {
		for _, ref := range r.OwnerReferences {
			if r.Namespace == ns && ref.Kind == "Deployment" && ref.Name == name {
				rs = append(rs, r.Name)
			}
		}
	}
	if len(rs) == 0 {
		return nil, false
	}
	for _, p := range e.p.PodsInNamespace(ns) {
		for _, ref := range p.OwnerReferences {
			if p.Namespace == ns && ref.Kind == "ReplicaSet" && contains(rs, ref.Name) {
				pods = append(pods, p)
				break
			}
		}
	}
	return pods, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseSource reads a source: pod/NAME, deploy/NAME, node/NAME (a
// namespace may sit between kind and name: pod/NS/NAME), or an IPv4
// address (a pod's, a node's, or one outside the cluster).
func (e *Engine) ParseSource(s, ns string) (Source, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		if what := e.notUnicast(a); what != "" {
			return Source{}, inputErr("source %s is %s, not a unicast address: a trace follows one connection between two hosts", s, what)
		}
		if !a.Is4() {
			return Source{}, inputErr("source %s: the twin models IPv4 only", s)
		}
		if p := e.p.PodByIP(a); p != nil {
			return Source{Kind: KindPod, Pod: p, Node: p.Spec.NodeName, Addr: a}, nil
		}
		if nd := e.byIP[a]; nd != nil && a == nd.ip {
			return Source{Kind: KindNode, Node: nd.name, Addr: a}, nil
		}
		if e.inPools(a) || e.inServiceCIDR(a) {
			return Source{}, inputErr("source %s: no pod has this address", s)
		}
		return Source{Kind: KindExternal, Addr: a}, nil
	}
	kind, namespace, name, ok := splitRef(s, ns)
	if !ok {
		return Source{}, inputErr("source %q: use pod/NAME, deploy/NAME, node/NAME or an IP address", s)
	}
	switch {
	case isPodKind(kind), isDeployKind(kind):
		p, err := e.FindPod(kind, namespace, name)
		if err != nil {
			return Source{}, err // a *NotFoundError
		}
		if p.Spec.NodeName == "" {
			return Source{}, inputErr("source pod %s/%s is not scheduled (%s)", p.Namespace, p.Name, podStatus(p))
		}
		nd := e.nodes[p.Spec.NodeName]
		if nd == nil {
			return Source{}, inputErr("source pod %s/%s is bound to node %q, which does not exist: no kubelet runs it, and the pod garbage collector deletes it", p.Namespace, p.Name, p.Spec.NodeName)
		}
		if p.Spec.HostNetwork {
			return Source{Kind: KindPod, Pod: p, Node: nd.name, Addr: nd.ip}, nil
		}
		a, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			return Source{}, inputErr("source pod %s/%s has no address (%s)", p.Namespace, p.Name, podStatus(p))
		}
		return Source{Kind: KindPod, Pod: p, Node: p.Spec.NodeName, Addr: a}, nil
	case isNodeKind(kind):
		nd := e.nodes[name]
		if nd == nil {
			return Source{}, &NotFoundError{fmt.Sprintf("Error from server (NotFound): nodes %q not found", name)}
		}
		if !nd.ip.IsValid() {
			return Source{}, inputErr("source node %s has no InternalIP address (status.addresses)", nd.name)
		}
		return Source{Kind: KindNode, Node: nd.name, Addr: nd.ip}, nil
	case isSvcKind(kind):
		return Source{}, inputErr("source %q: a Service sends nothing; trace from a pod, a node or an address", s)
	}
	return Source{}, inputErr("source %q: use pod/NAME, deploy/NAME, node/NAME or an IP address", s)
}

// notUnicast says what kind of address a is when it does not name one
// host: unspecified, multicast, the limited broadcast, or the broadcast
// address of the node network (RFC 919, RFC 1112); "" for unicast.
func (e *Engine) notUnicast(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case a == limitedBroadcast:
		return "the limited broadcast address"
	case e.nodeNet.IsValid() && e.nodeNet.Addr().Is4() && e.nodeNet.Bits() < 31 && a == lastAddr(e.nodeNet):
		return "the broadcast address of the node network " + e.nodeNet.String()
	}
	return ""
}

var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// lastAddr is the highest address of an IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func podStatus(p *corev1.Pod) string {
	if p.Status.Reason != "" {
		return p.Status.Reason
	}
	if p.Status.Phase != "" {
		return string(p.Status.Phase)
	}
	return "no status"
}

// ParseTarget reads a destination: pod/NAME, deploy/NAME, node/NAME,
// svc/NAME (a namespace may sit between kind and name), an IP address or a
// DNS name.
func (e *Engine) ParseTarget(s, ns string) (Target, error) {
	t := Target{Given: s}
	if a, err := netip.ParseAddr(s); err == nil {
		if what := e.notUnicast(a); what != "" {
			return t, inputErr("destination %s is %s, not a unicast address: a trace follows one connection between two hosts", s, what)
		}
		t.Kind, t.Addr = KindIP, a
		if !a.Is4() {
			return t, nil // walked to a "no IPv6" verdict
		}
		if p := e.p.PodByIP(a); p != nil {
			t.Pod, t.Node = p, p.Spec.NodeName
		} else if nd := e.byIP[a]; nd != nil {
			t.Node = nd.name
		} else if svc := e.p.ServiceByIP(a); svc != nil {
			t.Service = svc
		}
		return t, nil
	}
	if strings.Contains(s, "/") {
		kind, namespace, name, ok := splitRef(s, ns)
		if !ok {
			return t, inputErr("destination %q: use pod/NAME, deploy/NAME, node/NAME, svc/NAME, an IP address or a DNS name", s)
		}
		switch {
		case isPodKind(kind), isDeployKind(kind):
			p, err := e.FindPod(kind, namespace, name)
			if err != nil {
				return t, err // a *NotFoundError
			}
			a, err := netip.ParseAddr(p.Status.PodIP)
			if err != nil {
				return t, inputErr("destination pod %s/%s has no address (%s)", p.Namespace, p.Name, podStatus(p))
			}
			t.Kind, t.Pod, t.Addr, t.Node = KindPod, p, a, p.Spec.NodeName
			return t, nil
		case isNodeKind(kind):
			nd := e.nodes[name]
			if nd == nil {
				return t, &NotFoundError{fmt.Sprintf("Error from server (NotFound): nodes %q not found", name)}
			}
			if !nd.ip.IsValid() {
				return t, inputErr("destination node %s has no InternalIP address (status.addresses)", nd.name)
			}
			t.Kind, t.Node, t.Addr = KindNode, nd.name, nd.ip
			return t, nil
		case isSvcKind(kind):
			if svc := e.p.Service(namespace, name); svc != nil {
				t.Kind, t.Service = KindService, svc
				if svc.Spec.Type == corev1.ServiceTypeExternalName {
					t.Kind, t.Name = KindName, svc.Spec.ExternalName
					return t, nil
				}
				a, err := netip.ParseAddr(svc.Spec.ClusterIP)
				if err != nil {
					// Headless: the client resolves the name and gets the endpoints.
					t.Kind, t.Name = KindName, name+"."+namespace+".svc."+clusterDomain(e.c)
					return t, nil
				}
				t.Addr = a
				return t, nil
			}
			return t, &NotFoundError{fmt.Sprintf("Error from server (NotFound): services %q not found", name)}
		}
		return t, inputErr("destination %q: use pod/NAME, deploy/NAME, node/NAME, svc/NAME, an IP address or a DNS name", s)
	}
	if !validName(s) {
		return t, inputErr("destination %q is neither an address nor a DNS name", s)
	}
	t.Kind, t.Name = KindName, s
	return t, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func clusterDomain(c *model.Cluster) string {
	if k := c.Kubeadm.Kubelet; k != nil && k.ClusterDomain != "" {
		return k.ClusterDomain
	}
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.DNSDomain != "" {
		return cc.Networking.DNSDomain
	}
	return "cluster.local"
}

// DefaultPort is the port a trace to t uses when none is given: the
// Service's first port, the pod's first listening port, else 80; 0 for
// ICMP.
func (e *Engine) DefaultPort(t Target, proto Proto) int {
	if proto == ICMP {
		return 0
	}
	if t.Service != nil && len(t.Service.Spec.Ports) > 0 {
		for _, p := range t.Service.Spec.Ports {
			if strings.EqualFold(string(orTCP(p.Protocol)), string(proto)) {
				return int(p.Port)
			}
		}
		return int(t.Service.Spec.Ports[0].Port)
	}
	if t.Pod != nil {
		for _, c := range t.Pod.Spec.Containers {
			for _, cp := range c.Ports {
				if strings.EqualFold(string(orTCP(cp.Protocol)), string(proto)) {
					return int(cp.ContainerPort)
				}
			}
		}
	}
	if proto == UDP {
		return 53
	}
	return 80
}

func orTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// describeSource is the Endpoint for a source.
func (e *Engine) describeSource(s Source) Endpoint {
	switch s.Kind {
	case KindPod:
		return Endpoint{Kind: KindPod, Name: s.Pod.Name, Namespace: s.Pod.Namespace, Node: s.Node, OS: e.nodeOS(e.nodes[s.Node]), IP: s.Addr.String()}
	case KindNode:
		return Endpoint{Kind: KindNode, Name: s.Node, Node: s.Node, OS: e.nodeOS(e.nodes[s.Node]), IP: s.Addr.String()}
	}
	return Endpoint{Kind: KindExternal, IP: s.Addr.String()}
}

// describeTarget is the Endpoint for a destination address.
func (e *Engine) describeTarget(t Target, a netip.Addr, port int) Endpoint {
	ep := Endpoint{Given: t.Given, Port: port}
	if a.IsValid() {
		ep.IP = a.String()
	}
	if p := e.p.PodByIP(a); p != nil {
		ep.Kind, ep.Name, ep.Namespace, ep.Node = KindPod, p.Name, p.Namespace, p.Spec.NodeName
		ep.OS = e.nodeOS(e.nodes[p.Spec.NodeName])
		return ep
	}
	if nd := e.byIP[a]; nd != nil {
		ep.Kind, ep.Name, ep.Node, ep.OS = KindNode, nd.name, nd.name, e.nodeOS(nd)
		return ep
	}
	if svc := e.p.ServiceByIP(a); svc != nil {
		ep.Kind, ep.Name, ep.Namespace = KindService, svc.Name, svc.Namespace
		return ep
	}
	if t.Kind == KindName {
		ep.Kind = KindName
		return ep
	}
	ep.Kind = KindExternal
	return ep
}

// sortedNodes lists node names.
func (e *Engine) sortedNodes() []string {
	out := make([]string, 0, len(e.nodes))
	for n := range e.nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// w is the node's compiled HNS state (nil for a Linux node), compiled on
// first use with its indexes: the endpoints by address, a local one winning
// over a remote one, and the load balancers by protocol and port.
func (nd *node) w() *windows.Node {
	if !nd.windows {
		return nil
	}
	nd.winOnce.Do(func() {
		// Node fails only where Compile would have failed for the node,
		// which compiling a node never does; a failure leaves no state.
		nd.win, _ = nd.p.Windows(nd.name)
		nd.winEPs = map[netip.Addr]*windows.Endpoint{}
		if nd.win == nil {
			return
		}
		for _, ep := range nd.win.Endpoints() {
			a, err := netip.ParseAddr(ep.IPAddress)
			if err != nil {
				continue
			}
			if old, ok := nd.winEPs[a]; ok && !old.IsRemoteEndpoint {
				continue
			}
			nd.winEPs[a] = ep
		}
		nd.winLBs = map[lbKey][]*windows.LoadBalancer{}
		for _, lb := range nd.win.LoadBalancers() {
			k := lbKey{lb.Protocol, lb.ExternalPort}
			nd.winLBs[k] = append(nd.winLBs[k], lb)
		}
	})
	return nd.win
}

// l is a Linux node's compiled dataplane, compiled on first use (nil for
// a Windows node).
func (nd *node) l() *linux.Node {
	if nd.windows {
		return nil
	}
	return nd.p.Linux(nd.name)
}

// eps is w's endpoints by address (nil for a Linux node).
func (nd *node) eps() map[netip.Addr]*windows.Endpoint {
	nd.w()
	return nd.winEPs
}
