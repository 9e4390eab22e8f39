package engine

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// inferredNetworkBits is the longest prefix the twin assumes for a node
// network it has to infer: the usual subnet of an on-premises node network.
// Nodes that share no /24 get the shortest prefix that holds them all.
const inferredNetworkBits = 24

// calicoNodeFields are the Calico Node fields stored as the Kubernetes
// Node's annotations under the Kubernetes datastore (libcalico-go
// lib/backend/k8s/resources/node.go: nodeBgpIpv4AddrAnnotation,
// nodeBgpIpv4IPIPTunnelAddrAnnotation, nodeBgpIpv4VXLANTunnelAddrAnnotation,
// nodeBgpVXLANTunnelMACAddrAnnotation).
func calicoNodeFields(cn *calico.Node) []struct{ field, annotation, value string } {
	ipip := ""
	if cn.Spec.BGP != nil {
		ipip = cn.Spec.BGP.IPv4IPIPTunnelAddr
	}
	return []struct{ field, annotation, value string }{
		{"spec.bgp.ipv4Address", calico.AnnotationIPv4Address, cn.IPv4Address()},
		{"spec.bgp.ipv4IPIPTunnelAddr", calico.AnnotationIPv4IPIPTunnelAddr, ipip},
		{"spec.ipv4VXLANTunnelAddr", calico.AnnotationIPv4VXLANTunnelAddr, cn.Spec.IPv4VXLANTunnelAddr},
		{"spec.vxlanTunnelMACAddr", calico.AnnotationVXLANTunnelMACAddr, cn.Spec.VXLANTunnelMACAddr},
	}
}

// observeCalicoNodes indexes the Calico Node resources by the Kubernetes
// Node they stand for and records their addresses on the observed Nodes;
// derived Nodes get theirs when they are made (applyCalicoNode).
func (b *builder) observeCalicoNodes() {
	c := b.c
	if len(c.CalicoNodes) == 0 {
		return
	}
	b.calicoNodes = make(map[string]*calico.Node, len(c.CalicoNodes))
	for _, cn := range c.CalicoNodes {
		b.calicoNodes[cn.KubernetesNodeName()] = cn
	}
	for _, n := range c.Nodes {
		b.applyCalicoNode(n)
	}
}

// applyCalicoNode copies a Calico Node's recorded addresses to its
// Kubernetes Node as the annotations they are. A Node's own annotation
// wins over a different value of the Calico Node, with a warning.
func (b *builder) applyCalicoNode(n *corev1.Node) {
	cn := b.calicoNodes[n.Name]
	if cn == nil {
		return
	}
	k := model.Key{Group: calico.Group, Kind: "Node", Name: cn.Name}
	for _, f := range calicoNodeFields(cn) {
		if f.value == "" {
			continue
		}
		if cur, ok := n.Annotations[f.annotation]; ok {
			if cur != f.value {
				b.note(model.Warning, k, "%s %s differs from Node %s's annotation %s: %s; the annotation is kept", f.field, f.value, n.Name, f.annotation, cur)
			}
			continue
		}
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[f.annotation] = f.value
	}
}

// unmatchedCalicoNodes warns about Calico Nodes no Kubernetes Node stands
// for, once the nodes are final.
func (b *builder) unmatchedCalicoNodes() {
	for _, cn := range b.c.CalicoNodes {
		if b.nodeByName(cn.KubernetesNodeName()) == nil {
			b.note(model.Warning, model.Key{Group: calico.Group, Kind: "Node", Name: cn.Name},
				"no Kubernetes Node %s: its addresses are not used", cn.KubernetesNodeName())
		}
	}
}

// nodeNetwork settles the node network: the command line's statement wins,
// then the Cluster kind's; without either, the subnet calico-node recorded
// (projectcalico.org/IPv4Address) when the nodes agree on one, else a
// network inferred from the nodes' InternalIPs, which the notes call an
// assumption. No gateway is ever inferred: without one the nodes have no
// default route, which the notes say unless a Cluster kind (whose gateway
// is optional) describes the network.
// Where the node network came from (model.Cluster.NetworkFrom).
const (
	NetworkFromFlag    = "--node-network"
	NetworkFromCluster = "Cluster spec.network.cidr"
	NetworkFromNodes   = "the Nodes' projectcalico.org/IPv4Address"
	NetworkInferred    = "inferred from the Nodes' InternalIPs (state it with --node-network)"
)

