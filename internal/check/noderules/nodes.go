package noderules

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Nodes: how Windows nodes join (kubeadm, kubelet), their runtime, version
// and readiness, and their kubelet certificates.
func NodeRules() []rule.Rule {
	return []rule.Rule{
		ruleWindowsTaint, ruleMaxPodsExceedsBlock, ruleMaxPodsDefault, ruleContainerd, ruleNetBIOSName,
		ruleCSRPending, ruleNodeNotReady,
	}
}

// lifecycleTaints are the taints the node lifecycle controller and the
// cloud provider manage; they do not keep workloads off a node for good.
var lifecycleTaints = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeUnschedulable: true,
	corev1.TaintNodeNetworkUnavailable: true, corev1.TaintNodeMemoryPressure: true, corev1.TaintNodeDiskPressure: true,
	corev1.TaintNodePIDPressure: true, corev1.TaintNodeOutOfService: true, "node.cloudprovider.kubernetes.io/uninitialized": true,
}

// joinOf is the JoinConfiguration a host joins with, and its key.
func joinOf(x *rule.Context, node string) (*kubeadm.JoinConfiguration, *model.Key) {
	h := x.Host(node)
	if h == nil || h.Join == "" || h.Join == "init" {
		return nil, nil
	}
	for _, j := range x.Cluster.Kubeadm.Joins {
		if j.Name == h.Join || j.NodeRegistration.Name == h.Join {
			name := j.Name
			if name == "" {
				name = j.NodeRegistration.Name
			}
			return j, &model.Key{Group: kubeadm.Group, Kind: "JoinConfiguration", Name: name}
		}
	}
	return nil, nil
}

// nodeSource is what a derived node comes from: its JoinConfiguration, else
// the Cluster kind.
func nodeSource(x *rule.Context, node string) *model.Key {
	if _, k := joinOf(x, node); k != nil {
		return k
	}
	return x.ClusterKindKey()
}

var ruleWindowsTaint = rule.Rule{
	ID: "HYB020", Name: "windows-taint-missing", Severity: rule.Error,
	Title:    "Windows node joined without a NoSchedule taint",
	Examines: []string{"Node", "JoinConfiguration.kubeadm.k8s.io"},
	Needs:    rule.NeedNodes,
	Description: `A Windows node must be tainted from its first second: between registration and a later
kubectl taint the scheduler places anything without a nodeSelector there (a Deployment, a chart
written for Linux), and those pods never start, because a Linux image has no Windows variant.
kubeadm registers the taints of the JoinConfiguration's nodeRegistration.taints at join;
os=windows:NoSchedule is the convention of the Kubernetes documentation, and the Windows
RuntimeClass tolerates it.`,
	Remediation: `JoinConfiguration:
nodeRegistration:
  taints:
  - key: os
    value: windows
    effect: NoSchedule
(a joined node: kubectl taint nodes <node> os=windows:NoSchedule)`,
	References: []rule.Reference{rule.RefWindowsJoin, rule.RefWindowsScheduling, rule.K8sWindowsGuide, rule.K8sTaints},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			tainted := false
			for _, t := range n.Spec.Taints {
				if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !lifecycleTaints[t.Key] {
					tainted = true
				}
			}
			if tainted {
				continue
			}
			f := rule.Finding{Object: rule.NodeKey(n.Name), Field: "spec.taints", Source: nodeSource(x, n.Name),
				Message: fmt.Sprintf("Windows node %s has no NoSchedule or NoExecute taint; pods without a Windows nodeSelector can be scheduled there and fail to pull Linux images", n.Name),
				Remediation: fmt.Sprintf(`kubectl taint nodes %s os=windows:NoSchedule
and in its JoinConfiguration: nodeRegistration.taints: [{key: os, value: windows, effect: NoSchedule}]`, n.Name)}
			if _, jk := joinOf(x, n.Name); jk != nil && !x.Cluster.Observed(rule.NodeKey(n.Name)) {
				f.Object, f.Field, f.Source = *jk, "nodeRegistration.taints", nil
				f.Message = fmt.Sprintf("JoinConfiguration of Windows node %s registers it without a NoSchedule taint; pods without a Windows nodeSelector can be scheduled there and fail to pull Linux images", n.Name)
			}
			out = append(out, f)
		}
		return out
	},
}

