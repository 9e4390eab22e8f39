package windows

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// lbKinds lists a Service's load balancers as "Kind ext->int backends".
func lbKinds(n *Node, svc string) []string {
	var out []string
	for _, lb := range lbsOf(n, svc) {
		out = append(out, fmt.Sprintf("%s %d->%d %s", lb.Kind, lb.ExternalPort, lb.InternalPort, strings.Join(lb.Backends, ",")))
	}
	return out
}

// What the winkernel proxier (K8s pkg/proxy/winkernel/proxier.go
// syncProxyRules, loadbalancer.go, the shared pkg/proxy endpoint cache)
// programs where an earlier reading of it differed: each case names the
// upstream function that decides it.
func TestKubeProxyProgramsWhatTheWinkernelProxierWould(t *testing.T) {
	lb := func(svc *corev1.Service, ingress string, etpLocal bool) {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingress}}
		if etpLocal {
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		want  []string
		// note is part of a note or warning the node must carry.
		note string
	}{{
		// loadbalancer.go manageLoadbalancer: endpointsAvailableForLB is
		// false, so only the ClusterIP load balancer is made.
		name: "a LoadBalancer Service whose endpoints all terminate gets only its ClusterIP load balancer",
		setup: func(f *fixture) {
			svc := f.service("demo", "web", "10.96.0.70", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080, Protocol: corev1.ProtocolTCP}, 8080,
				bk{ip: "10.0.11.5", node: "lin-1", termin: true})
			lb(svc, "198.51.100.2", false)
		},
		want: []string{"ClusterIP 80->8080 10.0.11.5"},
		note: "a kube-proxy that made the others before keeps them where HNS can update load balancers: not known offline",
	}, {
		// proxier.go isAllEndpointsTerminating with localTrafficDSR: remote
		// endpoints are not weighed (KEP-1669).
		name: "with traffic policy Local only this node's endpoints are weighed: terminating ones leave no ingress load balancer",
		setup: func(f *fixture) {
			f.pod("demo", "web", "win", "10.0.1.10", nil)
			svc := f.service("demo", "web", "10.96.0.70", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}, 8080,
				bk{ip: "10.0.1.10", node: "win", termin: true}, bk{ip: "10.0.11.5", node: "lin-1"})
			lb(svc, "198.51.100.2", true)
		},
		want: []string{"ClusterIP 80->8080 10.0.1.10,10.0.11.5"},
		note: "every endpoint kube-proxy weighs for external traffic is terminating or not serving",
	}, {
		// kubernetes#132647: the internal port is the endpoint's port.
		name: "a selector-less Service whose EndpointSlice says another port than targetPort uses the slice's port",
		setup: func(f *fixture) {
			f.service("demo", "external-db", "10.96.0.71", tcpPort("db", 5432, intstr.FromInt32(5432)), 15432, bk{ip: "203.0.113.7", node: "elsewhere"})
		},
		want: []string{"ClusterIP 5432->15432 203.0.113.7"},
	}, {
		// syncProxyRules walks endpointsMap in "ip:port" order and every
		// endpoint it walks sets the port: the last one's stays.
		name: "a named targetPort resolved to different numbers takes the port of the last endpoint walked",
		setup: func(f *fixture) {
			f.service("demo", "named", "10.96.0.72", tcpPort("http", 80, intstr.FromString("web")), 8080,
				bk{ip: "10.0.11.5", node: "lin-1"}, bk{ip: "10.0.11.9", node: "lin-1"})
			other := f.c.EndpointSlices[len(f.c.EndpointSlices)-1].DeepCopy()
			other.Name = "named-fghij"
			other.Ports[0].Port = ptr.To(int32(9090))
			other.Endpoints = other.Endpoints[:1]
			other.Endpoints[0].Addresses = []string{"10.0.11.7"}
			f.c.EndpointSlices = append(f.c.EndpointSlices, other)
		},
		want: []string{"ClusterIP 80->8080 10.0.11.5,10.0.11.7,10.0.11.9"},
	}, {
		name: "the last endpoint walked decides even when it is the one on another port",
		setup: func(f *fixture) {
			f.service("demo", "named", "10.96.0.72", tcpPort("http", 80, intstr.FromString("web")), 8080, bk{ip: "10.0.11.5", node: "lin-1"})
			other := f.c.EndpointSlices[len(f.c.EndpointSlices)-1].DeepCopy()
			other.Name = "named-fghij"
			other.Ports[0].Port = ptr.To(int32(9090))
			other.Endpoints[0].Addresses = []string{"10.0.11.9"}
			f.c.EndpointSlices = append(f.c.EndpointSlices, other)
		},
		want: []string{"ClusterIP 80->9090 10.0.11.5,10.0.11.9"},
	}, {
		// The API server allocates no node port (alloc.go
		// shouldAllocateNodePorts), so manageNodePortLoadbalancer returns.
		name: "a LoadBalancer Service without node ports gets no NodePort load balancer",
		setup: func(f *fixture) {
			svc := f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(8080)), 8080, bk{ip: "10.0.11.5", node: "lin-1"})
			lb(svc, "198.51.100.2", false)
			svc.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
		},
		want: []string{"ClusterIP 80->8080 10.0.11.5", "LoadBalancerIngress 80->8080 10.0.11.5"},
	}, {
		// endpointslicecache.go newEndpointSliceInfo: Serving == nil || *Serving.
		name: "an endpoint whose serving condition is unset serves",
		setup: func(f *fixture) {
			svc := f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(8080)), 8080,
				bk{ip: "10.0.11.5", node: "lin-1", termin: true}, bk{ip: "10.0.11.6", node: "lin-1", termin: true})
			es := f.c.EndpointSlices[len(f.c.EndpointSlices)-1]
			es.Endpoints[0].Conditions.Serving = nil
			es.Endpoints[1].Conditions.Serving = nil
			lb(svc, "198.51.100.2", false)
		},
		// Both serve: the ClusterIP load balancer takes them (every
		// endpoint terminating), the ingress one is still not made.
		want: []string{"ClusterIP 80->8080 10.0.11.5,10.0.11.6"},
	}, {
		// endpointInfoByServicePort keys by port name and protocol; the API
		// server defaults a slice port's protocol to TCP.
		name: "a UDP Service port whose slice port has no protocol has no endpoints",
		setup: func(f *fixture) {
			f.service("demo", "dns", "10.96.0.73", corev1.ServicePort{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(53), Protocol: corev1.ProtocolUDP}, 53, bk{ip: "10.0.11.5", node: "lin-1"})
			f.c.EndpointSlices[len(f.c.EndpointSlices)-1].Ports[0].Protocol = nil
		},
		note: "service demo/dns port dns has no usable endpoints",
	}, {
		// cmd/kube-proxy/app/server.go: the informers' label selector
		// excludes service.kubernetes.io/service-proxy-name.
		name: "a Service handed to another service proxy is not programmed",
		setup: func(f *fixture) {
			svc := f.service("demo", "mesh", "10.96.0.74", tcpPort("http", 80, intstr.FromInt32(8080)), 8080, bk{ip: "10.0.11.5", node: "lin-1"})
			svc.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "other-proxy"}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(1)
			tc.setup(f)
			n := f.compile(t)
			svc := f.c.Services[0]
			got := lbKinds(n, svc.Namespace+"/"+svc.Name)
			if !slices.Equal(got, tc.want) {
				t.Errorf("load balancers %q\nwant %q", got, tc.want)
			}
			if tc.note != "" && !slices.ContainsFunc(append(slices.Clone(n.Notes), n.Warnings...), func(s string) bool { return strings.Contains(s, tc.note) }) {
				t.Errorf("no note with %q among %q %q", tc.note, n.Notes, n.Warnings)
			}
		})
	}
}

