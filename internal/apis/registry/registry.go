// Package registry is the one list of kinds the twin decodes: the Kubernetes
// kinds of a hybrid cluster, kubeadm's, kubelet's and kube-proxy's
// configuration, Calico's and the Tigera operator's resources, and the
// project's own Cluster kind.
package registry

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

func kind(group string, versions []string, name string, namespaced bool, newFn func() any, short ...string) meta.Kind {
	return meta.Kind{Group: group, Versions: versions, Kind: name, Namespaced: namespaced, New: newFn, ShortNames: short}
}

var v1 = []string{"v1"}

func builtin() []meta.Kind {
	return []meta.Kind{
		kind("", v1, "Node", false, func() any { return &corev1.Node{} }, "no"),
		kind("", v1, "Namespace", false, func() any { return &corev1.Namespace{} }, "ns"),
		kind("", v1, "Pod", true, func() any { return &corev1.Pod{} }, "po"),
		kind("", v1, "Service", true, func() any { return &corev1.Service{} }, "svc"),
		kind("", v1, "ConfigMap", true, func() any { return &corev1.ConfigMap{} }, "cm"),
		kind("", v1, "ServiceAccount", true, func() any { return &corev1.ServiceAccount{} }, "sa"),
		kind("apps", v1, "Deployment", true, func() any { return &appsv1.Deployment{} }, "deploy"),
		kind("apps", v1, "ReplicaSet", true, func() any { return &appsv1.ReplicaSet{} }, "rs"),
		kind("apps", v1, "DaemonSet", true, func() any { return &appsv1.DaemonSet{} }, "ds"),
		kind("apps", v1, "StatefulSet", true, func() any { return &appsv1.StatefulSet{} }, "sts"),
		kind("discovery.k8s.io", v1, "EndpointSlice", true, func() any { return &discoveryv1.EndpointSlice{} }),
		kind("networking.k8s.io", v1, "NetworkPolicy", true, func() any { return &networkingv1.NetworkPolicy{} }, "netpol"),
		kind("node.k8s.io", v1, "RuntimeClass", false, func() any { return &nodev1.RuntimeClass{} }),
		kind("scheduling.k8s.io", v1, "PriorityClass", false, func() any { return &schedulingv1.PriorityClass{} }),
		kind("certificates.k8s.io", v1, "CertificateSigningRequest", false, func() any { return &certv1.CertificateSigningRequest{} }, "csr"),
		kind(kubeadm.Group, []string{"v1beta4", "v1beta3"}, "InitConfiguration", false, func() any { return &kubeadm.InitConfiguration{} }),
		kind(kubeadm.Group, []string{"v1beta4", "v1beta3"}, "ClusterConfiguration", false, func() any { return &kubeadm.ClusterConfiguration{} }),
		kind(kubeadm.Group, []string{"v1beta4", "v1beta3"}, "JoinConfiguration", false, func() any { return &kubeadm.JoinConfiguration{} }),
		kind("kubelet.config.k8s.io", []string{"v1beta1"}, "KubeletConfiguration", false, func() any { return &kubeletv1beta1.KubeletConfiguration{} }),
		kind("kubeproxy.config.k8s.io", []string{"v1alpha1"}, "KubeProxyConfiguration", false, func() any { return &kubeproxyv1alpha1.KubeProxyConfiguration{} }),
		kind(hybrid.Group, []string{hybrid.Version}, "Cluster", false, func() any { return &hybrid.Cluster{} }),
	}
}

var (
	once  sync.Once
	all   []meta.Kind
	files []meta.Kind
	index map[schema.GroupKind]meta.Kind
)

func build() {
	all = append(builtin(), calico.Kinds()...)
	all = append(all, operator.Kinds()...)
	// A HostState states what no API server stores (see hybrid.HostState).
	files = append(calico.FileKinds(), kind(hybrid.Group, []string{hybrid.Version}, hybrid.HostStateKind, false, func() any { return &hybrid.HostState{} }))
	index = make(map[schema.GroupKind]meta.Kind, len(all)+len(files))
	for _, list := range [][]meta.Kind{all, files} {
		for i := range list {
			if list[i].Resource == "" {
				plural, _ := apimeta.UnsafeGuessKindToResource(list[i].GroupVersionKind())
				list[i].Resource = plural.Resource
			}
			index[list[i].GroupKind()] = list[i]
		}
	}
}

// All returns every registered kind that a cluster's API serves and the
// live reader lists.
func All() []meta.Kind { once.Do(build); return all }

// FileOnly returns the kinds decoded from files but not listed from a live
// cluster, whose API gives the same facts in other objects (Calico's Node
// is the Kubernetes Node's projectcalico.org annotations).
func FileOnly() []meta.Kind { once.Do(build); return files }

// ForGroupKind finds a registered kind by group and kind.
func ForGroupKind(gk schema.GroupKind) (meta.Kind, bool) {
	once.Do(build)
	k, ok := index[gk]
	return k, ok
}

// ForResource finds the kind a resource word names, as kubectl reads the
// TYPE of TYPE/NAME: its plural, singular or a short name, in any case
// ("po", "Pods", "deploy"). Kubernetes' own kinds come first, so
// "networkpolicies" is networking.k8s.io's and "nodes" the core Node, as
// with kubectl against a cluster that also serves Calico's API.
func ForResource(word string) (meta.Kind, bool) {
	once.Do(build)
	for _, k := range all {
		if k.AnswersTo(word) {
			return k, true
		}
	}
	return meta.Kind{}, false
}

// Lookup finds the kind for a document's apiVersion and kind. ok is false for
// a kind the twin does not model, or for a version of it the twin does not
// know.
func Lookup(apiVersion, kindName string) (meta.Kind, bool) {
	once.Do(build)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return meta.Kind{}, false
	}
	group := gv.Group
	if group == calico.CRDGroup {
		group = "projectcalico.org" // same shape, see package calico
	}
	k, ok := index[schema.GroupKind{Group: group, Kind: kindName}]
	if !ok {
		return meta.Kind{}, false
	}
	for _, v := range k.Versions {
		if v == gv.Version || (gv.Group == calico.CRDGroup && gv.Version == "v1") {
			return k, true
		}
	}
	return meta.Kind{}, false
}