// maxPodsOf is a node's maxPods: the effective kubelet configuration of a
// node the twin joined (with where it was set, if it was), or the observed
// node's allocatable pods.
type maxPodsOf struct {
	value    int
	explicit bool
	// key and field of the object that sets it; nil when nothing does.
	key   *model.Key
	field string
}

func maxPods(x *rule.Context, n *corev1.Node) maxPodsOf {
	c := x.Cluster
	h := x.Host(n.Name)
	if h == nil || c.Observed(rule.NodeKey(n.Name)) || c.Kubeadm.NodeKubelet[n.Name] == nil {
		q := n.Status.Allocatable.Pods()
		if q.IsZero() {
			q = n.Status.Capacity.Pods()
		}
		k := rule.NodeKey(n.Name)
		return maxPodsOf{value: int(q.Value()), explicit: true, key: &k, field: "status.allocatable.pods"}
	}
	mp := maxPodsOf{value: int(c.Kubeadm.NodeKubelet[n.Name].MaxPods)}
	for i := len(h.Patches) - 1; i >= 0; i-- {
		if p := c.Kubeadm.KubeletPatches[h.Patches[i]]; p != nil && p.MaxPods != 0 {
			mp.explicit, mp.field = true, "maxPods"
			mp.key = &model.Key{Group: kubeletv1beta1.GroupName, Kind: "KubeletConfiguration", Name: h.Patches[i]}
			return mp
		}
	}
	if kc := c.Kubeadm.Kubelet; kc != nil && kc.MaxPods != 0 {
		mp.explicit, mp.field = true, "maxPods"
		mp.key = clusterKubeletKey(x)
	}
	return mp
}

// clusterKubeletKey is the cluster-wide KubeletConfiguration's key: the one
// that is not a per-node patch.
func clusterKubeletKey(x *rule.Context) *model.Key {
	ix := x.Idx()
	if ix.KubeletKeyDone {
		return ix.KubeletKey
	}
	ix.KubeletKeyDone = true
	c := x.Cluster
	for k := range c.Origins {
		if k.Group != kubeletv1beta1.GroupName || k.Kind != "KubeletConfiguration" {
			continue
		}
		if _, patch := c.Kubeadm.KubeletPatches[k.Name]; patch {
			continue
		}
		kk := k
		if ix.KubeletKey == nil || rule.KeyLess(kk, *ix.KubeletKey) {
			ix.KubeletKey = &kk
		}
	}
	return ix.KubeletKey
}

// nodeBlock is the IPAM block size a node's pods get addresses from: the
// block Calico gave it, else the smallest block of the enabled IPv4 pools
// whose nodeSelector selects it, and that pool (nil for a block).
func nodeBlock(x *rule.Context, n *corev1.Node) (bits int, where string, pool *calico.IPPool) {
	if b := x.Idx().BlockOf(n.Name, x.Cluster); b != "" {
		if p, err := netip.ParsePrefix(b); err == nil {
			return p.Bits(), "its block " + b, nil
		}
	}
	for _, p := range x.Cluster.IPPools {
		if p.Spec.Disabled || rule.IsIPv6(p.Spec.CIDR) {
			continue
		}
		if ok, err := selector.Matches(p.Spec.NodeSelector, n.Labels); err != nil || !ok {
			continue
		}
		bs := p.Spec.BlockSize
		if bs == 0 {
			bs = 26
		}
		if bs > bits {
			bits, where, pool = bs, fmt.Sprintf("IP pool %s's blockSize %d", p.Name, bs), p
		}
	}
	return bits, where, pool
}

