package engine

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// input is the snapshot sorted by kind, observed objects only. Deep copies are
// taken so that Build never mutates its input.
type input struct {
	cluster *hybrid.Cluster
	c       *model.Cluster // observed objects land here directly
	// kubeletPatches are the patch documents as written, by patch name:
	// kubeadm merges the file's own fields, so a field the patch sets to
	// its zero value (serverTLSBootstrap: false) must survive, which the
	// typed object's omitempty fields would lose.
	kubeletPatches map[string][]byte
	kubelets       []*kubeletv1beta1.KubeletConfiguration
	kubeletOrigins []model.Origin
	clusterOrigin  model.Origin
	// v1CRDs: Calico objects came as crd.projectcalico.org/v1.
	v1CRDs bool
}

// collect sorts the snapshot's typed objects into a Cluster of observed
// objects. Kinds the twin does not model are kept in NotModeled.
func collect(s *model.Snapshot) (*input, error) {
	in := &input{
		c: &model.Cluster{
			Origins: map[model.Key]model.Origin{},
			Kubeadm: model.Kubeadm{
				KubeletPatches: map[string]*kubeletv1beta1.KubeletConfiguration{},
				NodeKubelet:    map[string]*kubeletv1beta1.KubeletConfiguration{},
			},
		},
		kubeletPatches: map[string][]byte{},
	}
	c := in.c
	for _, o := range s.Objects {
		c.Origins[o.Key] = o.Origin
		if o.GVK.Group == "crd.projectcalico.org" {
			in.v1CRDs = true
		}
		switch t := o.Typed.(type) {
		case nil:
			c.NotModeled = append(c.NotModeled, o)
		case *hybrid.Cluster:
			if in.cluster != nil {
				return nil, errorAt(o.Origin, "Cluster %s: only one Cluster object may be given (the first is %s)", t.Name, in.cluster.Name)
			}
			in.cluster = copyJSON(t)
			in.clusterOrigin = o.Origin
		case *corev1.Node:
			c.Nodes = append(c.Nodes, t.DeepCopy())
		case *corev1.Namespace:
			c.Namespaces = append(c.Namespaces, t.DeepCopy())
		case *corev1.Pod:
			c.Pods = append(c.Pods, t.DeepCopy())
		case *corev1.Service:
			c.Services = append(c.Services, t.DeepCopy())
		case *corev1.ConfigMap:
			c.ConfigMaps = append(c.ConfigMaps, t.DeepCopy())
		case *corev1.ServiceAccount:
			c.ServiceAccounts = append(c.ServiceAccounts, t.DeepCopy())
		case *appsv1.Deployment:
			c.Deployments = append(c.Deployments, t.DeepCopy())
		case *appsv1.ReplicaSet:
			c.ReplicaSets = append(c.ReplicaSets, t.DeepCopy())
		case *appsv1.DaemonSet:
			c.DaemonSets = append(c.DaemonSets, t.DeepCopy())
		case *appsv1.StatefulSet:
			c.StatefulSets = append(c.StatefulSets, t.DeepCopy())
		case *discoveryv1.EndpointSlice:
			c.EndpointSlices = append(c.EndpointSlices, t.DeepCopy())
		case *networkingv1.NetworkPolicy:
			c.NetworkPolicies = append(c.NetworkPolicies, t.DeepCopy())
		case *nodev1.RuntimeClass:
			c.RuntimeClasses = append(c.RuntimeClasses, t.DeepCopy())
		case *certv1.CertificateSigningRequest:
			c.CSRs = append(c.CSRs, t.DeepCopy())
		case *kubeadm.InitConfiguration:
			c.Kubeadm.Init = copyJSON(t)
		case *kubeadm.ClusterConfiguration:
			c.Kubeadm.Cluster = copyJSON(t)
		case *kubeadm.JoinConfiguration:
			c.Kubeadm.Joins = append(c.Kubeadm.Joins, copyJSON(t))
		case *kubeletv1beta1.KubeletConfiguration:
			// kubeadm reads patch files by name: "kubeletconfiguration" plus an
			// optional suffix and patch type (kubeadm app/util/patches).
			if name, ok := kubeletPatchName(o.Origin.File); ok {
				in.kubeletPatches[name] = patchDocument(o, t)
				c.Kubeadm.KubeletPatches[name] = t.DeepCopy()
			} else {
				in.kubelets = append(in.kubelets, t.DeepCopy())
				in.kubeletOrigins = append(in.kubeletOrigins, o.Origin)
			}
		case *kubeproxyv1alpha1.KubeProxyConfiguration:
			c.Kubeadm.KubeProxy = t.DeepCopy()
		case *operator.Installation:
			c.Installation = copyJSON(t)
		case *operator.APIServer:
			c.APIServer = copyJSON(t)
		case *operator.TigeraStatus:
			c.TigeraStatuses = append(c.TigeraStatuses, copyJSON(t))
		case *calico.IPPool:
			c.IPPools = append(c.IPPools, copyJSON(t))
		case *calico.IPAMConfiguration:
			c.IPAMConfig = copyJSON(t)
		case *calico.IPAMBlock:
			c.IPAMBlocks = append(c.IPAMBlocks, copyJSON(t))
		case *calico.BlockAffinity:
			c.BlockAffinities = append(c.BlockAffinities, copyJSON(t))
		case *calico.FelixConfiguration:
			c.FelixConfigs = append(c.FelixConfigs, copyJSON(t))
		case *calico.BGPConfiguration:
			c.BGPConfigs = append(c.BGPConfigs, copyJSON(t))
		case *calico.NetworkPolicy:
			c.CalicoPolicies = append(c.CalicoPolicies, copyJSON(t))
		case *calico.GlobalNetworkPolicy:
			c.GlobalNetworkPolicies = append(c.GlobalNetworkPolicies, copyJSON(t))
		default:
			c.NotModeled = append(c.NotModeled, o)
		}
	}
	if len(in.kubelets) > 1 {
		return nil, errorAt(in.kubeletOrigins[1], "more than one cluster-wide KubeletConfiguration; name per-node patches kubeletconfiguration*.yaml")
	}
	if len(in.kubelets) == 1 {
		c.Kubeadm.Kubelet = in.kubelets[0]
	}
	return in, nil
}

// patchDocument is a kubelet patch as its file gives it: the document's
// own fields when the loader kept them, else the typed object.
func patchDocument(o *model.Object, t *kubeletv1beta1.KubeletConfiguration) []byte {
	if o.Raw != nil {
		if b, err := json.Marshal(o.Raw); err == nil {
			return b
		}
	}
	b, _ := json.Marshal(t)
	return b
}
