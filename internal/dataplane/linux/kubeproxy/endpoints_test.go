package kubeproxy

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// A port's endpoints are ordered by "ip:port" as text (10.0.0.10 before
// 10.0.0.9), each address once, the first slice's conditions kept.
func TestAPortsEndpointsAreOrderedByTheirAddressAsText(t *testing.T) {
	port, name, tcp := int32(80), "http", corev1.ProtocolTCP
	ready, notReady := true, false
	slice := func(cond *bool, addrs ...string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{Ports: []discoveryv1.EndpointPort{{Name: &name, Protocol: &tcp, Port: &port}}}
		for _, a := range addrs {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: cond}})
		}
		return s
	}
	got := endpointsFor([]*discoveryv1.EndpointSlice{
		slice(&ready, "10.0.0.9", "10.0.0.10", "192.168.1.2", "10.0.0.100"),
		slice(&notReady, "10.0.0.10", "1.2.3.4"),
	}, corev1.ServicePort{Name: name, Protocol: tcp})
	var s []string
	for _, e := range got {
		s = append(s, fmt.Sprintf("%s/%v", e.Addr, e.ready))
	}
	want := "[1.2.3.4:80/false 10.0.0.100:80/true 10.0.0.10:80/true 10.0.0.9:80/true 192.168.1.2:80/true]"
	if fmt.Sprint(s) != want {
		t.Errorf("got %v, want %s", s, want)
	}
}