// blockSizeFix is the way to a usable block size for the Windows nodes.
// A pool the operator renders from the Installation is changed there: the
// operator reverts an edit of the IPPool itself (tigera/operator
// pkg/controller/ippool/pool_controller.go reconciles the pools it owns).
func blockSizeFix(x *rule.Context, pool *calico.IPPool) string {
	const why = "blockSize cannot change once the pool hands out blocks"
	inst := x.Cluster.Installation
	if pool == nil || inst == nil || pool.Labels["app.kubernetes.io/managed-by"] != "tigera-operator" {
		return "an IP pool with blockSize 29 or less selecting the Windows nodes (" + why + ": add a new pool, move the nodes to it, then delete the old one)"
	}
	old := "<index>"
	for i, p := range rule.CalicoNetwork(inst).IPPools {
		if p.Name == pool.Name {
			old = fmt.Sprint(i)
		}
	}
	return fmt.Sprintf(`The operator owns IP pool %[2]s, so the change goes through Installation %[1]s (%[3]s):
kubectl patch installation %[1]s --type=json -p '[{"op":"add","path":"/spec/calicoNetwork/ipPools/-","value":{"name":"windows-ipv4-ippool","cidr":"<unused IPv4 CIDR>","blockSize":26,"encapsulation":"VXLAN","natOutgoing":"Enabled","nodeSelector":"kubernetes.io/os == "windows""}}]'
kubectl patch installation %[1]s --type=json -p '[{"op":"replace","path":"/spec/calicoNetwork/ipPools/%[4]s/nodeSelector","value":"kubernetes.io/os != "windows""}]'
then drain and uncordon each Windows node so that its pods take addresses from the new pool`, inst.Name, pool.Name, why, old)
}

// usableWindows is what a Windows node's single block leaves for pods: the
// Windows CNI reserves the network address, the HNS gateway (.1), the host
// endpoint Calico_ep (.2) and the last address.
func usableWindows(bits int) int { return 1<<(32-bits) - 4 }

func maxPodsPatch(usable int) string {
	return fmt.Sprintf(`C:\k\patches\kubeletconfiguration.yaml on the node (JoinConfiguration patches.directory: C:\k\patches):
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
maxPods: %d
(a joined node: kubeadm upgrade node --patches C:\k\patches, then Restart-Service kubelet)`, usable)
}

var ruleMaxPodsExceedsBlock = rule.Rule{
	ID: "HYB021", Name: "windows-maxpods-exceeds-block", Severity: rule.Error,
	Title:    "Windows maxPods is larger than one IPAM block can address",
	Examines: []string{"KubeletConfiguration.kubelet.config.k8s.io", "Node", "IPPool.projectcalico.org", "IPAMBlock.projectcalico.org"},
	Needs:    rule.NeedNodes,
	Description: `A Windows node gets exactly one block (kube-proxy on Windows supports one subnet per HNS
network) and never borrows, and Calico reserves four of its addresses: the network address, the
HNS gateway (.1), Calico_ep (.2) and the last address. A /26 leaves 60. With a higher maxPods the
scheduler keeps sending pods that get no address. blockSize cannot change once the pool hands
out blocks, so lower maxPods instead. A blockSize above 29 leaves no address at all: Calico IPAM
gives a Windows node no block from such a pool, and the rule says so instead.`,
	Remediation: maxPodsPatch(60),
	References:  []rule.Reference{rule.RefWindowsJoin, rule.RefStrictAffinity, rule.CalicoLimitations, rule.K8sKubeadmPatches},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			mp := maxPods(x, n)
			bits, where, pool := nodeBlock(x, n)
			if bits != 0 && usableWindows(bits) <= 0 {
				// Calico IPAM gives such a node no block at all
				// (libcalico-go lib/ipam/ipam.go getMaxPrefixLen).
				out = append(out, rule.Finding{Object: rule.NodeKey(n.Name), Field: "spec", Source: nodeSource(x, n.Name),
					Remediation: blockSizeFix(x, pool),
					Message: fmt.Sprintf("Windows node %s: %s makes /%d blocks of %d address(es), no more than the 4 Calico reserves on Windows; Calico IPAM assigns such a node no block (the longest block prefix it accepts is /29)",
						n.Name, where, bits, 1<<(32-bits))})
				continue
			}
			if !mp.explicit || bits == 0 || mp.value <= usableWindows(bits) {
				continue
			}
			f := rule.Finding{Object: *mp.key, Field: mp.field, Remediation: maxPodsPatch(usableWindows(bits)),
				Message: fmt.Sprintf("maxPods of Windows node %s is %d, but %s leaves %d pod addresses (block of %d minus 4 Windows reservations)",
					n.Name, mp.value, where, usableWindows(bits), 1<<(32-bits))}
			out = append(out, f)
		}
		return out
	},
}

