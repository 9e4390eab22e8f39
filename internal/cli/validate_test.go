package cli

import (
	"fmt"
	"strings"
	"testing"
)

// evilPod is a pod whose name holds an ESC sequence and a right-to-left
// override.
const evilPod = `apiVersion: v1
kind: Pod
metadata:
  name: "evil\u202egpj\u001b[2J"
  namespace: default
spec:
  nodeName: k8s-lab-node-1
  containers: [{name: c, image: busybox}]
`

// evilConfigMap is a ConfigMap of that name: kept with validation off,
// where the API server refuses such a pod whatever the client's validation.
const evilConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: "evil\u202egpj\u001b[2J"
  namespace: default
data: {k: v}
`

// warnedPods are two pods the API server accepts with warnings and one it
// refuses.
const warnedPods = `apiVersion: v1
kind: Pod
metadata: {name: old-label, namespace: default}
spec:
  nodeSelector: {beta.kubernetes.io/os: linux}
  containers: [{name: c, image: busybox, resources: {limits: {memory: 1500m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web.v1, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: bad-user, namespace: default}
spec:
  os: {name: windows}
  securityContext: {windowsOptions: {runAsUserName: 'a\b\c'}}
  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2025}]
`

func TestValidationAndEscapingMatchTheirGoldenFiles(t *testing.T) {
	const refused = "../load/testdata/refused/objects.yaml"
	const unknown = "../load/testdata/refused/unknown.json"
	cases := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"objects the api server would refuse", "", []string{"get", "pods", "-A", "--lab", "-f", refused}},
		{"objects the api server would refuse kept with validate false", "", []string{"get", "ippools", "--lab", "-f", refused, "--validate=false"}},
		{"unknown fields warn by default", "", []string{"get", "ippools", "--lab", "-f", unknown}},
		{"unknown fields refused with validate strict", "", []string{"get", "ippools", "--lab", "-f", unknown, "--validate", "strict"}},
		{"an unknown validate value", "", []string{"get", "pods", "--lab", "--validate", "maybe"}},
		{"a name with control characters in a table", evilConfigMap, []string{"get", "configmaps", "--lab", "-f", "-", "--validate=ignore"}},
		{"a name with control characters refused", evilPod, []string{"get", "pods", "--lab", "-f", "-"}},
		{"api server warnings and refusals of applied pods", warnedPods, []string{"get", "pods", "--lab", "-f", "-"}},
		{"a trace to the limited broadcast address", "", []string{"trace", "deploy/hello", "255.255.255.255", "-n", "demo", "--lab"}},
		{"a trace to a multicast address", "", []string{"trace", "node/k8s-lab-node-1", "224.0.0.1", "--lab"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.stdin, tc.args...)
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(tc.args, " "), out, errOut, code)
			goldenFile(t, strings.ReplaceAll(tc.name, " ", "-")+".txt", got)
		})
	}
}

// evilPolicy is a NetworkPolicy of that name whose ipBlock names the main
// cluster's node network, which plan migrate's preflight reports by name.
const evilPolicy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: "evil\u202egpj\u001b[2J"
  namespace: default
spec:
  podSelector: {}
  ingress:
  - from:
    - ipBlock: {cidr: 192.168.10.0/24}
`

func TestJSONOutputKeepsNamesAsData(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"get prints the object", evilConfigMap, []string{"get", "configmap", "evil\u202egpj\x1b[2J", "--lab", "-f", "-"}, ExitOK},
		{"plan migrate's preflight names the policy", evilPolicy, []string{"plan", "migrate", "-f", "../../examples/main-cluster", "-f", "-"}, ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, code := run(t, tt.stdin, append(tt.args, "--validate=false", "-o", "json")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d", code, tt.code)
			}
			// encoding/json writes ESC as \u001b and the override as
			// itself: the terminal's escaping is not applied to data.
			if !strings.Contains(out, "evil"+"\u202e"+`gpj\u001b[2J"`) {
				t.Errorf("the name is not the data:\n%s", out)
			}
		})
	}
}
