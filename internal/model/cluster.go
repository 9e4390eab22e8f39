package model

import (
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

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// Cluster is the built twin: every object the real components would hold,
// observed ones as given and derived ones filled in. Slices are sorted the way
// kubectl lists them (namespace, then name) unless a field says otherwise.
type Cluster struct {
	// Hosts in join order, from the Cluster kind or reconstructed from Nodes.
	Hosts   []hybrid.Host
	Network hybrid.Network
	// NetworkFrom says where Network.CIDR came from ("--node-network",
	// "Cluster spec.network.cidr", the Nodes' annotations, or inferred);
	// empty when no node network is known.
	NetworkFrom string
	Kubeadm     Kubeadm

	Nodes           []*corev1.Node
	Namespaces      []*corev1.Namespace
	Pods            []*corev1.Pod
	Deployments     []*appsv1.Deployment
	ReplicaSets     []*appsv1.ReplicaSet
	DaemonSets      []*appsv1.DaemonSet
	StatefulSets    []*appsv1.StatefulSet
	Services        []*corev1.Service
	EndpointSlices  []*discoveryv1.EndpointSlice
	NetworkPolicies []*networkingv1.NetworkPolicy
	RuntimeClasses  []*nodev1.RuntimeClass
	// PriorityClasses are the input's; the API server's built-in
	// system-node-critical and system-cluster-critical are added when
	// missing.
	PriorityClasses []*schedulingv1.PriorityClass
	ConfigMaps      []*corev1.ConfigMap
	ServiceAccounts []*corev1.ServiceAccount
	CSRs            []*certv1.CertificateSigningRequest
	// HostStates are the hosts that depart from a healthy join (a what-if's
	// HostState), by node name; a node without one runs as its join left it.
	HostStates map[string]*hybrid.HostState
	// Events are the ones the twin's components would record for what it
	// derives (a pod that cannot start, one that cannot be scheduled), in
	// the order recorded; simulated: one occurrence each, at the build's
	// reference time.
	Events []*corev1.Event

	Installation   *operator.Installation
	APIServer      *operator.APIServer
	TigeraStatuses []*operator.TigeraStatus

	IPPools               []*calico.IPPool
	IPAMConfig            *calico.IPAMConfiguration
	IPAMBlocks            []*calico.IPAMBlock
	BlockAffinities       []*calico.BlockAffinity
	FelixConfigs          []*calico.FelixConfiguration
	BGPConfigs            []*calico.BGPConfiguration
	CalicoPolicies        []*calico.NetworkPolicy
	GlobalNetworkPolicies []*calico.GlobalNetworkPolicy
	// CalicoNodes are Calico Node resources as given (calicoctl's view);
	// their fields also land on the Nodes as projectcalico.org annotations.
	CalicoNodes []*calico.Node

	// Rejected are objects the API server would refuse, with its message.
	Rejected []Rejection
	// Warned are the warnings the API server would send to whoever applies
	// an object (kubectl prints each as "Warning: <message>" on stderr), in
	// the order of the creates; Message is one warning.
	Warned []Rejection
	// Notes are what the model says about itself: kinds not modeled, values
	// it could not derive, decisions a reader should know about.
	Notes []Note
	// NotModeled are input objects of kinds the twin does not model.
	NotModeled []*Object
	// Origins records where observed objects came from; an object without an
	// entry was derived.
	Origins map[Key]Origin
	// DerivedFields lists, for observed objects, the fields the engine filled
	// in (a pod stub's "spec", an address it did not carry: "status.podIP").
	DerivedFields map[Key][]string
}

// Kubeadm is the kubeadm configuration the cluster was built with.
type Kubeadm struct {
	Init    *kubeadm.InitConfiguration
	Cluster *kubeadm.ClusterConfiguration
	Joins   []*kubeadm.JoinConfiguration
	// Kubelet is the cluster-wide KubeletConfiguration (the kubelet-config
	// ConfigMap); KubeletPatches are per-node patch files by name.
	Kubelet        *kubeletv1beta1.KubeletConfiguration
	KubeletPatches map[string]*kubeletv1beta1.KubeletConfiguration
	KubeProxy      *kubeproxyv1alpha1.KubeProxyConfiguration
	// NodeKubelet is the effective kubelet configuration per node name, the
	// cluster-wide one with that node's patches applied.
	NodeKubelet map[string]*kubeletv1beta1.KubeletConfiguration
	// CRISockets is the CRI endpoint kubeadm configures per node name.
	CRISockets map[string]string
}

// Rejection is an object the API server refuses, with the text kubectl
// prints for it.
type Rejection struct {
	Key     Key
	Origin  Origin
	Message string
}

// Severity of a Note.
type Severity string

// Note severities. An Assumption is a fact the input does not state that
// the twin inferred (the node network from the nodes' addresses); every
// command says so, since answers rest on it.
const (
	Info       Severity = "info"
	Warning    Severity = "warning"
	Assumption Severity = "assumption"
)

// Note is something the model says about its own result.
type Note struct {
	Severity Severity
	Object   Key
	Message  string
}

// Observed reports whether the object with this key came from the input.
func (c *Cluster) Observed(k Key) bool { _, ok := c.Origins[k]; return ok }

// Derived reports whether a field of the object was derived: always for a
// derived object, and for an observed one when the engine filled it in.
func (c *Cluster) Derived(k Key, field string) bool {
	if !c.Observed(k) {
		return true
	}
	for _, f := range c.DerivedFields[k] {
		if f == field {
			return true
		}
	}
	return false
}

// MarkDerived records that the engine filled in a field of an observed object.
func (c *Cluster) MarkDerived(k Key, field string) {
	if c.DerivedFields == nil {
		c.DerivedFields = map[Key][]string{}
	}
	c.DerivedFields[k] = append(c.DerivedFields[k], field)
}

// Holds reports whether list has the object namespace/name: whether the
// input already holds an object the twin would otherwise derive or render.
func Holds[T interface {
	GetNamespace() string
	GetName() string
}](list []T, namespace, name string) bool {
	for _, o := range list {
		if o.GetNamespace() == namespace && o.GetName() == name {
			return true
		}
	}
	return false
}

// KubeletRequestError is the error the engine found a node's kubelet
// getting from the API server (a clock outside the API server
// certificate's validity, internal/engine/hostfailures.go), as its note on
// the Node carries it, or "".
func (c *Cluster) KubeletRequestError(node string) string {
	for _, n := range c.Notes {
		if n.Object.Kind != "Node" || n.Object.Name != node {
			continue
		}
		if i := strings.Index(n.Message, "Get \""); i >= 0 && strings.Contains(n.Message, "x509:") {
			return n.Message[i:]
		}
	}
	return ""
}
