package admission

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestSeedBadPodPrintsWhatKubectlPrinted(t *testing.T) {
	// Seed 000, "Linux-поля в Windows-поде": kubectl apply of the `bad` pod.
	want := "The Pod \"bad\" is invalid: \n" +
		"* spec.securityContext.seccompProfile: Forbidden: cannot be set for a windows pod\n" +
		"* spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod\n"
	pod := badPod()
	got := FormatInvalid("Pod", pod.Name, ValidatePod(pod, DefaultOptions()))
	if got != want {
		t.Errorf("kubectl output differs\n got: %q\nwant: %q", got, want)
	}
}

func TestValidatePod(t *testing.T) {
	allow := DefaultOptions()
	deny := Options{AllowPrivileged: false}
	cases := []struct {
		name string
		pod  func() *corev1.Pod
		opts Options
		want []string
	}{
		{
			name: "the aspnetapp Windows pod from the seed is valid",
			pod:  aspnetPod, opts: allow, want: nil,
		},
		{
			name: "the hello Linux pod from the seed is valid",
			pod:  helloPod, opts: allow, want: nil,
		},
		{
			name: "a kube-proxy-windows hostProcess pod is valid when privileged pods are allowed",
			pod:  kubeProxyWindowsPod, opts: allow, want: nil,
		},
		{
			name: "a hostProcess pod is refused by cluster policy without --allow-privileged",
			pod:  kubeProxyWindowsPod, opts: deny,
			want: []string{"spec: Forbidden: hostProcess containers are disallowed by cluster policy"},
		},
		{
			name: "a node-name field selector with two values is refused",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
						Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"k8s-lab-node-1", "k8s-lab-node-2"},
					}}}},
				}}}
				return p
			},
			opts: allow,
			want: []string{"spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"},
		},
		{
			name: "a node field selector on a key other than metadata.name is refused",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 1,
					Preference: corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
						Key: "spec.unschedulable", Operator: corev1.NodeSelectorOpIn, Values: []string{"false"},
					}}},
				}}}}
				return p
			},
			opts: allow,
			want: []string{`spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].key: Invalid value: "spec.unschedulable": not a valid field selector key`},
		},
		{
			name: "a hostProcess pod without hostNetwork is refused",
			pod: func() *corev1.Pod {
				p := kubeProxyWindowsPod()
				p.Spec.HostNetwork = false
				return p
			},
			opts: allow,
			want: []string{"spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers"},
		},
		{
			name: "a pod mixing hostProcess and ordinary containers is refused, and the explicit false is a mismatch",
			pod: func() *corev1.Pod {
				p := kubeProxyWindowsPod()
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
					Name: "sidecar", Image: "x",
					SecurityContext: &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(false)}},
				})
				return p
			},
			opts: allow,
			want: []string{
				"spec.containers[1].securityContext.windowsOptions.hostProcess: Invalid value: false: pod hostProcess value must be identical if both are specified, was true",
				`spec: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers`,
			},
		},
		{
			name: "a hostProcess container set only on one of two containers fails the all-or-none rule",
			pod: func() *corev1.Pod {
				p := kubeProxyWindowsPod()
				p.Spec.SecurityContext.WindowsOptions.HostProcess = nil
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "x"}}
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
					WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)},
				}
				return p
			},
			opts: allow,
			want: []string{`spec: Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers`},
		},
		{
			name: "a hostNetwork pod with a hostPort different from its containerPort is refused",
			pod: func() *corev1.Pod {
				p := kubeProxyWindowsPod()
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 10256, HostPort: 10257}, {ContainerPort: 9000}}
				return p
			},
			opts: allow,
			want: []string{"spec.containers[0].ports[0].hostPort: Invalid value: 10257: must match `containerPort` when `hostNetwork` is true"},
		},
		{
			name: "a Linux pod with windowsOptions at pod and container level is refused twice",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")}
				p.Spec.Containers[0].SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")}
				return p
			},
			opts: allow,
			want: []string{
				"spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
				"spec.containers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
			},
		},
		{
			name: "a pod without spec.os may carry windowsOptions",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.OS = nil
				p.Spec.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{RunAsUserName: ptr.To("ContainerUser")}
				return p
			},
			opts: allow, want: nil,
		},
		{
			name: "the hello pod marked windows lists its Linux-only fields in upstream order, the security context before the host namespaces",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
				p.Spec.HostPID = true
				p.Spec.ShareProcessNamespace = ptr.To(false)
				p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "x",
					SecurityContext: &corev1.SecurityContext{RunAsGroup: ptr.To[int64](1), ReadOnlyRootFilesystem: ptr.To(true)}}}
				return p
			},
			opts: allow,
			want: []string{
				"spec.securityContext.seccompProfile: Forbidden: cannot be set for a windows pod",
				"spec.hostPID: Forbidden: cannot be set for a windows pod",
				"spec.shareProcessNamespace: Forbidden: cannot be set for a windows pod",
				"spec.initContainers[0].securityContext.readOnlyRootFilesystem: Forbidden: cannot be set for a windows pod",
				"spec.initContainers[0].securityContext.runAsGroup: Forbidden: cannot be set for a windows pod",
				"spec.containers[0].securityContext.capabilities: Forbidden: cannot be set for a windows pod",
				"spec.containers[0].securityContext.allowPrivilegeEscalation: Forbidden: cannot be set for a windows pod",
			},
		},
		{
			name: "an empty spec.os.name is required and stops the OS checks",
			pod: func() *corev1.Pod {
				p := badPod()
				p.Spec.OS.Name = ""
				return p
			},
			opts: allow,
			want: []string{"spec.os.name: Required value"},
		},
		{
			name: "an unknown spec.os.name is reported on spec.os with the supported values",
			pod: func() *corev1.Pod {
				p := badPod()
				p.Spec.OS.Name = "Windows"
				return p
			},
			opts: allow,
			want: []string{`spec.os: Unsupported value: "Windows": supported values: "linux", "windows"`},
		},
		{
			name: "a pod without containers gets one Required error",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.Containers = nil
				return p
			},
			opts: allow,
			want: []string{"spec.containers: Required value"},
		},
		{
			name: "a container without name and image and a duplicate init name are reported in container order",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{})
				p.Spec.InitContainers = []corev1.Container{{Name: "hello", Image: "x"}}
				return p
			},
			opts: allow,
			want: []string{
				"spec.containers[1].name: Required value",
				"spec.containers[1].image: Required value",
				`spec.initContainers[0].name: Duplicate value: "hello"`,
			},
		},
		{
			name: "a privileged container is refused without --allow-privileged",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.Containers[0].SecurityContext.Privileged = ptr.To(true)
				return p
			},
			opts: deny,
			want: []string{"spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy"},
		},
		{
			name: "hostUsers false cannot be combined with host namespaces",
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.HostUsers = ptr.To(false)
				p.Spec.HostNetwork = true
				p.Spec.HostIPC = true
				return p
			},
			opts: allow,
			want: []string{
				"spec.hostNetwork: Forbidden: when `hostUsers` is false",
				"spec.HostIPC: Forbidden: when `hostUsers` is false",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(ValidatePod(tc.pod(), tc.opts))
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors differ\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

func TestInvalidContainerNameUsesTheDNSLabelMessage(t *testing.T) {
	p := helloPod()
	p.Spec.Containers[0].Name = "Hello"
	got := errorStrings(ValidatePod(p, DefaultOptions()))
	if len(got) != 1 || !strings.HasPrefix(got[0], `spec.containers[0].name: Invalid value: "Hello": a lowercase RFC 1123 label must consist of`) {
		t.Errorf("unexpected errors %q", got)
	}
}

func TestFormatInvalidWithOneErrorIsOneLine(t *testing.T) {
	p := badPod()
	p.Spec.SecurityContext = nil
	p.Spec.OS.Name = ""
	got := FormatInvalid("Pod", "bad", ValidatePod(p, DefaultOptions()))
	want := "The Pod \"bad\" is invalid: spec.os.name: Required value\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if FormatInvalid("Pod", "ok", nil) != "" {
		t.Error("no errors should format as an empty string")
	}
}
