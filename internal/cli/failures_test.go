package cli

import (
	"fmt"
	"strings"
	"testing"
)

// failureNow is the moment the failure goldens measure ages from: the
// seed's final get nodes, as the other goldens' clock.
const failureNow = "2026-11-06T21:20:40Z"

// The what-ifs of failures that cascade: each shows its symptom in the
// twin (pods, events, describe, logs, HNS, trace) and check names the
// cause and the fix.
func TestFailureWhatIfsMatchTheirGoldenFiles(t *testing.T) {
	const dir = "../../examples/what-if/"
	noHNS := dir + "no-windows-dataplane.yaml"
	csr := dir + "kubelet-serving-csr-pending.yaml"
	newer := dir + "image-newer-than-host.yaml"
	noEndpoint := dir + "no-services-endpoint.yaml"
	containerd := dir + "containerd-stopped.yaml"
	clockSkew := dir + "clock-skew.yaml"
	stuck := dir + "kubelet-stuck.yaml"
	cases := []struct {
		name string
		args []string
	}{
		{"events of the lab", []string{"get", "events", "-A", "--lab", "--now", failureNow}},
		{"without the windows dataplane pods and events", []string{"get", "pods,events", "-n", "win-demo", "--lab", "-f", noHNS, "--now", failureNow}},
		{"without the windows dataplane every event wide", []string{"get", "events", "-A", "-o", "wide", "--lab", "-f", noHNS, "--now", failureNow}},
		{"without the windows dataplane the node", []string{"get", "nodes", "--lab", "-f", noHNS, "--now", failureNow}},
		{"without the windows dataplane describe pod", []string{"describe", "pod", "-n", "win-demo", "aspnetapp-769559d8ff-dkp9z", "--lab", "-f", noHNS, "--now", failureNow}},
		{"without the windows dataplane describe node", []string{"describe", "node", "k8s-lab-win-1", "--lab", "-f", noHNS, "--now", failureNow}},
		{"without the windows dataplane hns networks", []string{"get", "hnsnetworks", "--node", "k8s-lab-win-1", "--lab", "-f", noHNS}},
		{"without the windows dataplane kube-proxy-windows logs", []string{"logs", "-n", "kube-system", "-l", "k8s-app=kube-proxy-windows", "--lab", "-f", noHNS}},
		{"without the windows dataplane logs of an aspnetapp pod", []string{"logs", "-n", "win-demo", "aspnetapp-769559d8ff-dkp9z", "--lab", "-f", noHNS}},
		{"without the windows dataplane a ping from aspnetapp", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "172.21.172.4", "--proto", "icmp", "--lab", "-f", noHNS}},
		{"without the windows dataplane a request to aspnetapp", []string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "--lab", "-f", noHNS}},
		{"without the windows dataplane check", []string{"check", "--lab", "-f", noHNS}},
		{"without the services endpoint tigerastatus", []string{"get", "tigerastatus", "--lab", "-f", noEndpoint, "--now", failureNow}},
		{"without the services endpoint pods and events", []string{"get", "pods,events", "-n", "win-demo", "--lab", "-f", noEndpoint, "--now", failureNow}},
		{"without the services endpoint check", []string{"check", "--lab", "-f", noEndpoint}},
		{"with the serving csr pending logs", []string{"logs", "-n", "kube-system", "-l", "k8s-app=kube-proxy-windows", "--lab", "-f", csr}},
		{"with the serving csr pending exec", []string{"exec", "-n", "win-demo", "pod/aspnetapp-769559d8ff-dkp9z", "--lab", "-f", csr, "--", "cmd", "/c", "ver"}},
		{"with the serving csr pending csrs", []string{"get", "csr", "--lab", "-f", csr, "--now", failureNow}},
		{"with the serving csr pending check", []string{"check", "--lab", "-f", csr}},
		{"with an image newer than the host pods and events", []string{"get", "pods,events", "-n", "win-demo", "--lab", "-f", newer, "--now", failureNow}},
		{"with an image newer than the host describe pod", []string{"describe", "pod", "-n", "win-demo", "aspnetapp-769559d8ff-vk445", "--lab", "-f", newer, "--now", failureNow}},
		{"with an image newer than the host check", []string{"check", "--lab", "-f", newer}},
		{"with the windows block full events", []string{"get", "events", "-n", "win-demo", "--lab", "-f", dir + "windows-block-full/", "--now", failureNow}},
		{"with the windows block full check", []string{"check", "--lab", "-f", dir + "windows-block-full/"}},
		{"with 60 aspnetapp replicas events", []string{"get", "events", "-n", "win-demo", "--sort-by", ".metadata.name", "--lab", "-f", dir + "aspnetapp-60.yaml", "--now", failureNow}},
		{"with 60 aspnetapp replicas check", []string{"check", "--lab", "-f", dir + "aspnetapp-60.yaml"}},
		{"with containerd stopped nodes pods and endpoints", []string{"get", "nodes,pods,endpointslices", "-n", "win-demo", "-o", "wide", "--lab", "-f", containerd, "--now", failureNow}},
		{"with containerd stopped describe node", []string{"describe", "node", "k8s-lab-win-1", "--lab", "-f", containerd, "--now", failureNow}},
		{"with containerd stopped a request to aspnetapp", []string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "--lab", "-f", containerd}},
		{"with containerd stopped check", []string{"check", "--lab", "-f", containerd}},
		{"with the clock skewed nodes and events", []string{"get", "nodes,events", "-A", "--lab", "-f", clockSkew, "--now", failureNow}},
		{"with the clock skewed check", []string{"check", "--lab", "-f", clockSkew}},
		{"with the kubelet stuck nodes", []string{"get", "nodes", "-o", "wide", "--lab", "-f", stuck, "--now", failureNow}},
		{"with the kubelet stuck pods", []string{"get", "pods", "-n", "win-demo", "-o", "jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}", "--lab", "-f", stuck}},
		{"with the kubelet stuck check", []string{"check", "--lab", "-f", stuck}},
		{"kube-proxy-windows logs of the lab", []string{"logs", "-n", "kube-system", "-l", "k8s-app=kube-proxy-windows", "--lab"}},
		{"calico-node-windows node logs of the lab", []string{"logs", "-n", "calico-system", "-l", "k8s-app=calico-node-windows", "-c", "node", "--lab"}},
		{"calico-node logs of the lab", []string{"logs", "-n", "calico-system", "-l", "k8s-app=calico-node", "--tail", "2", "--lab"}},
		{"kube-proxy logs of the lab", []string{"logs", "-n", "kube-system", "-l", "k8s-app=kube-proxy", "--lab"}},
		{"logs of a pod the twin does not model", []string{"logs", "-n", "demo", "-l", "app.kubernetes.io/name=hello", "--lab"}},
		{"logs of a missing pod", []string{"logs", "-n", "demo", "nope", "--lab"}},
		{"logs without a pod", []string{"logs", "--lab"}},
		{"a now that is no time", []string{"get", "pods", "--lab", "--now", "yesterday"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(tc.args, " "), out, errOut, code)
			goldenFile(t, "failure-"+strings.ReplaceAll(tc.name, " ", "-")+".txt", got)
		})
	}
}
