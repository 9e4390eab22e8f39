package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeProxyCases are Services kube-proxy treats in ways an earlier twin
// did not: a selector-less Service whose slice names another port than
// targetPort, a LoadBalancer Service with externalTrafficPolicy Local and
// its healthCheckNodePort, one handed to another service proxy, and a
// LoadBalancer Service whose only endpoint is terminating.
const kubeProxyCases = `apiVersion: v1
kind: Service
metadata: {name: hello-external, namespace: win-demo}
spec:
  ports: [{name: http, port: 80, targetPort: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: hello-external-1, namespace: win-demo, labels: {kubernetes.io/service-name: hello-external}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints: [{addresses: [172.21.172.4]}]
---
apiVersion: v1
kind: Service
metadata: {name: hello-local, namespace: demo}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  healthCheckNodePort: 32100
  selector: {app.kubernetes.io/name: hello}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata:
  name: hello-mesh
  namespace: demo
  labels: {service.kubernetes.io/service-proxy-name: other-proxy}
spec:
  selector: {app.kubernetes.io/name: hello}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: Service
metadata: {name: draining, namespace: demo}
spec:
  type: LoadBalancer
  clusterIP: 10.96.200.10
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 31010}]
status:
  loadBalancer:
    ingress: [{ip: 192.168.10.200}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: draining-1, namespace: demo, labels: {kubernetes.io/service-name: draining}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
  - addresses: [172.21.172.4]
    conditions: {ready: false, serving: true, terminating: true}
`

// Traces to the Services above, compared with
// testdata/golden (-update rewrites).
func TestKubeProxyCasesMatchTheirGoldenFiles(t *testing.T) {
	e := buildWith(t, kubeProxyCases)
	for _, tc := range []struct {
		file    string
		src, ns string
		dst     string
		port    int
	}{
		// kubernetes#132647: the load balancer's internal port is the
		// slice's 8080, where hello listens.
		{file: "aspnetapp-to-a-selector-less-service", src: "deploy/aspnetapp", ns: "win-demo", dst: "svc/win-demo/hello-external", port: 80},
		// kube-proxy's health server answers on the healthCheckNodePort.
		{file: "check-to-the-health-check-node-port", src: "pod/check", ns: "default", dst: "node/k8s-lab-win-1", port: 32100},
		{file: "check-to-the-health-check-node-port-on-linux", src: "pod/check", ns: "default", dst: "node/k8s-lab-node-2", port: 32100},
		// No kube-proxy programs a Service labelled for another proxy.
		{file: "aspnetapp-to-a-service-of-another-proxy", src: "deploy/aspnetapp", ns: "win-demo", dst: "svc/demo/hello-mesh", port: 80},
		{file: "check-to-a-service-of-another-proxy", src: "pod/check", ns: "default", dst: "svc/demo/hello-mesh", port: 80},
		// The draining Service's only endpoint terminates: its ClusterIP
		// load balancer takes it, no ingress load balancer exists.
		{file: "aspnetapp-to-a-draining-service", src: "deploy/aspnetapp", ns: "win-demo", dst: "svc/demo/draining", port: 80},
		// nftables falls back to the serving terminating endpoint for
		// every address of the Service (CategorizeEndpoints).
		{file: "check-to-a-draining-service", src: "pod/check", ns: "default", dst: "svc/demo/draining", port: 80},
		// winkernel makes no NodePort load balancer for it.
		{file: "check-to-the-draining-node-port-on-windows", src: "pod/check", ns: "default", dst: "node/k8s-lab-win-1", port: 31010},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, TCP, tc.port)
			var txt strings.Builder
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, "trace-kube-proxy-"+tc.file+".txt", txt.String())
		})
	}
}

// kube-proxy started without a network name exits: the trace says so
// where the Service's load balancer is missing (winkernel getNetworkName).
func TestAWindowsKubeProxyWithoutANetworkNameLeavesServicesUnbalanced(t *testing.T) {
	ds, err := os.ReadFile(filepath.Join("..", "check", "testdata", "HYB043", "fail.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := traceOf(t, buildWith(t, string(ds)), "deploy/aspnetapp", "svc/demo/hello", "win-demo", TCP, 80)
	var txt strings.Builder
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "trace-kube-proxy-aspnetapp-to-hello-without-a-network-name.txt", txt.String())
}
