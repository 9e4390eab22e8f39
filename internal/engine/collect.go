package engine

import (
	"encoding/json"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// input is the snapshot sorted by kind, observed objects only. Deep copies are
// taken so that Build never mutates its input (BuildOwned takes the objects
// themselves).
type input struct {
	cluster *hybrid.Cluster
	// clusterInput is the snapshot's Cluster object cluster was made from.
	clusterInput *hybrid.Cluster
	c            *model.Cluster // observed objects land here directly
	// kubeletPatches are the patch documents as written, by patch name:
	// kubeadm merges the file's own fields, so a field the patch sets to
	// its zero value (serverTLSBootstrap: false) must survive, which the
	// typed object's omitempty fields would lose.
	kubeletPatches map[string][]byte
	kubelets       []*kubeletv1beta1.KubeletConfiguration
	kubeletOrigins []model.Origin
	// kubeletObjects are the snapshot's KubeletConfiguration objects, in
	// order: what each node's kubelet configuration is made from
	// (derive_kubelets.go).
	kubeletObjects []*model.Object
	clusterOrigin  model.Origin
	// v1CRDs: the cluster serves Calico's crd.projectcalico.org/v1 CRDs
	// (see calicoCRDMode); the group an object is written in does not say.
	v1CRDs bool
	// stated is the node network as the command line states it.
	stated hybrid.Network
	// actions are the snapshot's what-if actions (Snapshot.Actions).
	actions []*model.Object
}

// collect sorts the snapshot's typed objects into a Cluster of observed
// objects. Kinds the twin does not model are kept in NotModeled. With own
// the objects are taken as they are, else copied; a pod a derivation
// reuses is the previous twin's.
func collect(s *model.Snapshot, own bool, d *derivation) (*input, error) {
	in := &input{
		c: &model.Cluster{
			Kubeadm: model.Kubeadm{
				KubeletPatches: map[string]*kubeletv1beta1.KubeletConfiguration{},
				NodeKubelet:    map[string]*kubeletv1beta1.KubeletConfiguration{},
			},
		},
		kubeletPatches: map[string][]byte{},
		stated:         s.Network,
		actions:        s.Actions,
	}
	c := in.c
	// A derivation's snapshot is the previous one with a few objects
	// layered on it: their origins are all that differ.
	origins := d == nil || d.origins == nil
	if origins {
		c.Origins = make(map[model.Key]model.Origin, len(s.Objects))
	} else {
		c.Origins = maps.Clone(d.origins)
		for _, o := range d.layered {
			c.Origins[o.Key] = o.Origin
		}
	}
	for _, o := range s.Objects {
		if origins {
			c.Origins[o.Key] = o.Origin
		}
		if calicoCRDMode(o) {
			in.v1CRDs = true
		}
		switch t := o.Typed.(type) {
		case nil:
			c.NotModeled = append(c.NotModeled, o)
		case *hybrid.Cluster:
			if in.cluster != nil {
				return nil, errorAt(o.Origin, "Cluster %s: only one Cluster object may be given (the first is %s)", t.Name, in.cluster.Name)
			}
			if was := d.reusedCluster(t); was != nil {
				in.cluster = was
			} else {
				in.cluster = keepJSON(own, t)
			}
			in.clusterInput, in.clusterOrigin = t, o.Origin
		case *hybrid.HostState:
			if c.HostStates == nil {
				c.HostStates = map[string]*hybrid.HostState{}
			}
			c.HostStates[t.Name] = keepJSON(own, t)
		case *corev1.Node:
			c.Nodes = append(c.Nodes, keep(own, t))
		case *corev1.Namespace:
			c.Namespaces = append(c.Namespaces, keep(own, t))
		case *corev1.Pod:
			if d != nil {
				if c.Pods == nil {
					// Most of a derivation's pods are reused: one
					// allocation, not a run of growing ones.
					c.Pods = make([]*corev1.Pod, 0, len(d.reuse)+len(d.reuse)/8)
				}
				if p := d.reuse[t]; p != nil {
					c.Pods = append(c.Pods, p)
					continue
				}
			}
			c.Pods = append(c.Pods, keep(own, t))
		case *model.Undecodable:
			c.Rejected = append(c.Rejected, model.Rejection{Key: o.Key, Origin: o.Origin, Message: strings.TrimRight(admission.FormatError(t.Err), "\n")})
		case *corev1.Service:
			if was := d.reusedServices(t); was != nil {
				c.Services = append(c.Services, was)
				continue
			}
			c.Services = append(c.Services, keep(own, t))
		case *corev1.ConfigMap:
			c.ConfigMaps = append(c.ConfigMaps, keep(own, t))
		case *corev1.ServiceAccount:
			c.ServiceAccounts = append(c.ServiceAccounts, keep(own, t))
		case *appsv1.Deployment:
			if was := d.reusedDeployments(t); was != nil {
				c.Deployments = append(c.Deployments, was)
				continue
			}
			c.Deployments = append(c.Deployments, keep(own, t))
		case *appsv1.ReplicaSet:
			c.ReplicaSets = append(c.ReplicaSets, keep(own, t))
		case *appsv1.DaemonSet:
			c.DaemonSets = append(c.DaemonSets, keep(own, t))
		case *appsv1.StatefulSet:
			c.StatefulSets = append(c.StatefulSets, keep(own, t))
		case *discoveryv1.EndpointSlice:
			if was := d.reusedEndpointSlices(t); was != nil {
				c.EndpointSlices = append(c.EndpointSlices, was)
				continue
			}
			c.EndpointSlices = append(c.EndpointSlices, keep(own, t))
		case *networkingv1.NetworkPolicy:
			if was := d.reusedNetworkPolicies(t); was != nil {
				c.NetworkPolicies = append(c.NetworkPolicies, was)
				continue
			}
			c.NetworkPolicies = append(c.NetworkPolicies, keep(own, t))
		case *nodev1.RuntimeClass:
			c.RuntimeClasses = append(c.RuntimeClasses, keep(own, t))
		case *schedulingv1.PriorityClass:
			c.PriorityClasses = append(c.PriorityClasses, keep(own, t))
		case *certv1.CertificateSigningRequest:
			c.CSRs = append(c.CSRs, keep(own, t))
		case *kubeadm.InitConfiguration:
			c.Kubeadm.Init = keepJSON(own, t)
		case *kubeadm.ClusterConfiguration:
			c.Kubeadm.Cluster = keepJSON(own, t)
		case *kubeadm.JoinConfiguration:
			c.Kubeadm.Joins = append(c.Kubeadm.Joins, keepJSON(own, t))
		case *kubeletv1beta1.KubeletConfiguration:
			in.kubeletObjects = append(in.kubeletObjects, o)
			// kubeadm reads patch files by name: "kubeletconfiguration" plus an
			// optional suffix and patch type (kubeadm app/util/patches).
			if name, ok := kubeletPatchName(o.Origin.File); ok {
				in.kubeletPatches[name] = patchDocument(o, t)
				c.Kubeadm.KubeletPatches[name] = keep(own, t)
			} else {
				in.kubelets = append(in.kubelets, keep(own, t))
				in.kubeletOrigins = append(in.kubeletOrigins, o.Origin)
			}
		case *kubeproxyv1alpha1.KubeProxyConfiguration:
			c.Kubeadm.KubeProxy = keep(own, t)
		case *operator.Installation:
			c.Installation = keepJSON(own, t)
			// omitempty loses an empty pool list in the copy, and an empty
			// list ("no pools") is not an absent one (operator defaults).
			if cn := t.Spec.CalicoNetwork; cn != nil && cn.IPPools != nil && len(cn.IPPools) == 0 {
				c.Installation.Spec.CalicoNetwork.IPPools = []operator.IPPool{}
			}
		case *operator.APIServer:
			c.APIServer = keepJSON(own, t)
		case *operator.TigeraStatus:
			c.TigeraStatuses = append(c.TigeraStatuses, keepJSON(own, t))
		case *calico.IPPool:
			c.IPPools = append(c.IPPools, keepJSON(own, t))
		case *calico.IPAMConfiguration:
			c.IPAMConfig = keepJSON(own, t)
		case *calico.IPAMBlock:
			c.IPAMBlocks = append(c.IPAMBlocks, keepJSON(own, t))
		case *calico.BlockAffinity:
			c.BlockAffinities = append(c.BlockAffinities, keepJSON(own, t))
		case *calico.FelixConfiguration:
			c.FelixConfigs = append(c.FelixConfigs, keepJSON(own, t))
		case *calico.BGPConfiguration:
			c.BGPConfigs = append(c.BGPConfigs, keepJSON(own, t))
		case *calico.NetworkPolicy:
			c.CalicoPolicies = append(c.CalicoPolicies, keepJSON(own, t))
		case *calico.GlobalNetworkPolicy:
			c.GlobalNetworkPolicies = append(c.GlobalNetworkPolicies, keepJSON(own, t))
		case *calico.Node:
			c.CalicoNodes = append(c.CalicoNodes, keepJSON(own, t))
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

// liveOrigin starts the Origin.File of objects read from a live cluster
// (live.OriginPrefix; the engine does not import the live reader).
const liveOrigin = "live:"

// calicoCRDMode reports whether o shows the cluster serving Calico's
// crd.projectcalico.org/v1 CRDs, the mode in which the operator renders the
// aggregated Calico API server. The operator decides at start from API
// discovery: projectcalico.org/v3 CRDs only when crd.projectcalico.org is not
// served (tigera/operator pkg/apis/version.go UseV3CRDs). A dump does not
// show discovery, and an object's group is only how it was read: the Calico
// API server serves every crd.projectcalico.org object as projectcalico.org
// too, so dumps mix the two. What does show it: a CustomResourceDefinition of
// the crd.projectcalico.org group, the APIService the aggregated server
// registers (v3.projectcalico.org), or that server's Deployment
// (calico-apiserver/calico-apiserver, pkg/render/apiserver.go). A live read
// says it too when it took a Calico kind from crd.projectcalico.org: it does
// so only when the server does not serve projectcalico.org/v3
// (live.Targets), which is the operator's own test.
func calicoCRDMode(o *model.Object) bool {
	switch {
	case o.GVK.Group == calico.CRDGroup:
		return strings.HasPrefix(o.Origin.File, liveOrigin)
	case o.GVK.Group == "apiextensions.k8s.io" && o.GVK.Kind == "CustomResourceDefinition":
		return strings.HasSuffix(o.Key.Name, ".crd.projectcalico.org")
	case o.GVK.Group == "apiregistration.k8s.io" && o.GVK.Kind == "APIService":
		return o.Key.Name == "v3.projectcalico.org"
	case o.GVK.Group == "apps" && o.GVK.Kind == "Deployment":
		return o.Key.Namespace == "calico-apiserver" && o.Key.Name == "calico-apiserver"
	}
	return false
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

// keep is t, or a deep copy of it unless the caller owns the snapshot.
func keep[T interface{ DeepCopy() T }](own bool, t T) T {
	if own {
		return t
	}
	return t.DeepCopy()
}

// keepJSON is keep for the types without DeepCopy (copied through JSON).
func keepJSON[T any](own bool, t *T) *T {
	if own {
		return t
	}
	return copyJSON(t)
}
