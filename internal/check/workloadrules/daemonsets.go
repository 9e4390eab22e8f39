package workloadrules

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// DaemonSets: Linux DaemonSets that reach Windows nodes, and kube-proxy on
// Windows.
func DaemonSetRules() []rule.Rule {
	return []rule.Rule{ruleLinuxDaemonSetOnWindows, ruleLinuxDaemonSetNoSelector, ruleKubeProxyWindowsMissing, ruleKubeProxySourceVIP, ruleKubeProxyDSR}
}

// plannedWindowsNode stands for the Windows node a cluster expects: the
// seed's labels and its os=windows:NoSchedule taint.
func plannedWindowsNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "<planned Windows node>", Labels: map[string]string{
			corev1.LabelOSStable: hybrid.OSWindows, corev1.LabelArchStable: "amd64", corev1.LabelWindowsBuild: "10.0.26100", "kubernetes.io/hostname": "planned-windows-node",
		}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "os", Value: hybrid.OSWindows, Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: hybrid.OSWindows, KernelVersion: "10.0.26100"},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// unpinnedLinuxDaemonSets are the DaemonSets that do not pin themselves to
// an OS and run no Windows image: Linux DaemonSets without a
// kubernetes.io/os=linux selector. For each, onto lists the Windows nodes
// (existing, else the planned one) the DaemonSet controller would place a
// pod on.
func unpinnedLinuxDaemonSets(x *rule.Context) []unpinned {
	targets := x.WindowsNodes()
	planned := false
	if len(targets) == 0 {
		targets, planned = []*corev1.Node{plannedWindowsNode()}, true
	}
	var out []unpinned
	for _, ds := range x.Cluster.DaemonSets {
		spec := &ds.Spec.Template.Spec
		if rule.SpecTargetsOS(spec, x.Idx().Runtimes, hybrid.OSLinux) || rule.SpecTargetsOS(spec, x.Idx().Runtimes, hybrid.OSWindows) ||
			rule.HostProcess(spec) || rule.WindowsOnlyImages(spec) {
			continue
		}
		out = append(out, unpinned{ds: ds, onto: scheduler.DaemonSetNodes(ds, targets), planned: planned})
	}
	return out
}

type unpinned struct {
	ds      *appsv1.DaemonSet
	onto    []string
	planned bool
}

func dsKey(ds *appsv1.DaemonSet) model.Key {
	return model.Key{Group: "apps", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}
}

func linuxSelectorPatch(ds *appsv1.DaemonSet) string {
	return fmt.Sprintf(`kubectl -n %s patch daemonset %s --type=merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`, ds.Namespace, ds.Name)
}

var ruleLinuxDaemonSetOnWindows = rule.Rule{
	ID: "HYB045", Name: "linux-daemonset-on-windows", Severity: rule.Error, Blocker: true,
	Title:    "Linux DaemonSet without an OS selector tolerates the Windows taint",
	Examines: []string{"DaemonSet.apps", "Node"},
	Description: `System DaemonSets often tolerate every taint so that they run on all nodes; then the Windows
taint does not stop them, and only nodeSelector kubernetes.io/os: linux keeps them on Linux. A
DaemonSet without it gets a pod on every Windows node, with a Linux image that never pulls
(ErrImagePull for ever): a node-exporter chart with overridden values is a common case. When no
Windows node exists yet, the rule tests the DaemonSet against one with the
os=windows:NoSchedule taint.`,
	Remediation: `kubectl -n <ns> patch daemonset <name> --type=merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sDaemonSet, rule.K8sTaints, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, u := range unpinnedLinuxDaemonSets(x) {
			if len(u.onto) == 0 {
				continue
			}
			where := "Windows node " + rule.ListNames(u.onto, 3)
			if u.planned {
				where = "a Windows node tainted os=windows:NoSchedule once one joins"
			}
			out = append(out, rule.Finding{Object: dsKey(u.ds), Field: "spec.template.spec.nodeSelector",
				Message: fmt.Sprintf("DaemonSet %s/%s has no kubernetes.io/os=linux selector and its tolerations let it onto %s, where its Linux image cannot run",
					u.ds.Namespace, u.ds.Name, where),
				Remediation: linuxSelectorPatch(u.ds)})
		}
		return out
	},
}

var ruleLinuxDaemonSetNoSelector = rule.Rule{
	ID: "HYB046", Name: "linux-daemonset-no-os-selector", Severity: rule.Info,
	Title:    "Linux DaemonSet relies on the Windows taint alone",
	Examines: []string{"DaemonSet.apps", "Node"},
	Description: `The DaemonSet stays off Windows nodes only because it does not tolerate their taint. A later
toleration (a chart upgrade, values that add "operator: Exists") or a Windows node joined without
the taint puts it there. Every DaemonSet with a Linux image should say nodeSelector
kubernetes.io/os: linux itself, as kubeadm's kube-proxy and the operator's calico-node do.`,
	Remediation: `kubectl -n <ns> patch daemonset <name> --type=merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sDaemonSet},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, u := range unpinnedLinuxDaemonSets(x) {
			if len(u.onto) > 0 {
				continue
			}
			out = append(out, rule.Finding{Object: dsKey(u.ds), Field: "spec.template.spec.nodeSelector",
				Message:     fmt.Sprintf("DaemonSet %s/%s has no kubernetes.io/os=linux selector; only the Windows node taint keeps it off Windows nodes", u.ds.Namespace, u.ds.Name),
				Remediation: linuxSelectorPatch(u.ds)})
		}
		return out
	},
}

