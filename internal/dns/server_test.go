package dns

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestServerQuery(t *testing.T) {
	tests := []struct {
		name    string
		extra   bool
		q       string
		qtype   uint16
		rcode   Rcode
		records []string // "TYPE data"
		path    Path
		why     string // substring
	}{
		{name: "a Service name answers its ClusterIP", q: "aspnetapp.win-demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.102.98.171"}, path: PathKubernetes},
		{name: "kube-dns answers the tenth address of the service subnet", q: "kube-dns.kube-system.svc.cluster.local.", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.96.0.10"}, path: PathKubernetes},
		{name: "names are case-insensitive", q: "Hello.Demo.SVC.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.97.141.163"}, path: PathKubernetes},
		{name: "an IPv4 Service has no AAAA records but the name exists", q: "hello.demo.svc.cluster.local", qtype: TypeAAAA,
			rcode: NoError, path: PathKubernetes},
		{name: "an unknown Service is NXDOMAIN", q: "nosuch.demo.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes, why: "no Service nosuch in namespace demo"},
		{name: "an unknown namespace is NXDOMAIN", q: "hello.nosuch.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes, why: `namespace "nosuch" does not exist`},
		{name: "a name without svc or pod is NXDOMAIN", q: "hello.demo.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes},
		{name: "the search-list expansion of hello.demo under its own namespace is NXDOMAIN", q: "hello.demo.demo.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes},
		{name: "a namespace alone is NODATA", q: "demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, path: PathKubernetes},
		{name: "the zone apex is NODATA", q: "cluster.local", qtype: TypeA,
			rcode: NoError, path: PathKubernetes},
		{name: "a named port and protocol still answer the ClusterIP", q: "_http._tcp.hello.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.97.141.163"}, path: PathKubernetes},
		{name: "a port the Service does not have is NXDOMAIN", q: "_dns._udp.hello.demo.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes},
		{name: "an endpoint of a ClusterIP Service answers by its dashed address", q: "172-21-211-25.hello.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 172.21.211.25"}, path: PathKubernetes},
		{name: "pods insecure answers the address written in the name", q: "172-21-41-6.win-demo.pod.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 172.21.41.6"}, path: PathKubernetes},
		{name: "pods insecure does not check that the pod exists", q: "10-9-8-7.demo.pod.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.9.8.7"}, path: PathKubernetes},
		{name: "a pod name that is not an address is NXDOMAIN", q: "hello.demo.pod.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes},
		{name: "the schema version is a TXT record", q: "dns-version.cluster.local", qtype: TypeTXT,
			rcode: NoError, records: []string{"TXT 1.1.0"}, path: PathKubernetes},
		{name: "the kube-dns ClusterIP reverses to its Service name", q: "10.0.96.10.in-addr.arpa", qtype: TypePTR,
			rcode: NoError, records: []string{"PTR kube-dns.kube-system.svc.cluster.local"}, path: PathKubernetes},
		{name: "a pod address reverses to its endpoint names", q: "6.41.21.172.in-addr.arpa", qtype: TypePTR,
			rcode: NoError, records: []string{"PTR 172-21-41-6.aspnetapp.win-demo.svc.cluster.local"}, path: PathKubernetes},
		{name: "an address the cluster does not know falls through to forward", q: "99.0.0.10.in-addr.arpa", qtype: TypePTR,
			rcode: NotModeled, path: PathForward},
		{name: "a name of the node network is forwarded to its DNS", q: "k8s-lab-api.example.com", qtype: TypeA,
			rcode: NoError, records: []string{"A 192.168.10.23"}, path: PathForward, why: "forward . /etc/resolv.conf → 192.168.10.1"},
		{name: "a name under a TLD that does not exist is NXDOMAIN from upstream", q: "hello.demo", qtype: TypeA,
			rcode: NXDomain, path: PathForward, why: `"demo" is not a top-level domain`},
		{name: "an Internet name is not modeled", q: "learn.microsoft.com", qtype: TypeA,
			rcode: NotModeled, path: PathForward, why: "not modeled: external name learn.microsoft.com"},
		{name: "a headless Service answers its ready endpoints", extra: true, q: "hello-headless.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 172.21.172.4", "A 172.21.211.25"}, path: PathKubernetes},
		{name: "a pod with hostname and subdomain has its own name under the headless Service", extra: true, q: "db-0.db.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 172.21.211.30"}, path: PathKubernetes},
		{name: "a hostname that no endpoint has is NXDOMAIN", extra: true, q: "db-1.db.demo.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes},
		{name: "an ExternalName Service is a CNAME", extra: true, q: "api.demo.svc.cluster.local", qtype: TypeCNAME,
			rcode: NoError, records: []string{"CNAME k8s-lab-api.example.com"}, path: PathKubernetes},
		{name: "an A question for an ExternalName follows the CNAME upstream", extra: true, q: "api.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"CNAME k8s-lab-api.example.com", "A 192.168.10.23"}, path: PathKubernetes},
		{name: "an ExternalName inside the zone is followed by the plugin itself", extra: true, q: "hello-alias.demo.svc.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"CNAME hello.demo.svc.cluster.local", "A 10.97.141.163"}, path: PathKubernetes},
		{name: "an ExternalName to the Internet keeps its CNAME but the address is not modeled", extra: true, q: "docs.demo.svc.cluster.local", qtype: TypeA,
			rcode: NotModeled, records: []string{"CNAME learn.microsoft.com"}, path: PathKubernetes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *model.Cluster
			if tt.extra {
				c = labExtra(t)
			} else {
				c = lab(t)
			}
			a := NewServer(c).Query(tt.q, tt.qtype)
			if a.Rcode != tt.rcode || a.Path != tt.path {
				t.Fatalf("got %s, want rcode %s path %s (%s)", a, tt.rcode, tt.path, a.Why)
			}
			var got []string
			for _, r := range a.Records {
				got = append(got, TypeString(r.Type)+" "+r.Data)
			}
			if tt.qtype == TypeA && len(got) > 1 && got[0][0] == 'A' {
				// loadbalance shuffles address records; compare as a set.
				sortStrings(got)
			}
			if !reflect.DeepEqual(got, tt.records) {
				t.Errorf("records %q, want %q", got, tt.records)
			}
			if !strings.Contains(a.Why, tt.why) {
				t.Errorf("why %q does not say %q", a.Why, tt.why)
			}
			for _, r := range a.Records {
				if a.Path == PathKubernetes && r.TTL != 30 && r.Type != TypeTXT && r.Name == a.Name {
					t.Errorf("TTL %d, want kubeadm's ttl 30", r.TTL)
				}
			}
		})
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestServerReadsTheCorefile(t *testing.T) {
	s := NewServer(lab(t))
	if s.IP != "10.96.0.10" || s.TTL != 30 || s.Pods != "insecure" || s.Forward != "/etc/resolv.conf" {
		t.Errorf("server %s ttl %d pods %s forward %s", s.IP, s.TTL, s.Pods, s.Forward)
	}
	if want := []string{"cluster.local", "in-addr.arpa", "ip6.arpa"}; !reflect.DeepEqual(s.Zones, want) {
		t.Errorf("zones %q, want %q", s.Zones, want)
	}
	if len(s.Notes) != 0 {
		t.Errorf("kubeadm's Corefile should need no notes: %q", s.Notes)
	}
}
