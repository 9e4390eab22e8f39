package linux

import (
	"net/netip"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/kubeproxy"
)

// The node's service ports as kube-proxy's nftables proxier programs them
// (package kubeproxy); a node where it does not run has none.

// ServicePorts returns the service ports kube-proxy programs on the node,
// in the twin's ServicePortName order; nil when kube-proxy does not run in
// nftables mode.
func (n *Node) ServicePorts() []ServicePort { return n.kp.ServicePorts() }

// HasServicePorts reports whether ServicePorts() is non-nil: kube-proxy
// runs in nftables mode and programs at least one service port.
func (n *Node) HasServicePorts() bool { return n.kp.HasServicePorts() }

// ServicePortsFor returns the entries of ServicePorts() with the cluster
// IP, port and protocol (lower case, as ServicePort spells it), in order,
// without building the others.
func (n *Node) ServicePortsFor(ip netip.Addr, port int, proto string) []ServicePort {
	return n.kp.ServicePortsFor(ip, port, proto)
}

// ServicePortsByNodePort returns the entries of ServicePorts() with the
// node port and protocol, in order, without building the others.
func (n *Node) ServicePortsByNodePort(port int, proto string) []ServicePort {
	return n.kp.ServicePortsByNodePort(port, proto)
}

// ServiceDNAT returns what kube-proxy's ruleset does with a new connection
// from a pod to dst over proto: the DNAT candidates (any one is chosen by
// numgen random), or a verdict ("reject", "drop") when the service has no
// usable endpoint; ok is false when dst is not a service address.
func (n *Node) ServiceDNAT(dst netip.AddrPort, proto string) (eps []netip.AddrPort, verdict string, ok bool) {
	return n.kp.ServiceDNAT(dst, proto)
}

// ServicePort is one service port as kube-proxy programs it on a node, and
// ServiceEndpoint one of its backends.
type (
	ServicePort     = kubeproxy.ServicePort
	ServiceEndpoint = kubeproxy.ServiceEndpoint
)
