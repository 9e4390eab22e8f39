package linux

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/kubeproxy"
	corev1 "k8s.io/api/core/v1"
)

func TestKubeProxyServices(t *testing.T) {
	t.Run("endpoints are ordered as IP:port strings and not-ready ones are left out", func(t *testing.T) {
		f := kpFixture()
		f.service("ns", "web", "10.96.0.50", tcpPort("http", 80), 8080,
			ep{ip: "10.244.0.70", node: "b"}, ep{ip: "10.244.0.5", node: "a"}, ep{ip: "10.244.0.6", node: "a", notReady: true})
		eps, verdict, ok := f.compile(t)["a"].ServiceDNAT(netip.MustParseAddrPort("10.96.0.50:80"), "tcp")
		want := []netip.AddrPort{netip.MustParseAddrPort("10.244.0.5:8080"), netip.MustParseAddrPort("10.244.0.70:8080")}
		if !ok || verdict != "dnat" || !reflect.DeepEqual(eps, want) {
			t.Errorf("got %v %q %v", eps, verdict, ok)
		}
	})
	t.Run("a service without endpoints is rejected through no-endpoint-services", func(t *testing.T) {
		f := kpFixture()
		f.service("ns", "empty", "10.96.0.60", tcpPort("http", 80), 8080)
		n := f.compile(t)["a"]
		if _, verdict, ok := n.ServiceDNAT(netip.MustParseAddrPort("10.96.0.60:80"), "TCP"); !ok || verdict != "reject" {
			t.Errorf("verdict %q %v", verdict, ok)
		}
		if !strings.Contains(table(t, n), `elements = { 10.96.0.60 . tcp . 80 comment "ns/empty:http" : goto reject-chain }`) {
			t.Errorf("no-endpoint-services element missing:\n%s", table(t, n))
		}
	})
	t.Run("internalTrafficPolicy Local without a local endpoint drops", func(t *testing.T) {
		f := kpFixture()
		svc := f.service("ns", "local", "10.96.0.70", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
		local := corev1.ServiceInternalTrafficPolicyLocal
		svc.Spec.InternalTrafficPolicy = &local
		ns := f.compile(t)
		if _, verdict, _ := ns["a"].ServiceDNAT(netip.MustParseAddrPort("10.96.0.70:80"), "tcp"); verdict != "drop" {
			t.Errorf("on a: verdict %q, want drop", verdict)
		}
		if eps, verdict, _ := ns["b"].ServiceDNAT(netip.MustParseAddrPort("10.96.0.70:80"), "tcp"); verdict != "dnat" || len(eps) != 1 {
			t.Errorf("on b: %v %q, want the local endpoint", eps, verdict)
		}
		if body := chainBody(t, table(t, ns["b"]), "local-"+kubeproxy.HashAndTruncate("ns/local/tcp/http")); body[0] != "meta l4proto tcp dnat to 10.244.0.70:8080" {
			t.Errorf("local chain %q", body)
		}
	})
	t.Run("a NodePort service marks for masquerade in its external chain", func(t *testing.T) {
		f := kpFixture()
		svc := f.service("ns", "np", "10.96.0.80", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
		svc.Spec.Type = corev1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30080
		out := table(t, f.compile(t)["a"])
		base := kubeproxy.HashAndTruncate("ns/np/tcp/http")
		if got := chainBody(t, out, "external-"+base); !reflect.DeepEqual(got, []string{"meta mark set meta mark | 0x00004000", "goto service-" + base}) {
			t.Errorf("external chain %q", got)
		}
		if !strings.Contains(out, "elements = { tcp . 30080 : goto external-"+base+" }") {
			t.Errorf("service-nodeports element missing:\n%s", out)
		}
		if !strings.Contains(out, "elements = { 10.0.0.11 }") {
			t.Errorf("nodeport-ips should hold the node's primary address:\n%s", out)
		}
	})
	t.Run("externalTrafficPolicy Local short-circuits pods and the host and goes to the local chain", func(t *testing.T) {
		f := kpFixture()
		svc := f.service("ns", "lb", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.5", node: "a"}, ep{ip: "10.244.0.70", node: "b"})
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Spec.Ports[0].NodePort = 30090
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/25", "192.0.2.0/24"}
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.7"}}
		out := table(t, f.compile(t)["a"])
		base := kubeproxy.HashAndTruncate("ns/lb/tcp/http")
		want := []string{
			`ip saddr 10.244.0.0/16 goto service-` + base + ` comment "short-circuit pod traffic"`,
			`fib saddr type local meta mark set meta mark | 0x00004000 comment "masquerade local traffic"`,
			`fib saddr type local goto service-` + base + ` comment "short-circuit local traffic"`,
			`goto local-` + base,
		}
		if got := chainBody(t, out, "external-"+base); !reflect.DeepEqual(got, want) {
			t.Errorf("external chain:\n%q\nwant\n%q", got, want)
		}
		if got := chainBody(t, out, "firewall-"+base); !reflect.DeepEqual(got, []string{"ip saddr != { 192.0.2.0/24, 203.0.113.0/25 } drop"}) {
			t.Errorf("firewall chain %q", got)
		}
		if !strings.Contains(out, "198.51.100.7 . tcp . 80 : goto firewall-"+base) {
			t.Errorf("firewall-ips element missing:\n%s", out)
		}
	})
	t.Run("only this node's endpoints enter the hairpin set", func(t *testing.T) {
		f := kpFixture()
		f.service("ns", "web", "10.96.0.50", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"}, ep{ip: "10.244.0.5", node: "a"})
		out := table(t, f.compile(t)["a"])
		if !strings.Contains(out, "elements = { 10.244.0.5 . 10.244.0.5 . tcp . 8080 }") || strings.Contains(out, "10.244.0.70 . 10.244.0.70") {
			t.Errorf("hairpin set:\n%s", out)
		}
	})
}

func TestKubeProxyInIptablesModeProgramsNoTable(t *testing.T) {
	f := kpFixture()
	f.c.Kubeadm.KubeProxy.Mode = ""
	n := f.compile(t)["a"]
	for _, tb := range n.NFTTables() {
		if tb.Name == "kube-proxy" {
			t.Errorf("table %s %s without an nftables proxier", tb.Family, tb.Name)
		}
	}
	if n.ServicePorts() != nil {
		t.Error("service ports without an nftables proxier")
	}
}

func kpFixture() *fixture {
	f := newFixture()
	f.node("a", "10.0.0.11", 0, 0)
	f.node("b", "10.0.0.12", 1, 0)
	return f
}

func table(t *testing.T, n *Node) string {
	t.Helper()
	return run(t, n, "nft list table ip kube-proxy")
}

func chainBody(t *testing.T, listing, chain string) []string {
	t.Helper()
	i := strings.Index(listing, "\tchain "+chain+" {\n")
	if i < 0 {
		t.Fatalf("chain %s not listed", chain)
	}
	body := listing[i+len("\tchain "+chain+" {\n"):]
	body = body[:strings.Index(body, "\t}\n")]
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		out = append(out, strings.TrimPrefix(l, "\t\t"))
	}
	return out
}
