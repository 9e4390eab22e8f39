package noderules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// KubeletRules: the Windows kubelet's configuration as the cluster-wide
// KubeletConfiguration and the node's patches give it.
func KubeletRules() []rule.Rule {
	return []rule.Rule{ruleWindowsFeatureGate, ruleWindowsCgroups}
}

var (
	refK8sFeatureGatesRemoved = rule.Reference{Title: "Kubernetes: Feature gates (removed)", URL: "https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates-removed/"}
	refK8sWindowsKubelet      = rule.Reference{Title: "Kubernetes: Resource management for Windows nodes", URL: "https://kubernetes.io/docs/concepts/configuration/windows-resource-management/"}
	refK8sReserveCompute      = rule.Reference{Title: "Kubernetes: Reserve compute resources for system daemons", URL: "https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/"}
)

// withdrawnGate is a Windows feature gate the kubelet no longer honours:
// deprecated (accepted with a warning, guarding no code) from one
// release, removed (the kubelet exits: "unrecognized feature gate") from
// another (pkg/features/kube_features.go).
type withdrawnGate struct {
	deprecated, removed [2]int // major, minor; zero when not
	why                 string
}

var withdrawnGates = map[string]withdrawnGate{
	// KEP-3503 withdrawn: the implementation left in v1.33
	// (kubernetes/kubernetes#130250), the gate in v1.38 (#142018).
	"WindowsHostNetwork": {deprecated: [2]int{1, 33}, removed: [2]int{1, 38},
		why: "host network for Windows pods (KEP-3503) was withdrawn: Windows pods cannot use hostNetwork except as HostProcess pods"},
	// GA in v1.26, removed in v1.28 (kubernetes/kubernetes#117570).
	"WindowsHostProcessContainers": {removed: [2]int{1, 28},
		why: "HostProcess containers are GA and always on"},
}

// kubeletVersion is the node's kubelet major and minor ("v1.37.2").
func kubeletVersion(n *corev1.Node) ([2]int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(n.Status.NodeInfo.KubeletVersion, "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	return [2]int{a, b}, err1 == nil && err2 == nil
}

func atLeast(v, w [2]int) bool {
	return w != [2]int{} && (v[0] > w[0] || (v[0] == w[0] && v[1] >= w[1]))
}

// kubeletSetter is the kubelet configuration document that gives a
// Windows node's kubelet a setting: its last patch that does, else the
// cluster-wide KubeletConfiguration.
func kubeletSetter(x *rule.Context, node string, sets func(*kubeletv1beta1.KubeletConfiguration) bool) *model.Key {
	c := x.Cluster
	if h := x.Host(node); h != nil {
		for i := len(h.Patches) - 1; i >= 0; i-- {
			if p := c.Kubeadm.KubeletPatches[h.Patches[i]]; p != nil && sets(p) {
				return &model.Key{Group: kubeletv1beta1.GroupName, Kind: "KubeletConfiguration", Name: h.Patches[i]}
			}
		}
	}
	if kc := c.Kubeadm.Kubelet; kc != nil && sets(kc) {
		return clusterKubeletKey(x)
	}
	return nil
}

var ruleWindowsFeatureGate = rule.Rule{
	ID: "HYB090", Name: "windows-kubelet-feature-gate-withdrawn", Severity: rule.Error,
	Title:    "A Windows kubelet is given a feature gate that was withdrawn",
	Examines: []string{"KubeletConfiguration.kubelet.config.k8s.io", "Node"},
	Needs:    rule.NeedNodes,
	Description: `Feature gates end: a deprecated gate is still accepted, with a warning, but guards no code,
and once removed from the kubelet's registry the kubelet refuses to start with "unrecognized
feature gate" (k8s.io/component-base/featuregate). WindowsHostNetwork (KEP-3503) was withdrawn:
deprecated in v1.33, removed in v1.38; Windows pods get the host's network only as HostProcess
pods. WindowsHostProcessContainers went GA in v1.26 and was removed in v1.28. A gate set in the
cluster-wide KubeletConfiguration reaches every node; one set in a Windows node's patch, that
node only.`,
	Remediation: `Remove the gate from featureGates in the KubeletConfiguration that sets it (the kubelet-config
ConfigMap: kubeadm upgrade node on each node; a node's patch: C:\k\patches\kubeletconfiguration.yaml,
then kubeadm upgrade node --patches C:\k\patches), then Restart-Service kubelet`,
	References: []rule.Reference{refK8sFeatureGatesRemoved, rule.RefWindowsJoin, rule.K8sKubeadmPatches},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			kc := x.Cluster.Kubeadm.NodeKubelet[n.Name]
			v, ok := kubeletVersion(n)
			if kc == nil || !ok {
				continue
			}
			gates := make([]string, 0, len(kc.FeatureGates))
			for g := range kc.FeatureGates {
				gates = append(gates, g)
			}
			sort.Strings(gates)
			for _, g := range gates {
				w, known := withdrawnGates[g]
				if !known {
					continue
				}
				key := kubeletSetter(x, n.Name, func(k *kubeletv1beta1.KubeletConfiguration) bool { _, ok := k.FeatureGates[g]; return ok })
				if key == nil {
					continue
				}
				f := rule.Finding{Object: *key, Field: "featureGates." + g}
				switch {
				case atLeast(v, w.removed):
					f.Message = fmt.Sprintf("featureGates.%s reaches the kubelet v%d.%d of Windows node %s, which no longer knows the gate (removed in v%d.%d: %s): the kubelet exits with \"unrecognized feature gate: %s\" and the node goes NotReady",
						g, v[0], v[1], n.Name, w.removed[0], w.removed[1], w.why, g)
				case atLeast(v, w.deprecated):
					f.Severity = rule.Warning
					f.Message = fmt.Sprintf("featureGates.%s reaches the kubelet v%d.%d of Windows node %s, where the gate is deprecated and does nothing (%s); it is removed in v%d.%d, and the kubelet then refuses to start",
						g, v[0], v[1], n.Name, w.why, w.removed[0], w.removed[1])
				default:
					continue
				}
				out = append(out, f)
			}
		}
		return out
	},
}

