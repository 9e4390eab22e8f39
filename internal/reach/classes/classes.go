package classes

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
)

// Class is an equivalence class of pods: the same namespace, the same
// answer from every selector that reads their labels (signature.go),
// service account, OS, listeners and declared ports, membership in every
// address-based policy peer, and placement (node group, and whether the
// pod's address is in a block of its own node).
type Class struct {
	ID int
	NS string
	// Labels are the representative's, which every selector tells
	// apart from another class's as it does any member's; common are
	// those all members carry (what a class shows).
	Labels    map[string]string
	Common    map[string]string
	OS        string
	Placement int
	Members   []Member
	// NodeBits are the nodes members run on; multiOnNode: some node runs
	// two or more.
	NodeBits    Bitset
	Nodes       []int // the same, ascending
	MultiOnNode bool
	ByNode      map[int][]int // node index → member indexes
	Rep         *corev1.Pod
	RepIP       netip.Addr
	RepIdx      int // the representative's index in members
	Label       string
	Workloads   []string
	// Ports are the ports it listens on (imagecatalog.Ports: "8080/TCP").
	Ports []PortProto

	// NetworkPolicy: the policies selecting it, per direction, in the
	// order Felix evaluates them (by name within order 1000); the reasons for not isolated.
	InPols, EgPols []*Npol
	NoIn, NoEg     int32
	// ACL are the HNS ACLs of a Windows class's representative pod,
	// which judge its side of a connection when aclIn or aclOut says they
	// may differ from Kubernetes semantics (else they are not compiled).
	ACL           *EndpointACLs
	ACLIn, ACLOut bool
	// The Felix calculation's view of the representative: its endpoint
	// and the tiers applying per direction (read for Windows classes and
	// when the cluster has Calico policies); calicoIn and calicoOut say a
	// projectcalico.org policy is among them.
	FEP                 *felix.Endpoint
	FIn, FOut           []felix.Tier
	CalicoIn, CalicoOut bool
}

type Member struct {
	Pod  *corev1.Pod
	IP   netip.Addr
	Node int
	// Workload is the pod's workload (WorkloadLabel).
	Workload string
}

type PortProto struct {
	Proto string // TCP, UDP
	Port  int
}

// SharesNode reports whether pods of a and b run on one node.
func (a *Class) SharesNode(b *Class) bool {
	return SharesNode(a.NodeBits, a.Nodes, b.NodeBits, b.Nodes)
}

// SharesNode reports whether two node sets (bits, and the same as an
// ascending list) meet: the shorter list tested against the other's bits,
// as a whole-bitset scan costs a word per 64 nodes of the cluster.
func SharesNode(aBits Bitset, aList []int, bBits Bitset, bList []int) bool {
	if len(aList) > len(bList) {
		aBits, aList, bBits, bList = bBits, bList, aBits, aList
	}
	if len(aList) >= len(aBits) {
		return aBits.Intersects(bBits)
	}
	for _, n := range aList {
		if bBits.Has(n) {
			return true
		}
	}
	return false
}

// Placement is where a class's pods sit for the path: a node group, and a
// tag for pods whose address is not in a block of their own node.
type Placement struct {
	Group int
	Tag   string
}

// Eligible reports whether a pod is a workload the matrix covers: running,
// scheduled, on the pod network, with an IPv4 address.
func Eligible(p *corev1.Pod) (netip.Addr, bool) {
	if p.Spec.HostNetwork || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(p.Status.PodIP)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}

// ipSignature lists the address-based peers whose membership splits
// classes: NetworkPolicy ipBlocks and Calico policy nets that overlap a
// pod address.
func (an *Prep) IpPeers() (blocks []*networkingv1.IPBlock, nets []netip.Prefix) {
	seen := map[string]bool{}
	for _, np := range an.C.NetworkPolicies {
		var peers []networkingv1.NetworkPolicyPeer
		for _, r := range np.Spec.Ingress {
			peers = append(peers, r.From...)
		}
		for _, r := range np.Spec.Egress {
			peers = append(peers, r.To...)
		}
		for _, pr := range peers {
			if pr.IPBlock == nil {
				continue
			}
			k := pr.IPBlock.CIDR + "-" + strings.Join(pr.IPBlock.Except, ",")
			if !seen[k] {
				seen[k] = true
				blocks = append(blocks, pr.IPBlock)
			}
		}
	}
	add := func(s []string) {
		for _, n := range s {
			p, err := netip.ParsePrefix(n)
			if err != nil {
				if a, err2 := netip.ParseAddr(n); err2 == nil {
					p = netip.PrefixFrom(a, a.BitLen())
				} else {
					continue
				}
			}
			if !seen["net:"+p.String()] {
				seen["net:"+p.String()] = true
				nets = append(nets, p.Masked())
			}
		}
	}
	for _, p := range an.C.CalicoPolicies {
		for _, r := range append(append([]CalicoRule(nil), p.Spec.Ingress...), p.Spec.Egress...) {
			add(r.Source.Nets)
			add(r.Source.NotNets)
			add(r.Destination.Nets)
			add(r.Destination.NotNets)
		}
	}
	for _, p := range an.C.GlobalNetworkPolicies {
		for _, r := range append(append([]CalicoRule(nil), p.Spec.Ingress...), p.Spec.Egress...) {
			add(r.Source.Nets)
			add(r.Source.NotNets)
			add(r.Destination.Nets)
			add(r.Destination.NotNets)
		}
	}
	return blocks, nets
}

