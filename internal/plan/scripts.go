package plan

import (
	"fmt"
	"strings"
)

// The sig-windows-tools scripts the Kubernetes guide uses
// (https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/adding-windows-nodes/).
// They live on master, which changes: pin a commit you have read.
const (
	installContainerdURL = "https://raw.githubusercontent.com/kubernetes-sigs/sig-windows-tools/master/hostprocess/Install-Containerd.ps1"
	prepareNodeURL       = "https://raw.githubusercontent.com/kubernetes-sigs/sig-windows-tools/master/hostprocess/PrepareNode.ps1"
	kubeletConf          = `C:\etc\kubernetes\kubelet.conf`
	scriptDir            = `C:\k\plan`
)

// script is one host step's PowerShell. Each is written so that running it
// again after it succeeded changes nothing: every change either sets a value
// (the same value again is no change) or runs behind a Where-Object that
// reads the state first. The project's PowerShell reader reads every one.
type script struct {
	id, path, title, body, idempotent string
}

func ps(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func scripts(v Inputs, n NodeRequest) []script {
	sources := strings.Join(firewallSources(v), ", ")
	var out []script
	host := []string{"$ErrorActionPreference = 'Stop'"}
	if v.Domain != "" {
		host = append(host, fmt.Sprintf("Set-ItemProperty -Path 'HKLM:\\SYSTEM\\CurrentControlSet\\Services\\Tcpip\\Parameters' -Name 'NV Domain' -Value '%s'", v.Domain))
	}
	host = append(host, fmt.Sprintf("'Rename-Computer -NewName %s -Restart' | Where-Object { $env:COMPUTERNAME -ne '%s' } | Invoke-Expression", n.Name, n.Name))
	out = append(out, script{id: "host-name", title: "Name the host " + n.Name, body: ps(host...),
		idempotent: "sets the DNS suffix to the same value; renames and restarts only while the computer name differs"})
	out = append(out, script{id: "time", title: "Synchronise time with " + v.NTPServer, body: ps(
		"$ErrorActionPreference = 'Stop'",
		fmt.Sprintf(`w32tm /config /manualpeerlist:"%s,0x8" /syncfromflags:manual /update`, v.NTPServer),
		"Restart-Service -Name w32time",
		"w32tm /resync"),
		idempotent: "writes the same time source again and resynchronises"})
	out = append(out, script{id: "containers", title: "Install the Containers feature", body: ps(
		"$ErrorActionPreference = 'Stop'",
		"Get-WindowsFeature -Name Containers | Where-Object { -not $_.Installed } | Install-WindowsFeature"),
		idempotent: "installs the feature only while it is not installed"})
	out = append(out, script{id: "firewall", title: "Open the kube-proxy health port to the node network", body: ps(
		"$ErrorActionPreference = 'Stop'",
		"$rule = Get-NetFirewallRule -Name kube-proxy-health -ErrorAction SilentlyContinue",
		fmt.Sprintf(`"New-NetFirewallRule -Name kube-proxy-health -DisplayName 'kube-proxy health' -Direction Inbound -Protocol TCP -LocalPort 10256 -RemoteAddress %s -Action Allow" | Where-Object { -not $rule } | Invoke-Expression`, sources),
		fmt.Sprintf("Get-NetFirewallRule -Name kube-proxy-health | Set-NetFirewallRule -RemoteAddress %s", sources)),
		idempotent: "creates the rule only when it is missing, then sets its sources to the same list"})
	out = append(out, script{id: "containerd", title: "Install containerd " + v.Containerd, body: ps(
		"$ErrorActionPreference = 'Stop'",
		`New-Item -ItemType Directory -Force -Path C:\k | Out-Null`,
		`Set-Location -Path C:\k`,
		"curl.exe -LO "+installContainerdURL,
		"$containerd = Get-Service -Name containerd -ErrorAction SilentlyContinue",
		fmt.Sprintf(`'.\Install-Containerd.ps1 -ContainerDVersion %s -crictlVersion %s -skipHypervisorSupportCheck' | Where-Object { -not $containerd } | Invoke-Expression`, v.Containerd, v.Crictl)),
		idempotent: "runs Install-Containerd.ps1 only while the containerd service does not exist (the first run enables Hyper-V and asks for a restart: restart and run the script again)"})
	out = append(out, script{id: "kubelet", title: "Install kubelet and kubeadm " + v.Version, body: ps(
		"$ErrorActionPreference = 'Stop'",
		`Set-Location -Path C:\k`,
		"curl.exe -LO "+prepareNodeURL,
		"$kubelet = Get-Service -Name kubelet -ErrorAction SilentlyContinue",
		fmt.Sprintf(`'.\PrepareNode.ps1 -KubernetesVersion %s' | Where-Object { -not $kubelet } | Invoke-Expression`, v.Version),
		fmt.Sprintf("Get-NetFirewallRule -Name kubelet | Set-NetFirewallRule -RemoteAddress %s", sources)),
		idempotent: "runs PrepareNode.ps1 only while the kubelet service does not exist; narrows the kubelet rule PrepareNode.ps1 opens to everyone to the same sources again"})
	out = append(out, script{id: "join", title: "Join the cluster", body: ps(
		"$ErrorActionPreference = 'Stop'",
		"$joined = Test-Path -Path "+kubeletConf,
		fmt.Sprintf(`'kubeadm join --config %s' | Where-Object { -not $joined } | Invoke-Expression`, joinPath),
		"$joinedNow = Test-Path -Path "+kubeletConf,
		fmt.Sprintf("Get-Item -Path %s -ErrorAction SilentlyContinue | Where-Object { $joinedNow } | Remove-Item", joinPath)),
		idempotent: "joins only while " + kubeletConf + " does not exist; removes join.yaml (it holds the token) once joined"})
	for i := range out {
		out[i].path = fmt.Sprintf(`%s\%02d-%s.ps1`, scriptDir, i+1, out[i].id)
	}
	return out
}