// isKubeProxy: the workload runs kube-proxy (by name or image).
func isKubeProxy(w *rule.Workload) bool {
	if strings.Contains(w.Key.Name, "kube-proxy") {
		return true
	}
	found := false
	rule.EachContainer(w.Spec, func(c *corev1.Container, _ string) {
		repo := c.Image
		if i := strings.LastIndex(repo, "/"); i >= 0 {
			repo = repo[i+1:]
		}
		if strings.HasPrefix(repo, "kube-proxy") {
			found = true
		}
	})
	return found
}

// winProxy is a kube-proxy workload for Windows nodes with what its command
// line sets.
type winProxy struct {
	w *rule.Workload
	// path is the container whose command line was read.
	path string
	// script: sig-windows-tools' start.ps1, which adds --source-vip on
	// overlay networks and always --enable-dsr=true.
	script, sourceVIP, dsr, config bool
}

func windowsKubeProxies(x *rule.Context) []winProxy {
	var out []winProxy
	for _, w := range x.Idx().Workloads {
		if w.Key.Kind != "DaemonSet" || !w.Windows() || !isKubeProxy(w) {
			continue
		}
		p := winProxy{w: w}
		rule.EachContainer(w.Spec, func(c *corev1.Container, path string) {
			if strings.HasPrefix(path, "init") {
				return
			}
			args := append(append([]string{}, c.Command...), c.Args...)
			line := strings.Join(args, " ")
			if p.path == "" || strings.Contains(line, "kube-proxy") || strings.Contains(line, "start.ps1") {
				p.path = path
			}
			p.script = p.script || strings.Contains(line, "start.ps1")
			p.config = p.config || strings.Contains(line, "--config")
			p.sourceVIP = p.sourceVIP || strings.Contains(line, "--source-vip")
			for _, a := range args {
				if a == "--enable-dsr" || a == "--enable-dsr=true" {
					p.dsr = true
				}
			}
		})
		out = append(out, p)
	}
	return out
}

const kubeProxyWindowsInstall = `curl -sL https://raw.githubusercontent.com/kubernetes-sigs/sig-windows-tools/master/hostprocess/calico/kube-proxy/kube-proxy.yml | sed 's/KUBE_PROXY_VERSION/<cluster version>/g' | kubectl apply -f -`

var ruleKubeProxyWindowsMissing = rule.Rule{
	ID: "HYB047", Name: "kube-proxy-windows-missing", Severity: rule.Error,
	Title:    "No kube-proxy runs on a Windows node",
	Examines: []string{"DaemonSet.apps", "Pod", "Node"},
	Needs:    rule.NeedNodes,
	Description: `kubeadm's kube-proxy DaemonSet is Linux-only (nodeSelector kubernetes.io/os: linux, a Linux
image). A Windows node needs its own kube-proxy in a HostProcess pod, in winkernel (kernelspace)
mode, creating HNS load balancers for Services; without it Windows pods reach no Service, not
even DNS. sig-windows-tools publishes the DaemonSet kube-proxy-windows for Calico; it reuses
kube-proxy's ServiceAccount and ConfigMap.`,
	Remediation: kubeProxyWindowsInstall,
	References:  []rule.Reference{rule.RefKubeProxyHostProcess, rule.RefWinkernel, rule.K8sAddWindowsNodes, rule.SigWindowsKubeProxy},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		version := clusterKubeProxyVersion(x)
		for _, n := range x.WindowsNodes() {
			found := false
			for _, p := range x.Idx().PodsByNode[n.Name] {
				kind, name := rule.ControllerOf(p)
				if kind != "DaemonSet" {
					continue
				}
				if w := x.Idx().ByWorkload[model.Key{Group: "apps", Kind: "DaemonSet", Namespace: p.Namespace, Name: name}]; w != nil && isKubeProxy(w) {
					found = true
					break
				}
			}
			if !found {
				out = append(out, rule.Finding{Object: rule.NodeKey(n.Name),
					Message:     fmt.Sprintf("no kube-proxy pod runs on Windows node %s; Windows pods there reach no Service", n.Name),
					Remediation: strings.Replace(kubeProxyWindowsInstall, "<cluster version>", version, 1)})
			}
		}
		return out
	},
}

