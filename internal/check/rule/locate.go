package rule

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Locate fills in the finding's Source (when the rule left it out) and
// Location, and returns the chain of objects the finding's object derives
// from.
func (x *Context) Locate(f *Finding) []model.Key {
	if f.Source == nil {
		f.Source = x.inferSource(f.Object)
	}
	var chain []model.Key
	origins := x.Cluster.Origins
	if o, ok := origins[f.Object]; ok {
		f.Location, f.OwnOrigin = o, o
	}
	src := f.Source
	for hops := 0; src != nil && hops < 4; hops++ {
		chain = append(chain, *src)
		if o, ok := origins[*src]; ok && f.Location.File == "" {
			f.Location = o
		}
		src = x.inferSource(*src)
	}
	return chain
}

// Suppressed reports whether the skip-checks annotation of obj, or of an
// object in its chain, silences the rule.
func (x *Context) Suppressed(rule *Rule, obj model.Key, chain []model.Key) bool {
	skips := x.Idx().skips
	if len(skips) == 0 {
		return false
	}
	for _, k := range append([]model.Key{obj}, chain...) {
		if s := skips[k]; s != nil && (s[rule.ID] || s[rule.Name] || s["*"]) {
			return true
		}
	}
	return false
}

// FallbackOrigin is the Cluster kind's origin, else the first input file's
// first line.
func (x *Context) FallbackOrigin() model.Origin {
	if k := x.ClusterKindKey(); k != nil {
		return x.Cluster.Origins[*k]
	}
	var best model.Origin
	for _, o := range x.Cluster.Origins {
		if o.File == "" || o.File == "<stdin>" {
			continue
		}
		if best.File == "" || originLess(o, best) {
			best = o
		}
	}
	if best.File != "" {
		best = model.Origin{File: best.File, Doc: 1, Line: 1}
	}
	return best
}

// Keys of the objects findings most often point at.
func installationKey(c *model.Cluster) *model.Key {
	if c.Installation == nil {
		return nil
	}
	return &model.Key{Group: "operator.tigera.io", Kind: "Installation", Name: c.Installation.Name}
}

// ClusterKindKey is the key of the Cluster kind, nil without one.
func (x *Context) ClusterKindKey() *model.Key {
	if k, ok := x.observedOfKind(hybrid.Group, "Cluster"); ok {
		return &k
	}
	return nil
}

func (x *Context) kubeadmClusterKey() *model.Key {
	if k, ok := x.observedOfKind("kubeadm.k8s.io", "ClusterConfiguration"); ok {
		return &k
	}
	if k, ok := x.observedOfKind("kubeadm.k8s.io", "InitConfiguration"); ok {
		return &k
	}
	return nil
}

// inferSource is the object a derived object comes from: the Installation
// for what the operator renders, kubeadm's configuration for its add-ons,
// the owning controller for a ReplicaSet, the Cluster kind for nodes.
func (x *Context) inferSource(k model.Key) *model.Key {
	c := x.Cluster
	switch {
	case k.Group == "operator.tigera.io" && k.Kind == "Installation":
		return nil
	case k.Group == "projectcalico.org" && k.Kind != "NetworkPolicy" && k.Kind != "GlobalNetworkPolicy",
		k.Group == "operator.tigera.io" && k.Kind == "TigeraStatus",
		k.Namespace == "calico-system",
		k.Kind == "Namespace" && k.Name == "calico-system":
		return installationKey(c)
	case k.Group == "apps" && k.Kind == "ReplicaSet":
		for _, rs := range c.ReplicaSets {
			if rs.Namespace == k.Namespace && rs.Name == k.Name {
				if kind, name := ControllerOf(rs); kind == "Deployment" {
					return &model.Key{Group: "apps", Kind: "Deployment", Namespace: k.Namespace, Name: name}
				}
			}
		}
	case k.Namespace == "kube-system" && (k.Name == "kube-proxy" || k.Name == "coredns" || k.Name == "kube-dns"),
		k.Namespace == "default" && k.Name == "kubernetes" && k.Kind == "Service":
		return x.kubeadmClusterKey()
	case k.Group == "" && k.Kind == "Node", k.Group == "certificates.k8s.io":
		return x.ClusterKindKey()
	case k.Group == "" && k.Kind == "Pod":
		if w := x.workloadOfPod(k); w != nil && w.Key != k {
			key := w.Key
			return &key
		}
	}
	return nil
}

// workloadOfPod finds the workload a pod belongs to; the pod index is built
// on first use, for the few findings that name a pod.
func (x *Context) workloadOfPod(k model.Key) *Workload {
	ix := x.Idx()
	if ix.podWorkload == nil {
		ix.podWorkload = map[model.Key]*Workload{}
		for _, w := range ix.Workloads {
			for _, p := range w.Pods {
				ix.podWorkload[model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}] = w
			}
		}
	}
	return ix.podWorkload[k]
}

// Plural makes "1 pod", "2 pods".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ListNames joins up to max names, then "and N more".
func ListNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
