package dns

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// TestGolden keeps whole traces under testdata/golden, one
// file per sentence; -args -update rewrites them.
func TestGolden(t *testing.T) {
	type scenario struct {
		name    string
		extra   bool
		from    func(t *testing.T, c *model.Cluster) Source
		resolve string // a name for Resolve
		// upstream names the source the scenario follows, printed first.
		upstream string
		verified bool // the lab with testdata/verified.yaml (pods verified)
	}
	fixed := func(s Source) func(*testing.T, *model.Cluster) Source {
		return func(*testing.T, *model.Cluster) Source { return s }
	}
	scenarios := []scenario{
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
			r := Resolve(c, from, sc.resolve)
			if r.Resolver != ResolverWindows && !from.IsNode() {
				fmt.Fprintf(&b, "# /etc/resolv.conf\n%s\n", r.Config.ResolvConf())
			}
			b.WriteString(r.String())
			goldenFile(t, fileName(sc.name), b.String())
		})
	}
}