var ruleMaxPodsDefault = rule.Rule{
	ID: "HYB022", Name: "windows-maxpods-default", Severity: rule.Error,
	Title:    "Windows maxPods left at the kubelet default of 110",
	Examines: []string{"Node", "KubeletConfiguration.kubelet.config.k8s.io", "JoinConfiguration.kubeadm.k8s.io", "IPPool.projectcalico.org"},
	Needs:    rule.NeedNodes,
	Description: `The kubelet's default maxPods (110) is sized for Linux nodes that can hold several blocks. A
Windows node's single block addresses 60 pods at blockSize 26, so the 61st pod is scheduled but
gets no address. kubeadm does not keep per-node kubelet patches in the cluster: the Windows
node's patch directory is passed at join and again at every kubeadm upgrade node.`,
	Remediation: maxPodsPatch(60),
	References:  []rule.Reference{rule.RefWindowsJoin, rule.RefStrictAffinity, rule.K8sKubeadmPatches},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			mp := maxPods(x, n)
			bits, where, _ := nodeBlock(x, n)
			if mp.explicit || bits == 0 || usableWindows(bits) <= 0 || mp.value <= usableWindows(bits) {
				continue
			}
			out = append(out, rule.Finding{Object: rule.NodeKey(n.Name), Field: "status.allocatable.pods", Source: nodeSource(x, n.Name),
				Remediation: maxPodsPatch(usableWindows(bits)),
				Message: fmt.Sprintf("Windows node %s keeps the kubelet default maxPods %d (no kubelet configuration or patch sets it), but %s leaves %d pod addresses",
					n.Name, mp.value, where, usableWindows(bits))})
		}
		return out
	},
}

// runtimeVersion splits "containerd://1.7.1" into name and major, minor.
func runtimeVersion(s string) (name string, major, minor int, ok bool) {
	name, v, found := strings.Cut(s, "://")
	if !found {
		return "", 0, 0, false
	}
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 {
		return name, 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return name, a, b, err1 == nil && err2 == nil
}

var ruleContainerd = rule.Rule{
	ID: "HYB023", Name: "windows-containerd-version", Severity: rule.Error,
	Title:    "Windows node runs a container runtime older than containerd 1.6",
	Examines: []string{"Node", "Cluster.hybrid.kubectl-hybrid.io"},
	Needs:    rule.NeedNodes,
	Description: `calico-node-windows and kube-proxy-windows are HostProcess pods, which need containerd 1.6 or
later; Calico for Windows' operator install requires it, and Kubernetes has had no Docker
runtime since 1.24.`,
	Remediation: `.\Install-Containerd.ps1 -ContainerDVersion 2.2.2 -crictlVersion 1.37.0 -skipHypervisorSupportCheck (sig-windows-tools hostprocess), then rejoin the node`,
	References:  []rule.Reference{rule.RefCalicoOperator, rule.CalicoRequirements, rule.K8sHostProcess},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			rt := n.Status.NodeInfo.ContainerRuntimeVersion
			if rt == "" {
				continue
			}
			name, major, minor, ok := runtimeVersion(rt)
			if name == "containerd" && (!ok || major > 1 || (major == 1 && minor >= 6)) {
				continue
			}
			out = append(out, rule.Finding{Object: rule.NodeKey(n.Name), Field: "status.nodeInfo.containerRuntimeVersion",
				Message: fmt.Sprintf("Windows node %s runs %s; HostProcess pods (calico-node-windows, kube-proxy-windows) need containerd 1.6 or later", n.Name, rt)})
		}
		return out
	},
}

var ruleNetBIOSName = rule.Rule{
	ID: "HYB024", Name: "windows-node-name-length", Severity: rule.Warning,
	Title:    "Windows node name is longer than 15 characters",
	Examines: []string{"Node", "JoinConfiguration.kubeadm.k8s.io"},
	Needs:    rule.NeedNodes,
	Description: `The node name comes from the computer name, and a Windows computer name (its NetBIOS name)
has at most 15 characters. sig-windows-tools' StartKubelet.ps1 passes the computer name as
--hostname-override, so a longer name in the JoinConfiguration or in the inventory does not match
the Node the kubelet registers.`,
	Remediation: `Rename-Computer -NewName <at most 15 characters> -Restart, and use the same name in the JoinConfiguration's nodeRegistration.name`,
	References:  []rule.Reference{rule.RefNodeName, rule.K8sAddWindowsNodes},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			if len(n.Name) <= 15 {
				continue
			}
			out = append(out, rule.Finding{Object: rule.NodeKey(n.Name), Field: "metadata.name", Source: nodeSource(x, n.Name),
				Message: fmt.Sprintf("Windows node name %s has %d characters; a Windows computer name has at most 15, and the kubelet registers under the computer name", n.Name, len(n.Name))})
		}
		return out
	},
}

