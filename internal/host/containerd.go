package host

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// Containerd is containerd's effective configuration: its defaults for the
// OS (containerd 2.x, config version 3) with what the install changed.
type Containerd struct {
	Version string // the runtime's version, from the Node's containerRuntimeVersion
	// Address is the gRPC endpoint: a named pipe on Windows
	// (defaults/defaults_windows.go DefaultAddress), a socket on Linux.
	Address     string
	Root, State string
	Snapshotter string
	// SandboxImage is the pause image containerd pins
	// (internal/cri/config/config.go DefaultSandboxImage).
	SandboxImage   string
	DefaultRuntime string
	Runtimes       []Runtime
	CNIBinDirs     []string
	CNIConfDir     string
}

// Runtime is one runtime handler: the name a RuntimeClass's handler
// names, and the shim it starts.
type Runtime struct {
	Name string
	Type string
	// PodAnnotations and ContainerAnnotations are the annotation patterns
	// passed through to the shim.
	PodAnnotations, ContainerAnnotations []string
	// Options are the shim's options, in the order containerd writes them.
	Options []Option
}

// Option is one shim option.
type Option struct {
	Key   string
	Value string // TOML text: true, 1, 'x'
}

// Endpoint is the CRI endpoint as crictl and the kubelet name it.
func (c Containerd) Endpoint() string {
	if strings.HasPrefix(c.Address, `\\.\pipe\`) {
		return "npipe://./pipe/" + strings.TrimPrefix(c.Address, `\\.\pipe\`)
	}
	return "unix://" + c.Address
}

// Runtime returns the named runtime handler, or false.
func (c Containerd) Runtime(name string) (Runtime, bool) {
	for _, r := range c.Runtimes {
		if r.Name == name {
			return r, true
		}
	}
	return Runtime{}, false
}

// sandboxImage is containerd's default pause image by release
// (internal/cri/config/config.go DefaultSandboxImage: 3.10 in 2.0 and
// 2.1, 3.10.1 from 2.2; pkg/cri/config in 1.7: 3.8).
func sandboxImage(version string) string {
	switch {
	case strings.HasPrefix(version, "1."):
		return "registry.k8s.io/pause:3.8"
	case strings.HasPrefix(version, "2.0."), strings.HasPrefix(version, "2.1."):
		return "registry.k8s.io/pause:3.10"
	}
	return "registry.k8s.io/pause:3.10.1"
}

func containerdConfig(os, version string) Containerd {
	c := Containerd{Version: version, SandboxImage: sandboxImage(version)}
	if os == hybrid.OSWindows {
		// defaults/defaults_windows.go; internal/cri/config/config_windows.go
		// (both runhcs handlers, process isolation the default); the CNI
		// directories are the ones Install-Containerd.ps1 writes over
		// containerd's C:\Program Files\containerd\cni\{bin,conf}.
		c.Address = `\\.\pipe\containerd-containerd`
		c.Root, c.State = `C:\ProgramData\containerd\root`, `C:\ProgramData\containerd\state`
		c.Snapshotter = "windows"
		c.DefaultRuntime = "runhcs-wcow-process"
		c.Runtimes = []Runtime{
			{
				Name: "runhcs-wcow-hypervisor", Type: "io.containerd.runhcs.v1",
				PodAnnotations:       []string{"io.microsoft.virtualmachine.*"},
				ContainerAnnotations: []string{"io.microsoft.container.*"},
				// The 2.2 line's options; ScaleCpuLimitsToSandbox came later.
				Options: []Option{{"SandboxIsolation", "1"}, {"ScrubLogs", "true"}},
			},
			{
				Name: "runhcs-wcow-process", Type: "io.containerd.runhcs.v1",
				ContainerAnnotations: []string{"io.microsoft.container.*"},
				Options:              []Option{{"ScrubLogs", "true"}},
			},
		}
		c.CNIBinDirs, c.CNIConfDir = []string{"c:/opt/cni/bin"}, "c:/etc/cni/net.d"
		return c
	}
	// defaults/defaults_unix.go; internal/cri/config/config_unix.go, with
	// the SystemdCgroup the kubeadm install guide sets for runc.
	c.Address = "/run/containerd/containerd.sock"
	c.Root, c.State = "/var/lib/containerd", "/run/containerd"
	c.Snapshotter = "overlayfs"
	c.DefaultRuntime = "runc"
	c.Runtimes = []Runtime{{Name: "runc", Type: "io.containerd.runc.v2", Options: []Option{{"SystemdCgroup", "true"}}}}
	c.CNIBinDirs, c.CNIConfDir = []string{"/opt/cni/bin"}, "/etc/cni/net.d"
	return c
}

// Dump renders the configuration as `containerd config dump` prints it
// (TOML, version 3, two spaces of indent per table level), limited to the
// tables and keys the twin models: the top-level paths, the gRPC address,
// the CRI image and runtime plugins' sandbox image, runtime handlers and
// CNI directories. The real dump prints every plugin's every setting.
func (c Containerd) Dump() string {
	var b strings.Builder
	line := func(depth int, s string) {
		b.WriteString(strings.Repeat("  ", depth) + s + "\n")
	}
	table := func(depth int, name string) {
		b.WriteString("\n")
		line(depth, "["+name+"]")
	}
	line(0, "version = 3")
	line(0, "root = "+quote(c.Root))
	line(0, "state = "+quote(c.State))
	table(0, "grpc")
	line(1, "address = "+quote(c.Address))
	table(0, "plugins")
	const images, runtime = "plugins.'io.containerd.cri.v1.images'", "plugins.'io.containerd.cri.v1.runtime'"
	table(1, images)
	line(2, "snapshotter = "+quote(c.Snapshotter))
	table(2, images+".pinned_images")
	line(3, "sandbox = "+quote(c.SandboxImage))
	table(1, runtime)
	table(2, runtime+".containerd")
	line(3, "default_runtime_name = "+quote(c.DefaultRuntime))
	table(3, runtime+".containerd.runtimes")
	for _, r := range c.Runtimes {
		name := runtime + ".containerd.runtimes." + r.Name
		table(4, name)
		line(5, "runtime_type = "+quote(r.Type))
		line(5, "runtime_path = ''")
		line(5, "pod_annotations = "+quoteList(r.PodAnnotations))
		line(5, "container_annotations = "+quoteList(r.ContainerAnnotations))
		line(5, "privileged_without_host_devices = false")
		line(5, "base_runtime_spec = ''")
		line(5, "cni_conf_dir = ''")
		line(5, "cni_max_conf_num = 0")
		line(5, "snapshotter = ''")
		line(5, "sandboxer = 'podsandbox'")
		if len(r.Options) > 0 {
			table(5, name+".options")
			for _, o := range r.Options {
				line(6, o.Key+" = "+o.Value)
			}
		}
	}
	table(2, runtime+".cni")
	line(3, "bin_dirs = "+quoteList(c.CNIBinDirs))
	line(3, "conf_dir = "+quote(c.CNIConfDir))
	line(3, "max_conf_num = 1")
	return b.String()
}

// quote is a TOML literal string, as containerd's encoder writes strings.
func quote(s string) string {
	if strings.Contains(s, "'") {
		return fmt.Sprintf("%q", s)
	}
	return "'" + s + "'"
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
