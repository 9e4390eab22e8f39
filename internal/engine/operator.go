package engine

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// operator renders what the Tigera operator creates from the Installation
// (internal/calico/operator). Objects the input already holds win.
func (b *builder) operator() error {
	c := b.c
	if c.Installation == nil {
		return nil
	}
	in := operator.Inputs{
		Installation:      c.Installation,
		IPAMConfiguration: c.IPAMConfig,
		ServicesEndpoint:  b.configMap("tigera-operator", "kubernetes-services-endpoint"),
		Nodes:             c.Nodes,
		APIServer:         c.APIServer,
		ExistingIPPools:   c.IPPools,
		V1CRDs:            b.in.v1CRDs,
		Now:               b.ref,
	}
	for _, f := range c.FelixConfigs {
		if f.Name == "default" {
			in.FelixConfiguration = f
		}
	}
	if cc := c.Kubeadm.Cluster; cc != nil {
		in.Kubeadm = &operator.Kubeadm{PodSubnet: cc.Networking.PodSubnet, ServiceSubnet: b.serviceSubnet()}
	}
	for _, s := range c.Services {
		if s.Namespace == "kube-system" && s.Name == "kube-dns" {
			in.KubeDNS = s
		}
		if s.Namespace == "default" && s.Name == "kubernetes" {
			in.APIService = s
		}
	}
	out := operator.Render(in)
	if out.Installation != nil {
		c.Installation = out.Installation
	}
	for _, ns := range out.Namespaces {
		if b.namespace(ns.Name) == nil {
			c.Namespaces = append(c.Namespaces, ns)
		}
	}
	if len(c.IPPools) == 0 {
		c.IPPools = out.IPPools
	} else {
		have := map[string]*calico.IPPool{}
		for _, p := range c.IPPools {
			have[p.Name] = p
		}
		for _, p := range out.IPPools {
			switch e := have[p.Name]; {
			case e == nil:
				c.IPPools = append(c.IPPools, p)
			case e != p && e.Labels[operator.ManagedByLabel] == operator.ManagedByValue:
				// The operator's pool controller writes its version over
				// a pool it owns (pool_controller.go Reconcile); the
				// object's metadata stays.
				e.Spec = p.Spec
			}
		}
	}
	for _, ds := range out.DaemonSets {
		if !hasDaemonSet(c, ds.Namespace, ds.Name) {
			c.DaemonSets = append(c.DaemonSets, ds)
		}
	}
	for _, d := range out.Deployments {
		if !hasDeployment(c, d.Namespace, d.Name) {
			c.Deployments = append(c.Deployments, d)
		}
	}
	for _, s := range out.Services {
		if !hasService(c, s.Namespace, s.Name) {
			c.Services = append(c.Services, s)
		}
	}
	for _, cm := range out.ConfigMaps {
		if b.configMap(cm.Namespace, cm.Name) == nil {
			c.ConfigMaps = append(c.ConfigMaps, cm)
		}
	}
	if out.FelixConfiguration != nil && in.FelixConfiguration == nil {
		c.FelixConfigs = append(c.FelixConfigs, out.FelixConfiguration)
	}
	if len(c.TigeraStatuses) == 0 {
		c.TigeraStatuses = out.TigeraStatuses
	}
	for _, n := range out.Notes {
		b.note(model.Info, model.Key{Group: "operator.tigera.io", Kind: "Installation", Name: c.Installation.Name}, "%s", n)
	}
	return nil
}

func (b *builder) configMap(ns, name string) *corev1.ConfigMap {
	for _, cm := range b.c.ConfigMaps {
		if cm.Namespace == ns && cm.Name == name {
			return cm
		}
	}
	return nil
}
