package linux

// The pure semantics of Kubernetes NetworkPolicy live in internal/policy,
// shared with the trace engine and compared there with what Calico programs
// on Windows. This file keeps the names the Linux dataplane has always
// offered.

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

// Direction is the direction of traffic relative to the pod a policy
// selects (policy.Direction).
type Direction = policy.Direction

// Directions.
const (
	Ingress = policy.Ingress
	Egress  = policy.Egress
)

// PolicyIndex answers NetworkPolicy questions for one cluster (policy.Index).
type PolicyIndex = policy.Index

// NewPolicyIndex indexes the cluster's NetworkPolicies, namespaces and pods
// (policy.NewIndex).
func NewPolicyIndex(policies []*networkingv1.NetworkPolicy, namespaces []*corev1.Namespace, pods []*corev1.Pod) *PolicyIndex {
	return policy.NewIndex(policies, namespaces, pods)
}

// PolicyTypes returns the directions a policy applies to (policy.PolicyTypes).
func PolicyTypes(p *networkingv1.NetworkPolicy) []Direction { return policy.PolicyTypes(p) }

// NamedPort returns the number of a pod's named container port
// (policy.NamedPort).
func NamedPort(pod *corev1.Pod, name string, proto corev1.Protocol) int32 {
	return policy.NamedPort(pod, name, proto)
}
