package reach

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

// class is an equivalence class of pods: the same namespace, the same
// answer from every selector that reads their labels (signature.go),
// service account, OS, listeners and declared ports, membership in every
// address-based policy peer, and placement (node group, and whether the
// pod's address is in a block of its own node).
type class struct {
	id int
	ns string
	// labels are the representative's, which every selector tells
	// apart from another class's as it does any member's; common are
	// those all members carry (what a class shows).
	labels    map[string]string
	common    map[string]string
	os        string
	placement int
	members   []member
	// nodeBits are the nodes members run on; multiOnNode: some node runs
	// two or more.
	nodeBits    bitset
	nodes       []int // the same, ascending
	multiOnNode bool
	byNode      map[int][]int // node index → member indexes
	rep         *corev1.Pod
	repIP       netip.Addr
	repIdx      int // the representative's index in members
	label       string
	workloads   []string
	// ports are the ports it listens on (imagecatalog.Ports: "8080/TCP").
	ports []portProto

	// NetworkPolicy: the policies selecting it, per direction, in the
	// order Felix evaluates them (by name within order 1000); the reasons for not isolated.
	inPols, egPols []*npol
	noIn, noEg     int32
	// acl are the HNS ACLs of a Windows class's representative pod,
	// which judge its side of a connection when aclIn or aclOut says they
	// may differ from Kubernetes semantics (else they are not compiled).
	acl           *endpointACLs
	aclIn, aclOut bool
	// The Felix calculation's view of the representative: its endpoint
	// and the tiers applying per direction (read for Windows classes and
	// when the cluster has Calico policies); calicoIn and calicoOut say a
	// projectcalico.org policy is among them.
	fep                 *felix.Endpoint
	fIn, fOut           []felix.Tier
	calicoIn, calicoOut bool
}

type member struct {
	pod  *corev1.Pod
	ip   netip.Addr
	node int
}

type portProto struct {
	proto string // TCP, UDP
	port  int
}

// sharesNode reports whether pods of a and b run on one node.
func (a *class) sharesNode(b *class) bool {
	return sharesNode(a.nodeBits, a.nodes, b.nodeBits, b.nodes)
}

// sharesNode reports whether two node sets (bits, and the same as an
// ascending list) meet: the shorter list tested against the other's bits,
// as a whole-bitset scan costs a word per 64 nodes of the cluster.
func sharesNode(aBits bitset, aList []int, bBits bitset, bList []int) bool {
	if len(aList) > len(bList) {
		aBits, aList, bBits, bList = bBits, bList, aBits, aList
	}
	if len(aList) >= len(aBits) {
		return aBits.intersects(bBits)
	}
	for _, n := range aList {
		if bBits.has(n) {
			return true
		}
	}
	return false
}

// placement is where a class's pods sit for the path: a node group, and a
// tag for pods whose address is not in a block of their own node.
type placement struct {
	group int
	tag   string
}

