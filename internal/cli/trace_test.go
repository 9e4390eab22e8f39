package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWithTrace runs a command line the way the binary does.
func runWithTrace(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return run(t, "", args...)
}

// whatIf writes YAML to a temporary file for -f.
func whatIf(t *testing.T, name, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const denyAllWinDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: win-demo}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`

func TestTraceExitsZeroWhenDeliveredOneWhenNotTwoOnBadInput(t *testing.T) {
	deny := whatIf(t, "deny.yaml", denyAllWinDemo)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // substring of stdout or stderr
	}{
		{"aspnetapp reaches hello by its full name", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "hello.demo.svc.cluster.local", "--lab"}, 0, "verdict: delivered"},
		{"aspnetapp pings hello with the seed's TTL", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "172.21.172.4", "--proto", "icmp", "--lab"}, 0, "the reply with ttl 63"},
		{"the Windows host cannot reach a ClusterIP", []string{"trace", "node/k8s-lab-win-1", "10.102.98.171", "--port", "80", "--lab"}, 1, "a Windows host cannot reach ClusterIPs"},
		{"deny-all ingress in win-demo blocks hello", []string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "--lab", "-f", deny}, 1, "fix: "},
		{"an unknown pod is not found, exit 1 as get and exec answer it", []string{"trace", "pod/nope", "10.96.0.10", "--lab"}, 1, `pods "nope" not found`},
		{"a Service is no source", []string{"trace", "svc/kubernetes", "10.96.0.10", "--lab"}, 2, "a Service sends nothing"},
		{"an unknown protocol is bad input", []string{"trace", "node/k8s-lab-node-1", "10.96.0.10", "--proto", "sctp", "--lab"}, 2, "use tcp, udp or icmp"},
		{"one argument is bad input", []string{"trace", "node/k8s-lab-node-1", "--lab"}, 2, "trace takes SRC and DST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runWithTrace(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tc.out) {
				t.Errorf("output lacks %q:\n%s%s", tc.out, out, errOut)
			}
		})
	}
}

func TestTraceJSONCarriesTheHopsAndTheACLCounts(t *testing.T) {
	out, errOut, code := runWithTrace(t, "trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "--lab", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Delivered bool `json:"delivered"`
		Hops      []struct {
			Node      string `json:"node"`
			Component string `json:"component"`
		} `json:"hops"`
		ACLs []struct {
			Pod   string `json:"pod"`
			Count int    `json:"aclCount"`
		} `json:"acls"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Delivered || len(r.Hops) < 10 || len(r.ACLs) != 1 || r.ACLs[0].Count != 7 {
		t.Errorf("delivered=%v hops=%d acls=%+v", r.Delivered, len(r.Hops), r.ACLs)
	}
}

func TestTraceAndExecMatchTheirGoldenFiles(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"trace hello to aspnetapp by name", []string{"trace", "-n", "demo", "deploy/hello", "aspnetapp.win-demo.svc.cluster.local", "--lab"}},
		{"trace aspnetapp to a dotted short name", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "hello.demo", "--port", "80", "--lab"}},
		{"trace the windows host to a clusterip as json", []string{"trace", "node/k8s-lab-win-1", "svc/win-demo/aspnetapp", "--lab", "-o", "json"}},
		{"exec curl.exe in aspnetapp to hello", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", "curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`, "http://hello.demo.svc.cluster.local/healthz"}},
		{"exec curl.exe to the dotted short name", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", "curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`, "--max-time", "5", "http://hello.demo/healthz"}},
		{"exec curl.exe to aspnetapp by its short name", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", "curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`, "http://aspnetapp/"}},
		{"exec ping in aspnetapp", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", "ping", "-n", "2", "172.21.172.4"}},
		{"exec wget in hello", []string{"exec", "-n", "demo", "deploy/hello", "--lab", "--", "wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local"}},
		{"exec nslookup in hello", []string{"exec", "-n", "demo", "deploy/hello", "--lab", "--", "nslookup", "aspnetapp.win-demo.svc.cluster.local"}},
		{"exec a quoted command line", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", `ping -n 2 1.1.1.1`}},
		{"exec ping on a linux node", []string{"exec", "node/k8s-lab-node-1", "--lab", "--", "ping", "-c", "1", "172.21.41.6"}},
		{"exec ip route still goes to the node dataplane", []string{"exec", "node/k8s-lab-node-2", "--lab", "--", "ip", "route"}},
		{"exec curl.exe on the windows node to a clusterip", []string{"exec", "node/k8s-lab-win-1", "--lab", "--", "curl.exe", "http://10.102.98.171"}},
		{"exec a command the image lacks", []string{"exec", "-n", "win-demo", "deploy/aspnetapp", "--lab", "--", "nslookup", "hello"}},
		{"exec a command the twin does not emulate in pods", []string{"exec", "-n", "demo", "deploy/hello", "--lab", "--", "ls", "/"}},
		// Between pods on two Windows nodes (examples/what-if/second-windows-node).
		{"trace a ping from a win-1 pod to a win-2 pod", []string{"trace", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "pod/aspnetapp-769559d8ff-szxbc", "--proto", "icmp", "--lab", "-f", secondWindows}},
		{"trace tcp from a win-1 pod to a win-2 pod", []string{"trace", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "pod/aspnetapp-769559d8ff-szxbc", "--port", "8080", "--lab", "-f", secondWindows}},
		{"trace the aspnetapp service from a win-1 pod to a win-2 backend", []string{"trace", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "svc/aspnetapp", "--lab", "-f", secondWindows}},
		{"exec ping from a win-1 pod to a win-2 pod", []string{"exec", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "--lab", "-f", secondWindows, "--", "ping", "-n", "2", "172.21.81.131"}},
		{"exec curl.exe from a win-1 pod to a win-2 pod", []string{"exec", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "--lab", "-f", secondWindows, "--", "curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`, "http://172.21.81.131:8080/"}},
		{"trace to a windows node that has not published its vtep", []string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "--lab", "-f", "../check/testdata/HYB071/fail.yaml"}},
		{"trace a ping blocked between the windows hosts", []string{"trace", "-n", "win-demo", "pod/aspnetapp-769559d8ff-vk445", "pod/aspnetapp-769559d8ff-szxbc", "--proto", "icmp", "--lab", "-f", "../check/testdata/HYB072/fail", "-f", secondWindows + "/aspnetapp.yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runWithTrace(t, tc.args...)
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(tc.args, " "), out, errOut, code)
			goldenFile(t, strings.ReplaceAll(tc.name, " ", "-")+".txt", got)
		})
	}
}
