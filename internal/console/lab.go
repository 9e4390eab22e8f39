package console

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"

// checkScript is the script the lab's verification runs in a busybox pod:
// the Windows Service by name, its page, and its pod by address.
const checkScript = `
    nslookup aspnetapp.win-demo.svc.cluster.local | tail -3
    wget -qO- http://aspnetapp.win-demo.svc.cluster.local | grep -o "<title>[^<]*</title>"
    ping -c 2 {{podOf "win-demo" "aspnetapp" "k8s-lab-win-1"}}`

// curlW is curl.exe printing only where it connected and the status.
const curlW = `curl.exe -s -o NUL -w "%{remote_ip} %{http_code}\n"`

func curlWArgv(extra ...string) []string {
	return append([]string{"curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`}, extra...)
}

var (
	aspnetapp = Target{Kind: KindDeploy, Namespace: "win-demo", Name: "aspnetapp"}
	// The Service addresses the commands must reach.
	aspnetappService = `{{clusterIP "win-demo" "aspnetapp"}}`
	helloService     = `{{clusterIP "demo" "hello"}}`
	// The aspnetapp pod on the first Windows node, and the hello pod on
	// the second Linux worker: each across the VXLAN tunnel from the
	// other operating system.
	aspnetappPod = `{{podOf "win-demo" "aspnetapp" "k8s-lab-win-1"}}`
	helloPod     = `{{podOf "demo" "hello" "k8s-lab-node-2"}}`
)

// LabVerification is the lab's cross-OS verification: busybox in a pod on
// a Linux node to the Windows app, curl.exe and ping from the Windows pod
// to Linux, and the Windows host to a Service. Every address comes from the
// twin when the script runs.
var LabVerification = Script{
	Title: "Verification (simulated: the twin answers each command; ping times and other measurements are illustrative)",
	Steps: []Step{
		{
			Heading: "Linux → Windows: the busybox pod check in default",
			Prompt:  "kubectl run -i --rm check --image=busybox:1.37 --restart=Never -- sh -c '" + checkScript + "'",
			Target:  Target{Kind: KindPod, Namespace: "default", Name: "check"},
			Run:     &RunPod{Name: "check", Image: "busybox:1.37"},
			Argv:    []string{"sh", "-c", checkScript},
			After:   []string{`pod "check" deleted from default namespace`, "  (check ran on {{.Node}}, {{.Addr}})"},
			TTLTo:   aspnetappPod,
			Expect:  Expect{Holds: []string{"Address: " + aspnetappService + "\n"}},
		},
		{
			Prompt: "kubectl-hybrid exec node/k8s-lab-node-1 -- ping -c 1 " + aspnetappPod,
			Target: Target{Kind: KindNode, Name: "k8s-lab-node-1"},
			Argv:   []string{"ping", "-c", "1", aspnetappPod},
			TTLTo:  aspnetappPod,
		},
		{
			Heading: "Windows → Linux: deploy/aspnetapp in win-demo",
			Prompt:  "kubectl -n win-demo exec deploy/aspnetapp -- " + curlW + " http://hello.demo.svc.cluster.local/healthz",
			Target:  aspnetapp,
			Argv:    curlWArgv("http://hello.demo.svc.cluster.local/healthz"),
			Expect:  Expect{Holds: []string{helloService + " 200\n"}},
		},
		{
			Prompt: "kubectl -n win-demo exec deploy/aspnetapp -- ping -n 2 " + helloPod,
			Target: aspnetapp,
			Argv:   []string{"ping", "-n", "2", helloPod},
			TTLTo:  helloPod,
		},
		{
			// Windows resolves a dotted name without the search list
			// (https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#dns-windows).
			Prompt: "kubectl -n win-demo exec deploy/aspnetapp -- " + curlW + " --max-time 5 http://hello.demo/healthz",
			Target: aspnetapp,
			Argv:   curlWArgv("--max-time", "5", "http://hello.demo/healthz"),
			Expect: Expect{Fail: true},
		},
		{
			Prompt: "kubectl -n win-demo exec deploy/aspnetapp -- " + curlW + " http://aspnetapp/",
			Target: aspnetapp,
			Argv:   curlWArgv("http://aspnetapp/"),
			Expect: Expect{Holds: []string{aspnetappService + " 200\n"}},
		},
		{
			Prompt:  "kubectl -n win-demo exec deploy/aspnetapp -- ping -n 2 1.1.1.1 | tail -3",
			Target:  aspnetapp,
			Argv:    []string{"ping", "-n", "2", "1.1.1.1"},
			Filters: []string{"tail -3"},
			TTLTo:   "1.1.1.1",
		},
		{
			// Expected to fail: a Windows host does not reach ClusterIPs
			// (https://kubernetes.io/docs/concepts/services-networking/windows-networking/#limitations).
			Heading: `The Windows host: PS C:\> curl.exe http://` + aspnetappService + " on k8s-lab-win-1",
			Target:  Target{Kind: KindNode, Name: "k8s-lab-win-1"},
			Probe:   &Probe{What: "curl.exe http://" + aspnetappService + " on k8s-lab-win-1", Proto: trace.TCP, Dst: aspnetappService, Port: 80},
			Expect:  Expect{Fail: true},
		},
	},
}
