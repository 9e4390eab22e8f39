package dns

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestResolve(t *testing.T) {
	type src func(t *testing.T, c *model.Cluster) Source
	check := func(*testing.T, *model.Cluster) Source { return checkPod }
	win := aspnetapp
	hello := helloPod
	node := func(n string) src { return func(*testing.T, *model.Cluster) Source { return NodeSource(n) } }
	tests := []struct {
		name     string
		extra    bool
		from     src
		q        string
		outcome  Outcome
		addrs    []string
		tried    []string // names queried, in order
		curlExit int      // -1: unknown
		lastPath Path     // path of the last query, when set
	}{
		{name: "a busybox pod in default resolves aspnetapp.win-demo.svc.cluster.local to its ClusterIP",
			from: check, q: "aspnetapp.win-demo.svc.cluster.local", outcome: Resolved, addrs: []string{"10.102.98.171"},
			tried: []string{"aspnetapp.win-demo.svc.cluster.local.default.svc.cluster.local", "aspnetapp.win-demo.svc.cluster.local.svc.cluster.local",
				"aspnetapp.win-demo.svc.cluster.local.cluster.local", "aspnetapp.win-demo.svc.cluster.local"}},
		{name: "the aspnetapp pod resolves hello.demo.svc.cluster.local as is",
			from: win, q: "hello.demo.svc.cluster.local", outcome: Resolved, addrs: []string{"10.97.141.163"},
			tried: []string{"hello.demo.svc.cluster.local"}},
		{name: "the aspnetapp pod does not resolve hello.demo because Windows adds no suffix to a dotted name",
			from: win, q: "hello.demo", outcome: NotFound, tried: []string{"hello.demo"}, curlExit: 6},
		{name: "the aspnetapp pod resolves aspnetapp through its namespace suffix",
			from: win, q: "aspnetapp", outcome: Resolved, addrs: []string{"10.102.98.171"},
			tried: []string{"aspnetapp.win-demo.svc.cluster.local"}},
		{name: "a Windows pod tries every suffix for a single label and then gives up",
			from: win, q: "nosuch", outcome: NotFound, curlExit: 6,
			tried: []string{"nosuch.win-demo.svc.cluster.local", "nosuch.svc.cluster.local", "nosuch.cluster.local"}},
		{name: "a trailing dot makes a Windows name absolute",
			from: win, q: "kubernetes.default.svc.cluster.local.", outcome: Resolved, addrs: []string{"10.96.0.1"},
			tried: []string{"kubernetes.default.svc.cluster.local"}},
		{name: "a Linux pod in demo resolves hello through the first search domain",
			from: hello, q: "hello", outcome: Resolved, addrs: []string{"10.97.141.163"},
			tried: []string{"hello.demo.svc.cluster.local"}},
		{name: "a Linux pod in demo resolves hello.demo through the search list because ndots is 5",
			from: hello, q: "hello.demo", outcome: Resolved, addrs: []string{"10.97.141.163"},
			tried: []string{"hello.demo.demo.svc.cluster.local", "hello.demo.svc.cluster.local"}},
		{name: "a Linux pod gets NXDOMAIN for every expansion of an unknown Service",
			from: hello, q: "nosuch", outcome: NotFound, curlExit: 6,
			tried: []string{"nosuch.demo.svc.cluster.local", "nosuch.svc.cluster.local", "nosuch.cluster.local", "nosuch"}},
		{name: "a Linux pod resolves kube-dns in kube-system to the DNS address",
			from: hello, q: "kube-dns.kube-system.svc.cluster.local", outcome: Resolved, addrs: []string{"10.96.0.10"}},
		{name: "a pod resolves the API name through CoreDNS's forward to the node network DNS",
			from: hello, q: "k8s-lab-api.example.com", outcome: Resolved, addrs: []string{"192.168.10.23"},
			tried: []string{"k8s-lab-api.example.com.demo.svc.cluster.local", "k8s-lab-api.example.com.svc.cluster.local",
				"k8s-lab-api.example.com.cluster.local", "k8s-lab-api.example.com"}, lastPath: PathForward},
		{name: "a Windows pod resolves the API name as is through forward",
			from: win, q: "k8s-lab-api.example.com", outcome: Resolved, addrs: []string{"192.168.10.23"}, lastPath: PathForward},
		{name: "a name nobody in the model knows is an explicit unknown",
			from: hello, q: "learn.microsoft.com", outcome: Unknown, curlExit: -1, lastPath: PathForward},
		{name: "a Linux node does not resolve cluster names",
			from: node("k8s-lab-node-1"), q: "hello.demo.svc.cluster.local", outcome: NotFound, curlExit: 6,
			tried: []string{"hello.demo.svc.cluster.local"}},
		{name: "a Linux node resolves the API name from the node network DNS",
			from: node("k8s-lab-node-1"), q: "k8s-lab-api.example.com", outcome: Resolved, addrs: []string{"192.168.10.23"}, lastPath: PathNetwork},
		{name: "the Windows node resolves the API name from the node network DNS",
			from: node("k8s-lab-win-1"), q: "k8s-lab-api.example.com", outcome: Resolved, addrs: []string{"192.168.10.23"}},
		{name: "the Windows node appends its primary DNS suffix to a single label",
			from: node("k8s-lab-win-1"), q: "router", outcome: Resolved, addrs: []string{"192.168.10.1"},
			tried: []string{"router.example.com"}},
		{name: "the Windows node does not resolve cluster names",
			from: node("k8s-lab-win-1"), q: "aspnetapp.win-demo.svc.cluster.local", outcome: NotFound, curlExit: 6},
		{name: "a Linux pod reaches a pod of a headless Service by hostname and subdomain",
			extra: true, from: hello, q: "db-0.db", outcome: Resolved, addrs: []string{"172.21.211.30"},
			tried: []string{"db-0.db.demo.svc.cluster.local"}},
		{name: "glibc ends the search at a candidate whose answer holds only a CNAME (res_query.c __res_context_query)",
			extra: true, from: lookupPod, q: "router", outcome: NotFound, tried: []string{"router.demo.svc.cluster.local"}, curlExit: 6},
		{name: "a short name of the node network resolves through the pod's own search domain",
			extra: true, from: lookupPod, q: "k8s-lab-api", outcome: Resolved, addrs: []string{"192.168.10.23"},
			tried: []string{"k8s-lab-api.demo.svc.cluster.local", "k8s-lab-api.svc.cluster.local", "k8s-lab-api.cluster.local", "k8s-lab-api.example.com"}},
		{name: "a Linux pod follows an ExternalName to the node network",
			extra: true, from: hello, q: "api", outcome: Resolved, addrs: []string{"192.168.10.23"}},
		{name: "a hostNetwork pod with ClusterFirst uses the node's resolver",
			from: func(t *testing.T, c *model.Cluster) Source {
				s, _ := FindPod(c, "kube-system", "kube-proxy-wqcnk")
				return s
			}, q: "hello.demo.svc.cluster.local", outcome: NotFound, curlExit: 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := lab(t)
			if tt.extra {
				c = labExtra(t)
			}
			r := Resolve(c, tt.from(t, c), tt.q)
			if r.Outcome != tt.outcome {
				t.Fatalf("outcome %s, want %s\n%s", r.Outcome, tt.outcome, r)
			}
			if tt.addrs != nil && !reflect.DeepEqual(r.Addresses, tt.addrs) {
				t.Errorf("addresses %q, want %q\n%s", r.Addresses, tt.addrs, r)
			}
			if tt.tried != nil {
				var got []string
				for _, s := range r.Steps {
					got = append(got, s.Name)
				}
				if !reflect.DeepEqual(got, tt.tried) {
					t.Errorf("tried %q, want %q", got, tt.tried)
				}
			}
			if tt.lastPath != "" && (len(r.Steps) == 0 || r.Steps[len(r.Steps)-1].Answer.Path != tt.lastPath) {
				t.Errorf("last query did not take the %s path\n%s", tt.lastPath, r)
			}
			code, ok := r.CurlExit()
			switch {
			case tt.curlExit == -1 && ok:
				t.Errorf("curl exit %d, want unknown", code)
			case tt.curlExit >= 0 && (!ok || code != tt.curlExit):
				t.Errorf("curl exit %d (known %v), want %d", code, ok, tt.curlExit)
			}
		})
	}
}

