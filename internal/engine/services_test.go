package engine_test

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func TestObservedClusterIPsAreKept(t *testing.T) {
	c := buildLab(t)
	for svc, want := range map[string]string{"demo/hello": "10.97.141.163", "win-demo/aspnetapp": "10.102.98.171"} {
		ns, name := splitKey(svc)
		s := findService(t, c, ns, name)
		if s.Spec.ClusterIP != want || !reflect.DeepEqual(s.Spec.ClusterIPs, []string{want}) {
			t.Errorf("%s clusterIP %q %v, want %s", svc, s.Spec.ClusterIP, s.Spec.ClusterIPs, want)
		}
	}
}

func TestDerivedClusterIPsAreInTheDynamicPartOfTheServiceSubnetAndStable(t *testing.T) {
	subnet := netip.MustParsePrefix("10.96.0.0/12")
	// The allocator keeps the lower band of min(max(16, size/16), 256)
	// addresses for ClusterIPs users ask for: 256 for a /12.
	lowBandEnd := netip.MustParseAddr("10.96.1.0")
	derived := []string{"calico-system/calico-typha", "calico-system/calico-webhooks", "spread/web"}
	first := buildLab(t, "testdata/linux-spread.yaml")
	second := buildLab(t, "testdata/linux-spread.yaml")
	seen := map[string]string{}
	for _, s := range first.Services {
		if prev, ok := seen[s.Spec.ClusterIP]; ok {
			t.Errorf("%s/%s and %s share %s", s.Namespace, s.Name, prev, s.Spec.ClusterIP)
		}
		seen[s.Spec.ClusterIP] = s.Namespace + "/" + s.Name
	}
	for _, key := range derived {
		ns, name := splitKey(key)
		a, b := findService(t, first, ns, name), findService(t, second, ns, name)
		ip := addr(t, a.Spec.ClusterIP)
		if !subnet.Contains(ip) {
			t.Errorf("%s got %s outside %s", key, ip, subnet)
		}
		if !lowBandEnd.Less(ip) {
			t.Errorf("%s got %s from the static band up to %s", key, ip, lowBandEnd)
		}
		if a.Spec.ClusterIP != b.Spec.ClusterIP {
			t.Errorf("%s got %s, then %s", key, a.Spec.ClusterIP, b.Spec.ClusterIP)
		}
		if a.Spec.Type != corev1.ServiceTypeClusterIP {
			t.Errorf("%s type %q, want ClusterIP", key, a.Spec.Type)
		}
	}
}

func TestHelloEndpointSliceResolvesTheNamedTargetPort(t *testing.T) {
	c := buildLab(t)
	es := slicesFor(c, "demo", "hello")
	if len(es) != 1 {
		t.Fatalf("%d EndpointSlices for demo/hello, want 1", len(es))
	}
	s := es[0]
	var got []string
	for _, e := range s.Endpoints {
		got = append(got, e.Addresses...)
		if e.Conditions.Ready == nil || !*e.Conditions.Ready {
			t.Errorf("endpoint %v not ready", e.Addresses)
		}
		if e.TargetRef == nil || e.TargetRef.Kind != "Pod" || e.NodeName == nil {
			t.Errorf("endpoint %v without its pod and node", e.Addresses)
		}
	}
	if want := []string{"172.21.211.25", "172.21.172.4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("endpoints %v, want %v", got, want)
	}
	want := []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}}
	if !reflect.DeepEqual(s.Ports, want) {
		t.Errorf("ports %+v, want http 8080/TCP (targetPort http resolved in the pod)", s.Ports)
	}
	if s.AddressType != discoveryv1.AddressTypeIPv4 || s.Labels[discoveryv1.LabelManagedBy] != "endpointslice-controller.k8s.io" {
		t.Errorf("addressType %s labels %v", s.AddressType, s.Labels)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "Service" || s.OwnerReferences[0].Name != "hello" {
		t.Errorf("owner %+v, want Service hello", s.OwnerReferences)
	}
}

func TestKubeDNSEndpointsAreTheCoreDNSPods(t *testing.T) {
	es := slicesFor(buildLab(t), "kube-system", "kube-dns")
	if len(es) != 1 {
		t.Fatalf("%d slices, want 1", len(es))
	}
	var got []string
	for _, e := range es[0].Endpoints {
		got = append(got, e.Addresses...)
	}
	if want := []string{"172.21.172.3", "172.21.70.199"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kube-dns endpoints %v, want %v", got, want)
	}
	var ports []string
	for _, p := range es[0].Ports {
		ports = append(ports, *p.Name+"/"+string(*p.Protocol))
	}
	if want := []string{"dns/UDP", "dns-tcp/TCP", "metrics/TCP"}; !reflect.DeepEqual(ports, want) {
		t.Errorf("kube-dns ports %v, want %v", ports, want)
	}
}

func splitKey(s string) (string, string) {
	ns, name, _ := strings.Cut(s, "/")
	return ns, name
}

func TestAClusterIPAlreadyTakenIsRefused(t *testing.T) {
	const file = "testdata/service-taken-clusterip.yaml"
	c := buildLab(t, file)
	// kube-dns got 10.96.0.10 from kubeadm at init, before anything the
	// input applies, so the input's claim on it is the second one.
	if dns := findService(t, c, "kube-system", "kube-dns"); dns.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("kube-dns moved to %s", dns.Spec.ClusterIP)
	}
	const want = `The Service "my-dns" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated`
	if len(c.Rejected) != 1 || c.Rejected[0].Message != want || c.Rejected[0].Origin.File != file {
		t.Errorf("rejections %+v\nwant one from %s: %q", c.Rejected, file, want)
	}
	for _, s := range c.Services {
		if s.Name == "my-dns" {
			t.Errorf("refused Service default/my-dns is in the cluster with %s", s.Spec.ClusterIP)
		}
	}
	if es := slicesFor(c, "default", "my-dns"); len(es) != 0 {
		t.Errorf("EndpointSlices for a refused Service: %v", names(es))
	}
}

// The API server's node port allocation (pkg/registry/core/service/storage
// alloc.go): allocateLoadBalancerNodePorts false leaves a LoadBalancer
// Service without node ports unless it set one, and externalTrafficPolicy
// Local gives it a healthCheckNodePort from the same range.
func TestNodePortsAndHealthCheckNodePortsFollowTheAPIServersAllocator(t *testing.T) {
	c := buildLab(t, "testdata/service-node-ports.yaml")
	for _, tc := range []struct {
		name             string
		nodePort, health bool
		keptNodePort     int32
	}{
		{name: "no-node-ports"},
		{name: "local", nodePort: true, health: true},
		{name: "kept", health: true, keptNodePort: 31080},
	} {
		s := findService(t, c, "default", tc.name)
		np := s.Spec.Ports[0].NodePort
		switch {
		case tc.keptNodePort != 0 && np != tc.keptNodePort:
			t.Errorf("%s: node port %d, want the one it set, %d", tc.name, np, tc.keptNodePort)
		case tc.keptNodePort == 0 && (np != 0) != tc.nodePort:
			t.Errorf("%s: node port %d, want one allocated: %v", tc.name, np, tc.nodePort)
		}
		hc := s.Spec.HealthCheckNodePort
		if (hc != 0) != tc.health {
			t.Errorf("%s: healthCheckNodePort %d, want one allocated: %v", tc.name, hc, tc.health)
		}
		if hc != 0 && (hc < 30000 || hc > 32767 || hc == np) {
			t.Errorf("%s: healthCheckNodePort %d outside the node port range or equal to the node port", tc.name, hc)
		}
	}
}
