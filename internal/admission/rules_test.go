package admission

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The expected texts below are what kube-apiserver v1.37.2 answered for the
// same pods (test/integration/testdata/pods).
func TestPodValidationRulesWordTheirErrorsAsTheAPIServer(t *testing.T) {
	withUser := func(name string) func() *corev1.Pod {
		return func() *corev1.Pod {
			p := aspnetPod()
			p.Spec.SecurityContext.WindowsOptions.RunAsUserName = ptr.To(name)
			return p
		}
	}
	cases := []struct {
		name string
		pod  func() *corev1.Pod
		want []string
	}{
		{"a runAsUserName with two backslashes is refused once", withUser(`a\b\c`),
			[]string{`spec.securityContext.windowsOptions.runAsUserName: Invalid value: "a\\b\\c": runAsUserName cannot contain more than one backslash`}},
		{"an empty runAsUserName is refused", withUser(""),
			[]string{`spec.securityContext.windowsOptions.runAsUserName: Invalid value: "": runAsUserName cannot be an empty string`}},
		{"a domain and a user are both checked", withUser(`.bad*\@`),
			[]string{
				`spec.securityContext.windowsOptions.runAsUserName: Invalid value: ".bad*\\@": runAsUserName's Domain doesn't match the NetBios nor the DNS format`,
				`spec.securityContext.windowsOptions.runAsUserName: Invalid value: ".bad*\\@": runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`,
			}},
		{"a NetBIOS domain and a user are valid", withUser(`CONTOSO\svc-app`), nil},
		{"a user of dots is refused", withUser(`...`),
			[]string{`spec.securityContext.windowsOptions.runAsUserName: Invalid value: "...": runAsUserName's User cannot contain only periods or spaces`}},
		{"a network sysctl on a hostNetwork pod is refused", func() *corev1.Pod {
			p := helloPod()
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net/ipv4/conf/eth0.100/rp_filter", Value: "1"}}}
			return p
		}, []string{`spec.securityContext.sysctls[0].name: Invalid value: "net/ipv4/conf/eth0.100/rp_filter": may not be specified when 'hostNetwork' is true`}},
		{"shareProcessNamespace with hostPID is refused", func() *corev1.Pod {
			p := helloPod()
			p.Spec.HostPID = true
			p.Spec.ShareProcessNamespace = ptr.To(true)
			return p
		}, []string{"spec.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled"}},
		{"procMount Unmasked needs hostUsers false", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{ProcMount: ptr.To(corev1.UnmaskedProcMount)}
			return p
		}, []string{`spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": ` + "`hostUsers` must be false to use `Unmasked`"}},
		{"a Localhost seccomp profile needs its file", func() *corev1.Pod {
			p := helloPod()
			p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
			return p
		}, []string{"spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost"}},
		{"a negative limit is a negative request too after defaulting", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Mi")}
			return p
		}, []string{
			`spec.containers[0].resources.limits[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`,
			`spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0`,
		}},
		{"a request above its limit is refused", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
			return p
		}, []string{`spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`}},
		{"an ephemeral container cannot be set on create", func() *corev1.Pod {
			p := helloPod()
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
			return p
		}, []string{"spec.ephemeralContainers: Forbidden: cannot be set on create"}},
		{"two ports of one name in a container are refused", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 80}, {Name: "web", ContainerPort: 81}}
			return p
		}, []string{`spec.containers[0].ports[1].name: Duplicate value: "web"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errorStrings(ValidatePod(tc.pod(), DefaultOptions()))
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors differ\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

func TestPodWarningsAreTheAPIServersWarnings(t *testing.T) {
	cases := []struct {
		name string
		pod  func() *corev1.Pod
		want []string
	}{
		{"a valid pod draws none", helloPod, nil},
		{"a deprecated node selector label is named with its replacement", func() *corev1.Pod {
			p := helloPod()
			p.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"}
			return p
		}, []string{`spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`}},
		{"a fractional byte limit warns for the limit and the request it defaults", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1500m")}
			return p
		}, []string{
			`spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer`,
			`spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be an integer`,
		}},
		{"a port name shared by two containers warns", func() *corev1.Pod {
			p := helloPod()
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 80}}
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox",
				Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 81}}})
			return p
		}, []string{`spec.containers[1].ports[0]: duplicate port name "web" with spec.containers[0].ports[0], services and probes that select ports by name will use spec.containers[0].ports[0]`}},
		{"a pod name with dots warns about the hostname", func() *corev1.Pod {
			p := helloPod()
			p.Name = "web.v1"
			return p
		}, []string{"metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodWarnings(tc.pod())
			if !slices.Equal(got, tc.want) {
				t.Errorf("warnings differ\n got: %q\nwant: %q", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
