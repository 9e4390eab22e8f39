package host

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Flag is one command-line flag, --Name=Value.
type Flag struct{ Name, Value string }

func (f Flag) String() string { return "--" + f.Name + "=" + f.Value }

// Kubelet is how the host starts and configures its kubelet.
type Kubelet struct {
	// KubeadmFlags are the flags kubeadm writes to kubeadm-flags.env
	// (KUBELET_KUBEADM_ARGS) at init or join.
	KubeadmFlags []Flag
	// ServiceFlags are the flags the service adds on every start:
	// StartKubelet.ps1's on Windows, the 10-kubeadm.conf drop-in's on Linux.
	ServiceFlags []Flag
	// Config is the effective KubeletConfiguration: kubeadm's cluster
	// configuration with the host's patches (the engine's), the node's
	// instance configuration, the service flags that override config
	// fields, and the kubelet's defaults for the OS that decide
	// allocatable.
	Config *kubeletv1beta1.KubeletConfiguration
	// EnvFile, ConfigFile: where kubeadm writes them on this host.
	EnvFile, ConfigFile string
	// Binary is the kubelet's path.
	Binary string
	// Resources is the node-allocatable arithmetic.
	Resources Resources
}

// EnvFileText is kubeadm-flags.env as kubeadm writes it: one line,
// KUBELET_KUBEADM_ARGS="<flags>" (cmd/kubeadm/app/phases/kubelet/flags.go
// WriteKubeletArgsToFile, Go's %q).
func (k Kubelet) EnvFileText() string {
	args := make([]string, len(k.KubeadmFlags))
	for i, f := range k.KubeadmFlags {
		args[i] = f.String()
	}
	return fmt.Sprintf("KUBELET_KUBEADM_ARGS=%q\n", strings.Join(args, " "))
}

// CommandLine is the kubelet's command line as the service starts it:
// the binary, kubeadm-flags.env's flags, then the service's own
// (StartKubelet.ps1 puts $global:KubeletArgs first; 10-kubeadm.conf's
// ExecStart puts the kubeconfig and config flags first).
func (k Kubelet) CommandLine(os string) []string {
	out := []string{k.Binary}
	add := func(fs []Flag) {
		for _, f := range fs {
			out = append(out, f.String())
		}
	}
	if os == hybrid.OSWindows {
		add(k.KubeadmFlags)
		add(k.ServiceFlags)
	} else {
		add(k.ServiceFlags)
		add(k.KubeadmFlags)
	}
	return out
}

// kubeadm's constants (cmd/kubeadm/app/constants/constants.go): the
// default image repository and the pause image's version (v1.34 on).
const (
	defaultImageRepository = "registry.k8s.io"
	kubeadmPauseVersion    = "3.10.1"
)

