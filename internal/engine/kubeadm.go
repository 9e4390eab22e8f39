package engine

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// kubeadm's and the kubelet's defaults (kubeadm app/constants).
const (
	defaultMaxPods     = 110 // kubelet's default (pkg/kubelet/apis/config/v1beta1/defaults.go)
	linuxCRISocket     = "unix:///var/run/containerd/containerd.sock"
	windowsCRISocket   = "npipe:////./pipe/containerd-containerd"
	defaultServiceCIDR = "10.96.0.0/12"
	defaultDNSDomain   = "cluster.local"
)

// plannedHost is one host with the kubeadm documents it joins with.
type plannedHost struct {
	hybrid.Host
	controlPlane bool
	reg          kubeadm.NodeRegistration
	observed     *corev1.Node
}

// planHosts decides which machines join, in which order and with which
// kubeadm documents: from the Cluster kind's hosts when it lists any, else
// from the observed Node objects (a live cluster or `kubectl get nodes -o
// yaml`), ordered by creationTimestamp then name. A Cluster kind without
// hosts only describes the node network.
func planHosts(in *input) ([]plannedHost, error) {
	c := in.c
	observed := map[string]*corev1.Node{}
	for _, n := range c.Nodes {
		observed[n.Name] = n
	}
	if in.cluster == nil || len(in.cluster.Spec.Hosts) == 0 {
		nodes := append([]*corev1.Node(nil), c.Nodes...)
		sort.SliceStable(nodes, func(i, j int) bool {
			ti, tj := nodes[i].CreationTimestamp, nodes[j].CreationTimestamp
			if !ti.Equal(&tj) {
				return ti.Before(&tj)
			}
			return nodes[i].Name < nodes[j].Name
		})
		var out []plannedHost
		for _, n := range nodes {
			_, cp := n.Labels[wellknown.LabelControlPlane]
			out = append(out, plannedHost{Host: hostFromNode(n), controlPlane: cp, observed: n})
		}
		return out, nil
	}
	out := make([]plannedHost, 0, len(in.cluster.Spec.Hosts))
	seen := make(map[string]bool, len(in.cluster.Spec.Hosts))
	for i, h := range in.cluster.Spec.Hosts {
		if seen[h.Name] {
			return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].name: duplicate host %q", in.cluster.Name, i, h.Name)
		}
		seen[h.Name] = true
		p := plannedHost{Host: h, observed: observed[h.Name]}
		switch {
		case h.Join == "init" || (h.Join == "" && c.Kubeadm.Init != nil && nodeName(c.Kubeadm.Init.NodeRegistration.Name) == h.Name):
			if c.Kubeadm.Init == nil {
				return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].join: \"init\" but no InitConfiguration was given", in.cluster.Name, i)
			}
			p.controlPlane = true
			p.reg = c.Kubeadm.Init.NodeRegistration
		case h.Join != "":
			j := findJoin(c.Kubeadm.Joins, h.Join)
			if j == nil {
				return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].join: no JoinConfiguration named %q (by metadata.name or nodeRegistration.name)", in.cluster.Name, i, h.Join)
			}
			p.reg = j.NodeRegistration
			p.controlPlane = j.ControlPlane != nil
		}
		for k, name := range h.Patches {
			if _, ok := c.Kubeadm.KubeletPatches[name]; !ok {
				return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].patches[%d]: no kubelet patch file named %q", in.cluster.Name, i, k, name)
			}
		}
		if _, err := netip.ParseAddr(h.Address); err != nil {
			return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].address: %q is not an IP address", in.cluster.Name, i, h.Address)
		}
		if h.OS != hybrid.OSLinux && h.OS != hybrid.OSWindows {
			return nil, errorAt(in.clusterOrigin, "Cluster %s: spec.hosts[%d].os: Unsupported value: %q: supported values: \"linux\", \"windows\"", in.cluster.Name, i, h.OS)
		}
		out = append(out, p)
	}
	return out, nil
}

// nodeName is the name a host's Node registers under: kubeadm defaults
// nodeRegistration.name to the hostname and passes either through
// GetHostname, which trims and lower-cases it
// (cmd/kubeadm/app/util/config/initconfiguration.go
// SetNodeRegistrationDynamicDefaults; k8s.io/component-helpers/node/util
// GetHostname), as the kubelet does with its own hostname. Windows' default
// host names are upper case (WIN-A → win-a).
func nodeName(host string) string { return strings.ToLower(strings.TrimSpace(host)) }

