package host

import (
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// Service is one service as the service manager knows it.
type Service struct {
	Name        string
	DisplayName string
	// Status is hybrid.ServiceRunning or hybrid.ServiceStopped.
	Status string
	// StartType is Get-Service's word (hybrid.StartAutomatic, …); on Linux
	// Automatic is systemd's "enabled".
	StartType string
	// Registered says who made it a service and how it runs.
	Registered string
	// BinaryPath is the command line the service manager starts.
	BinaryPath string
	DependsOn  []string
	// Logs are the files the service's output goes to (Windows), or the
	// journal unit (Linux).
	Logs []string
}

// Running reports whether the service runs.
func (s Service) Running() bool { return s.Status == hybrid.ServiceRunning }

// Windows paths the join's scripts use (sig-windows-tools hostprocess
// PrepareNode.ps1 and Install-Containerd.ps1).
const (
	KubeletOutLog = `C:\var\log\kubelet\kubelet.out.log`
	KubeletErrLog = `C:\var\log\kubelet\kubelet.err.log`
	containerdDir = `C:\Program Files\containerd`
)

// services are the host's services as a healthy join leaves them, with
// the HostState's departures applied, sorted by name (Get-Service lists
// in the service database's order, which is by name).
func services(os string, st *hybrid.HostState) []Service {
	var out []Service
	if os == hybrid.OSWindows {
		out = []Service{
			{
				// Install-Containerd.ps1 runs `containerd --register-service`;
				// containerd registers itself to start automatically
				// (cmd/containerd/command/service_windows.go).
				Name: hybrid.ServiceContainerd, DisplayName: "containerd", StartType: hybrid.StartAutomatic,
				Registered: "containerd.exe --register-service (answers the service control manager itself, runs as LocalSystem)",
				BinaryPath: `"` + containerdDir + `\containerd.exe" --run-service`,
			},
			{
				// PrepareNode.ps1: nssm install kubelet, DependOnService
				// containerd, output to C:\var\log\kubelet, rotated daily or
				// at 10 MB; nssm's default start type is automatic. The
				// service is started by kubeadm join.
				Name: hybrid.ServiceKubelet, DisplayName: "kubelet", StartType: hybrid.StartAutomatic,
				Registered: `nssm (C:\k\nssm.exe) running powershell C:\k\StartKubelet.ps1`,
				BinaryPath: `C:\k\nssm.exe`,
				DependsOn:  []string{hybrid.ServiceContainerd},
				Logs:       []string{KubeletOutLog, KubeletErrLog},
			},
			{
				// Windows' own services, brought by the Containers feature;
				// demand-started when containerd's shim or the CNI calls them.
				Name: hybrid.ServiceHNS, DisplayName: "Host Network Service", StartType: hybrid.StartManual,
				Registered: "Windows (Containers feature)", BinaryPath: `C:\Windows\system32\svchost.exe -k NetSvcs -p`,
			},
			{
				Name: hybrid.ServiceVMCompute, DisplayName: "Hyper-V Host Compute Service", StartType: hybrid.StartManual,
				Registered: "Windows (Containers feature)", BinaryPath: `C:\Windows\system32\vmcompute.exe`,
			},
		}
	} else {
		out = []Service{
			{
				// containerd's release unit (containerd/containerd.service),
				// enabled at install.
				Name: hybrid.ServiceContainerd, DisplayName: "containerd container runtime", StartType: hybrid.StartAutomatic,
				Registered: "systemd unit /usr/lib/systemd/system/containerd.service",
				BinaryPath: "/usr/bin/containerd", Logs: []string{"containerd.service"},
			},
			{
				// The kubelet package's unit with kubeadm's drop-in
				// 10-kubeadm.conf (kubernetes/release cmd/krel/templates).
				Name: hybrid.ServiceKubelet, DisplayName: "kubelet: The Kubernetes Node Agent", StartType: hybrid.StartAutomatic,
				Registered: "systemd unit /usr/lib/systemd/system/kubelet.service, drop-in /usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
				BinaryPath: "/usr/bin/kubelet", Logs: []string{"kubelet.service"},
			},
		}
	}
	for i := range out {
		out[i].Status = hybrid.ServiceRunning
	}
	if st != nil {
		for _, d := range st.Spec.Services {
			for i := range out {
				if out[i].Name != d.Name {
					continue
				}
				out[i].Status = d.Status
				if d.StartType != "" {
					out[i].StartType = d.StartType
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
