package load

import (
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
)

// What a checked field must hold.
type valueKind int

const (
	anAddress      valueKind = iota // an IP address
	aCIDR                           // an address/prefix-length
	aCIDRList                       // CIDRs separated by commas (dual-stack)
	anAddressOrNet                  // either
)

// checker collects the first field whose value does not parse.
type checker struct{ prob *rawdoc.Problem }

func (c *checker) check(p rawdoc.FieldPath, v string, kind valueKind) {
	if c.prob != nil || v == "" {
		return
	}
	q := strconv.Quote(rawdoc.Clip(v))
	switch kind {
	case anAddress:
		if _, err := netip.ParseAddr(v); err != nil {
			c.prob = &rawdoc.Problem{Path: p, Msg: q + " is not an IP address"}
		}
	case aCIDR:
		if _, err := netip.ParsePrefix(v); err != nil {
			c.prob = &rawdoc.Problem{Path: p, Msg: q + " is not a CIDR"}
		}
	case aCIDRList:
		parts := strings.Split(v, ",")
		for _, part := range parts {
			part = strings.TrimSpace(part)
			if _, err := netip.ParsePrefix(part); err != nil {
				if len(parts) == 1 {
					c.prob = &rawdoc.Problem{Path: p, Msg: q + " is not a CIDR"}
				} else {
					c.prob = &rawdoc.Problem{Path: p, Msg: strconv.Quote(rawdoc.Clip(part)) + " in " + q + " is not a CIDR"}
				}
				return
			}
		}
	case anAddressOrNet:
		if _, err := netip.ParsePrefix(v); err == nil {
			return
		}
		if _, err := netip.ParseAddr(v); err != nil {
			c.prob = &rawdoc.Problem{Path: p, Msg: q + " is not an IP address or CIDR"}
		}
	}
}

// checkFields finds the first address or CIDR of a typed object that does not
// parse, so that a typo fails at load time with its line rather than deep in
// the engine.
func checkFields(typed any) *rawdoc.Problem {
	var c checker
	switch t := typed.(type) {
	case *hybrid.Cluster:
		n := t.Spec.Network
		c.check(rawdoc.ParsePath("spec.network.cidr"), n.CIDR, aCIDR)
		c.check(rawdoc.ParsePath("spec.network.gateway"), n.Gateway, anAddress)
		for i, d := range n.DNS {
			c.check(rawdoc.ParsePath("spec.network.dns").With(rawdoc.IndexElem(i), rawdoc.KeyElem("address")), d.Address, anAddress)
		}
		for i, r := range n.Firewall {
			for j, f := range r.From {
				c.check(rawdoc.ParsePath("spec.network.firewall").With(rawdoc.IndexElem(i), rawdoc.KeyElem("from"), rawdoc.IndexElem(j)), f, anAddressOrNet)
			}
		}
		for i, h := range t.Spec.Hosts {
			c.check(rawdoc.ParsePath("spec.hosts").With(rawdoc.IndexElem(i), rawdoc.KeyElem("address")), h.Address, anAddress)
		}
	case *hybrid.HostState:
		c.prob = checkHostState(t)
	case *calico.IPPool:
		c.check(rawdoc.ParsePath("spec.cidr"), t.Spec.CIDR, aCIDR)
	case *calico.IPAMBlock:
		c.check(rawdoc.ParsePath("spec.cidr"), t.Spec.CIDR, aCIDR)
	case *calico.Node:
		if b := t.Spec.BGP; b != nil {
			c.check(rawdoc.ParsePath("spec.bgp.ipv4Address"), b.IPv4Address, aCIDR)
		}
		c.check(rawdoc.ParsePath("spec.ipv4VXLANTunnelAddr"), t.Spec.IPv4VXLANTunnelAddr, anAddress)
	case *calico.BlockAffinity:
		c.check(rawdoc.ParsePath("spec.cidr"), t.Spec.CIDR, aCIDR)
	case *operator.Installation:
		if cn := t.Spec.CalicoNetwork; cn != nil {
			for i, p := range cn.IPPools {
				c.check(rawdoc.ParsePath("spec.calicoNetwork.ipPools").With(rawdoc.IndexElem(i), rawdoc.KeyElem("cidr")), p.CIDR, aCIDR)
			}
		}
		for i, s := range t.Spec.ServiceCIDRs {
			c.check(rawdoc.ParsePath("spec.serviceCIDRs").With(rawdoc.IndexElem(i)), s, aCIDR)
		}
	case *kubeadm.ClusterConfiguration:
		c.check(rawdoc.ParsePath("networking.podSubnet"), t.Networking.PodSubnet, aCIDRList)
		c.check(rawdoc.ParsePath("networking.serviceSubnet"), t.Networking.ServiceSubnet, aCIDRList)
	case *kubeadm.InitConfiguration:
		c.check(rawdoc.ParsePath("localAPIEndpoint.advertiseAddress"), t.LocalAPIEndpoint.AdvertiseAddress, anAddress)
	case *kubeadm.JoinConfiguration:
		if cp := t.ControlPlane; cp != nil {
			c.check(rawdoc.ParsePath("controlPlane.localAPIEndpoint.advertiseAddress"), cp.LocalAPIEndpoint.AdvertiseAddress, anAddress)
		}
	case *corev1.Service:
		if ip := t.Spec.ClusterIP; ip != corev1.ClusterIPNone {
			c.check(rawdoc.ParsePath("spec.clusterIP"), ip, anAddress)
		}
		for i, ip := range t.Spec.ClusterIPs {
			if ip != corev1.ClusterIPNone {
				c.check(rawdoc.ParsePath("spec.clusterIPs").With(rawdoc.IndexElem(i)), ip, anAddress)
			}
		}
	case *corev1.Node:
		// The API server stores any string; the twin routes to these.
		for i, a := range t.Status.Addresses {
			if a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP {
				c.check(rawdoc.ParsePath("status.addresses").With(rawdoc.IndexElem(i), rawdoc.KeyElem("address")), a.Address, anAddress)
			}
		}
	case *corev1.Pod:
		c.check(rawdoc.ParsePath("status.podIP"), t.Status.PodIP, anAddress)
		for i, ip := range t.Status.PodIPs {
			c.check(rawdoc.ParsePath("status.podIPs").With(rawdoc.IndexElem(i), rawdoc.KeyElem("ip")), ip.IP, anAddress)
		}
		c.check(rawdoc.ParsePath("status.hostIP"), t.Status.HostIP, anAddress)
		for i, ip := range t.Status.HostIPs {
			c.check(rawdoc.ParsePath("status.hostIPs").With(rawdoc.IndexElem(i), rawdoc.KeyElem("ip")), ip.IP, anAddress)
		}
	}
	return c.prob
}