// registeredNames renames the Cluster kind's hosts to the names their Nodes
// register under (nodeName), and the firewall rules' host lists with them,
// so that everything keyed by node name (Calico's host-seeded block walk,
// affinities, handles) sees the Node's name. A name kubeadm would refuse
// even then (not a DNS-1123 subdomain, ValidateNodeRegistration) is an
// input error.
func (b *builder) registeredNames() error {
	cl := b.in.cluster
	if cl == nil {
		return nil
	}
	for i := range cl.Spec.Hosts {
		h := &cl.Spec.Hosts[i]
		name := nodeName(h.Name)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return errorAt(b.in.clusterOrigin, "Cluster %s: spec.hosts[%d].name: Invalid value: %q: kubeadm registers the Node as %q, which is not a valid node name: %s",
				cl.Name, i, h.Name, name, strings.Join(errs, "; "))
		}
		if name == h.Name {
			continue
		}
		b.note(model.Info, model.Key{Group: hybrid.Group, Kind: "Cluster", Name: cl.Name},
			"host %s registers as Node %s: kubeadm and the kubelet lower-case the host name (GetHostname), and Calico keys its block walk and affinities by the Node's name", h.Name, name)
		for r := range cl.Spec.Network.Firewall {
			for k, hn := range cl.Spec.Network.Firewall[r].Hosts {
				if hn == h.Name {
					cl.Spec.Network.Firewall[r].Hosts[k] = name
				}
			}
		}
		h.Name = name
	}
	return nil
}

func findJoin(joins []*kubeadm.JoinConfiguration, name string) *kubeadm.JoinConfiguration {
	for _, j := range joins {
		if j.Name == name || j.NodeRegistration.Name == name || nodeName(j.NodeRegistration.Name) == nodeName(name) {
			return j
		}
	}
	return nil
}

// hostFromNode reads a host back from its Node as kubectl shows it.
func hostFromNode(n *corev1.Node) hybrid.Host {
	h := hybrid.Host{
		Name:             n.Name,
		OS:               n.Labels[corev1.LabelOSStable],
		Arch:             n.Labels[corev1.LabelArchStable],
		OSImage:          n.Status.NodeInfo.OSImage,
		KernelVersion:    n.Status.NodeInfo.KernelVersion,
		ContainerRuntime: n.Status.NodeInfo.ContainerRuntimeVersion,
		KubeletVersion:   n.Status.NodeInfo.KubeletVersion,
	}
	if h.OS == "" {
		h.OS = n.Status.NodeInfo.OperatingSystem
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && h.Address == "" {
			h.Address = a.Address
		}
	}
	if q, ok := n.Status.Capacity[corev1.ResourceCPU]; ok {
		h.CPU = q.String()
	}
	if q, ok := n.Status.Capacity[corev1.ResourceMemory]; ok {
		h.Memory = q.String()
	}
	h.Observed.VXLANTunnelMAC = n.Annotations[calico.AnnotationVXLANTunnelMACAddr]
	return h
}

// effectiveKubelet merges the cluster-wide KubeletConfiguration with the
// host's patches the way kubeadm does at join (strategic merge patch,
// kubeadm app/util/patches), then applies the kubelet defaults the twin uses.
// patches are the patch documents by name, as their files give them.
func effectiveKubelet(base *kubeletv1beta1.KubeletConfiguration, patches map[string][]byte, names []string) (*kubeletv1beta1.KubeletConfiguration, error) {
	cur := &kubeletv1beta1.KubeletConfiguration{}
	if base != nil {
		cur = base.DeepCopy()
	}
	for _, name := range names {
		orig, err := json.Marshal(cur)
		if err != nil {
			return nil, fmt.Errorf("kubelet configuration: %w", err)
		}
		patch := patches[name]
		merged, err := strategicpatch.StrategicMergePatch(orig, patch, kubeletv1beta1.KubeletConfiguration{})
		if err != nil {
			return nil, fmt.Errorf("kubelet patch %s: %w", name, err)
		}
		next := &kubeletv1beta1.KubeletConfiguration{}
		if err := json.Unmarshal(merged, next); err != nil {
			return nil, fmt.Errorf("kubelet patch %s: %w", name, err)
		}
		cur = next
	}
	if cur.MaxPods == 0 {
		cur.MaxPods = defaultMaxPods
	}
	return cur, nil
}

// windowsBuild is the node.kubernetes.io/windows-build label value: the
// major.minor.build part of the Windows version (kubelet
// pkg/kubelet/winstats/version.go reports the full one as kernelVersion).
func windowsBuild(kernel string) string {
	if b := hybrid.ParseWindowsKernel(kernel).Build; b != "" {
		return b
	}
	return kernel
}

