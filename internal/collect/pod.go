package collect

import (
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

// Default images: on Linux any image with nsenter (the commands run in the
// host's namespaces with the host's own ip, bridge and nft); on Windows the
// HostProcess base image (the commands run on the host, with its
// PowerShell and hnsdiag).
const (
	DefaultLinuxImage   = "busybox:1.37"
	DefaultWindowsImage = "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0"
)

// Pod is the short-lived pod that collects from a node. On Linux it is
// built the way `kubectl debug node/NAME --profile=sysadmin` builds its
// pod (kubectl pkg/cmd/debug/debug.go generateNodeDebugPod, profiles.go):
// bound to the node by spec.nodeName, host network, PID and IPC
// namespaces, privileged, tolerating every taint, never restarted. On
// Windows it is a HostProcess pod (https://kubernetes.io/docs/tasks/
// configure-pod-container/create-hostprocess-pod/): hostNetwork and
// windowsOptions.hostProcess with a SYSTEM account. Both sleep no longer
// than the timeout and carry activeDeadlineSeconds, so that a pod a
// crashed run left stops on its own.
func Pod(n *corev1.Node, ns, runID, linuxImage, windowsImage string, timeout time.Duration) *corev1.Pod {
	deadline := int64(timeout/time.Second) + 60
	sleep := int64(timeout/time.Second) + 30
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      podName(n.Name, runID),
			Namespace: ns,
			Labels:    map[string]string{ManagedByLabel: managedBy, RunLabel: runID, NodeLabel: n.Name},
		},
		Spec: corev1.PodSpec{
			NodeName:                     n.Name,
			HostNetwork:                  true,
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        &deadline,
			AutomountServiceAccountToken: new(bool),
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			EnableServiceLinks:           new(bool),
		},
	}
	if isWindows(n) {
		hostProcess := true
		user := "NT AUTHORITY\\SYSTEM"
		pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
		pod.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"}
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{
			HostProcess: &hostProcess, RunAsUserName: &user,
		}}
		pod.Spec.Containers = []corev1.Container{{
			Name:    container,
			Image:   windowsImage,
			Command: []string{"powershell.exe", "-NoProfile", "-Command", "Start-Sleep -Seconds " + itoa(sleep)},
		}}
		return pod
	}
	privileged := true
	pod.Spec.OS = &corev1.PodOS{Name: corev1.Linux}
	pod.Spec.HostPID = true
	pod.Spec.HostIPC = true
	pod.Spec.Containers = []corev1.Container{{
		Name:            container,
		Image:           linuxImage,
		Command:         []string{"sleep", itoa(sleep)},
		SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
	}}
	return pod
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// CommandLine is how a command runs in the collect pod: on Linux in the
// host's namespaces through nsenter (PID 1 is the host's init, as the pod
// shares the host's PID namespace), on Windows under the host's
// PowerShell.
func CommandLine(cmd verify.Command, windows bool) []string {
	if windows {
		return []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-Command", cmd.Typed}
	}
	return append([]string{"nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "--"}, strings.Fields(cmd.Typed)...)
}