func TestResolverDifferences(t *testing.T) {
	cfg := Config{Searches: []string{"demo.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Ndots: 5}
	six := "a.b.c.d.e.f" // five dots
	tests := []struct {
		name     string
		resolver string
		q        string
		want     []string
	}{
		{name: "glibc tries a name with ndots dots as is first and then the search list", resolver: ResolverGlibc, q: six,
			want: []string{six, six + ".demo.svc.cluster.local", six + ".svc.cluster.local", six + ".cluster.local"}},
		{name: "musl tries a name with ndots dots only as is", resolver: ResolverMusl, q: six, want: []string{six}},
		{name: "musl tries a short name through the search list and then as is", resolver: ResolverMusl, q: "hello.demo",
			want: []string{"hello.demo.demo.svc.cluster.local", "hello.demo.svc.cluster.local", "hello.demo.cluster.local", "hello.demo"}},
		{name: "glibc takes a trailing dot as absolute", resolver: ResolverGlibc, q: "hello.demo.", want: []string{"hello.demo"}},
		{name: "Windows queries a dotted name once as is", resolver: ResolverWindows, q: "hello.demo", want: []string{"hello.demo"}},
		{name: "Windows appends every suffix to a single label and never sends it bare", resolver: ResolverWindows, q: "hello",
			want: []string{"hello.demo.svc.cluster.local", "hello.svc.cluster.local", "hello.cluster.local"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := candidates(tt.resolver, tt.q, cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMuslStopsOnAnAnswerWithoutAddresses(t *testing.T) {
	// "demo" under svc.cluster.local is the namespace: NODATA. glibc goes on
	// to demo.cluster.local and "demo"; musl stops there.
	c := lab(t)
	alpine := Source{Namespace: "default", Pod: "a", Node: "k8s-lab-node-1", Image: "alpine:3.22"}
	r := Resolve(c, alpine, "demo")
	if r.Resolver != ResolverMusl || r.Outcome != NotFound || len(r.Steps) != 2 || !strings.Contains(r.Reason, "musl ends the search") {
		t.Errorf("musl:\n%s", r)
	}
	r = Resolve(c, checkPod, "demo")
	if r.Resolver != ResolverGlibc || len(r.Steps) != 4 {
		t.Errorf("glibc:\n%s", r)
	}
}

func TestConfigFor(t *testing.T) {
	c := lab(t)
	tests := []struct {
		name   string
		from   Source
		conf   string
		search []string
		ns     []string
	}{
		{name: "a ClusterFirst Linux pod gets the kubelet's resolv.conf", from: checkPod,
			conf: "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{name: "a Windows pod's HNS endpoint gets the same search list and server", from: aspnetapp(t, c),
			search: []string{"win-demo.svc.cluster.local", "svc.cluster.local", "cluster.local"}, ns: []string{"10.96.0.10"}},
		{name: "dnsPolicy Default on Linux gets the node's resolver", from: Source{Namespace: "default", Pod: "p", Node: "k8s-lab-node-1", DNSPolicy: corev1.DNSDefault},
			conf: "nameserver 192.168.10.1\n"},
		{name: `dnsPolicy Default on Windows with --resolv-conf="" points at the pod itself`, from: Source{Namespace: "win-demo", Pod: "p", Node: "k8s-lab-win-1", DNSPolicy: corev1.DNSDefault},
			search: []string{"."}, ns: []string{"127.0.0.1"}},
		{name: "dnsPolicy None takes the pod's dnsConfig only", from: Source{Namespace: "default", Pod: "p", Node: "k8s-lab-node-1", DNSPolicy: corev1.DNSNone,
			DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{"192.168.10.1"}, Searches: []string{"example.com"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}},
			conf: "search example.com\nnameserver 192.168.10.1\noptions ndots:2\n"},
		{name: "ClusterFirstWithHostNet keeps the cluster DNS on the host network", from: Source{Namespace: "default", Pod: "p", Node: "k8s-lab-node-1", HostNetwork: true, DNSPolicy: corev1.DNSClusterFirstWithHostNet},
			ns: []string{"10.96.0.10"}},
		{name: "the Windows node uses the router and its primary DNS suffix", from: NodeSource("k8s-lab-win-1"),
			search: []string{"example.com"}, ns: []string{"192.168.10.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ConfigFor(c, tt.from)
			if err != nil {
				t.Fatal(err)
			}
			if tt.conf != "" && cfg.ResolvConf() != tt.conf {
				t.Errorf("resolv.conf\n%s\nwant\n%s", cfg.ResolvConf(), tt.conf)
			}
			if tt.search != nil && !reflect.DeepEqual(cfg.Searches, tt.search) {
				t.Errorf("search %q, want %q", cfg.Searches, tt.search)
			}
			if tt.ns != nil && !reflect.DeepEqual(cfg.Nameservers, tt.ns) {
				t.Errorf("nameservers %q, want %q", cfg.Nameservers, tt.ns)
			}
		})
	}
}

func TestWindowsDefaultPolicyReachesNoServer(t *testing.T) {
	c := lab(t)
	r := Resolve(c, Source{Namespace: "win-demo", Pod: "p", Node: "k8s-lab-win-1", DNSPolicy: corev1.DNSDefault}, "hello.demo.svc.cluster.local")
	if r.Outcome != NotFound || !strings.Contains(r.Reason, "127.0.0.1") {
		t.Errorf("%s", r)
	}
}

func TestUnknownOSIsNotModeled(t *testing.T) {
	r := Resolve(lab(t), Source{Namespace: "default", Pod: "p", Node: "nowhere"}, "hello")
	if r.Outcome != Unknown || !strings.Contains(r.Reason, "not modeled") {
		t.Errorf("%s", r)
	}
}

func ptr[T any](v T) *T { return &v }