// eligible reports whether a pod is a workload the matrix covers: running,
// scheduled, on the pod network, with an IPv4 address.
func eligible(p *corev1.Pod) (netip.Addr, bool) {
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
func (an *analyzer) ipPeers() (blocks []*networkingv1.IPBlock, nets []netip.Prefix) {
	seen := map[string]bool{}
	for _, np := range an.c.NetworkPolicies {
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
	for _, p := range an.c.CalicoPolicies {
		for _, r := range append(append([]calicoRule(nil), p.Spec.Ingress...), p.Spec.Egress...) {
			add(r.Source.Nets)
			add(r.Source.NotNets)
			add(r.Destination.Nets)
			add(r.Destination.NotNets)
		}
	}
	for _, p := range an.c.GlobalNetworkPolicies {
		for _, r := range append(append([]calicoRule(nil), p.Spec.Ingress...), p.Spec.Egress...) {
			add(r.Source.Nets)
			add(r.Source.NotNets)
			add(r.Destination.Nets)
			add(r.Destination.NotNets)
		}
	}
	return blocks, nets
}

// buildClasses puts every eligible pod into its class.
func (an *analyzer) buildClasses() {
	an.classes = an.classes[:0]
	an.podClass = map[netip.Addr]*class{}
	an.placements = an.placements[:0]
	placementID := map[placement]int{}
	ipBlocks, nets := an.ipPeers()
	owners := an.owners()
	tests := an.labelTests(owners)
	byKey := map[string]*class{}
	var key strings.Builder
	for _, p := range an.c.Pods {
		ip, ok := eligible(p)
		if !ok {
			continue
		}
		nd := an.nodeByName[p.Spec.NodeName]
		if nd == nil {
			continue
		}
		pl := placement{group: nd.group}
		if b, ok := an.blockOf(ip); !ok || b.node != nd.name {
			pl.tag = "address " + ip.String() + " outside " + nd.name + "'s blocks"
			if ok {
				pl.tag = "address in block " + b.cidr.String() + " of " + orNone(b.node) + ", on " + nd.name
			}
		}
		pid, ok := placementID[pl]
		if !ok {
			pid = len(an.placements)
			placementID[pl] = pid
			an.placements = append(an.placements, pl)
		}
		key.Reset()
		key.WriteString(p.Namespace)
		key.WriteByte(0)
		sa := p.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		writeLabelSig(&key, p, tests(p.Namespace))
		key.WriteByte(0)
		key.WriteString(sa)
		key.WriteByte(0)
		key.WriteString(nd.os())
		key.WriteByte(0)
		key.WriteString(specSignature(p, nd.os()))
		key.WriteByte(0)
		for _, b := range ipBlocks {
			if policy.IPBlockMatches(b, ip) {
				key.WriteByte('1')
			} else {
				key.WriteByte('0')
			}
		}
		for _, n := range nets {
			if n.Contains(ip) {
				key.WriteByte('1')
			} else {
				key.WriteByte('0')
			}
		}
		key.WriteByte(0)
		key.WriteString(strconv.Itoa(pid))
		k := key.String()
		c := byKey[k]
		if c == nil {
			c = &class{id: len(an.classes), ns: p.Namespace, labels: p.Labels, os: nd.os(), placement: pid,
				nodeBits: newBitset(len(an.nodes)), byNode: map[int][]int{}}
			byKey[k] = c
			an.classes = append(an.classes, c)
		}
		c.byNode[nd.idx] = append(c.byNode[nd.idx], len(c.members))
		c.members = append(c.members, member{pod: p, ip: ip, node: nd.idx})
		c.nodeBits.set(nd.idx)
		an.podClass[ip] = c
		if w := owners(p); !contains(c.workloads, w) {
			c.workloads = append(c.workloads, w)
		}
	}
	// A Windows class is judged by the HNS ACLs of one of its pods, which
	// compiles that pod's node: prefer the nodes most Windows classes have
	// pods on, so that few nodes are compiled.
	rank := map[int]int{}
	for _, c := range an.classes {
		if c.os == "windows" {
			for n := range c.byNode {
				rank[n]++
			}
		}
	}
	for _, g := range an.groups {
		if g[0].windows {
			rank[g[0].idx] += len(an.classes) // compiled already (groupNodes)
		}
	}
	for _, c := range an.classes {
		sort.Slice(c.members, func(i, j int) bool { return c.members[i].pod.Name < c.members[j].pod.Name })
		c.byNode = map[int][]int{}
		for i, m := range c.members {
			c.byNode[m.node] = append(c.byNode[m.node], i)
			if len(c.byNode[m.node]) > 1 {
				c.multiOnNode = true
			}
		}
		c.nodes = c.nodes[:0]
		for n := range c.byNode {
			c.nodes = append(c.nodes, n)
		}
		sort.Ints(c.nodes)
		r := c.members[0]
		if c.os == "windows" {
			for _, m := range c.members[1:] {
				if rank[m.node] > rank[r.node] || rank[m.node] == rank[r.node] && m.node < r.node {
					r = m
				}
			}
		}
		c.rep, c.repIP, c.labels = r.pod, r.ip, r.pod.Labels
		for i, m := range c.members {
			if m.pod == r.pod {
				c.repIdx = i
			}
		}
		for _, s := range imagecatalog.Ports(c.rep, c.os) {
			n, proto, ok := strings.Cut(s, "/")
			port, err := strconv.Atoi(n)
			if ok && err == nil {
				c.ports = append(c.ports, portProto{proto: proto, port: port})
			}
		}
		sort.Strings(c.workloads)
		c.common = commonLabels(c)
	}
	an.nodeClasses = make([][]int32, len(an.nodes))
	for _, c := range an.classes {
		for _, n := range c.nodes {
			an.nodeClasses[n] = append(an.nodeClasses[n], int32(c.id))
		}
	}
	an.byPlacement = make([][]*class, len(an.placements))
	for _, c := range an.classes {
		an.byPlacement[c.placement] = append(an.byPlacement[c.placement], c)
	}
	an.labelClasses()
}

// owners returns the function naming a pod's workload: its Deployment,
// DaemonSet, StatefulSet, Job or ReplicaSet, else the pod itself.
func (an *analyzer) owners() func(*corev1.Pod) string {
	rsDeploy := map[string]string{}
	for _, rs := range an.c.ReplicaSets {
		for _, ref := range rs.OwnerReferences {
			if ref.Kind == "Deployment" {
				rsDeploy[rs.Namespace+"/"+rs.Name] = ref.Name
			}
		}
	}
	return func(p *corev1.Pod) string {
		for _, ref := range p.OwnerReferences {
			if ref.Controller != nil && !*ref.Controller {
				continue
			}
			if ref.Kind == "ReplicaSet" {
				if d, ok := rsDeploy[p.Namespace+"/"+ref.Name]; ok {
					return d
				}
			}
			return ref.Name
		}
		return p.Name
	}
}

// labelClasses names each class "namespace/workload", told apart by OS,
// node group, revision or a number when one workload spans classes.
func (an *analyzer) labelClasses() {
	byLabel := map[string][]*class{}
	for _, c := range an.classes {
		w := c.workloads[0]
		if len(c.workloads) > 1 {
			w += fmt.Sprintf("+%d", len(c.workloads)-1)
		}
		c.label = c.ns + "/" + w
		byLabel[c.label] = append(byLabel[c.label], c)
	}
	for base, cs := range byLabel {
		if len(cs) < 2 {
			continue
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].id < cs[j].id })
		// Tell them apart by what differs among them: OS, where they run,
		// the controller revision; else a number.
		attrs := []func(c *class) string{
			func(c *class) string { return c.os },
			func(c *class) string {
				pl := an.placements[c.placement]
				g := an.groups[pl.group]
				s := g[0].name
				if len(g) > 1 {
					s += fmt.Sprintf("+%d", len(g)-1)
				}
				if pl.tag != "" {
					s += " " + pl.tag
				}
				return s
			},
			func(c *class) string {
				for _, l := range []string{"pod-template-hash", "controller-revision-hash", "pod-template-generation"} {
					if v, ok := c.common[l]; ok {
						return v
					}
				}
				return ""
			},
		}
		// Where the pods run, when the node groups do not tell.
		attrs = append(attrs, func(c *class) string {
			s := an.nodes[c.members[0].node].name
			if len(c.nodes) > 1 {
				s += fmt.Sprintf("+%d", len(c.nodes)-1)
			}
			return s
		})
		tags := make([][]string, len(cs))
		for k, attr := range attrs {
			vals := map[string]bool{}
			for _, c := range cs {
				vals[attr(c)] = true
			}
			if len(vals) < 2 || k == 3 && len(tags[0]) > 0 && len(an.placements) > 0 && an.placements[cs[0].placement].group != an.placements[cs[1].placement].group {
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
			c.label = base + "[" + s + "]"
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "no node"
	}
	return s
}
