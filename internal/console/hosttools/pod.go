package hosttools

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// InWindowsPod answers cmd's built-ins echo and ver, and whoami.exe,
// inside a Windows pod's container (the pod's first container). viaCmd
// says cmd.exe runs the command (cmd /c): ver and echo are its
// built-ins, and it expands %USERNAME% first. hasWhoami says the image
// has whoami.exe (Nano Server does not; its shell then says so). ok is
// false for anything else.
func InWindowsPod(p *corev1.Pod, kernelVersion string, argv []string, viaCmd, hasWhoami bool) (Result, bool) {
	if len(argv) == 0 {
		return Result{}, false
	}
	user := containerUser(p)
	switch strings.ToLower(strings.TrimSuffix(argv[0], ".exe")) {
	case "echo":
		if !viaCmd {
			return Result{}, false
		}
		text := strings.Join(argv[1:], " ")
		text = replaceFold(text, "%USERNAME%", user)
		return Result{Stdout: text + "\n"}, true
	case "ver":
		if !viaCmd || len(argv) != 1 {
			return Result{}, false
		}
		// cmd's ver prints the version the container's own registry gives:
		// the build is the host's (process isolation shares its kernel),
		// the update revision the image's, which the twin does not know.
		return Result{Stdout: fmt.Sprintf("\nMicrosoft Windows [Version %s]\n", kernelVersion),
			Stderr: "kubectl-hybrid: the update revision shown is the host's; a container reports its image's, which the twin does not know\n"}, true
	case "whoami":
		if !hasWhoami || len(argv) != 1 {
			return Result{}, false
		}
		return Result{Stdout: strings.ToLower(accountOf(user)) + "\n"}, true
	}
	return Result{}, false
}

// containerUser is the account the pod's first container runs as:
// windowsOptions.runAsUserName of the container, else of the pod, else
// the image's default (ContainerUser for Nano Server, ContainerAdministrator
// otherwise).
func containerUser(p *corev1.Pod) string {
	if len(p.Spec.Containers) > 0 {
		c := p.Spec.Containers[0]
		if sc := c.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.RunAsUserName != nil {
			return *sc.WindowsOptions.RunAsUserName
		}
	}
	if sc := p.Spec.SecurityContext; sc != nil && sc.WindowsOptions != nil && sc.WindowsOptions.RunAsUserName != nil {
		return *sc.WindowsOptions.RunAsUserName
	}
	if len(p.Spec.Containers) > 0 && strings.Contains(p.Spec.Containers[0].Image, "nanoserver") {
		return "ContainerUser"
	}
	return "ContainerAdministrator"
}

// accountOf is the DOMAIN\user whoami prints: the container accounts
// live in the "User Manager" domain; NT AUTHORITY names stay as given.
func accountOf(user string) string {
	if strings.Contains(user, `\`) {
		return user
	}
	return `User Manager\` + user
}

func replaceFold(s, old, repl string) string {
	i := strings.Index(strings.ToLower(s), strings.ToLower(old))
	if i < 0 {
		return s
	}
	return s[:i] + repl + replaceFold(s[i+len(old):], old, repl)
}
