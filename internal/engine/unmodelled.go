package engine

import (
	"net/netip"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// unmodelled says, as assumptions every command prints, where the input
// asks for a dataplane the twin does not model: a provider's CNI plugin in
// place of Calico's, the aggregated Calico API server, and IPv6 pools.
func (b *builder) unmodelled() error {
	c := b.c
	if cni := operator.NonCalicoCNI(c.Installation); cni != "" {
		// The operator renders calico-node for policy only (backend none,
		// no Calico CNI configuration on Linux: pkg/render/node.go).
		b.note(model.Assumption, model.Key{Group: "operator.tigera.io", Kind: "Installation", Name: c.Installation.Name},
			"the Installation's CNI is %s: that plugin gives pods their addresses and carries their traffic, and the twin does not model it (simulated as Calico VXLAN: pods without an observed address get none; routes, HNS objects, trace and reach follow Calico's dataplane)", cni)
	}
	if b.in.v1CRDs && c.APIServer != nil && !hasDeployment(c, "calico-apiserver", "calico-apiserver") {
		// apiserver_controller.go renders the aggregated server with
		// crd.projectcalico.org/v1 CRDs (pkg/render/apiserver.go).
		b.note(model.Assumption, model.Key{Group: "operator.tigera.io", Kind: "APIServer", Name: c.APIServer.Name},
			"the cluster serves Calico's crd.projectcalico.org/v1 CRDs, so the operator runs the aggregated Calico API server (calico-apiserver/calico-apiserver), which the twin does not render: its pods and their addresses are missing unless the input lists them")
	}
	for _, p := range c.IPPools {
		if pfx, err := netip.ParsePrefix(p.Spec.CIDR); err == nil && pfx.Addr().Is6() && !p.Spec.Disabled {
			b.note(model.Assumption, model.Key{Group: "projectcalico.org", Kind: "IPPool", Name: p.Name},
				"IP pool %s (%s) is IPv6: the twin gives pods IPv4 addresses only and does not route or trace IPv6", p.Name, p.Spec.CIDR)
		}
	}
	return nil
}