// clusterKubeProxyVersion is the version a Windows kube-proxy should run:
// kubeadm's kubernetesVersion, else the tag of the cluster's Linux
// kube-proxy image, else the oldest kubelet (kube-proxy must not be newer
// than kube-apiserver, https://kubernetes.io/releases/version-skew-policy/#kube-proxy,
// and no kubelet is newer than it); "<cluster version>" when nothing says.
func clusterKubeProxyVersion(x *rule.Context) string {
	if cc := x.Cluster.Kubeadm.Cluster; cc != nil && cc.KubernetesVersion != "" {
		return cc.KubernetesVersion
	}
	for _, ds := range x.Cluster.DaemonSets {
		if ds.Name != "kube-proxy" || ds.Namespace != "kube-system" {
			continue
		}
		for _, c := range ds.Spec.Template.Spec.Containers {
			if _, tag, ok := strings.Cut(c.Image[strings.LastIndex(c.Image, "/")+1:], ":"); ok && strings.HasPrefix(tag, "v") {
				return tag
			}
		}
	}
	var oldest *version.Version
	oldestText := ""
	for _, n := range x.Cluster.Nodes {
		v, err := version.ParseSemantic(n.Status.NodeInfo.KubeletVersion)
		if err != nil {
			continue
		}
		if oldest == nil || v.LessThan(oldest) {
			oldest, oldestText = v, n.Status.NodeInfo.KubeletVersion
		}
	}
	if oldest != nil {
		return oldestText
	}
	return "<cluster version>"
}

var ruleKubeProxySourceVIP = rule.Rule{
	ID: "HYB048", Name: "kube-proxy-windows-source-vip", Severity: rule.Error,
	Title:    "kube-proxy on Windows runs without --source-vip on an overlay network",
	Examines: []string{"DaemonSet.apps", "IPPool.projectcalico.org"},
	Description: `On an Overlay (VXLAN) network winkernel kube-proxy needs a source VIP, an address of the
node's pod subnet it sends Service traffic from when it has to rewrite the source; without it
kube-proxy exits ("source-vip flag not set"). sig-windows-tools' start.ps1 waits for Calico's
host endpoint Calico_ep and passes its address; a DaemonSet that starts kube-proxy.exe directly
must pass --source-vip itself.`,
	Remediation: `Run kube-proxy through sig-windows-tools' start.ps1 (image sigwindowstools/kube-proxy:<version>-calico-hostprocess), or pass --source-vip=<the Calico_ep address of the node's block>`,
	References:  []rule.Reference{rule.RefWinkernel, rule.RefKubeProxyHostProcess, rule.SigWindowsKubeProxy, rule.WinkernelProxier},
	Check: func(x *rule.Context) []rule.Finding {
		if len(rule.VXLANPools(x)) == 0 {
			return nil
		}
		var out []rule.Finding
		for _, p := range windowsKubeProxies(x) {
			if p.script || p.sourceVIP || p.config {
				continue
			}
			out = append(out, rule.Finding{Object: p.w.Key, Field: p.w.Path(p.path + ".args"),
				Message: fmt.Sprintf("%s starts kube-proxy on Windows without --source-vip; on Calico's Overlay network kube-proxy exits with \"source-vip flag not set\"", rule.ObjectString(p.w.Key))})
		}
		return out
	},
}

var ruleKubeProxyDSR = rule.Rule{
	ID: "HYB049", Name: "kube-proxy-windows-dsr", Severity: rule.Warning,
	Title:    "kube-proxy on Windows runs without --enable-dsr",
	Examines: []string{"DaemonSet.apps"},
	Description: `Direct Server Return lets the Windows node of the backend pod reverse the load balancing, so
replies go straight to the client and the pod sees the client's address. externalTrafficPolicy:
Local works on Windows only with DSR. The WinDSR gate is locked on since Kubernetes 1.34, but the
--enable-dsr=true flag is still what turns DSR on; sig-windows-tools' start.ps1 always passes it.`,
	Remediation: `Add --enable-dsr=true to the kube-proxy command line, or run it through sig-windows-tools' start.ps1`,
	References:  []rule.Reference{rule.RefWinkernel, rule.RefWindowsLimits, rule.SigWindowsKubeProxy, rule.WinkernelProxier},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, p := range windowsKubeProxies(x) {
			if p.script || p.dsr || p.config {
				continue
			}
			out = append(out, rule.Finding{Object: p.w.Key, Field: p.w.Path(p.path + ".args"),
				Message: fmt.Sprintf("%s starts kube-proxy on Windows without --enable-dsr=true; Services with externalTrafficPolicy: Local do not work on Windows nodes", rule.ObjectString(p.w.Key))})
		}
		return out
	},
}