// getNetworkName (pkg/proxy/winkernel/proxier.go, NewProxier): kube-proxy
// started without start.ps1 needs --network-name or KUBE_NETWORK, else it
// exits before programming anything.
func TestKubeProxyWithoutANetworkNameProgramsNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     []corev1.EnvVar
		running bool
	}{
		{name: "start.ps1 sets KUBE_NETWORK", args: []string{"start.ps1"}, running: true},
		{name: "the flag names the network", args: []string{"kube-proxy.exe", "--network-name=Calico", "--source-vip=10.0.1.2"}, running: true},
		{name: "the environment names the network", args: []string{"kube-proxy.exe", "--source-vip=10.0.1.2"}, env: []corev1.EnvVar{{Name: "KUBE_NETWORK", Value: "Calico"}}, running: true},
		{name: "neither flag nor environment", args: []string{"kube-proxy.exe", "--source-vip=10.0.1.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(1)
			f.c.Pods[0].Spec.Containers[0].Args = tc.args
			f.c.Pods[0].Spec.Containers[0].Env = tc.env
			f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(8080)), 8080, bk{ip: "10.0.11.5", node: "lin-1"})
			n := f.compile(t)
			if n.KubeProxy != tc.running || (len(n.LoadBalancers()) > 0) != tc.running {
				t.Errorf("kube-proxy running %v with %d load balancers, want running %v", n.KubeProxy, len(n.LoadBalancers()), tc.running)
			}
			exits := slices.ContainsFunc(n.Warnings, func(s string) bool { return strings.HasPrefix(s, "kube-proxy exits at start") })
			if exits == tc.running {
				t.Errorf("warnings %q", n.Warnings)
			}
		})
	}
}

// hnsdiag lists the load balancers kube-proxy makes for the cases above:
// the draining Service's ClusterIP one only, the external backend's on the
// slice's port, none for the UDP port without endpoints or the Service of
// another proxy.
func TestHnsdiagListsTheLoadBalancersOfTheKubeProxyCases(t *testing.T) {
	f := newFixture(1)
	svc := f.service("demo", "draining", "10.96.0.70", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080, Protocol: corev1.ProtocolTCP}, 8080,
		bk{ip: "10.0.11.5", node: "lin-1", termin: true})
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.2"}}
	f.service("demo", "external-db", "10.96.0.71", tcpPort("db", 5432, intstr.FromInt32(5432)), 15432, bk{ip: "203.0.113.7", node: "elsewhere"})
	f.service("demo", "dns", "10.96.0.73", corev1.ServicePort{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(53), Protocol: corev1.ProtocolUDP}, 53, bk{ip: "10.0.11.6", node: "lin-1"})
	f.c.EndpointSlices[len(f.c.EndpointSlices)-1].Ports[0].Protocol = nil
	mesh := f.service("demo", "mesh", "10.96.0.74", tcpPort("http", 80, intstr.FromInt32(8080)), 8080, bk{ip: "10.0.11.7", node: "lin-1"})
	mesh.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "other-proxy"}
	checkGolden(t, "kube-proxy-cases", transcript(f.compile(t), "hnsdiag list loadbalancers", "Get-HnsPolicyList | ConvertTo-Json -Depth 5"))
}
