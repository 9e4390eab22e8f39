package hosttools

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
)

// systemctl status UNIT on a Linux node: the unit's header lines as
// systemd prints them, from the host model. The Active line's time, the
// main PID, the memory and CPU accounting and the journal excerpt are
// what a running system decides; they are left out and stderr says so.
func systemctl(h *host.Host, args []string) Result {
	if h.OS != hybrid.OSLinux {
		return Result{Stderr: "'systemctl' is not recognized as an internal or external command,\noperable program or batch file.\n", Code: 1}
	}
	if len(args) != 2 || args[0] != "status" {
		return Result{Stderr: "kubectl-hybrid: systemctl status kubelet|containerd is emulated\n", Code: 1}
	}
	unit := strings.TrimSuffix(args[1], ".service")
	s, ok := h.Service(unit)
	if !ok {
		return Result{Stderr: fmt.Sprintf("Unit %s.service could not be found.\n", unit), Code: 4}
	}
	unitFile, dropIn, _ := strings.Cut(strings.TrimPrefix(s.Registered, "systemd unit "), ", drop-in ")
	enabled := "enabled"
	if s.StartType == hybrid.StartDisabled || s.StartType == hybrid.StartManual {
		enabled = "disabled"
	}
	dot, active, code := "●", "active (running)", 0
	if !s.Running() {
		dot, active, code = "○", "inactive (dead)", 3
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s.service - %s\n", dot, unit, s.DisplayName)
	fmt.Fprintf(&b, "     Loaded: loaded (%s; %s; preset: enabled)\n", unitFile, enabled)
	if dropIn != "" {
		i := strings.LastIndexByte(dropIn, '/')
		fmt.Fprintf(&b, "    Drop-In: %s\n             └─%s\n", dropIn[:i], dropIn[i+1:])
	}
	fmt.Fprintf(&b, "     Active: %s\n", active)
	if s.Running() {
		cmd := s.BinaryPath
		if unit == hybrid.ServiceKubelet {
			cmd = strings.Join(h.Kubelet.CommandLine(h.OS), " ")
		}
		fmt.Fprintf(&b, "     CGroup: /system.slice/%s.service\n             └─%s\n", unit, cmd)
	}
	return Result{Stdout: b.String(), Code: code,
		Stderr: "kubectl-hybrid: the Active line's time, Main PID, Tasks, Memory, CPU and the journal lines are not modelled\n"}
}

// journalctl -u kubelet|containerd: the journal's lines are what the
// running service logged, which the twin does not have; the header line
// journalctl prints and a note are all it answers.
func journalctl(h *host.Host, args []string) Result {
	if h.OS != hybrid.OSLinux {
		return Result{Stderr: "'journalctl' is not recognized as an internal or external command,\noperable program or batch file.\n", Code: 1}
	}
	unit := ""
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-u" && i+1 < len(args):
			unit = args[i+1]
			i++
		case strings.HasPrefix(args[i], "--unit="):
			unit = strings.TrimPrefix(args[i], "--unit=")
		}
	}
	unit = strings.TrimSuffix(unit, ".service")
	if _, ok := h.Service(unit); !ok {
		return Result{Stderr: "kubectl-hybrid: journalctl -u kubelet|containerd is emulated\n", Code: 1}
	}
	return Result{
		Stderr: fmt.Sprintf("kubectl-hybrid: the journal of %s.service is not modelled (what the running service logged); the unit itself: systemctl status %s\n", unit, unit)}
}
