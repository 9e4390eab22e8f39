package trace

import (
	"strings"
	"testing"
)

const headlessHello = `apiVersion: v1
kind: Service
metadata: {name: hello-pods, namespace: demo}
spec:
  clusterIP: None
  selector: {app.kubernetes.io/name: hello}
  ports: [{name: http, port: 8080}]
`

func TestNamesResolveAsCoreDNSAnswersThem(t *testing.T) {
	e := buildWith(t, headlessHello)
	for _, tc := range []struct {
		name      string
		src, ns   string
		dst       string
		port      int
		delivered bool
		resolved  string // prefix of the address the name resolved to
		reason    string
	}{
		{name: "a Service name resolves to its ClusterIP",
			src: "pod/check", ns: "default", dst: "hello.demo.svc.cluster.local", port: 80, delivered: true, resolved: "10.97.141.163"},
		{name: "a headless Service resolves to its ready endpoints",
			src: "pod/check", ns: "default", dst: "hello-pods.demo.svc.cluster.local", port: 8080, delivered: true, resolved: "172.21."},
		{name: "svc/NAME of a headless Service goes through its name",
			src: "pod/default/check", ns: "demo", dst: "svc/hello-pods", port: 8080, delivered: true, resolved: "172.21."},
		{name: "a missing Service is NXDOMAIN",
			src: "pod/check", ns: "default", dst: "nope.demo.svc.cluster.local", port: 80, reason: "NXDOMAIN"},
		{name: "a Windows pod resolves a single-label name with its namespace suffix",
			src: "deploy/aspnetapp", ns: "win-demo", dst: "aspnetapp", port: 80, delivered: true, resolved: "10.102.98.171"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, TCP, tc.port)
			if r.Delivered != tc.delivered {
				t.Fatalf("delivered=%v: %s\n%s", r.Delivered, r.Reason, textOf(r))
			}
			if !strings.HasPrefix(r.Resolved, tc.resolved) {
				t.Errorf("resolved %q, want %q…", r.Resolved, tc.resolved)
			}
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, tc.reason)
			}
		})
	}
}
