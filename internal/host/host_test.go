package host_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func lab(t *testing.T, files ...string) *model.Cluster {
	t.Helper()
	s, err := load.Load(load.Options{Lab: true, Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func labHost(t *testing.T, node string, files ...string) *host.Host {
	t.Helper()
	h, err := host.For(lab(t, files...), node)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestServicesAsTheJoinLeavesThem(t *testing.T) {
	tests := []struct {
		name  string
		node  string
		files []string
		want  string // name status starttype, by name
	}{
		{"the Windows node runs containerd, hns, the kubelet and vmcompute", "k8s-lab-win-1", nil,
			"containerd Running Automatic, hns Running Manual, kubelet Running Automatic, vmcompute Running Manual"},
		{"a Linux node runs containerd and the kubelet", "k8s-lab-node-1", nil,
			"containerd Running Automatic, kubelet Running Automatic"},
		{"a HostState stops containerd and changes its start type", "k8s-lab-win-1", []string{"testdata/containerd-stopped.yaml"},
			"containerd Stopped Manual, hns Running Manual, kubelet Running Automatic, vmcompute Running Manual"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := labHost(t, tt.node, tt.files...)
			var got []string
			for _, s := range h.Services {
				got = append(got, s.Name+" "+s.Status+" "+s.StartType)
			}
			if g := strings.Join(got, ", "); g != tt.want {
				t.Errorf("services\n got: %s\nwant: %s", g, tt.want)
			}
		})
	}
}

func TestTheWindowsKubeletRunsThroughNssmAfterContainerd(t *testing.T) {
	h := labHost(t, "k8s-lab-win-1")
	s, ok := h.Service(hybrid.ServiceKubelet)
	if !ok || !strings.Contains(s.Registered, "nssm") || len(s.DependsOn) != 1 || s.DependsOn[0] != hybrid.ServiceContainerd {
		t.Errorf("kubelet service %+v: want nssm, depending on containerd", s)
	}
	if len(s.Logs) != 2 || s.Logs[1] != host.KubeletErrLog {
		t.Errorf("kubelet logs %v", s.Logs)
	}
}

func TestKubeadmFlagsAsKubeadmWritesThem(t *testing.T) {
	tests := []struct {
		name, node, want string
	}{
		{"the Windows join registers its taint through the flags", "k8s-lab-win-1",
			`KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10.1 --register-with-taints=os=windows:NoSchedule"` + "\n"},
		{"the init node does not (markcontrolplane taints it)", "k8s-lab-master-1",
			`KUBELET_KUBEADM_ARGS="--pod-infra-container-image=registry.k8s.io/pause:3.10.1"` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labHost(t, tt.node).Kubelet.EnvFileText(); got != tt.want {
				t.Errorf("kubeadm-flags.env\n got: %s\nwant: %s", got, tt.want)
			}
		})
	}
}

func TestTheWindowsKubeletHasNoCgroupsAndTheLabPatch(t *testing.T) {
	h := labHost(t, "k8s-lab-win-1")
	kc := h.Kubelet.Config
	if kc.CgroupsPerQOS == nil || *kc.CgroupsPerQOS || len(kc.EnforceNodeAllocatable) != 0 {
		t.Errorf("cgroupsPerQOS %v enforceNodeAllocatable %v: StartKubelet.ps1 turns both off", kc.CgroupsPerQOS, kc.EnforceNodeAllocatable)
	}
	if kc.MaxPods != 60 {
		t.Errorf("maxPods %d, want the lab patch's 60", kc.MaxPods)
	}
	if kc.EvictionHard["memory.available"] != "500Mi" {
		t.Errorf("evictionHard %v, want the Windows default", kc.EvictionHard)
	}
	if kc.ContainerRuntimeEndpoint != "npipe:////./pipe/containerd-containerd" {
		t.Errorf("containerRuntimeEndpoint %q", kc.ContainerRuntimeEndpoint)
	}
	cmd := strings.Join(h.Kubelet.CommandLine(h.OS), " ")
	for _, f := range []string{`--cgroups-per-qos=false`, `--enforce-node-allocatable=""`, `--resolv-conf=""`, `--hostname-override=k8s-lab-win-1`} {
		if !strings.Contains(cmd, f) {
			t.Errorf("command line %s lacks %s", cmd, f)
		}
	}
}

// The lines of the Windows dump that the filter
// ^version|default_runtime_name|runhcs-wcow-process\]|runtime_type|bin_dirs|conf_dir|sandbox =
// selects: containerd's own defaults and what Install-Containerd.ps1 sets.
func TestTheWindowsContainerdDumpHasTheHandlersAndCNIDirs(t *testing.T) {
	dump := labHost(t, "k8s-lab-win-1").Containerd.Dump()
	re := regexp.MustCompile(`^version|default_runtime_name|runhcs-wcow-process\]|runtime_type|bin_dirs|conf_dir|sandbox =`)
	var got []string
	for _, l := range strings.Split(dump, "\n") {
		if re.MatchString(l) {
			got = append(got, l)
		}
	}
	want := []string{
		"version = 3",
		"      sandbox = 'registry.k8s.io/pause:3.10.1'",
		"      default_runtime_name = 'runhcs-wcow-process'",
		"          runtime_type = 'io.containerd.runhcs.v1'",
		"          cni_conf_dir = ''",
		"        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runhcs-wcow-process]",
		"          runtime_type = 'io.containerd.runhcs.v1'",
		"          cni_conf_dir = ''",
		"      bin_dirs = ['c:/opt/cni/bin']",
		"      conf_dir = 'c:/etc/cni/net.d'",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("filtered dump\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAnUnknownNodeHasNoHost(t *testing.T) {
	if _, err := host.For(lab(t), "k8s-lab-win-9"); err == nil {
		t.Error("For succeeded for a node the twin does not have")
	}
}
