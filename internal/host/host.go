// Package host models the machine under a node: the services its join
// installs (containerd, the kubelet, and on Windows HNS and the Host
// Compute Service), containerd's effective configuration, the kubelet's
// flags and effective KubeletConfiguration, the directories and log files
// the join leaves, and the kubelet's node-allocatable arithmetic. It reads
// the built twin (model.Cluster) and a node's HostState, and computes; it
// runs nothing. Values a running host decides on its own (process IDs,
// start times) are not here: the commands that print them say they are
// simulated.
package host

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Host is one node's machine as its join left it, with the node's
// HostState applied.
type Host struct {
	Node string
	OS   string // hybrid.OSLinux or hybrid.OSWindows
	// Info is what the kubelet reports about the machine (the Node's
	// status.nodeInfo).
	Info corev1.NodeSystemInfo
	// Services the host runs, sorted by name as Get-Service lists them.
	Services []Service
	// Containerd is containerd's effective configuration.
	Containerd Containerd
	// Kubelet is how the kubelet is started and configured.
	Kubelet Kubelet
	// Dirs are the directories the join's scripts and kubeadm create.
	Dirs []string
	// ClockOffset is how far the host's clock runs from the control
	// plane's (HostState spec.clockOffset).
	ClockOffset time.Duration
	// KubeletStuck: the kubelet stopped making progress after the
	// vSwitch came up (HostState spec.kubeletStuck).
	KubeletStuck bool
}

// For models the host of the named node of a built twin. The kubelet's
// configuration is the engine's effective one for the node (kubeadm's
// cluster configuration with the host's patches), with the kubelet's own
// defaults for the node's OS applied on top.
func For(c *model.Cluster, node string) (*Host, error) {
	var n *corev1.Node
	for _, x := range c.Nodes {
		if x.Name == node {
			n = x
			break
		}
	}
	if n == nil {
		return nil, fmt.Errorf("node %q not found", node)
	}
	h := &Host{Node: node, OS: n.Labels[corev1.LabelOSStable], Info: n.Status.NodeInfo}
	if h.OS == "" {
		h.OS = n.Status.NodeInfo.OperatingSystem
	}
	if h.OS != hybrid.OSWindows {
		h.OS = hybrid.OSLinux
	}
	st := c.HostStates[node]
	h.Services = services(h.OS, st)
	h.Containerd = containerdConfig(h.OS, runtimeVersion(n.Status.NodeInfo.ContainerRuntimeVersion))
	kl, err := kubelet(c, h, n)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	h.Kubelet = kl
	h.Dirs = dirs(h.OS)
	if st != nil {
		if st.Spec.ClockOffset != "" {
			d, err := time.ParseDuration(st.Spec.ClockOffset)
			if err != nil {
				return nil, fmt.Errorf("HostState %s: spec.clockOffset: %w", node, err)
			}
			h.ClockOffset = d
		}
		h.KubeletStuck = st.Spec.KubeletStuck
	}
	return h, nil
}

// Service returns the named service, or false.
func (h *Host) Service(name string) (Service, bool) {
	for _, s := range h.Services {
		if s.Name == name {
			return s, true
		}
	}
	return Service{}, false
}

// runtimeVersion is the version of a runtime://version string
// ("containerd://2.2.2" → "2.2.2").
func runtimeVersion(s string) string {
	_, v, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	return strings.TrimPrefix(v, "v")
}

// effective is the KubeletConfiguration the engine derived for a node,
// or an empty one.
func effective(c *model.Cluster, node string) *kubeletv1beta1.KubeletConfiguration {
	if kc := c.Kubeadm.NodeKubelet[node]; kc != nil {
		return kc.DeepCopy()
	}
	return &kubeletv1beta1.KubeletConfiguration{}
}