func kubelet(c *model.Cluster, h *Host, n *corev1.Node) (Kubelet, error) {
	k := Kubelet{Config: effective(c, h.Node)}
	reg, joining := registration(c, h.Node)
	version := kubernetesVersion(c, n)
	// NodeLocalCRISocket (kubeadm app/features/features.go, beta and on by
	// default from v1.35): the CRI endpoint moves from kubeadm-flags.env
	// to the node's instance-config.yaml (containerRuntimeEndpoint).
	nodeLocalCRI := versionAtLeast(version, 1, 35)
	cri := c.Kubeadm.CRISockets[h.Node]
	if cri == "" {
		cri = reg.CRISocket
	}
	if !nodeLocalCRI && cri != "" {
		k.KubeadmFlags = append(k.KubeadmFlags, Flag{"container-runtime-endpoint", cri})
	} else if cri != "" {
		k.Config.ContainerRuntimeEndpoint = cri
	}
	repo := defaultImageRepository
	if cc := c.Kubeadm.Cluster; cc != nil && cc.ImageRepository != "" {
		repo = cc.ImageRepository
	}
	// buildKubeletArgsCommon: the pause image, the taints at join
	// (registerTaintsUsingFlags is true for join, false for init, which
	// taints through markcontrolplane), hostname-override only when the
	// node name differs from the host name (the twin's hosts are named as
	// their nodes).
	k.KubeadmFlags = append(k.KubeadmFlags, Flag{"pod-infra-container-image", repo + "/pause:" + kubeadmPauseVersion})
	if joining && reg.Taints != nil && len(*reg.Taints) > 0 {
		var ts []string
		for _, t := range *reg.Taints {
			ts = append(ts, t.ToString())
		}
		k.KubeadmFlags = append(k.KubeadmFlags, Flag{"register-with-taints", strings.Join(ts, ",")})
	}
	// kubeletExtraArgs override by name (kubeadm util ArgumentsToCommand,
	// which sorts by name).
	for _, a := range reg.KubeletExtraArgs {
		replaced := false
		for i := range k.KubeadmFlags {
			if k.KubeadmFlags[i].Name == a.Name {
				k.KubeadmFlags[i].Value, replaced = a.Value, true
			}
		}
		if !replaced {
			k.KubeadmFlags = append(k.KubeadmFlags, Flag{a.Name, a.Value})
		}
	}
	sort.SliceStable(k.KubeadmFlags, func(i, j int) bool { return k.KubeadmFlags[i].Name < k.KubeadmFlags[j].Name })

	if h.OS == hybrid.OSWindows {
		// PrepareNode.ps1's StartKubelet.ps1 (sig-windows-tools
		// hostprocess): there is no cgroup hierarchy, so the kubelet is
		// told not to build one or enforce allocatable through it (job
		// objects bound each container instead); DNS goes to the HNS
		// endpoint, not a resolv.conf.
		k.Binary = `C:\k\kubelet.exe`
		k.EnvFile, k.ConfigFile = `C:\var\lib\kubelet\kubeadm-flags.env`, `C:\var\lib\kubelet\config.yaml`
		k.ServiceFlags = []Flag{
			{"config", "/var/lib/kubelet/config.yaml"},
			{"bootstrap-kubeconfig", "/etc/kubernetes/bootstrap-kubelet.conf"},
			{"kubeconfig", "/etc/kubernetes/kubelet.conf"},
			{"hostname-override", h.Node},
			{"cgroups-per-qos", "false"},
			{"enforce-node-allocatable", `""`},
			{"resolv-conf", `""`},
		}
		f := false
		k.Config.CgroupsPerQOS = &f
		k.Config.EnforceNodeAllocatable = []string{}
		k.Config.ResolverConfig = new(string)
	} else {
		// kubeadm's drop-in for the kubelet package's unit
		// (kubernetes/release: 10-kubeadm.conf).
		k.Binary = "/usr/bin/kubelet"
		k.EnvFile, k.ConfigFile = "/var/lib/kubelet/kubeadm-flags.env", "/var/lib/kubelet/config.yaml"
		k.ServiceFlags = []Flag{
			{"bootstrap-kubeconfig", "/etc/kubernetes/bootstrap-kubelet.conf"},
			{"kubeconfig", "/etc/kubernetes/kubelet.conf"},
			{"config", "/var/lib/kubelet/config.yaml"},
		}
		// The kubelet's own defaults (pkg/kubelet/apis/config/v1beta1/defaults.go).
		if k.Config.CgroupsPerQOS == nil {
			t := true
			k.Config.CgroupsPerQOS = &t
		}
		if k.Config.EnforceNodeAllocatable == nil {
			k.Config.EnforceNodeAllocatable = []string{"pods"}
		}
	}
	k.Config.EvictionHard = EvictionHard(h.OS, k.Config)
	res, err := NodeResources(h.OS, n.Status.Capacity, k.Config)
	if err != nil {
		return Kubelet{}, err
	}
	k.Resources = res
	return k, nil
}

// registration is the kubeadm NodeRegistration the node joined with, and
// whether it joined (rather than ran init): the Cluster kind's host names
// the document, else the InitConfiguration or a JoinConfiguration of the
// node's name.
func registration(c *model.Cluster, node string) (kubeadm.NodeRegistration, bool) {
	join := ""
	for _, h := range c.Hosts {
		if h.Name == node {
			join = h.Join
		}
	}
	if in := c.Kubeadm.Init; in != nil && (join == "init" || (join == "" && strings.EqualFold(in.NodeRegistration.Name, node))) {
		return in.NodeRegistration, false
	}
	for _, j := range c.Kubeadm.Joins {
		if (join != "" && (j.Name == join || j.NodeRegistration.Name == join)) ||
			(join == "" && strings.EqualFold(j.NodeRegistration.Name, node)) {
			return j.NodeRegistration, true
		}
	}
	return kubeadm.NodeRegistration{}, true
}

// kubernetesVersion is the cluster's version: kubeadm's, else the node's
// kubelet's.
func kubernetesVersion(c *model.Cluster, n *corev1.Node) string {
	if cc := c.Kubeadm.Cluster; cc != nil && cc.KubernetesVersion != "" {
		return cc.KubernetesVersion
	}
	return n.Status.NodeInfo.KubeletVersion
}

// versionAtLeast compares "v1.37.2" with major.minor; an unreadable
// version counts as new.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return true
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return ma > major || (ma == major && mi >= minor)
}

// dirs are the directories the join creates on the host.
func dirs(os string) []string {
	if os == hybrid.OSWindows {
		// PrepareNode.ps1 (C:\k, the kubelet's log and config trees, a pki
		// link from the kubelet's tree to C:\etc\kubernetes\pki) and
		// Install-Containerd.ps1 (containerd, the CNI directories).
		return []string{
			`C:\k`,
			`C:\var\log\kubelet`,
			`C:\var\lib\kubelet\etc\kubernetes`,
			`C:\var\lib\kubelet\etc\kubernetes\pki -> C:\etc\kubernetes\pki`,
			`C:\etc\kubernetes\pki`,
			`C:\etc\kubernetes\manifests`,
			containerdDir,
			`C:\opt\cni\bin`,
			`C:\etc\cni\net.d`,
		}
	}
	return []string{
		"/etc/kubernetes/manifests",
		"/etc/kubernetes/pki",
		"/var/lib/kubelet",
		"/opt/cni/bin",
		"/etc/cni/net.d",
	}
}