var ruleWindowsCgroups = rule.Rule{
	ID: "HYB091", Name: "windows-kubelet-cgroup-settings", Severity: rule.Warning,
	Title:    "A Windows kubelet is configured to enforce node allocatable through cgroups",
	Examines: []string{"KubeletConfiguration.kubelet.config.k8s.io", "Node"},
	Needs:    rule.NeedNodes,
	Description: `Windows has no cgroups: each container is bounded by its own job object, and nothing enforces
node allocatable. The Windows kubelet refuses a configuration with cgroupsPerQOS true or a
non-empty enforceNodeAllocatable ("invalid configuration: ... is not supported on Windows",
pkg/kubelet/apis/config/validation/validation_windows.go); StartKubelet.ps1 passes
--cgroups-per-qos=false --enforce-node-allocatable="" for that reason, and the flags override the
file. So these settings, and systemReservedCgroup, kubeReservedCgroup and cgroupRoot, do nothing on
a Windows node started by PrepareNode.ps1 and stop a kubelet registered without the wrapper
(--windows-service). systemReserved and kubeReserved still lower allocatable, which is all the
scheduler sees.`,
	Remediation: `Keep cgroup settings out of what reaches the Windows node: set them in the Linux nodes' patches
rather than the cluster-wide KubeletConfiguration, or remove them from the Windows node's patch
(C:\k\patches\kubeletconfiguration.yaml, then kubeadm upgrade node --patches C:\k\patches)`,
	References: []rule.Reference{refK8sWindowsKubelet, refK8sReserveCompute, rule.RefWindowsJoin},
	Check: func(x *rule.Context) []rule.Finding {
		type setting struct {
			field string
			sets  func(*kubeletv1beta1.KubeletConfiguration) bool
			what  func(*kubeletv1beta1.KubeletConfiguration) string
		}
		settings := []setting{
			{"cgroupsPerQOS", func(k *kubeletv1beta1.KubeletConfiguration) bool { return k.CgroupsPerQOS != nil && *k.CgroupsPerQOS },
				func(*kubeletv1beta1.KubeletConfiguration) string { return "true" }},
			{"enforceNodeAllocatable", func(k *kubeletv1beta1.KubeletConfiguration) bool {
				return len(k.EnforceNodeAllocatable) > 0 && !(len(k.EnforceNodeAllocatable) == 1 && k.EnforceNodeAllocatable[0] == "none")
			}, func(k *kubeletv1beta1.KubeletConfiguration) string {
				return "[" + strings.Join(k.EnforceNodeAllocatable, ", ") + "]"
			}},
			{"systemReservedCgroup", func(k *kubeletv1beta1.KubeletConfiguration) bool { return k.SystemReservedCgroup != "" },
				func(k *kubeletv1beta1.KubeletConfiguration) string { return k.SystemReservedCgroup }},
			{"kubeReservedCgroup", func(k *kubeletv1beta1.KubeletConfiguration) bool { return k.KubeReservedCgroup != "" },
				func(k *kubeletv1beta1.KubeletConfiguration) string { return k.KubeReservedCgroup }},
			{"cgroupRoot", func(k *kubeletv1beta1.KubeletConfiguration) bool { return k.CgroupRoot != "" },
				func(k *kubeletv1beta1.KubeletConfiguration) string { return k.CgroupRoot }},
		}
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			kc := x.Cluster.Kubeadm.NodeKubelet[n.Name]
			if kc == nil {
				continue
			}
			for _, s := range settings {
				if !s.sets(kc) {
					continue
				}
				key := kubeletSetter(x, n.Name, s.sets)
				if key == nil {
					continue
				}
				out = append(out, rule.Finding{Object: *key, Field: s.field,
					Message: fmt.Sprintf("%s: %s reaches Windows node %s, which has no cgroups: StartKubelet.ps1's flags override it, and a kubelet started without them refuses the configuration (not supported on Windows); containers are bounded by job objects instead",
						s.field, s.what(kc), n.Name)})
			}
		}
		return out
	},
}
