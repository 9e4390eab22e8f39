package hosttools

import (
	"crypto/sha256"
	"encoding/binary"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// hpcMount is where HCS mounts a HostProcess container's image
// (CONTAINER_SANDBOX_MOUNT_POINT with containerd 1.7+ and hcsshim's
// bind-mount behaviour).
const hpcMount = `C:\hpc`

// scriptChildren: the programs the HostProcess images' entry scripts
// start, by script (calico node/windows-packaging CalicoWindows
// felix-service.ps1 and node-service.ps1 run calico.exe; sig-windows-tools
// hostprocess/calico/kube-proxy/start.ps1 runs kube-proxy.exe).
var scriptChildren = map[string]string{
	"CalicoWindows/felix-service.ps1": `CalicoWindows\calico.exe`,
	"CalicoWindows/node-service.ps1":  `CalicoWindows\calico.exe`,
	"kube-proxy/start.ps1":            `kube-proxy\kube-proxy.exe`,
}

// containerSession are the processes every process-isolated Windows
// container runs in its own session besides its program: its session's
// system processes and the container execution agent CExecSvc.
var containerSession = []string{"CExecSvc", "csrss", "lsass", "services", "svchost", "wininit"}

type process struct {
	name, path string
	session    int
}

// processes are the node's processes the twin knows of: the host's
// services, each HostProcess container's program in session 0, and each
// process-isolated container's in a session of its own (numbered from 2
// in the order crictl lists the pods, oldest first; the real numbers are
// the order HCS made the containers in).
func processes(c *model.Cluster, h *host.Host) []process {
	var out []process
	for _, s := range h.Services {
		if !s.Running() {
			continue
		}
		switch s.Name {
		case hybrid.ServiceContainerd:
			out = append(out, process{"containerd", containerdPath, 0})
		case hybrid.ServiceKubelet:
			out = append(out, process{"nssm", `C:\k\nssm.exe`, 0}, process{"kubelet", `C:\k\kubelet.exe`, 0})
		}
	}
	pods := podsOn(c, h.Node)
	sort.SliceStable(pods, func(i, j int) bool { return podStart(pods[i]).Before(podStart(pods[j])) })
	session := 2
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, ct := range p.Spec.Containers {
			if isHostProcess(p, ct) {
				if prog := hostProcessProgram(ct); prog != "" {
					out = append(out, process{strings.TrimSuffix(path.Base(strings.ReplaceAll(prog, `\`, "/")), ".exe"), hpcMount + `\` + prog, 0})
				}
				continue
			}
			for _, n := range containerSession {
				out = append(out, process{n, "", session})
			}
			if name := programName(ct); name != "" {
				out = append(out, process{name, "", session})
			}
			session++
		}
	}
	return out
}

const containerdPath = `C:\Program Files\containerd\containerd.exe`

func isHostProcess(p *corev1.Pod, ct corev1.Container) bool {
	if sc := ct.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil {
		return *sc.WindowsOptions.HostProcess
	}
	if sc := p.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.HostProcess != nil {
		return *sc.WindowsOptions.HostProcess
	}
	return false
}

// hostProcessProgram is the program under the mount a HostProcess
// container runs: an .exe it names, or the one its entry script starts.
func hostProcessProgram(ct corev1.Container) string {
	for _, a := range append(append([]string{}, ct.Command...), ct.Args...) {
		rel, ok := strings.CutPrefix(a, "$env:CONTAINER_SANDBOX_MOUNT_POINT/")
		if !ok {
			continue
		}
		if child, ok := scriptChildren[rel]; ok {
			return child
		}
		if strings.HasSuffix(rel, ".exe") {
			return strings.ReplaceAll(rel, "/", `\`)
		}
	}
	return ""
}

// programName is a process-isolated container's program: its command's
// base name; "" when the image's entrypoint decides (not in the twin).
func programName(ct corev1.Container) string {
	if len(ct.Command) == 0 {
		return ""
	}
	return strings.TrimSuffix(path.Base(strings.ReplaceAll(ct.Command[0], `\`, "/")), ".exe")
}

// pid is a stand-in process ID (Windows hands out multiples of 4).
func pid(parts ...string) int {
	sum := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return 100 + int(binary.BigEndian.Uint32(sum[:4])%2400)*4
}

// getProcess is Get-Process [-Name names], sorted by name as it lists.
func getProcess(c *model.Cluster, node string, args map[string][]string) ([]*powershell.Object, string, error) {
	h, err := host.For(c, node)
	if err != nil {
		return nil, "", err
	}
	ps := processes(c, h)
	sort.SliceStable(ps, func(i, j int) bool { return strings.ToLower(ps[i].name) < strings.ToLower(ps[j].name) })
	names := args["name"]
	var out []*powershell.Object
	seen := map[string]int{}
	for _, p := range ps {
		hit := len(names) == 0
		for _, n := range names {
			if ok, _ := path.Match(strings.ToLower(n), strings.ToLower(p.name)); ok {
				hit = true
			}
		}
		if !hit {
			continue
		}
		seen[p.name+"/"+p.path]++
		o := powershell.NewObject("System.Diagnostics.Process", "Id", "SI", "ProcessName").
			Set("Id", pid(node, p.name, p.path, string(rune('0'+p.session)), string(rune('0'+seen[p.name+"/"+p.path])))).
			Set("SI", p.session).
			Set("SessionId", p.session).
			Set("ProcessName", p.name).
			Set("Path", p.path)
		out = append(out, o)
	}
	note := "kubectl-hybrid: process IDs are stand-ins and container session numbers follow the pods' order (HCS decides both); listed are the container services and the pods' processes, a container's program only when its command names it (an image's entrypoint is not in the twin)\n"
	return out, note, nil
}
