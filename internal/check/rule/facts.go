package rule

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	calicooperator "github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// InstKey is the key of an Installation.
func InstKey(inst *operator.Installation) model.Key {
	return model.Key{Group: operator.Group, Kind: "Installation", Name: inst.Name}
}

// CalicoNetwork is the Installation's calicoNetwork, empty when unset.
func CalicoNetwork(inst *operator.Installation) *operator.CalicoNetworkSpec {
	if inst == nil || inst.Spec.CalicoNetwork == nil {
		return &operator.CalicoNetworkSpec{}
	}
	return inst.Spec.CalicoNetwork
}

// CalicoCNI: the Installation uses Calico CNI (the default).
func CalicoCNI(inst *operator.Installation) bool {
	cni := inst.Spec.CNI
	return cni == nil || cni.Type == "" || cni.Type == calicooperator.PluginCalico
}

// CalicoIPAM: Calico CNI with Calico IPAM (the default).
func CalicoIPAM(inst *operator.Installation) bool {
	if !CalicoCNI(inst) {
		return false
	}
	cni := inst.Spec.CNI
	return cni == nil || cni.IPAM == nil || cni.IPAM.Type == "" || cni.IPAM.Type == calicooperator.IPAMCalico
}

// BgpState is the effective calicoNetwork.bgp and whether it was written
// (the operator defaults it to Enabled for Calico CNI outside EKS).
func BgpState(inst *operator.Installation) (enabled, explicit bool) {
	cn := CalicoNetwork(inst)
	if cn.BGP != nil {
		return *cn.BGP == calicooperator.BGPEnabled, true
	}
	return CalicoCNI(inst) && inst.Spec.KubernetesProvider != "EKS", false
}

// IsIPv6 reports whether a CIDR or address is IPv6.
func IsIPv6(cidr string) bool { return strings.Contains(cidr, ":") }

// PoolEncapsulation is the pool's encapsulation after the operator's
// defaulting: IPIP for an IPv4 pool of Calico CNI, None otherwise.
func PoolEncapsulation(inst *operator.Installation, p operator.IPPool) string {
	if p.Encapsulation != "" {
		return p.Encapsulation
	}
	if CalicoCNI(inst) && !IsIPv6(p.CIDR) {
		return operator.EncapIPIP
	}
	return operator.EncapNone
}

// UnmanagedPools are observed IP pools the operator does not own.
func UnmanagedPools(x *Context) []*calico.IPPool {
	var out []*calico.IPPool
	for _, p := range x.Cluster.IPPools {
		k := model.Key{Group: calico.Group, Kind: "IPPool", Name: p.Name}
		if x.Cluster.Observed(k) && p.Labels["app.kubernetes.io/managed-by"] != "tigera-operator" {
			out = append(out, p)
		}
	}
	return out
}

// PoolKey is the key of an IP pool.
func PoolKey(p *calico.IPPool) model.Key {
	return model.Key{Group: calico.Group, Kind: "IPPool", Name: p.Name}
}

// VXLANPools names the IPv4 pools that use VXLAN, from the Installation
// and the unmanaged pools.
func VXLANPools(x *Context) []string {
	var out []string
	if inst := x.Cluster.Installation; inst != nil {
		for _, p := range CalicoNetwork(inst).IPPools {
			if enc := PoolEncapsulation(inst, p); !IsIPv6(p.CIDR) && strings.HasPrefix(enc, operator.EncapVXLAN) {
				out = append(out, fmt.Sprintf("%s (%s)", p.Name, enc))
			}
		}
	}
	for _, p := range UnmanagedPools(x) {
		if _, vx := calicooperator.EffectiveModes(p); vx != calico.ModeNever && !p.Spec.Disabled {
			out = append(out, fmt.Sprintf("%s (vxlanMode %s)", p.Name, vx))
		}
	}
	return out
}

// VXLANAlways reports whether some enabled pool encapsulates between every
// pair of nodes.
func VXLANAlways(x *Context) bool {
	for _, p := range x.Cluster.IPPools {
		if _, vx := calicooperator.EffectiveModes(p); vx == calico.ModeAlways && !p.Spec.Disabled {
			return true
		}
	}
	return false
}

// UsesCalico: the input describes a Calico install.
func UsesCalico(x *Context) bool {
	c := x.Cluster
	return c.Installation != nil || c.IPAMConfig != nil || len(c.IPPools) > 0
}

// ServiceSubnets are kubeadm's networking.serviceSubnet (default
// 10.96.0.0/12), nil without a kubeadm configuration.
func ServiceSubnets(c *model.Cluster) []string {
	if c.Kubeadm.Cluster == nil && c.Kubeadm.Init == nil {
		return nil
	}
	s := "10.96.0.0/12"
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.ServiceSubnet != "" {
		s = cc.Networking.ServiceSubnet
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(part))
	}
	return out
}

// APIEndpoint is the API server's address as the nodes reach it: kubeadm's
// controlPlaneEndpoint, else the init node's advertise address, with the
// port (6443 unless set).
func APIEndpoint(c *model.Cluster) (host, port string) {
	port = "6443"
	if in := c.Kubeadm.Init; in != nil {
		if in.LocalAPIEndpoint.BindPort != 0 {
			port = strconv.Itoa(int(in.LocalAPIEndpoint.BindPort))
		}
		host = in.LocalAPIEndpoint.AdvertiseAddress
	}
	if cc := c.Kubeadm.Cluster; cc != nil && cc.ControlPlaneEndpoint != "" {
		h, p, ok := strings.Cut(cc.ControlPlaneEndpoint, ":")
		host = h
		if ok && p != "" {
			port = p
		}
	}
	return host, port
}

// WindowsVersion splits a node's Windows version into its build
// ("10.0.26100") and update revision (33438, or -1 when unknown).
func WindowsVersion(n *corev1.Node) (build string, rev int) {
	kernel, _, _ := strings.Cut(strings.TrimSpace(n.Status.NodeInfo.KernelVersion), " ")
	k := hybrid.ParseWindowsKernel(kernel)
	build, rev = k.Build, k.Revision
	if b := n.Labels[corev1.LabelWindowsBuild]; b != "" {
		if b != build {
			rev = -1
		}
		build = b
	}
	return build, rev
}

// linuxProbeNode is a Linux node for telling Windows-only images apart.
var linuxProbeNode = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{corev1.LabelOSStable: hybrid.OSLinux}}}

// WindowsOnlyImages: some container's image cannot run on Linux.
func WindowsOnlyImages(spec *corev1.PodSpec) bool {
	win := false
	EachContainer(spec, func(c *corev1.Container, _ string) {
		if ok, _ := scheduler.ImageFitsNode(c.Image, linuxProbeNode); !ok {
			win = true
		}
	})
	return win
}

// NodeKey is the key of the Node named name.
func NodeKey(name string) model.Key { return model.Key{Kind: "Node", Name: name} }
