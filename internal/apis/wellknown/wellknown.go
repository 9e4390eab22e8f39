// Package wellknown names the labels, annotations and taints of a cluster
// that k8s.io/api does not define as constants. Those it does define
// (corev1.LabelOSStable, corev1.LabelHostname, corev1.LabelWindowsBuild,
// discoveryv1.LabelServiceName, …) are used from there directly, and the
// kubelet's deprecated beta labels from k8s.io/kubelet/pkg/apis.
package wellknown

// LabelControlPlane marks a control-plane node; kubeadm puts it on the node
// together with TaintControlPlane (kubeadm app/constants
// LabelNodeRoleControlPlane).
const LabelControlPlane = "node-role.kubernetes.io/control-plane"

// TaintControlPlane keeps workloads off a control-plane node (kubeadm
// app/constants ControlPlaneTaint).
const TaintControlPlane = LabelControlPlane
