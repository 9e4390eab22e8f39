package hybrid

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NodeOS is a Node's operating system: its kubernetes.io/os label, which
// the kubelet sets from runtime.GOOS, else the status.nodeInfo the kubelet
// reports, else "".
func NodeOS(n *corev1.Node) string {
	if os := n.Labels[corev1.LabelOSStable]; os != "" {
		return os
	}
	return n.Status.NodeInfo.OperatingSystem
}

// HasWindowsNode reports whether a node is labelled kubernetes.io/os
// windows: whether the cluster has a Windows dataplane to compile.
func HasWindowsNode(nodes []*corev1.Node) bool {
	for _, n := range nodes {
		if n.Labels[corev1.LabelOSStable] == OSWindows {
			return true
		}
	}
	return false
}

// WindowsKernel is a Windows kernelVersion as the kubelet reports it in
// status.nodeInfo (10.0.26100.33438: major, minor, build, update revision;
// pkg/kubelet/winstats/version.go).
type WindowsKernel struct {
	// Build is the first three parts ("10.0.26100"), or "" with fewer.
	Build string
	// Number is the build number (26100), 0 when absent or not a number.
	Number int
	// Revision is the update revision (33438), -1 when absent or not a number.
	Revision int
}

// ParseWindowsKernel splits a Windows kernelVersion into its parts.
func ParseWindowsKernel(kernel string) WindowsKernel {
	k := WindowsKernel{Revision: -1}
	parts := strings.Split(kernel, ".")
	if len(parts) >= 3 {
		k.Build = strings.Join(parts[:3], ".")
		k.Number, _ = strconv.Atoi(parts[2])
	}
	if len(parts) >= 4 {
		if r, err := strconv.Atoi(parts[3]); err == nil {
			k.Revision = r
		}
	}
	return k
}
