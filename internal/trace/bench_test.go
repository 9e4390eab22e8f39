package trace

import (
	"fmt"
	"strings"
	"testing"
)

// syntheticWorkloads is a synthetic cluster on top of the lab's nodes:
// namespaces each with a Deployment of Linux pods behind a Service and a
// NetworkPolicy with a namespace selector, so that every trace crosses
// kube-proxy's maps, Calico's policy index and the Windows load balancers
// at a realistic size.
func syntheticWorkloads(namespaces, replicas int) string {
	var b strings.Builder
	for i := 0; i < namespaces; i++ {
		fmt.Fprintf(&b, `apiVersion: v1
kind: Namespace
metadata: {name: app-%[1]d, labels: {team: t%[2]d}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app-%[1]d}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      os: {name: linux}
      containers:
        - name: web
          image: registry.example/web:1
          ports: [{name: http, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app-%[1]d}
spec:
  clusterIP: 10.110.%[1]d.10
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-team, namespace: app-%[1]d}
spec:
  podSelector: {}
  ingress:
    - from: [{namespaceSelector: {matchLabels: {team: t%[2]d}}}, {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: win-demo}}}]
      ports: [{port: http}]
---
`, i, i%4, replicas)
	}
	return b.String()
}

// BenchmarkTraceWindowsPodToServiceByName is one trace on a synthetic
// cluster: a Windows pod resolving a Service name (its DNS query walked
// too) and connecting through the HNS load balancer and VXLAN to a Linux
// backend behind a NetworkPolicy, and the reply back.
func BenchmarkTraceWindowsPodToServiceByName(b *testing.B) {
	e := buildWith(b, syntheticWorkloads(30, 6))
	src, err := e.ParseSource("deploy/aspnetapp", "win-demo")
	if err != nil {
		b.Fatal(err)
	}
	dst, err := e.ParseTarget("web.app-7.svc.cluster.local", "")
	if err != nil {
		b.Fatal(err)
	}
	if r := e.Trace(src, dst, TCP, 80); !r.Delivered {
		b.Fatalf("not delivered: %s", r.Reason)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Trace(src, dst, TCP, 80)
	}
}