// deriveNode builds the Node object the kubelet registers at kubeadm
// init/join, as `kubectl get node -o yaml` would show it once it is Ready.
func deriveNode(p plannedHost, kc *kubeletv1beta1.KubeletConfiguration, version string) (*corev1.Node, error) {
	arch := p.Arch
	if arch == "" {
		arch = "amd64"
	}
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name,
			Labels: map[string]string{
				// The kubelet's own labels (pkg/kubelet/kubelet_node_status.go).
				kubeletapis.LabelArch:  arch,
				kubeletapis.LabelOS:    p.OS,
				corev1.LabelArchStable: arch,
				corev1.LabelHostname:   p.Name,
				corev1.LabelOSStable:   p.OS,
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
	}
	if p.Observed.CreationTimestamp != nil {
		n.CreationTimestamp = *p.Observed.CreationTimestamp
	}
	if p.OS == hybrid.OSWindows {
		n.Labels[corev1.LabelWindowsBuild] = windowsBuild(p.KernelVersion)
	}
	if p.controlPlane {
		// kubeadm app/phases/markcontrolplane.
		n.Labels[wellknown.LabelControlPlane] = ""
		n.Labels[corev1.LabelNodeExcludeBalancers] = ""
	}
	n.Spec.Taints = nodeTaints(p)
	kubelet := p.KubeletVersion
	if kubelet == "" {
		kubelet = version
	}
	n.Status.NodeInfo = corev1.NodeSystemInfo{
		Architecture:            arch,
		OperatingSystem:         p.OS,
		OSImage:                 p.OSImage,
		KernelVersion:           p.KernelVersion,
		ContainerRuntimeVersion: p.ContainerRuntime,
		KubeletVersion:          kubelet,
	}
	// The kubelet's default port (pkg/kubelet/apis/config/v1beta1 defaults).
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = 10250
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: p.Address},
		{Type: corev1.NodeHostName, Address: p.Name},
	}
	capacity := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(kc.MaxPods), resource.DecimalSI)}
	if q, err := resource.ParseQuantity(p.CPU); err == nil && p.CPU != "" {
		capacity[corev1.ResourceCPU] = q
	}
	if q, err := resource.ParseQuantity(p.Memory); err == nil && p.Memory != "" {
		capacity[corev1.ResourceMemory] = q
	}
	// Allocatable is capacity less systemReserved, kubeReserved and the
	// hard eviction threshold, with the kubelet's defaults for the OS
	// (500Mi of memory on Windows, 100Mi on Linux).
	res, err := host.NodeResources(p.OS, capacity, kc)
	if err != nil {
		return nil, err
	}
	n.Status.Capacity = capacity
	n.Status.Allocatable = res.Allocatable
	return n, nil
}

// nodeTaints: kubeadm registers the node with nodeRegistration.taints; when
// the field is absent a control-plane node gets the control-plane taint
// (kubeadm app/apis/kubeadm/v1beta4/defaults.go SetDefaults_NodeRegistration).
func nodeTaints(p plannedHost) []corev1.Taint {
	if p.reg.Taints != nil {
		return append([]corev1.Taint(nil), (*p.reg.Taints)...)
	}
	if p.controlPlane {
		return []corev1.Taint{{Key: wellknown.TaintControlPlane, Effect: corev1.TaintEffectNoSchedule}}
	}
	return nil
}

// criSocket is kubeadm's CRI endpoint for the node: the one given, else the
// per-OS default (kubeadm app/constants/constants_unix.go, constants_windows.go).
func criSocket(p plannedHost) string {
	if p.reg.CRISocket != "" {
		return p.reg.CRISocket
	}
	if p.OS == hybrid.OSWindows {
		return windowsCRISocket
	}
	return linuxCRISocket
}

// podCIDRs hands out spec.podCIDR the way kube-controller-manager's range
// allocator does with kubeadm's --allocate-node-cidrs and the default
// --node-cidr-mask-size 24: the next free /24 of podSubnet in registration
// order (pkg/controller/nodeipam/ipam/cidrset). Calico IPAM ignores it.
func podCIDRs(podSubnet string, count int) []string {
	pfx, err := netip.ParsePrefix(strings.Split(podSubnet, ",")[0])
	if err != nil || !pfx.Addr().Is4() || pfx.Bits() > 24 {
		return nil
	}
	out := make([]string, 0, count)
	base := pfx.Masked().Addr().As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8
	total := 1 << (24 - pfx.Bits())
	for i := 0; i < count && i < total; i++ {
		v := start + uint32(i)<<8
		a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), 0})
		out = append(out, netip.PrefixFrom(a, 24).String())
	}
	return out
}

func originOf(c *model.Cluster, k model.Key) model.Origin { return c.Origins[k] }