func (b *builder) nodeNetwork() {
	c := b.c
	stated := b.in.stated
	if c.Network.CIDR != "" {
		c.NetworkFrom = NetworkFromCluster
	}
	if stated.CIDR != "" {
		c.Network.CIDR = stated.CIDR
		c.NetworkFrom = NetworkFromFlag
	}
	if stated.Gateway != "" {
		c.Network.Gateway = stated.Gateway
	}
	if len(c.Nodes) == 0 {
		return
	}
	const how = "state it with --node-network or a Cluster kind's spec.network.cidr"
	if c.Network.CIDR == "" {
		if p, ok := recordedNetwork(c.Nodes); ok {
			c.Network.CIDR = p.String()
			c.NetworkFrom = NetworkFromNodes
			b.note(model.Info, model.Key{}, "node network %s: read from the Nodes' projectcalico.org/IPv4Address", p)
		} else if p, ok := inferNetwork(c.Nodes); ok {
			c.Network.CIDR = p.String()
			c.NetworkFrom = NetworkInferred
			b.note(model.Assumption, model.Key{}, "node network %s is inferred: no input states it, and it is the narrowest network (at most /%d) holding every Node's InternalIP; %s", p, inferredNetworkBits, how)
		}
	}
	if c.Network.Gateway == "" && b.in.cluster == nil {
		b.note(model.Assumption, model.Key{}, "the node network's gateway is not stated: nodes get no default route; state it with --node-gateway or a Cluster kind's spec.network.gateway")
	}
}

// recordedNetwork is the subnet every Node's projectcalico.org/IPv4Address
// names, when every Node records one and they agree.
func recordedNetwork(nodes []*corev1.Node) (netip.Prefix, bool) {
	var net netip.Prefix
	for _, n := range nodes {
		p, err := netip.ParsePrefix(n.Annotations[calico.AnnotationIPv4Address])
		if err != nil || !p.Addr().Is4() {
			return netip.Prefix{}, false
		}
		if net.IsValid() && net != p.Masked() {
			return netip.Prefix{}, false
		}
		net = p.Masked()
	}
	return net, net.IsValid()
}

// inferNetwork is the narrowest prefix of at most inferredNetworkBits bits
// holding every Node's IPv4 InternalIP.
func inferNetwork(nodes []*corev1.Node) (netip.Prefix, bool) {
	var first netip.Addr
	bits := inferredNetworkBits
	for _, n := range nodes {
		a, ok := parseAddr(addrOf(n))
		if !ok || !a.Is4() {
			continue
		}
		if !first.IsValid() {
			first = a
			continue
		}
		for bits > 0 && !netip.PrefixFrom(first, bits).Masked().Contains(a) {
			bits--
		}
	}
	if !first.IsValid() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(first, bits).Masked(), true
}

// ipv4Address is the projectcalico.org/IPv4Address calico-node records:
// the node's address with its subnet's prefix length (node/pkg/lifecycle/
// startup/autodetection), here the node network's when it holds the node.
func (b *builder) ipv4Address(n *corev1.Node) (string, bool) {
	a, ok := parseAddr(addrOf(n))
	if !ok {
		return "", false
	}
	p, err := netip.ParsePrefix(b.c.Network.CIDR)
	if err != nil || !p.Contains(a) {
		return "", false
	}
	return fmt.Sprintf("%s/%d", a, p.Bits()), true
}

// fillAnnotation sets a Calico annotation the Node does not carry; on an
// observed Node the field is marked derived.
func (b *builder) fillAnnotation(n *corev1.Node, key, value string) {
	if _, ok := n.Annotations[key]; ok {
		return
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[key] = value
	if k := keyOf(n); b.c.Observed(k) {
		b.markField(k, "metadata.annotations["+key+"]")
	}
}
