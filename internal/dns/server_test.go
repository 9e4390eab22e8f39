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
		// Each case below names the CoreDNS source it follows.
		{name: "a named port and protocol answer SRV with the Service name as target (backend_lookup.go SRV)", q: "_http._tcp.hello.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NoError, records: []string{"SRV 0 100 80 hello.demo.svc.cluster.local."}, path: PathKubernetes},
		{name: "a Service name alone answers SRV for every port", q: "hello.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NoError, records: []string{"SRV 0 100 80 hello.demo.svc.cluster.local."}, path: PathKubernetes},
		{name: "SRV of a headless Service has one target per endpoint, the weight split between them", extra: true, q: "_http._tcp.hello-headless.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NoError, records: []string{"SRV 0 50 8080 172-21-211-25.hello-headless.demo.svc.cluster.local.", "SRV 0 50 8080 172-21-172-4.hello-headless.demo.svc.cluster.local."}, path: PathKubernetes},
		{name: "SRV of a headless Service targets a pod by its hostname", extra: true, q: "_pg._tcp.db.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NoError, records: []string{"SRV 0 100 5432 db-0.db.demo.svc.cluster.local."}, path: PathKubernetes},
		{name: "SRV of an ExternalName is NODATA (kubernetes.go Services drops external targets)", extra: true, q: "api.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NoError, path: PathKubernetes, why: "no SRV records"},
		{name: "a port name the Service does not have is NXDOMAIN for SRV too", q: "_dns._udp.hello.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NXDomain, path: PathKubernetes},
		{name: "two labels left of an ExternalName are NXDOMAIN (kubernetes.go findServices, CoreDNS 1.11.0)", extra: true, q: "x.y.api.demo.svc.cluster.local", qtype: TypeA,
			rcode: NXDomain, path: PathKubernetes, why: "no endpoints, ports or protocols below it"},
		{name: "a port and protocol left of an ExternalName are NXDOMAIN", extra: true, q: "_http._tcp.api.demo.svc.cluster.local", qtype: TypeSRV,
			rcode: NXDomain, path: PathKubernetes},
		{name: "TXT of a namespace name is NXDOMAIN (kubernetes.go Services, CoreDNS 1.10.1)", q: "demo.svc.cluster.local", qtype: TypeTXT,
			rcode: NXDomain, path: PathKubernetes, why: "a TXT question for it is NXDOMAIN"},
		{name: "TXT of the zone apex is NXDOMAIN", q: "cluster.local", qtype: TypeTXT,
			rcode: NXDomain, path: PathKubernetes},
		{name: "TXT of a Service name is NODATA: the name has other records", q: "hello.demo.svc.cluster.local", qtype: TypeTXT,
			rcode: NoError, path: PathKubernetes},
		{name: "the default NS name answers the kube-dns ClusterIP (ns.go isDefaultNS, nsAddrs)", q: "ns.dns.cluster.local", qtype: TypeA,
			rcode: NoError, records: []string{"A 10.96.0.10"}, path: PathKubernetes, why: "kube-system/kube-dns"},
		{name: "the default NS name has no AAAA records in an IPv4 cluster", q: "ns.dns.cluster.local", qtype: TypeAAAA,
			rcode: NoError, path: PathKubernetes},
		{name: "TXT of the default NS name is NXDOMAIN: dns is not svc or pod", q: "ns.dns.cluster.local", qtype: TypeTXT,
			rcode: NXDomain, path: PathKubernetes},
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

func TestAnswersKeepTheQuestionsCase(t *testing.T) {
	tests := []struct {
		name      string
		q         string
		qtype     uint16
		owner     string
		data      string
		extraName string
	}{
		{name: "an A answer is owned by the name as asked (handler.go keeps the case of the query)",
			q: "Hello.Demo.SVC.cluster.local", qtype: TypeA, owner: "Hello.Demo.SVC.cluster.local", data: "10.97.141.163"},
		{name: "an SRV target ends in the zone as asked (msg.Path of the zone cut from the query)",
			q: "_HTTP._tcp.hello.demo.svc.Cluster.Local.", qtype: TypeSRV, owner: "_HTTP._tcp.hello.demo.svc.Cluster.Local",
			data: "0 100 80 hello.demo.svc.Cluster.Local.", extraName: "hello.demo.svc.Cluster.Local"},
		{name: "a PTR answer is owned by the reverse name as asked",
			q: "10.0.96.10.IN-ADDR.ARPA", qtype: TypePTR, owner: "10.0.96.10.IN-ADDR.ARPA", data: "kube-dns.kube-system.svc.cluster.local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewServer(lab(t)).Query(tt.q, tt.qtype)
			if len(a.Records) != 1 || a.Records[0].Name != tt.owner || a.Records[0].Data != tt.data {
				t.Fatalf("records %v, want one owned by %q with %q", a.Records, tt.owner, tt.data)
			}
			if tt.extraName != "" && (len(a.Extra) != 1 || a.Extra[0].Name != tt.extraName) {
				t.Errorf("additional %v, want one owned by %q", a.Extra, tt.extraName)
			}
		})
	}
}

func TestVerifiedPodRecordsIgnoreFinishedPods(t *testing.T) {
	s := NewServer(labVerified(t))
	if s.Pods != "verified" {
		t.Fatalf("pods %q, want verified from testdata/verified.yaml", s.Pods)
	}
	tests := []struct {
		name  string
		q     string
		rcode Rcode
		why   string
	}{
		{"a running pod's address answers", "172-21-211-25.demo.pod.cluster.local", NoError, "hello-55fb8f8684-69mvv"},
		{"a Succeeded pod's address is NXDOMAIN (controller.go podListFunc skips it)", "172-21-211-40.demo.pod.cluster.local", NXDomain, "migrate-done (Succeeded"},
		{"a Failed pod's address is NXDOMAIN", "172-21-211-41.demo.pod.cluster.local", NXDomain, "migrate-failed (Failed"},
		{"an address no pod has is NXDOMAIN", "172-21-211-99.demo.pod.cluster.local", NXDomain, "no pod in demo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.Query(tt.q, TypeA)
			if a.Rcode != tt.rcode || !strings.Contains(a.Why, tt.why) {
				t.Errorf("got %s (%s), want %s saying %q", a, a.Why, tt.rcode, tt.why)
			}
		})
	}
}

func TestAForwardedAnswerIsTakenAsACacheMiss(t *testing.T) {
	s := NewServer(lab(t))
	tests := []struct {
		name  string
		q     string
		aa    bool
		cache string // substring; "" for none
	}{
		{"a forwarded answer keeps the upstream's clear AA bit (cache/item.go sets it only on a hit)", "k8s-lab-api.example.com", false, "repeat within 30 s"},
		{"a forwarded NXDOMAIN is a cache miss too", "hello.demo", false, "cache miss"},
		{"an answer of the kubernetes plugin is authoritative, cached or not", "hello.demo.svc.cluster.local", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.Query(tt.q, TypeA)
			if a.Authoritative != tt.aa || !strings.Contains(a.Cache, tt.cache) || (tt.cache == "" && a.Cache != "") {
				t.Errorf("AA %v, cache %q; want AA %v and %q", a.Authoritative, a.Cache, tt.aa, tt.cache)
			}
		})
	}
}
