package admission

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const (
	enforce        = "pod-security.kubernetes.io/enforce"
	enforceVersion = "pod-security.kubernetes.io/enforce-version"
	warn           = "pod-security.kubernetes.io/warn"
	audit          = "pod-security.kubernetes.io/audit"
)

func TestCheckPodSecurity(t *testing.T) {
	demo := namespace("demo", map[string]string{enforce: "restricted"})
	winDemo := namespace("win-demo", map[string]string{enforce: "restricted", enforceVersion: "v1.37"})
	cases := []struct {
		name         string
		ns           *corev1.Namespace
		pod          func() *corev1.Pod
		wantAllowed  bool
		wantEnforce  string
		wantMessage  string
		wantWarnings []string
		wantAudit    string
	}{
		{
			name: "the seed's hello pod passes restricted in demo",
			ns:   demo, pod: helloPod,
			wantAllowed: true, wantEnforce: "restricted:latest",
		},
		{
			name: "the hello pod without a seccompProfile is refused by restricted",
			ns:   demo,
			pod: func() *corev1.Pod {
				p := helloPod()
				p.Spec.SecurityContext.SeccompProfile = nil
				return p
			},
			wantEnforce: "restricted:latest",
			wantMessage: `pods "hello-55fb8f8684-69mvv" is forbidden: violates PodSecurity "restricted:latest": seccompProfile ` +
				`(pod or container "hello" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
		},
		{
			name: "the aspnetapp Windows pod passes restricted v1.37 with no warnings",
			ns:   winDemo, pod: aspnetPod,
			wantAllowed: true, wantEnforce: "restricted:v1.37",
		},
		{
			name: "the aspnetapp pod without runAsNonRoot is refused: that check has no Windows exemption",
			ns:   winDemo,
			pod: func() *corev1.Pod {
				p := aspnetPod()
				p.Spec.SecurityContext.RunAsNonRoot = nil
				return p
			},
			wantEnforce: "restricted:v1.37",
			wantMessage: `pods "aspnetapp-769559d8ff-dkp9z" is forbidden: violates PodSecurity "restricted:v1.37": runAsNonRoot != true ` +
				`(pod or container "aspnetapp" must set securityContext.runAsNonRoot=true)`,
		},
		{
			name:        "a kube-proxy-windows hostProcess pod fails baseline on hostNetwork and hostProcess",
			ns:          namespace("kube-system", map[string]string{enforce: "baseline"}),
			pod:         kubeProxyWindowsPod,
			wantEnforce: "baseline:latest",
			wantMessage: `pods "kube-proxy-windows-7xk2p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), ` +
				`hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`,
		},
		{
			name:        "a privileged namespace admits the hostProcess pod",
			ns:          namespace("calico-system", map[string]string{enforce: "privileged"}),
			pod:         kubeProxyWindowsPod,
			wantAllowed: true, wantEnforce: "privileged:latest",
		},
		{
			name:        "a namespace without labels admits anything, as kubeadm's default is privileged",
			ns:          namespace("default", nil),
			pod:         kubeProxyWindowsPod,
			wantAllowed: true, wantEnforce: "privileged:latest",
		},
		{
			name:        "warn and audit levels only warn and annotate",
			ns:          namespace("default", map[string]string{warn: "baseline", audit: "baseline"}),
			pod:         kubeProxyWindowsPod,
			wantAllowed: true, wantEnforce: "privileged:latest",
			wantWarnings: []string{`would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), ` +
				`hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`},
			wantAudit: `would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), ` +
				`hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := CheckPodSecurity(tc.ns, tc.pod())
			if res.Allowed != tc.wantAllowed || res.Enforce != tc.wantEnforce {
				t.Errorf("allowed=%v enforce=%q, want %v %q", res.Allowed, res.Enforce, tc.wantAllowed, tc.wantEnforce)
			}
			if res.Message != tc.wantMessage {
				t.Errorf("message\n got: %s\nwant: %s", res.Message, tc.wantMessage)
			}
			if (res.Err == nil) != res.Allowed {
				t.Errorf("Err %v does not agree with Allowed %v", res.Err, res.Allowed)
			}
			if !slices.Equal(res.Warnings, tc.wantWarnings) {
				t.Errorf("warnings\n got: %q\nwant: %q", res.Warnings, tc.wantWarnings)
			}
			if res.AuditViolation != tc.wantAudit {
				t.Errorf("audit\n got: %s\nwant: %s", res.AuditViolation, tc.wantAudit)
			}
		})
	}
}

func TestWindowsRelaxationsDependOnThePolicyVersion(t *testing.T) {
	// The Windows exemptions of the restricted seccomp, capabilities and
	// allowPrivilegeEscalation checks start with policy v1.25.
	old := namespace("win-old", map[string]string{enforce: "restricted", enforceVersion: "v1.24"})
	res := CheckPodSecurity(old, aspnetPod())
	want := `pods "aspnetapp-769559d8ff-dkp9z" is forbidden: violates PodSecurity "restricted:v1.24": ` +
		`allowPrivilegeEscalation != false (container "aspnetapp" must set securityContext.allowPrivilegeEscalation=false), ` +
		`unrestricted capabilities (container "aspnetapp" must set securityContext.capabilities.drop=["ALL"]), ` +
		`seccompProfile (pod or container "aspnetapp" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	if res.Allowed || res.Message != want {
		t.Errorf("got allowed=%v\n%s\nwant\n%s", res.Allowed, res.Message, want)
	}
}
