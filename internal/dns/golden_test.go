package dns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// TestGolden keeps whole traces and tool outputs under testdata/golden, one
// file per sentence; -args -update rewrites them.
func TestGolden(t *testing.T) {
	servercore := Source{Namespace: "win-demo", Pod: "tools", Node: "k8s-lab-win-1", Image: "mcr.microsoft.com/windows/servercore:ltsc2025"}
	type scenario struct {
		name    string
		extra   bool
		from    func(t *testing.T, c *model.Cluster) Source
		resolve string   // a name for Resolve
		nslook  []string // or nslookup arguments
		rdn     []string // or Resolve-DnsName arguments
		// upstream names the source the scenario follows, printed first.
		upstream string
		verified bool // the lab with testdata/verified.yaml (pods verified)
	}
	fixed := func(s Source) func(*testing.T, *model.Cluster) Source {
		return func(*testing.T, *model.Cluster) Source { return s }
	}
	scenarios := []scenario{
		{name: "busybox check pod nslookup aspnetapp.win-demo.svc.cluster.local", from: fixed(checkPod), nslook: []string{"aspnetapp.win-demo.svc.cluster.local"}},
		{name: "busybox check pod nslookup of an unknown Service", from: fixed(checkPod), nslook: []string{"nosuch.default.svc.cluster.local"}},
		{name: "busybox pod in demo nslookup hello", from: busyboxInDemo, nslook: []string{"hello"}},
		{name: "busybox check pod nslookup of a headless Service", extra: true, from: fixed(checkPod), nslook: []string{"hello-headless.demo.svc.cluster.local"}},
		{name: "busybox check pod nslookup of an ExternalName", extra: true, from: fixed(checkPod), nslook: []string{"api.demo.svc.cluster.local"}},
		{name: "aspnetapp pod nslookup", from: aspnetapp, nslook: []string{"hello.demo.svc.cluster.local"}},
		{name: "servercore pod nslookup hello.demo", from: fixed(servercore), nslook: []string{"hello.demo"}},
		{name: "servercore pod nslookup of an unknown name", from: fixed(servercore), nslook: []string{"nosuch"}},
		{name: "Windows node nslookup of the API name", from: fixed(NodeSource("k8s-lab-win-1")), nslook: []string{"k8s-lab-api.example.com."}},
		{name: "aspnetapp pod resolves hello.demo.svc.cluster.local", from: aspnetapp, resolve: "hello.demo.svc.cluster.local"},
		{name: "aspnetapp pod resolves hello.demo", from: aspnetapp, resolve: "hello.demo"},
		{name: "aspnetapp pod resolves aspnetapp", from: aspnetapp, resolve: "aspnetapp"},
		{name: "hello pod resolves hello", from: helloPod, resolve: "hello"},
		{name: "hello pod resolves hello.demo", from: helloPod, resolve: "hello.demo"},
		{name: "hello pod resolves the API name", from: helloPod, resolve: "k8s-lab-api.example.com"},
		{name: "hello pod resolves an Internet name", from: helloPod, resolve: "learn.microsoft.com"},
		{name: "hello pod resolves a pod by hostname and subdomain", extra: true, from: helloPod, resolve: "db-0.db"},
		{name: "lookup pod resolves a name whose first candidate is an ExternalName to nowhere", extra: true, from: lookupPod, resolve: "router", upstream: "glibc resolv/res_query.c __res_context_query, __res_context_search"},
		{name: "lookup pod resolves a short name of the node network", extra: true, from: lookupPod, resolve: "k8s-lab-api"},
		{name: "busybox check pod nslookup -type=srv of a named port", from: fixed(checkPod), nslook: []string{"-type=srv", "_http._tcp.hello.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV; busybox networking/nslookup.c parse_reply"},
		{name: "busybox check pod nslookup -type=srv of a headless Service", extra: true, from: fixed(checkPod), nslook: []string{"-type=srv", "_http._tcp.hello-headless.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV, plugin/kubernetes/kubernetes.go findServices"},
		{name: "busybox check pod nslookup -type=srv of an ExternalName", extra: true, from: fixed(checkPod), nslook: []string{"-type=srv", "api.demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go Services (SRV for external services)"},
		{name: "busybox check pod nslookup of two labels left of an ExternalName", extra: true, from: fixed(checkPod), nslook: []string{"x.y.api.demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go findServices, parse.go parseRequest (CoreDNS 1.11.0)"},
		{name: "busybox check pod nslookup -type=txt of a namespace", from: fixed(checkPod), nslook: []string{"-type=txt", "demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go Services, TXT (CoreDNS 1.10.1)"},
		{name: "busybox check pod nslookup of the default NS name", from: fixed(checkPod), nslook: []string{"ns.dns.cluster.local"}, upstream: "coredns plugin/kubernetes/ns.go isDefaultNS, nsAddrs"},
		{name: "busybox check pod nslookup keeps the case of the name", from: fixed(checkPod), nslook: []string{"Hello.Demo.svc.Cluster.Local"}, upstream: "coredns plugin/kubernetes/handler.go ServeDNS (case of the query kept)"},
		{name: "busybox check pod nslookup of a forwarded name", from: fixed(checkPod), nslook: []string{"k8s-lab-api.example.com"}, upstream: "coredns plugin/cache/item.go toMsg (a miss assumed); busybox networking/nslookup.c parse_reply"},
		{name: "servercore pod Resolve-DnsName -Type SRV of a named port", from: fixed(servercore), rdn: []string{"-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV (additional section)"},
		{name: "servercore pod Resolve-DnsName -Type SRV of a headless Service", extra: true, from: fixed(servercore), rdn: []string{"_http._tcp.hello-headless.demo.svc.cluster.local", "SRV"}},
		{name: "servercore pod Resolve-DnsName of a Service name", from: fixed(servercore), rdn: []string{"hello.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of an ExternalName inside the zone", extra: true, from: fixed(servercore), rdn: []string{"hello-alias.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of an unknown Service", from: fixed(servercore), rdn: []string{"nosuch.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of a short name", from: fixed(servercore), rdn: []string{"aspnetapp"}},
		{name: "Windows node Resolve-DnsName -Type SRV asking the cluster DNS", from: fixed(NodeSource("k8s-lab-win-1")), rdn: []string{"-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local", "-Server", "10.96.0.10"}},
		{name: "busybox check pod nslookup of a finished pod with pods verified", verified: true, from: fixed(checkPod), nslook: []string{"172-21-211-40.demo.pod.cluster.local"},
			upstream: "coredns plugin/kubernetes/controller.go podListFunc (status.phase!=Succeeded,Failed,Unknown)"},
		{name: "busybox check pod nslookup of a running pod with pods verified", verified: true, from: fixed(checkPod), nslook: []string{"172-21-211-25.demo.pod.cluster.local"},
			upstream: "coredns plugin/kubernetes/kubernetes.go findPods"},
		{name: "servercore pod nslookup -debug of a Service", from: fixed(servercore), nslook: []string{"-debug", "hello.demo"},
			upstream: "nslookup.exe -debug transcripts; coredns plugin/kubernetes/handler.go (AA set, RA clear), plugin/backend_lookup.go SOA"},
		{name: "servercore pod nslookup -debug of an unknown Service", from: fixed(servercore), nslook: []string{"-debug", "nosuch.demo.svc.cluster.local."},
			upstream: "coredns plugin/backend_lookup.go BackendError, SOA"},
		{name: "servercore pod nslookup -debug of the node network's name", from: fixed(servercore), nslook: []string{"-debug", "k8s-lab-api.example.com."}},
		{name: "servercore pod nslookup -type=srv of a named port", from: fixed(servercore), nslook: []string{"-type=srv", "_http._tcp.hello.demo.svc.cluster.local"},
			upstream: "nslookup.exe SRV service location samples; coredns plugin/backend_lookup.go SRV (additional section)"},
		{name: "servercore pod nslookup -type=srv -debug of a headless Service", extra: true, from: fixed(servercore), nslook: []string{"-type=srv", "-debug", "_http._tcp.hello-headless.demo.svc.cluster.local."},
			upstream: "coredns plugin/backend_lookup.go SRV, plugin/kubernetes/kubernetes.go findServices"},
		{name: "Linux node resolves a Service name", from: fixed(NodeSource("k8s-lab-node-2")), resolve: "hello.demo.svc.cluster.local"},
		{name: "Windows node resolves the router by its short name", from: fixed(NodeSource("k8s-lab-win-1")), resolve: "router"},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			c := lab(t)
			if sc.extra {
				c = labExtra(t)
			}
			if sc.verified {
				c = labVerified(t)
			}
			from := sc.from(t, c)
			var b strings.Builder
			if sc.upstream != "" {
				fmt.Fprintf(&b, "# upstream: %s\n", sc.upstream)
			}
			if sc.resolve != "" {
				r := Resolve(c, from, sc.resolve)
				if r.Resolver != ResolverWindows && !from.IsNode() {
					fmt.Fprintf(&b, "# /etc/resolv.conf\n%s\n", r.Config.ResolvConf())
				}
				b.WriteString(r.String())
			} else if sc.rdn != nil {
				out, errOut, exit := ResolveDNSName(c, from, sc.rdn)
				fmt.Fprintf(&b, "PS> Resolve-DnsName %s    # in %s (image %s)\n", strings.Join(sc.rdn, " "), from, orUnknown(from.Image))
				fmt.Fprintf(&b, "--- stdout\n%s--- stderr\n%s--- exit %d\n", out, errOut, exit)
			} else {
				out, errOut, exit := NSLookup(c, from, sc.nslook)
				fmt.Fprintf(&b, "$ nslookup %s    # in %s (image %s)\n", strings.Join(sc.nslook, " "), from, orUnknown(from.Image))
				fmt.Fprintf(&b, "--- stdout\n%s--- stderr\n%s--- exit %d\n", out, errOut, exit)
			}
			goldenFile(t, fileName(sc.name), b.String())
		})
	}
}