// BuildClasses puts every eligible pod into its class.
func (an *Prep) BuildClasses() {
	an.Classes = an.Classes[:0]
	an.PodClass = make(map[netip.Addr]*Class, len(an.C.Pods))
	an.Placements = an.Placements[:0]
	placementID := map[Placement]int{}
	ipBlocks, nets := an.IpPeers()
	blocks := make([]ipBlock, len(ipBlocks))
	for i, b := range ipBlocks {
		blocks[i] = parseIPBlock(b)
	}
	refs := an.WorkloadRefs()
	owners := func(p *corev1.Pod) string { _, n := refs(p); return n }
	tests := an.LabelTests(owners)
	patterns := ImagePatterns()
	calc := an.E.Felix()
	sigs := labelSigs{calc: calc, memo: map[int32][]byte{}}
	// A namespace's tests, and whether one reads the pod itself.
	type nsTests struct {
		tests []LabelTest
		pod   bool
	}
	byNS := map[string]nsTests{}
	// A workload's label, made once for its members.
	type wlKey struct{ kind, ns, name string }
	wlLabels := map[wlKey]string{}
	byKey := map[string]*Class{}
	// The key is built in one buffer; the map lookup of string(key) does
	// not copy it, so only a new class's key is allocated.
	var key []byte
	for _, p := range an.C.Pods {
		ip, ok := Eligible(p)
		if !ok {
			continue
		}
		nd := an.NodeByName[p.Spec.NodeName]
		if nd == nil {
			continue
		}
		pl := Placement{Group: nd.Group}
		if b, ok := an.BlockOf(ip); !ok || b.Node != nd.Name {
			pl.Tag = "address " + ip.String() + " outside " + nd.Name + "'s blocks"
			if ok {
				pl.Tag = "address in block " + b.Cidr.String() + " of " + OrNone(b.Node) + ", on " + nd.Name
			}
		}
		pid, ok := placementID[pl]
		if !ok {
			pid = len(an.Placements)
			placementID[pl] = pid
			an.Placements = append(an.Placements, pl)
		}
		key = append(key[:0], p.Namespace...)
		key = append(key, 0)
		sa := p.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		nt, ok := byNS[p.Namespace]
		if !ok {
			nt.tests = tests(p.Namespace)
			nt.pod = hasPodTest(nt.tests)
			byNS[p.Namespace] = nt
		}
		key = sigs.append(key, p, ip, nt.tests, nt.pod)
		key = append(key, 0)
		key = append(key, sa...)
		key = append(key, 0)
		key = append(key, nd.OS()...)
		key = append(key, 0)
		key = AppendSpecSignature(key, p, nd.OS(), patterns)
		key = append(key, 0)
		for _, b := range blocks {
			if b.matches(ip) {
				key = append(key, '1')
			} else {
				key = append(key, '0')
			}
		}
		for _, n := range nets {
			if n.Contains(ip) {
				key = append(key, '1')
			} else {
				key = append(key, '0')
			}
		}
		key = append(key, 0)
		key = strconv.AppendInt(key, int64(pid), 10)
		c := byKey[string(key)]
		if c == nil {
			c = &Class{ID: len(an.Classes), NS: p.Namespace, Labels: p.Labels, OS: nd.OS(), Placement: pid,
				NodeBits: NewBitset(len(an.Nodes))}
			byKey[string(key)] = c
			an.Classes = append(an.Classes, c)
		}
		wkind, w := refs(p)
		wk := wlKey{wkind, p.Namespace, w}
		wl, ok := wlLabels[wk]
		if !ok {
			wl = WorkloadLabel(wkind, p.Namespace, w)
			wlLabels[wk] = wl
		}
		c.Members = append(c.Members, Member{Pod: p, IP: ip, Node: nd.Idx, Workload: wl})
		c.NodeBits.Set(nd.Idx)
		an.PodClass[ip] = c
		if !Contains(c.Workloads, w) {
			c.Workloads = append(c.Workloads, w)
		}
	}
	// A Windows class is judged by the HNS ACLs of one of its pods, which
	// compiles that pod's node: prefer the nodes most Windows classes have
	// pods on, so that few nodes are compiled.
	rank := map[int]int{}
	for _, c := range an.Classes {
		if c.OS == "windows" {
			c.NodeBits.Each(func(n int) { rank[n]++ })
		}
	}
	for _, g := range an.Groups {
		if g[0].Windows {
			rank[g[0].Idx] += len(an.Classes) // compiled already (groupNodes)
		}
	}
	perNode := make([]int32, len(an.Nodes))
	for _, c := range an.Classes {
		sort.Slice(c.Members, func(i, j int) bool { return c.Members[i].Pod.Name < c.Members[j].Pod.Name })
		// The member indexes per node, in one array: each node's run holds
		// its members in order.
		c.Nodes = c.NodeBits.List()
		for _, m := range c.Members {
			perNode[m.Node]++
		}
		idx := make([]int, len(c.Members))
		c.ByNode = make(map[int][]int, len(c.Nodes))
		off := 0
		for _, n := range c.Nodes {
			k := int(perNode[n])
			if k > 1 {
				c.MultiOnNode = true
			}
			c.ByNode[n] = idx[off : off : off+k]
			off += k
			perNode[n] = 0
		}
		for i, m := range c.Members {
			c.ByNode[m.Node] = append(c.ByNode[m.Node], i)
		}
		r := c.Members[0]
		if c.OS == "windows" {
			for _, m := range c.Members[1:] {
				if rank[m.Node] > rank[r.Node] || rank[m.Node] == rank[r.Node] && m.Node < r.Node {
					r = m
				}
			}
		}
		c.Rep, c.RepIP, c.Labels = r.Pod, r.IP, r.Pod.Labels
		for i, m := range c.Members {
			if m.Pod == r.Pod {
				c.RepIdx = i
			}
		}
		for _, s := range imagecatalog.Ports(c.Rep, c.OS) {
			n, proto, ok := strings.Cut(s, "/")
			port, err := strconv.Atoi(n)
			if ok && err == nil {
				c.Ports = append(c.Ports, PortProto{Proto: proto, Port: port})
			}
		}
		sort.Strings(c.Workloads)
		c.Common = CommonLabels(c)
	}
	an.NodeClasses = make([][]int32, len(an.Nodes))
	for _, c := range an.Classes {
		for _, n := range c.Nodes {
			an.NodeClasses[n] = append(an.NodeClasses[n], int32(c.ID))
		}
	}
	an.ByPlacement = make([][]*Class, len(an.Placements))
	for _, c := range an.Classes {
		an.ByPlacement[c.Placement] = append(an.ByPlacement[c.Placement], c)
	}
	an.LabelClasses()
}

