package linux

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// terminate marks the endpoints at idx of the fixture's last EndpointSlice
// not ready and terminating, with serving set to serving (nil: unset).
func terminate(f *fixture, serving *bool, idx ...int) {
	es := f.c.EndpointSlices[len(f.c.EndpointSlices)-1]
	for _, i := range idx {
		es.Endpoints[i].Conditions.Ready = ptr.To(false)
		es.Endpoints[i].Conditions.Terminating = ptr.To(true)
		es.Endpoints[i].Conditions.Serving = serving
	}
}

// What the nftables proxier does with the endpoint states, protocols and
// labels the shared pkg/proxy code decides (endpointslicecache.go,
// topology.go CategorizeEndpoints, cmd/kube-proxy/app/server.go), the
// cases where the Windows proxier differs or the twin once did.
func TestTheSharedProxyCodeDecidesTheseForNFTablesToo(t *testing.T) {
	lb := func(svc *corev1.Service, etpLocal bool) {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Spec.Ports[0].NodePort = 30090
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.7"}}
		if etpLocal {
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}
	}
	dst := netip.MustParseAddrPort("10.96.0.90:80")
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		proto string
		// node is where the table is read; dnat the ClusterIP's verdict
		// and endpoints there, "" when it is no service address.
		node, dnat string
		// has and hasNot are lines the table must and must not hold.
		has, hasNot []string
	}{{
		// CategorizeEndpoints falls back to serving terminating endpoints;
		// unlike winkernel, the load balancer address keeps working.
		name: "a LoadBalancer Service whose endpoints all terminate still serves from them",
		setup: func(f *fixture) {
			lb(f.service("ns", "lb", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.5", node: "a"}, ep{ip: "10.244.0.70", node: "b"}), false)
			terminate(f, ptr.To(true), 0, 1)
		},
		node: "a", dnat: "dnat 10.244.0.5:8080 10.244.0.70:8080",
		has: []string{"198.51.100.7 . tcp . 80 : goto external-"},
	}, {
		// The Local list falls back on its own: this node's serving
		// terminating endpoint, while the cluster list keeps the ready one.
		name: "with traffic policy Local this node's terminating endpoint serves external traffic",
		setup: func(f *fixture) {
			lb(f.service("ns", "lb", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.5", node: "a"}, ep{ip: "10.244.0.70", node: "b"}), true)
			terminate(f, ptr.To(true), 0)
		},
		node: "a", dnat: "dnat 10.244.0.70:8080",
		has: []string{"meta l4proto tcp dnat to 10.244.0.5:8080", "elements = { 10.244.0.5 . 10.244.0.5 . tcp . 8080 }"},
	}, {
		name: "with traffic policy Local a node without endpoints of its own drops external traffic",
		setup: func(f *fixture) {
			lb(f.service("ns", "lb", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"}), true)
			terminate(f, ptr.To(true), 0)
		},
		node: "a", dnat: "dnat 10.244.0.70:8080",
		has: []string{`198.51.100.7 . tcp . 80 comment "ns/lb:http" : drop`},
	}, {
		// newEndpointSliceInfo: Serving == nil || *Serving.
		name: "an endpoint whose serving condition is unset serves when terminating",
		setup: func(f *fixture) {
			f.service("ns", "web", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
			terminate(f, nil, 0)
		},
		node: "a", dnat: "dnat 10.244.0.70:8080",
	}, {
		name: "an endpoint that is terminating and not serving does not",
		setup: func(f *fixture) {
			f.service("ns", "web", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
			terminate(f, ptr.To(false), 0)
		},
		node: "a", dnat: "reject",
	}, {
		// endpointInfoByServicePort keys by name and protocol; a slice port
		// without a protocol is TCP.
		name: "a UDP Service port whose slice port has no protocol has no endpoints",
		setup: func(f *fixture) {
			f.service("ns", "dns", "10.96.0.90", corev1.ServicePort{Name: "dns", Port: 80, Protocol: corev1.ProtocolUDP}, 53, ep{ip: "10.244.0.70", node: "b"})
			f.c.EndpointSlices[len(f.c.EndpointSlices)-1].Ports[0].Protocol = nil
		},
		proto: "udp", node: "a", dnat: "reject",
	}, {
		// The informers' label selector leaves the Service out.
		name: "a Service handed to another service proxy is not programmed",
		setup: func(f *fixture) {
			svc := f.service("ns", "mesh", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
			svc.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "other-proxy"}
		},
		node: "a", hasNot: []string{"10.96.0.90"},
	}, {
		// A LoadBalancer Service the API server gave no node port
		// (allocateLoadBalancerNodePorts: false) has no nodeport element.
		name: "a LoadBalancer Service without node ports has no node port element",
		setup: func(f *fixture) {
			svc := f.service("ns", "lb", "10.96.0.90", tcpPort("http", 80), 8080, ep{ip: "10.244.0.70", node: "b"})
			lb(svc, false)
			svc.Spec.Ports[0].NodePort = 0
		},
		node: "a", dnat: "dnat 10.244.0.70:8080",
		has: []string{"198.51.100.7 . tcp . 80 : goto external-"}, hasNot: []string{"tcp . 30090", "tcp . 0 :"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := kpFixture()
			tc.setup(f)
			n := f.compile(t)[tc.node]
			proto := tc.proto
			if proto == "" {
				proto = "tcp"
			}
			eps, verdict, ok := n.ServiceDNAT(dst, proto)
			got := ""
			if ok {
				got = verdict
				for _, e := range eps {
					got += " " + e.String()
				}
			}
			if got != tc.dnat {
				t.Errorf("ClusterIP: %q, want %q", got, tc.dnat)
			}
			out := table(t, n)
			for _, h := range tc.has {
				if !strings.Contains(out, h) {
					t.Errorf("table lacks %q:\n%s", h, out)
				}
			}
			if slices.ContainsFunc(tc.hasNot, func(h string) bool { return strings.Contains(out, h) }) {
				t.Errorf("table holds one of %q:\n%s", tc.hasNot, out)
			}
		})
	}
}
