package console

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The DNS tools' outputs, one file per sentence under testdata/dns;
// -args -update rewrites them. The clusters are internal/dns's fixtures.
func TestDNSToolsMatchTheirGoldenFiles(t *testing.T) {
	servercore := dns.Source{Namespace: "win-demo", Pod: "tools", Node: "k8s-lab-win-1", Image: "mcr.microsoft.com/windows/servercore:ltsc2025"}
	type scenario struct {
		name     string
		extra    bool
		from     func(t *testing.T, c *model.Cluster) dns.Source
		nslook   []string // nslookup arguments
		rdn      []string // or Resolve-DnsName arguments
		upstream string   // the source the scenario follows, printed first
		verified bool     // the lab with pods verified
	}
	fixed := func(s dns.Source) func(*testing.T, *model.Cluster) dns.Source {
		return func(*testing.T, *model.Cluster) dns.Source { return s }
	}
	scenarios := []scenario{
		{name: "busybox check pod nslookup aspnetapp.win-demo.svc.cluster.local", from: fixed(dnsCheckPod), nslook: []string{"aspnetapp.win-demo.svc.cluster.local"}},
		{name: "busybox check pod nslookup of an unknown Service", from: fixed(dnsCheckPod), nslook: []string{"nosuch.default.svc.cluster.local"}},
		{name: "busybox pod in demo nslookup hello", from: busyboxInDemo, nslook: []string{"hello"}},
		{name: "busybox check pod nslookup of a headless Service", extra: true, from: fixed(dnsCheckPod), nslook: []string{"hello-headless.demo.svc.cluster.local"}},
		{name: "busybox check pod nslookup of an ExternalName", extra: true, from: fixed(dnsCheckPod), nslook: []string{"api.demo.svc.cluster.local"}},
		{name: "aspnetapp pod nslookup", from: dnsAspnetapp, nslook: []string{"hello.demo.svc.cluster.local"}},
		{name: "servercore pod nslookup hello.demo", from: fixed(servercore), nslook: []string{"hello.demo"}},
		{name: "servercore pod nslookup of an unknown name", from: fixed(servercore), nslook: []string{"nosuch"}},
		{name: "Windows node nslookup of the API name", from: fixed(dns.NodeSource("k8s-lab-win-1")), nslook: []string{"k8s-lab-api.example.com."}},
		{name: "busybox check pod nslookup -type=srv of a named port", from: fixed(dnsCheckPod), nslook: []string{"-type=srv", "_http._tcp.hello.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV; busybox networking/nslookup.c parse_reply"},
		{name: "busybox check pod nslookup -type=srv of a headless Service", extra: true, from: fixed(dnsCheckPod), nslook: []string{"-type=srv", "_http._tcp.hello-headless.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV, plugin/kubernetes/kubernetes.go findServices"},
		{name: "busybox check pod nslookup -type=srv of an ExternalName", extra: true, from: fixed(dnsCheckPod), nslook: []string{"-type=srv", "api.demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go Services (SRV for external services)"},
		{name: "busybox check pod nslookup of two labels left of an ExternalName", extra: true, from: fixed(dnsCheckPod), nslook: []string{"x.y.api.demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go findServices, parse.go parseRequest (CoreDNS 1.11.0)"},
		{name: "busybox check pod nslookup -type=txt of a namespace", from: fixed(dnsCheckPod), nslook: []string{"-type=txt", "demo.svc.cluster.local"}, upstream: "coredns plugin/kubernetes/kubernetes.go Services, TXT (CoreDNS 1.10.1)"},
		{name: "busybox check pod nslookup of the default NS name", from: fixed(dnsCheckPod), nslook: []string{"ns.dns.cluster.local"}, upstream: "coredns plugin/kubernetes/ns.go isDefaultNS, nsAddrs"},
		{name: "busybox check pod nslookup keeps the case of the name", from: fixed(dnsCheckPod), nslook: []string{"Hello.Demo.svc.Cluster.Local"}, upstream: "coredns plugin/kubernetes/handler.go ServeDNS (case of the query kept)"},
		{name: "busybox check pod nslookup of a forwarded name", from: fixed(dnsCheckPod), nslook: []string{"k8s-lab-api.example.com"}, upstream: "coredns plugin/cache/item.go toMsg (a miss assumed); busybox networking/nslookup.c parse_reply"},
		{name: "servercore pod Resolve-DnsName -Type SRV of a named port", from: fixed(servercore), rdn: []string{"-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local"}, upstream: "coredns plugin/backend_lookup.go SRV (additional section)"},
		{name: "servercore pod Resolve-DnsName -Type SRV of a headless Service", extra: true, from: fixed(servercore), rdn: []string{"_http._tcp.hello-headless.demo.svc.cluster.local", "SRV"}},
		{name: "servercore pod Resolve-DnsName of a Service name", from: fixed(servercore), rdn: []string{"hello.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of an ExternalName inside the zone", extra: true, from: fixed(servercore), rdn: []string{"hello-alias.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of an unknown Service", from: fixed(servercore), rdn: []string{"nosuch.demo.svc.cluster.local"}},
		{name: "servercore pod Resolve-DnsName of a short name", from: fixed(servercore), rdn: []string{"aspnetapp"}},
		{name: "Windows node Resolve-DnsName -Type SRV asking the cluster DNS", from: fixed(dns.NodeSource("k8s-lab-win-1")), rdn: []string{"-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local", "-Server", "10.96.0.10"}},
		{name: "busybox check pod nslookup of a finished pod with pods verified", verified: true, from: fixed(dnsCheckPod), nslook: []string{"172-21-211-40.demo.pod.cluster.local"},
			upstream: "coredns plugin/kubernetes/controller.go podListFunc (status.phase!=Succeeded,Failed,Unknown)"},
		{name: "busybox check pod nslookup of a running pod with pods verified", verified: true, from: fixed(dnsCheckPod), nslook: []string{"172-21-211-25.demo.pod.cluster.local"},
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
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			c := dnsLab(t)
			if sc.extra {
				c = dnsLabExtra(t)
			}
			if sc.verified {
				c = dnsLabVerified(t)
			}
			from := sc.from(t, c)
			var b strings.Builder
			if sc.upstream != "" {
				fmt.Fprintf(&b, "# upstream: %s\n", sc.upstream)
			}
			if sc.rdn != nil {
				out, errOut, exit := resolveDNSName(c, from, sc.rdn)
				fmt.Fprintf(&b, "PS> Resolve-DnsName %s    # in %s (image %s)\n", strings.Join(sc.rdn, " "), from, orUnknown(from.Image))
				fmt.Fprintf(&b, "--- stdout\n%s--- stderr\n%s--- exit %d\n", out, errOut, exit)
			} else {
				out, errOut, exit := nsLookup(c, from, sc.nslook)
				fmt.Fprintf(&b, "$ nslookup %s    # in %s (image %s)\n", strings.Join(sc.nslook, " "), from, orUnknown(from.Image))
				fmt.Fprintf(&b, "--- stdout\n%s--- stderr\n%s--- exit %d\n", out, errOut, exit)
			}
			golden.Check(t, filepath.Join("testdata", "dns", dnsFileName(sc.name)), b.String())
		})
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// dnsFileName turns a sentence into a golden file name.
func dnsFileName(s string) string {
	r := strings.NewReplacer(" ", "_", "/", "_", ":", "", "\"", "", "'", "", ",", "")
	return r.Replace(s) + ".txt"
}

var (
	dnsOnce, dnsExtraOnce, dnsVerifiedOnce sync.Once
	dnsC, dnsExtraC, dnsVerifiedC          *model.Cluster
	dnsErr, dnsExtraErr, dnsVerifiedErr    error
)

func dnsBuild(files ...string) (*model.Cluster, error) {
	s, err := load.Load(load.Options{Lab: true, Filenames: files})
	if err != nil {
		return nil, err
	}
	return engine.Build(s)
}

// dnsLab is the built-in lab as load and engine build it.
func dnsLab(t *testing.T) *model.Cluster {
	t.Helper()
	dnsOnce.Do(func() { dnsC, dnsErr = dnsBuild() })
	if dnsErr != nil {
		t.Fatal(dnsErr)
	}
	return dnsC
}

// dnsLabExtra is the lab plus internal/dns's testdata/extra.yaml (headless
// and ExternalName Services, a pod with hostname and subdomain).
func dnsLabExtra(t *testing.T) *model.Cluster {
	t.Helper()
	dnsExtraOnce.Do(func() { dnsExtraC, dnsExtraErr = dnsBuild(filepath.Join("..", "dns", "testdata", "extra.yaml")) })
	if dnsExtraErr != nil {
		t.Fatal(dnsExtraErr)
	}
	return dnsExtraC
}

// dnsLabVerified is the lab plus internal/dns's testdata/verified.yaml:
// kubeadm's Corefile with pods verified, and two finished pods of demo.
func dnsLabVerified(t *testing.T) *model.Cluster {
	t.Helper()
	dnsVerifiedOnce.Do(func() {
		dnsVerifiedC, dnsVerifiedErr = dnsBuild(filepath.Join("..", "dns", "testdata", "verified.yaml"))
	})
	if dnsVerifiedErr != nil {
		t.Fatal(dnsVerifiedErr)
	}
	return dnsVerifiedC
}

// dnsCheckPod is `kubectl run -i --rm check --image=busybox:1.37` in
// default, which lands on k8s-lab-node-2.
var dnsCheckPod = dns.Source{Namespace: "default", Pod: "check", Node: "k8s-lab-node-2", Image: "busybox:1.37"}

func dnsPod(t *testing.T, c *model.Cluster, ns, name string) dns.Source {
	t.Helper()
	s, ok := dns.FindPod(c, ns, name)
	if !ok {
		t.Fatalf("no pod %s/%s", ns, name)
	}
	return s
}

// dnsAspnetapp is the first aspnetapp pod (Windows, win-demo).
func dnsAspnetapp(t *testing.T, c *model.Cluster) dns.Source {
	return dnsPod(t, c, "win-demo", "aspnetapp-769559d8ff-dkp9z")
}

// dnsHelloPod is a Linux pod of the demo namespace.
func dnsHelloPod(t *testing.T, c *model.Cluster) dns.Source {
	return dnsPod(t, c, "demo", "hello-55fb8f8684-69mvv")
}

// dnsLookupPod is extra.yaml's busybox pod of demo with example.com added
// to its search list.
func dnsLookupPod(t *testing.T, c *model.Cluster) dns.Source { return dnsPod(t, c, "demo", "lookup") }