// ipBlock is a NetworkPolicy ipBlock parsed once, matching as
// policy.IPBlockMatches does: a CIDR that does not parse matches nothing,
// an except that does not parse excepts nothing.
type ipBlock struct {
	cidr   netip.Prefix
	ok     bool
	except []netip.Prefix
}

func parseIPBlock(b *networkingv1.IPBlock) ipBlock {
	cidr, err := netip.ParsePrefix(b.CIDR)
	x := ipBlock{cidr: cidr, ok: err == nil}
	for _, e := range b.Except {
		if ex, err := netip.ParsePrefix(e); err == nil {
			x.except = append(x.except, ex)
		}
	}
	return x
}

func (b ipBlock) matches(ip netip.Addr) bool {
	if !b.ok || !b.cidr.Contains(ip) {
		return false
	}
	for _, ex := range b.except {
		if ex.Contains(ip) {
			return false
		}
	}
	return true
}

// EndpointOf is the pod's own Felix endpoint, whose labels are those
// Calico selectors see; a pod Felix gave none (one whose address an
// earlier pod holds) gets an endpoint with its own labels only.
func EndpointOf(calc *felix.Calc, p *corev1.Pod) *felix.Endpoint {
	if a, err := netip.ParseAddr(p.Status.PodIP); err == nil {
		if ep := calc.EndpointAt(a); ep != nil && ep.Pod == p {
			return ep
		}
	}
	return &felix.Endpoint{Labels: felix.PodLabels(p), LabelSet: -1}
}

