package trace

import (
	"strings"
	"testing"
)

// Traces as text and JSON, compared with testdata/golden (-update rewrites).
func TestTracesMatchTheirGoldenFiles(t *testing.T) {
	for _, tc := range []struct {
		file     string
		policies []string
		src, ns  string
		dst      string
		proto    Proto
		port     int
	}{
		{file: "check-to-aspnetapp-by-name", src: "pod/check", ns: "default", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80},
		{file: "check-pings-aspnetapp", src: "pod/check", ns: "default", dst: "172.21.41.6", proto: ICMP},
		{file: "aspnetapp-pings-hello", src: "deploy/aspnetapp", ns: "win-demo", dst: "172.21.172.4", proto: ICMP},
		{file: "aspnetapp-to-hello-by-full-name", src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", proto: TCP, port: 80},
		{file: "aspnetapp-to-dotted-short-name", src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo", proto: TCP, port: 80},
		{file: "aspnetapp-pings-the-internet", src: "deploy/aspnetapp", ns: "win-demo", dst: "1.1.1.1", proto: ICMP},
		{file: "windows-host-to-clusterip", src: "node/k8s-lab-win-1", dst: "10.102.98.171", proto: TCP, port: 80},
		{file: "linux-node-pings-aspnetapp", src: "node/k8s-lab-node-1", dst: "172.21.41.6", proto: ICMP},
		{file: "deny-all-ingress-in-win-demo", policies: []string{denyAllIngressWinDemo}, src: "pod/check", ns: "default", dst: "svc/win-demo/aspnetapp", proto: TCP},
		{file: "named-port-on-windows", policies: []string{aspnetappNamedPort}, src: "pod/check", ns: "default", dst: "172.21.41.6", proto: TCP, port: 8080},
	} {
		t.Run(tc.file, func(t *testing.T) {
			e := lab(t)
			if len(tc.policies) > 0 {
				e = buildWith(t, tc.policies...)
			}
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, tc.port)
			var txt, js strings.Builder
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, "trace-"+tc.file+".txt", txt.String())
			goldenFile(t, "trace-"+tc.file+".json", js.String())
		})
	}
}