func csrDecided(r *certv1.CertificateSigningRequest) bool {
	for _, c := range r.Status.Conditions {
		if c.Type == certv1.CertificateApproved || c.Type == certv1.CertificateDenied || c.Type == certv1.CertificateFailed {
			return true
		}
	}
	return false
}

var ruleCSRPending = rule.Rule{
	ID: "HYB025", Name: "kubelet-serving-csr-pending", Severity: rule.Warning,
	Title:    "kubelet-serving CSR is pending",
	Examines: []string{"CertificateSigningRequest.certificates.k8s.io"},
	Description: `With serverTLSBootstrap: true a kubelet asks for its serving certificate with a CSR that
nobody approves automatically. Until it is approved the kubelet has no serving certificate:
kubectl logs and exec to its pods fail with "remote error: tls: internal error" and
metrics-server never becomes Ready. Check the names and addresses in the request before
approving. Only observed CSRs are checked; the ones the twin derives are its assumption.`,
	Remediation: `kubectl get csr <name> -o jsonpath='{.spec.request}' | base64 -d | openssl req -noout -text | grep -A1 'Subject Alternative'; kubectl certificate approve <name>`,
	References:  []rule.Reference{rule.RefServingCerts, rule.RefWindowsJoin, rule.K8sServingCerts},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, r := range x.Cluster.CSRs {
			k := model.Key{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest", Name: r.Name}
			if r.Spec.SignerName != certv1.KubeletServingSignerName || csrDecided(r) || !x.Cluster.Observed(k) {
				continue
			}
			out = append(out, rule.Finding{Object: k, Field: "status.conditions",
				Message: fmt.Sprintf("kubelet-serving CSR %s of %s is pending; kubectl logs and exec to that node's pods fail with tls: internal error until it is approved", r.Name, r.Spec.Username),
				Remediation: fmt.Sprintf(`kubectl get csr %s -o jsonpath='{.spec.request}' | base64 -d | openssl req -noout -text | grep -A1 'Subject Alternative'
kubectl certificate approve %s`, r.Name, r.Name)})
		}
		return out
	},
}

var ruleNodeNotReady = rule.Rule{
	ID: "HYB026", Name: "node-not-ready", Severity: rule.Error,
	Title:    "Node is NotReady",
	Examines: []string{"Node", "DaemonSet.apps"},
	Needs:    rule.NeedNodes,
	Description: `A node is Ready once its kubelet reports a working runtime and network: on both OSes the CNI
configuration exists only after the CNI's node agent ran (calico-node, calico-node-windows). A
NotReady node keeps the not-ready taints, and nothing but DaemonSet pods lands on it.`,
	Remediation: `kubectl describe node <node> (Conditions); for NetworkPluginNotReady see kubectl get tigerastatus and the calico-node(-windows) pod on the node`,
	References:  []rule.Reference{rule.RefWindowsTroubleshoot, rule.RefWindowsVersions, rule.K8sNodeStatus, rule.CalicoOperator},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.Cluster.Nodes {
			for _, cond := range n.Status.Conditions {
				if cond.Type != corev1.NodeReady || cond.Status == corev1.ConditionTrue {
					continue
				}
				out = append(out, rule.Finding{Object: rule.NodeKey(n.Name), Field: "status.conditions[Ready]",
					Message:     fmt.Sprintf("%s is NotReady (%s): %s", n.Name, cond.Reason, cond.Message),
					Remediation: fmt.Sprintf("kubectl describe node %s; kubectl get tigerastatus; kubectl -n calico-system get pods -o wide --field-selector spec.nodeName=%s", n.Name, n.Name)})
			}
		}
		return out
	},
}