// Owners returns the function naming a pod's workload: its Deployment,
// DaemonSet, StatefulSet, Job or ReplicaSet, else the pod itself.
func (an *Prep) Owners() func(*corev1.Pod) string {
	refs := an.WorkloadRefs()
	return func(p *corev1.Pod) string {
		_, name := refs(p)
		return name
	}
}

// WorkloadRefs returns the function giving a pod's workload as its kind
// and name: the controller a pod's owner reference names (a ReplicaSet
// that a Deployment owns stands for that Deployment), else the pod
// itself ("Pod").
func (an *Prep) WorkloadRefs() func(*corev1.Pod) (kind, name string) {
	type nsName struct{ ns, name string }
	rsDeploy := make(map[nsName]string, len(an.C.ReplicaSets))
	for _, rs := range an.C.ReplicaSets {
		for _, ref := range rs.OwnerReferences {
			if ref.Kind == "Deployment" {
				rsDeploy[nsName{rs.Namespace, rs.Name}] = ref.Name
			}
		}
	}
	return func(p *corev1.Pod) (string, string) {
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && !*ref.Controller {
				continue
			}
			if ref.Kind == "ReplicaSet" {
				if d, ok := rsDeploy[nsName{p.Namespace, ref.Name}]; ok {
					return "Deployment", d
				}
			}
			return ref.Kind, ref.Name
		}
		return "Pod", p.Name
	}
}

// WorkloadLabel is a workload as --from and --to take it:
// KIND/NAMESPACE/NAME with kubectl's short name for the apps kinds
// (deploy, ds, sts, rs) and the lower-case kind otherwise (pod, job).
func WorkloadLabel(kind, ns, name string) string {
	word := strings.ToLower(kind)
	if k, ok := registry.ForGroupKind(schema.GroupKind{Group: "apps", Kind: kind}); ok && len(k.ShortNames) > 0 {
		word = k.ShortNames[0]
	}
	return word + "/" + ns + "/" + name
}

// LabelClasses names each class "namespace/workload", told apart by OS,
// node group, revision or a number when one workload spans classes.
func (an *Prep) LabelClasses() {
	byLabel := map[string][]*Class{}
	for _, c := range an.Classes {
		w := c.Workloads[0]
		if len(c.Workloads) > 1 {
			w += fmt.Sprintf("+%d", len(c.Workloads)-1)
		}
		c.Label = c.NS + "/" + w
		byLabel[c.Label] = append(byLabel[c.Label], c)
	}
	for base, cs := range byLabel {
		if len(cs) < 2 {
			continue
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
		// Tell them apart by what differs among them: OS, where they run,
		// the controller revision; else a number.
		attrs := []func(c *Class) string{
			func(c *Class) string { return c.OS },
			func(c *Class) string {
				pl := an.Placements[c.Placement]
				g := an.Groups[pl.Group]
				s := g[0].Name
				if len(g) > 1 {
					s += fmt.Sprintf("+%d", len(g)-1)
				}
				if pl.Tag != "" {
					s += " " + pl.Tag
				}
				return s
			},
			func(c *Class) string {
				for _, l := range []string{"pod-template-hash", "controller-revision-hash", "pod-template-generation"} {
					if v, ok := c.Common[l]; ok {
						return v
					}
				}
				return ""
			},
		}
		// Where the pods run, when the node groups do not tell.
		attrs = append(attrs, func(c *Class) string {
			s := an.Nodes[c.Members[0].Node].Name
			if len(c.Nodes) > 1 {
				s += fmt.Sprintf("+%d", len(c.Nodes)-1)
			}
			return s
		})
		tags := make([][]string, len(cs))
		for k, attr := range attrs {
			vals := map[string]bool{}
			for _, c := range cs {
				vals[attr(c)] = true
			}
			if len(vals) < 2 || k == 3 && len(tags[0]) > 0 && len(an.Placements) > 0 && an.Placements[cs[0].Placement].Group != an.Placements[cs[1].Placement].Group {
				continue
			}
			for i, c := range cs {
				tags[i] = append(tags[i], attr(c))
			}
		}
		used := map[string]bool{}
		for i, c := range cs {
			s := strings.Join(tags[i], ",")
			if s == "" || used[s] {
				s = strings.TrimPrefix(s+","+strconv.Itoa(i+1), ",")
			}
			used[s] = true
			c.Label = base + "[" + s + "]"
		}
	}
}

func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func OrNone(s string) string {
	if s == "" {
		return "no node"
	}
	return s
}
