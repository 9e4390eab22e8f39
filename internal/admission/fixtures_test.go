package admission

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Fixtures follow seed 000 (the lab build): the `bad` pod, the hello and
// aspnetapp pod templates, RuntimeClass windows-2025 and the
// kube-proxy-windows hostProcess pod.

func badPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "win-demo"},
		Spec: corev1.PodSpec{
			OS:               &corev1.PodOS{Name: corev1.Windows},
			RuntimeClassName: ptr.To("windows-2025"),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      ptr.To[int64](10001),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{Name: "shell", Image: "mcr.microsoft.com/windows/nanoserver:ltsc2025"}},
		},
	}
}

func helloPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello-55fb8f8684-69mvv", Namespace: "demo"},
		Spec: corev1.PodSpec{
			OS: &corev1.PodOS{Name: corev1.Linux},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  "hello",
				Image: "ghcr.io/example/hello:1.2",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

func aspnetPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "aspnetapp-769559d8ff-dkp9z", Namespace: "win-demo"},
		Spec: corev1.PodSpec{
			OS:               &corev1.PodOS{Name: corev1.Windows},
			RuntimeClassName: ptr.To("windows-2025"),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				WindowsOptions: &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")},
			},
			Containers: []corev1.Container{{
				Name:  "aspnetapp",
				Image: "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}},
		},
	}
}

// kubeProxyWindowsPod is a pod of the sig-windows-tools kube-proxy-windows
// DaemonSet: hostProcess at pod level, hostNetwork, os set explicitly here.
func kubeProxyWindowsPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy-windows-7xk2p", Namespace: "kube-system"},
		Spec: corev1.PodSpec{
			OS:          &corev1.PodOS{Name: corev1.Windows},
			HostNetwork: true,
			SecurityContext: &corev1.PodSecurityContext{
				WindowsOptions: &corev1.WindowsSecurityContextOptions{
					HostProcess:   ptr.To(true),
					RunAsUserName: ptr.To(`NT AUTHORITY\system`),
				},
			},
			Containers: []corev1.Container{{Name: "kube-proxy", Image: "sigwindowstools/kube-proxy:v1.37.2-calico-hostprocess"}},
		},
	}
}

func windows2025() *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "windows-2025"},
		Handler:    "runhcs-wcow-process",
		Scheduling: &nodev1.Scheduling{
			NodeSelector: map[string]string{
				"kubernetes.io/os":                 "windows",
				"kubernetes.io/arch":               "amd64",
				"node.kubernetes.io/windows-build": "10.0.26100",
			},
			Tolerations: []corev1.Toleration{{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
