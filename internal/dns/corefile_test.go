package dns

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// withCorefile is the lab with kube-system/coredns replaced (text "" drops
// the ConfigMap).
func withCorefile(t *testing.T, text string) *model.Cluster {
	t.Helper()
	c := *lab(t)
	c.ConfigMaps = nil
	for _, cm := range lab(t).ConfigMaps {
		if cm.Namespace == "kube-system" && cm.Name == "coredns" {
			if text == "" {
				continue
			}
			cm = cm.DeepCopy()
			cm.Data = map[string]string{"Corefile": text}
		}
		c.ConfigMaps = append(c.ConfigMaps, cm)
	}
	return &c
}

func TestCorefileVariants(t *testing.T) {
	tests := []struct {
		name     string
		corefile string
		q        string
		qtype    uint16
		rcode    Rcode
		note     string // substring of a Server note
		ttl      uint32
	}{
		{name: "without pods insecure pod names are NXDOMAIN",
			corefile: ".:53 {\n kubernetes cluster.local\n forward . /etc/resolv.conf\n}\n",
			q:        "172-21-41-6.win-demo.pod.cluster.local", qtype: TypeA, rcode: NXDomain},
		{name: "pods verified answers only addresses of pods in the namespace",
			corefile: ".:53 {\n kubernetes cluster.local {\n  pods verified\n }\n}\n",
			q:        "172-21-41-6.win-demo.pod.cluster.local", qtype: TypeA, rcode: NoError, ttl: 5},
		{name: "pods verified refuses an address no pod of the namespace has",
			corefile: ".:53 {\n kubernetes cluster.local {\n  pods verified\n }\n}\n",
			q:        "172-21-41-6.demo.pod.cluster.local", qtype: TypeA, rcode: NXDomain},
		{name: "the plugin's default TTL is 5",
			corefile: ".:53 {\n kubernetes cluster.local\n}\n",
			q:        "hello.demo.svc.cluster.local", qtype: TypeA, rcode: NoError, ttl: 5},
		{name: "fallthrough for every name hands unknown services to forward",
			corefile: ".:53 {\n kubernetes cluster.local {\n  fallthrough\n }\n forward . /etc/resolv.conf\n}\n",
			q:        "nosuch.demo.svc.cluster.local", qtype: TypeA, rcode: NXDomain},
		{name: "forward to an upstream outside the model is not modeled",
			corefile: ".:53 {\n kubernetes cluster.local\n forward . 8.8.8.8\n}\n",
			q:        "k8s-lab-api.example.com", qtype: TypeA, rcode: NotModeled},
		{name: "a Corefile without forward fails names outside the cluster",
			corefile: ".:53 {\n kubernetes cluster.local\n}\n",
			q:        "k8s-lab-api.example.com", qtype: TypeA, rcode: ServFail},
		{name: "a plugin the twin does not model is noted and makes outside answers unknown",
			corefile: ".:53 {\n rewrite name foo.example.com hello.demo.svc.cluster.local\n kubernetes cluster.local\n}\n",
			q:        "k8s-lab-api.example.com", qtype: TypeA, rcode: NotModeled, note: `plugin "rewrite"`},
		{name: "a Corefile that does not parse leaves the cluster without DNS",
			corefile: ".:53 {\n kubernetes cluster.local {\n",
			q:        "hello.demo.svc.cluster.local", qtype: TypeA, rcode: NoServer, note: "CoreDNS does not start"},
		{name: "without the ConfigMap kubeadm's Corefile is assumed",
			q: "hello.demo.svc.cluster.local", qtype: TypeA, rcode: NoError, note: "kubeadm's default assumed", ttl: 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(withCorefile(t, tt.corefile))
			a := s.Query(tt.q, tt.qtype)
			if a.Rcode != tt.rcode {
				t.Fatalf("got %s (%s), want %s", a, a.Why, tt.rcode)
			}
			if tt.ttl != 0 && (len(a.Records) == 0 || a.Records[0].TTL != tt.ttl) {
				t.Errorf("records %v, want TTL %d", a.Records, tt.ttl)
			}
			if tt.note != "" && !strings.Contains(strings.Join(s.Notes, "\n"), tt.note) {
				t.Errorf("notes %q do not say %q", s.Notes, tt.note)
			}
		})
	}
}

func TestParseCorefileServerBlocks(t *testing.T) {
	blocks, err := parseCorefile(`# stub domain first
example.com:53 {
    forward . 192.168.10.1
}
.:53 {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].Zones[0] != "example.com" || blocks[1].Zones[0] != "." {
		t.Fatalf("blocks %+v", blocks)
	}
	k, err := parseKubernetes(blocks[1].plugin("kubernetes"), blocks[1].Zones)
	if err != nil {
		t.Fatal(err)
	}
	if k.Pods != "insecure" || k.TTL != 30 || !k.fallsThrough("1.0.0.10.in-addr.arpa") || k.fallsThrough("x.cluster.local") {
		t.Errorf("kubernetes config %+v", k)
	}
	if f := blocks[1].plugin("forward"); f == nil || f.Args[1] != "/etc/resolv.conf" || f.Body[0].Name != "max_concurrent" {
		t.Errorf("forward %+v", f)
	}
}

func TestStubDomainBlockForwardsToTheNodeNetwork(t *testing.T) {
	c := withCorefile(t, "example.com:53 {\n forward . 192.168.10.1\n}\n.:53 {\n kubernetes cluster.local\n}\n")
	a := NewServer(c).Query("router.example.com", TypeA)
	if a.Rcode != NoError || len(a.Records) != 1 || a.Records[0].Data != "192.168.10.1" || a.Path != PathForward {
		t.Errorf("got %s (%s)", a, a.Why)
	}
}
