package console

import (
	"fmt"
	"strings"
	"testing"
)

// Every emulated command's output, compared with testdata/golden.
func TestExecOutputsMatchTheirGoldenFiles(t *testing.T) {
	curlW := []string{"curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`}
	with := func(extra ...string) []string { return append(append([]string{}, curlW...), extra...) }
	for _, tc := range []struct {
		file     string
		policies []string
		src, ns  string
		argv     []string
	}{
		{"check-runs-the-seed-script", nil, "pod/check", "default", []string{"sh", "-c", seedScript}},
		{"check-pings-aspnetapp", nil, "pod/check", "default", []string{"ping", "-c", "2", "172.21.41.6"}},
		{"check-wgets-aspnetapp", nil, "pod/check", "default", []string{"wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local"}},
		{"check-nslookups-aspnetapp", nil, "pod/check", "default", []string{"nslookup", "aspnetapp.win-demo.svc.cluster.local"}},
		{"check-wgets-verbosely", nil, "pod/check", "default", []string{"wget", "-O-", "http://hello.demo/healthz"}},
		{"check-wgets-a-missing-path", nil, "pod/check", "default", []string{"wget", "-qO-", "http://hello.demo/missing"}},
		{"check-wgets-a-closed-port", nil, "pod/check", "default", []string{"wget", "-qO-", "http://172.21.172.4:9999/"}},
		{"check-pings-a-clusterip", nil, "pod/check", "default", []string{"ping", "-c", "2", "10.102.98.171"}},
		{"check-pings-a-bad-name", nil, "pod/check", "default", []string{"ping", "-c", "1", "nope.demo"}},
		{"check-has-no-curl", nil, "pod/check", "default", []string{"curl", "http://hello.demo/healthz"}},
		{"hello-wgets-aspnetapp", nil, "deploy/hello", "demo", []string{"wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local"}},
		{"hello-nslookups-aspnetapp", nil, "deploy/hello", "demo", []string{"nslookup", "aspnetapp.win-demo.svc.cluster.local"}},
		{"hello-cannot-ping-as-non-root", nil, "deploy/hello", "demo", []string{"ping", "-c", "1", "172.21.41.6"}},
		{"hello-wgets-with-dns-blocked", []string{denyEgressDemo}, "deploy/hello", "demo", []string{"wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local"}},
		{"hello-nslookups-with-dns-blocked", []string{denyEgressDemo}, "deploy/hello", "demo", []string{"nslookup", "aspnetapp.win-demo.svc.cluster.local"}},
		{"hello-wgets-with-web-egress-blocked", []string{denyEgressDemo, allowDNSDemo}, "deploy/hello", "demo", []string{"wget", "-q", "-T", "5", "-O-", "http://aspnetapp.win-demo.svc.cluster.local"}},
		{"aspnetapp-curls-hello-by-full-name", nil, "deploy/aspnetapp", "win-demo", with("http://hello.demo.svc.cluster.local/healthz")},
		{"aspnetapp-curls-the-dotted-short-name", nil, "deploy/aspnetapp", "win-demo", with("--max-time", "5", "http://hello.demo/healthz")},
		{"aspnetapp-curls-itself-by-short-name", nil, "deploy/aspnetapp", "win-demo", with("http://aspnetapp/")},
		{"aspnetapp-curls-the-page", nil, "deploy/aspnetapp", "win-demo", []string{"curl.exe", "-s", "http://aspnetapp/"}},
		{"aspnetapp-curls-a-dotted-name-without-s", nil, "deploy/aspnetapp", "win-demo", []string{"curl.exe", "http://hello.demo/healthz"}},
		{"aspnetapp-curls-a-closed-port", nil, "deploy/aspnetapp", "win-demo", with("http://172.21.172.4:9999/")},
		{"hello-wgets-through-deny-all", []string{denyAllIngressWinDemo}, "deploy/hello", "demo", []string{"sh", "-c", "wget -q -T 5 -O- http://aspnetapp.win-demo.svc.cluster.local"}},
		{"aspnetapp-curls-itself-through-deny-all-with-max-time", []string{denyAllIngressWinDemo}, "deploy/aspnetapp", "win-demo", with("--max-time", "5", "http://aspnetapp/")},
		{"aspnetapp-curls-through-deny-all-showing-errors", []string{denyAllIngressWinDemo}, "deploy/aspnetapp", "win-demo", []string{"curl.exe", "-sS", "-m", "5", "http://aspnetapp/"}},
		{"aspnetapp-pings-hello", nil, "deploy/aspnetapp", "win-demo", []string{"ping", "-n", "2", "172.21.172.4"}},
		{"aspnetapp-pings-hello-by-name", nil, "deploy/aspnetapp", "win-demo", []string{"ping", "-n", "2", "hello.demo.svc.cluster.local"}},
		{"aspnetapp-pings-the-internet", nil, "deploy/aspnetapp", "win-demo", []string{"ping", "-n", "2", "1.1.1.1"}},
		{"aspnetapp-pings-a-clusterip", nil, "deploy/aspnetapp", "win-demo", []string{"ping", "-n", "2", "10.97.141.163"}},
		{"aspnetapp-pings-a-bad-name", nil, "deploy/aspnetapp", "win-demo", []string{"ping", "-n", "1", "hello.demo"}},
		{"aspnetapp-has-no-nslookup", nil, "deploy/aspnetapp", "win-demo", []string{"nslookup", "hello.demo.svc.cluster.local"}},
		{"aspnetapp-has-no-wget", nil, "deploy/aspnetapp", "win-demo", []string{"wget", "http://hello.demo.svc.cluster.local/healthz"}},
		{"aspnetapp-cmd-has-no-nslookup", nil, "deploy/aspnetapp", "win-demo", []string{"cmd", "/c", "nslookup", "hello.demo.svc.cluster.local"}},
		{"aspnetapp-has-no-powershell", nil, "deploy/aspnetapp", "win-demo", []string{"powershell", "-Command", "Resolve-DnsName hello.demo.svc.cluster.local"}},
		{"aspnetapp-cannot-exec-a-cmdlet", nil, "deploy/aspnetapp", "win-demo", []string{"Resolve-DnsName", "hello.demo.svc.cluster.local"}},
		{"tools-resolve-dnsname-srv", []string{servercorePodYAML}, "pod/tools", "win-demo", []string{"powershell", "-Command", "Resolve-DnsName -Type SRV _http._tcp.hello.demo.svc.cluster.local"}},
		{"tools-resolve-dnsname-a", []string{servercorePodYAML}, "pod/tools", "win-demo", []string{"powershell", "Resolve-DnsName", "hello.demo.svc.cluster.local"}},
		{"windows-node-resolve-dnsname-srv", nil, "node/k8s-lab-win-1", "", []string{"Resolve-DnsName", "-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local", "-Server", "172.21.172.3"}},
		{"check-nslookups-srv", nil, "pod/check", "default", []string{"nslookup", "-type=srv", "_http._tcp.hello.demo.svc.cluster.local"}},
		{"lookup-wgets-a-name-an-externalname-hides", []string{deadExternalNameYAML}, "pod/lookup", "demo", []string{"wget", "-qO-", "http://router/"}},
		{"lookup-nslookups-the-name-the-externalname-hides", []string{deadExternalNameYAML}, "pod/lookup", "demo", []string{"nslookup", "router"}},
		{"aspnetapp-quoted-whole-command", nil, "deploy/aspnetapp", "win-demo", []string{`curl.exe -s -o NUL -w "%{remote_ip} %{http_code}\n" http://hello.demo.svc.cluster.local/readyz`}},
		{"linux-node-pings-aspnetapp", nil, "node/k8s-lab-node-1", "", []string{"ping", "-c", "1", "172.21.41.6"}},
		{"linux-node-curls-aspnetapp-service", nil, "node/k8s-lab-node-1", "", []string{"curl", "-s", "-w", `\n%{remote_ip} %{http_code}\n`, "http://10.102.98.171/Privacy"}},
		{"windows-node-curls-a-clusterip", nil, "node/k8s-lab-win-1", "", []string{"curl.exe", "http://10.102.98.171"}},
		{"windows-node-curls-a-pod", nil, "node/k8s-lab-win-1", "", []string{"curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`, "http://172.21.41.6:8080/"}},
		{"windows-node-pings-hello", nil, "node/k8s-lab-win-1", "", []string{"ping", "-n", "2", "172.21.172.4"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			e := lab(t)
			if len(tc.policies) > 0 {
				e = buildWith(t, tc.policies...)
			}
			o := execIn(t, e, tc.src, tc.ns, tc.argv...)
			got := fmt.Sprintf("$ %s -- %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", tc.src, quoteArgs(tc.argv), o.Stdout, o.Stderr, o.Code)
			goldenFile(t, "exec-"+tc.file+".txt", got)
		})
	}
}

const seedScript = `
    nslookup aspnetapp.win-demo.svc.cluster.local | tail -3
    wget -qO- http://aspnetapp.win-demo.svc.cluster.local | grep -o "<title>[^<]*</title>"
    ping -c 2 172.21.41.6`

func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, " \t\n\"'%{}|<>") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// servercorePodYAML is a Windows Server Core pod with PowerShell, for
// Resolve-DnsName.
const servercorePodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: tools
  namespace: win-demo
spec:
  os:
    name: windows
  nodeSelector:
    kubernetes.io/os: windows
  tolerations:
    - key: os
      operator: Equal
      value: windows
      effect: NoSchedule
  securityContext:
    runAsNonRoot: true
    windowsOptions:
      runAsUserName: ContainerUser
  containers:
    - name: tools
      image: mcr.microsoft.com/windows/servercore:ltsc2025
      command: ["ping", "-t", "localhost"]
`

// deadExternalNameYAML is an ExternalName Service of demo named like the
// node network's router, pointing at a name under the TLD "invalid", and a
// busybox pod of demo whose search list ends
// with the node network's domain: glibc stops at router.demo.svc… and
// never reaches router.example.com.
const deadExternalNameYAML = `apiVersion: v1
kind: Service
metadata:
  name: router
  namespace: demo
spec:
  type: ExternalName
  externalName: router.lab.invalid
---
apiVersion: v1
kind: Pod
metadata:
  name: lookup
  namespace: demo
spec:
  os:
    name: linux
  dnsConfig:
    searches: ["example.com"]
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: lookup
      image: busybox:1.37
      securityContext:
        allowPrivilegeEscalation: false
        capabilities:
          drop: ["ALL"]
`
