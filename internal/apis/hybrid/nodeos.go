package hybrid

import corev1 "k8s.io/api/core/v1"

// NodeOS is a Node's operating system: its kubernetes.io/os label, which
// the kubelet sets from runtime.GOOS, else the status.nodeInfo the kubelet
// reports, else "".
func NodeOS(n *corev1.Node) string {
	if os := n.Labels[corev1.LabelOSStable]; os != "" {
		return os
	}
	return n.Status.NodeInfo.OperatingSystem
}
