package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// DefaultPrefix is the prefix of every namespace the sandbox creates.
const DefaultPrefix = "kh-"

// Names and addresses the plan uses.
const (
	// Calico's link-local gateway: the pod's default route points at it
	// and the host end answers ARP for it by proxy ARP
	// (cni-plugin/pkg/dataplane/linux/dataplane_linux.go).
	calicoGateway = "169.254.1.1"
	// The node network is a bridge in a namespace of its own.
	lanSuffix  = "node-network"
	lanBridge  = "br-nodes"
	standInDev = "vxlan.standin"
	// Windows' default IP TTL (Tcpip DefaultTTL): the stand-in's pods
	// answer with it.
	windowsTTL = 128
)

// Kind is what a namespace of the sandbox plays.
type Kind string

// Namespace kinds.
const (
	KindNetwork Kind = "node network"
	KindNode    Kind = "linux node"
	KindStandIn Kind = "windows node stand-in"
	KindPod     Kind = "pod"
	// KindStandInPod is a Windows node's pod, behind its stand-in.
	KindStandInPod Kind = "pod behind a windows stand-in"
)

// Namespace is one network namespace the plan creates.
type Namespace struct {
	Name string
	Kind Kind
	// Node is the node it plays or the node of its pod; Pod is
	// namespace/name for a pod.
	Node string
	Pod  string
	// Addr is the node's or the pod's address.
	Addr netip.Addr
}

// Step is one command. Every step acts inside a namespace of the plan.
type Step struct {
	Argv []string
	// Stdin is fed to the command (an nft script).
	Stdin string
	// Why is a comment: what the step plays and where the twin has it.
	Why string
}

// Server is the tiny server a pod (or a node, for host-network pods) runs
// in its namespace.
type Server struct {
	Namespace string
	// Name identifies the answering side in replies ("pod ns/name" or
	// "node NAME").
	Name string
	TCP  []int
	UDP  []int
	// DNS is set for CoreDNS pods: UDP and TCP 53 answer from Zone.
	DNS bool
}

// ZoneEntry is the twin's CoreDNS answer to an A query.
type ZoneEntry struct {
	Name  string   `json:"name"`
	Rcode int      `json:"rcode"`
	Addrs []string `json:"addrs,omitempty"`
}

// Plan is everything Up creates.
type Plan struct {
	Prefix     string
	Namespaces []Namespace
	Steps      []Step
	Servers    []Server
	Zone       []ZoneEntry
	// Notes are what the sandbox cannot play, one sentence each.
	Notes []string
}

// Options choose what Build plays.
type Options struct {
	Prefix string
	// Pods are namespace/name of the pods to create; empty means all.
	Pods []string
}

var prefixRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,5}-$`)

// ValidPrefix says what is wrong with a prefix, or nil.
func ValidPrefix(p string) error {
	if !prefixRE.MatchString(p) {
		return fmt.Errorf("prefix %q: use 2 to 7 characters, a lower-case letter first, then letters or digits, ending in '-' (e.g. kh-)", p)
	}
	return nil
}

// Build computes the plan for cluster c, whose Linux nodes compiled to
// nodes (linux.Compile). zone is the twin's CoreDNS answers (may be nil).
func Build(c *model.Cluster, nodes map[string]*linux.Node, zone []ZoneEntry, o Options) (*Plan, error) {
	if c == nil {
		return nil, errors.New("sandbox: nil cluster")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := ValidPrefix(o.Prefix); err != nil {
		return nil, err
	}
	b := &builder{p: &Plan{Prefix: o.Prefix, Zone: zone}, c: c, nodes: nodes, seen: map[string]string{}}
	if err := b.selectPods(o.Pods); err != nil {
		return nil, err
	}
	if err := b.build(); err != nil {
		return nil, err
	}
	return b.p, nil
}

type builder struct {
	p     *Plan
	c     *model.Cluster
	nodes map[string]*linux.Node
	pods  map[string]*corev1.Pod // ns/name → pod, the selected pods
	// seen maps namespace names to what they play (collisions).
	seen map[string]string
	lan  string
	nics int
	// lanBits is the node network's prefix length.
	lanBits int
	gateway netip.Addr
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// selectPods picks the pods on the pod network (not host network, with an
// address, running) that --pods names, all by default.
func (b *builder) selectPods(want []string) error {
	all := map[string]*corev1.Pod{}
	for _, p := range b.c.Pods {
		if p.Spec.HostNetwork || p.Spec.NodeName == "" || p.Status.PodIP == "" ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, err := netip.ParseAddr(p.Status.PodIP); err != nil {
			continue
		}
		all[podKey(p)] = p
	}
	if len(want) == 0 {
		b.pods = all
		return nil
	}
	b.pods = map[string]*corev1.Pod{}
	for _, w := range want {
		p, ok := all[w]
		if !ok {
			return fmt.Errorf("--pods %q: no running pod on the pod network by that namespace/name", w)
		}
		b.pods[w] = p
	}
	return nil
}

// ns registers a namespace, refusing two roles for one name.
func (b *builder) ns(n Namespace) error {
	if prev, ok := b.seen[n.Name]; ok {
		return fmt.Errorf("namespace %s would play both %s and %s: choose another --prefix", n.Name, prev, n.Kind)
	}
	b.seen[n.Name] = string(n.Kind) + " " + n.Node + n.Pod
	b.p.Namespaces = append(b.p.Namespaces, n)
	b.step(strings.TrimSpace("add the network namespace of the "+string(n.Kind)+" "+orStr(n.Pod, n.Node)), "ip", "netns", "add", n.Name)
	b.step("", "ip", "-n", n.Name, "link", "set", "lo", "up")
	return nil
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (b *builder) step(why string, argv ...string) {
	b.p.Steps = append(b.p.Steps, Step{Argv: argv, Why: why})
}

// nodeName is the namespace of a node.
func (b *builder) nodeName(node string) string { return b.p.Prefix + node }

// podName is the namespace of a pod.
func (b *builder) podName(p *corev1.Pod) string {
	return b.p.Prefix + "pod." + p.Namespace + "." + p.Name
}

func (b *builder) build() error {
	names := make([]string, 0, len(b.nodes))
	for n := range b.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	// The node network: its prefix and gateway as the nodes' NICs and
	// default routes have them.
	for _, name := range names {
		n := b.nodes[name]
		for _, l := range n.Links() {
			if l.Kind == linux.KindEthernet && len(l.Addrs) > 0 && b.lanBits == 0 {
				b.lanBits = l.Addrs[0].Bits()
			}
		}
		for _, r := range n.Routes() {
			if r.Dst.Bits() == 0 && r.Via.IsValid() && !b.gateway.IsValid() {
				b.gateway = r.Via
			}
		}
	}
	if b.lanBits == 0 {
		b.lanBits = 24
	}
	b.lan = b.p.Prefix + lanSuffix
	if err := b.ns(Namespace{Name: b.lan, Kind: KindNetwork}); err != nil {
		return err
	}
	b.step("the bridge that plays the node network", "ip", "-n", b.lan, "link", "add", lanBridge, "type", "bridge")
	b.step("", "ip", "-n", b.lan, "link", "set", lanBridge, "up")
	if b.gateway.IsValid() {
		b.step("the nodes' default gateway answers on the node network (nothing lies beyond it)",
			"ip", "-n", b.lan, "addr", "add", netip.PrefixFrom(b.gateway, b.lanBits).String(), "dev", lanBridge)
	}
	for _, name := range names {
		if err := b.linuxNode(b.nodes[name]); err != nil {
			return err
		}
	}
	if err := b.standIns(names); err != nil {
		return err
	}
	b.hostServers()
	sort.Strings(b.p.Notes)
	return nil
}

// nic joins a node's namespace to the node network with a veth pair whose
// node end is the node's NIC.
func (b *builder) nic(ns string, l linux.Link, why string) {
	lanEnd := "n" + strconv.Itoa(b.nics)
	b.nics++
	args := []string{"ip", "-n", b.lan, "link", "add", lanEnd, "type", "veth", "peer", "name", l.Name}
	if l.Index > 0 {
		args = append(args, "index", strconv.Itoa(l.Index))
	}
	args = append(args, "netns", ns)
	b.step(why, args...)
	b.step("", "ip", "-n", b.lan, "link", "set", lanEnd, "master", lanBridge, "up")
	args = []string{"ip", "-n", ns, "link", "set", l.Name}
	if len(l.MAC) == 6 {
		args = append(args, "address", l.MAC.String())
	}
	if l.MTU > 0 {
		args = append(args, "mtu", strconv.Itoa(l.MTU))
	}
	b.step("", append(args, "up")...)
	for _, a := range l.Addrs {
		b.step("", "ip", "-n", ns, "addr", "add", a.String(), "dev", l.Name)
	}
}

func (b *builder) linuxNode(n *linux.Node) error {
	ns := b.nodeName(n.Name)
	if err := b.ns(Namespace{Name: ns, Kind: KindNode, Node: n.Name, Addr: n.IP}); err != nil {
		return err
	}
	b.step("the node forwards (kubelet and Felix require it)", "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	var vethDone []string
	for _, l := range n.Links() {
		switch l.Kind {
		case linux.KindEthernet:
			b.nic(ns, l, "the node's NIC on the node network")
		case linux.KindVXLAN:
			if l.VXLAN == nil {
				continue
			}
			v := l.VXLAN
			args := []string{"ip", "-n", ns, "link", "add", l.Name, "index", strconv.Itoa(l.Index),
				"address", l.MAC.String(), "mtu", strconv.Itoa(l.MTU), "type", "vxlan",
				"id", strconv.Itoa(v.VNI), "local", v.Local.String(), "dev", v.Parent, "dstport", strconv.Itoa(v.DstPort)}
			if !v.Learning {
				args = append(args, "nolearning")
			}
			b.step("Felix's VXLAN device (felix/dataplane/linux/vxlan_mgr.go)", args...)
			b.step("", "ip", "-n", ns, "link", "set", l.Name, "up")
			for _, a := range l.Addrs {
				b.step("", "ip", "-n", ns, "addr", "add", a.String(), "dev", l.Name)
			}
		case linux.KindIPIP:
			// The kernel makes tunl0 in every namespace once the ipip
			// module is loaded; Felix sets it up (ipip_mgr.go).
			b.step("Felix's IP-in-IP device: the kernel's tunl0, present in every namespace once the ipip module is loaded (modprobe ipip)",
				"ip", "-n", ns, "link", "set", l.Name, "mtu", strconv.Itoa(l.MTU), "up")
			for _, a := range l.Addrs {
				b.step("", "ip", "-n", ns, "addr", "add", a.String(), "dev", l.Name)
			}
		case linux.KindVeth:
			if l.Peer == nil {
				continue
			}
			p, ok := b.pods[l.Peer.Pod]
			if !ok {
				b.p.Notes = append(b.p.Notes, fmt.Sprintf("pod %s is not selected: %s on %s is not created, and its route has no device", l.Peer.Pod, l.Name, n.Name))
				continue
			}
			if err := b.pod(ns, n.Name, l, p, KindPod, "the pod's veth, named as Calico names it"); err != nil {
				return err
			}
			vethDone = append(vethDone, l.Name)
		}
	}
	for _, r := range n.Routes() {
		if r.Proto == "kernel" {
			continue // the kernel adds it with the address
		}
		if r.Dev != "" && strings.HasPrefix(r.Dev, "cali") && !contains(vethDone, r.Dev) {
			continue
		}
		b.step(routeWhy(r), append([]string{"ip", "-n", ns}, routeArgs(r)...)...)
	}
	for _, nb := range n.Neighbors() {
		b.step("Felix's static ARP entry for "+nb.Node+"'s VTEP", "ip", "-n", ns, "neigh", "replace", nb.IP.String(),
			"lladdr", nb.MAC.String(), "dev", nb.Dev, "nud", "permanent")
	}
	for _, f := range n.FDB() {
		b.step("Felix's FDB entry for "+f.Node+"'s VTEP", "bridge", "-n", ns, "fdb", "append", f.MAC.String(),
			"dev", f.Dev, "dst", f.Dst.String(), "self", "permanent")
	}
	if script := nftScript(n); script != "" {
		b.p.Steps = append(b.p.Steps, Step{Argv: []string{"ip", "netns", "exec", ns, "nft", "-f", "-"}, Stdin: script,
			Why: "kube-proxy's and Felix's nftables tables as the twin compiled them"})
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// pod creates a pod's namespace joined to its node by a veth pair whose
// host end is l.
func (b *builder) pod(nodeNS, node string, l linux.Link, p *corev1.Pod, kind Kind, why string) error {
	ip, _ := netip.ParseAddr(p.Status.PodIP)
	pns := b.podName(p)
	if err := b.ns(Namespace{Name: pns, Kind: kind, Node: node, Pod: podKey(p), Addr: ip}); err != nil {
		return err
	}
	args := []string{"ip", "-n", nodeNS, "link", "add", l.Name}
	if l.Index > 0 {
		args = append(args, "index", strconv.Itoa(l.Index))
	}
	if len(l.MAC) == 6 {
		args = append(args, "address", l.MAC.String())
	}
	if l.MTU > 0 {
		args = append(args, "mtu", strconv.Itoa(l.MTU))
	}
	args = append(args, "type", "veth", "peer", "name", "eth0")
	if l.Peer != nil && l.Peer.Index > 0 {
		args = append(args, "index", strconv.Itoa(l.Peer.Index))
	}
	b.step(why, append(args, "netns", pns)...)
	b.step("", "ip", "-n", nodeNS, "link", "set", l.Name, "up")
	// felix/dataplane/linux/endpoint_mgr.go configureInterface: proxy ARP
	// without delay answers the pod's ARP for the gateway.
	b.step("proxy ARP answers the pod's ARP for "+calicoGateway+" (felix/dataplane/linux/endpoint_mgr.go)",
		"ip", "netns", "exec", nodeNS, "sysctl", "-qw", "net.ipv4.conf."+l.Name+".proxy_arp=1")
	b.step("", "ip", "netns", "exec", nodeNS, "sysctl", "-qw", "net.ipv4.neigh."+l.Name+".proxy_delay=0")
	mtu := []string{}
	if l.MTU > 0 {
		mtu = []string{"mtu", strconv.Itoa(l.MTU)}
	}
	b.step("the pod's eth0 as the Calico CNI plugin configures it", append(append([]string{"ip", "-n", pns, "link", "set", "eth0"}, mtu...), "up")...)
	b.step("", "ip", "-n", pns, "addr", "add", netip.PrefixFrom(ip, 32).String(), "dev", "eth0")
	b.step("", "ip", "-n", pns, "route", "add", calicoGateway, "dev", "eth0", "scope", "link")
	b.step("", "ip", "-n", pns, "route", "add", "default", "via", calicoGateway, "dev", "eth0")
	if kind == KindStandInPod {
		b.step("a Windows pod answers with Windows' default TTL", "ip", "netns", "exec", pns, "sysctl", "-qw", "net.ipv4.ip_default_ttl="+strconv.Itoa(windowsTTL))
	}
	b.podServer(pns, p)
	return nil
}

// podServer serves the pod's container ports; a CoreDNS pod answers DNS.
func (b *builder) podServer(ns string, p *corev1.Pod) {
	s := Server{Namespace: ns, Name: "pod " + podKey(p), DNS: p.Labels["k8s-app"] == "kube-dns"}
	for _, ct := range p.Spec.Containers {
		for _, cp := range ct.Ports {
			s.add(cp)
		}
	}
	if s.DNS {
		s.TCP, s.UDP = without(s.TCP, 53), without(s.UDP, 53)
	}
	if len(s.TCP)+len(s.UDP) > 0 || s.DNS {
		b.p.Servers = append(b.p.Servers, s)
	}
}

func (s *Server) add(cp corev1.ContainerPort) {
	port := int(cp.ContainerPort)
	if port <= 0 {
		return
	}
	switch cp.Protocol {
	case corev1.ProtocolUDP:
		if !containsInt(s.UDP, port) {
			s.UDP = append(s.UDP, port)
		}
	case "", corev1.ProtocolTCP:
		if !containsInt(s.TCP, port) {
			s.TCP = append(s.TCP, port)
		}
	}
	sort.Ints(s.TCP)
	sort.Ints(s.UDP)
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func without(s []int, v int) []int {
	var out []int
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// hostServers serve host-network pods' ports in their Linux node's
// namespace (the API server, Typha, …).
func (b *builder) hostServers() {
	byNode := map[string]*Server{}
	for _, p := range b.c.Pods {
		if !p.Spec.HostNetwork || b.nodes[p.Spec.NodeName] == nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		s := byNode[p.Spec.NodeName]
		if s == nil {
			s = &Server{Namespace: b.nodeName(p.Spec.NodeName), Name: "node " + p.Spec.NodeName}
			byNode[p.Spec.NodeName] = s
		}
		for _, ct := range p.Spec.Containers {
			for _, cp := range ct.Ports {
				s.add(cp)
			}
		}
	}
	// Endpoints at a node's address are host processes the pods'
	// manifests may not declare (kubeadm's static kube-apiserver has no
	// containerPort).
	for _, sl := range b.c.EndpointSlices {
		for _, ep := range sl.Endpoints {
			for _, a := range ep.Addresses {
				node := b.nodeAt(a)
				if node == "" {
					continue
				}
				s := byNode[node]
				if s == nil {
					s = &Server{Namespace: b.nodeName(node), Name: "node " + node}
					byNode[node] = s
				}
				for _, pt := range sl.Ports {
					if pt.Port != nil {
						proto := corev1.ProtocolTCP
						if pt.Protocol != nil {
							proto = *pt.Protocol
						}
						s.add(corev1.ContainerPort{ContainerPort: *pt.Port, Protocol: proto})
					}
				}
			}
		}
	}
	names := make([]string, 0, len(byNode))
	for n, s := range byNode {
		if len(s.TCP)+len(s.UDP) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b.p.Servers = append(b.p.Servers, *byNode[n])
	}
}

// nodeAt is the Linux node whose address is a.
func (b *builder) nodeAt(a string) string {
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return ""
	}
	for name, n := range b.nodes {
		if n.IP == ip {
			return name
		}
	}
	return ""
}

func routeWhy(r linux.Route) string {
	w := r.Owner
	if r.Node != "" {
		w += ", to " + r.Node
	}
	if r.Pod != "" {
		w += ", pod " + r.Pod
	}
	return "route (" + w + ")"
}

// routeArgs are ip route add's arguments for r.
func routeArgs(r linux.Route) []string {
	return append([]string{"route", "add"}, r.Fields()...)
}

// priorityRE finds the symbolic chain priorities nft prints.
var priorityRE = regexp.MustCompile(`priority (raw|mangle|dstnat|filter|security|srcnat)( [-+] \d+)?;`)

// Standard priorities of the ip family (nftables src/rule.c std_prios).
var stdPriority = map[string]int{"raw": -300, "mangle": -150, "dstnat": -100, "filter": 0, "security": 50, "srcnat": 100}

// nftScript is the node's ruleset as nft list ruleset prints it in the
// twin, with symbolic chain priorities written as the numbers the kernel
// stores: nft before 1.0.7 refuses "dstnat" on the output hook, while the
// kernel holds the same number either way.
func nftScript(n *linux.Node) string {
	out := n.NFTRuleset()
	if strings.TrimSpace(out) == "" {
		return ""
	}
	return priorityRE.ReplaceAllStringFunc(out, func(m string) string {
		s := priorityRE.FindStringSubmatch(m)
		v := stdPriority[s[1]]
		if s[2] != "" {
			d, _ := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(s[2][2:]), " ", ""))
			if strings.Contains(s[2], "-") {
				v -= d
			} else {
				v += d
			}
		}
		return "priority " + strconv.Itoa(v) + ";"
	})
}
