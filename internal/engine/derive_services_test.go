package engine

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derivation takes the previous twin's Service for each unchanged input
// Service; the services stage allocates again what the input asks for, in
// its turn, and a taken Service holding anything else (the Services
// allocated before it changed) stops the derivation. The tampered cases
// give the taken Service another address or node port than the
// allocation gives, as a changed set of Services before it would.
func TestATakenServiceWhoseAllocationWouldDifferStopsTheDerivation(t *testing.T) {
	tests := []struct {
		name   string
		spec   corev1.ServiceSpec
		tamper func(s *corev1.Service)
		holds  bool
	}{
		{"a Service that asks for an address holds", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}, nil, true},
		{"a Service with its own address holds", corev1.ServiceSpec{ClusterIP: "10.96.7.7", Ports: []corev1.ServicePort{{Port: 80}}}, nil, true},
		{"a NodePort Service that asks for a node port holds", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}, nil, true},
		{"a Service whose address would now differ stops it", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.7.8", []string{"10.96.7.8"} }, false},
		{"a Service whose node port would now differ stops it", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}},
			func(s *corev1.Service) { s.Spec.Ports[0].NodePort++ }, false},
		{"a Service whose health check port would now differ stops it", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, Ports: []corev1.ServicePort{{Port: 80}}},
			func(s *corev1.Service) { s.Spec.HealthCheckNodePort++ }, false},
	}
	generated := smallGenSnapshot(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Spec: tc.spec}
			base := layer(generated, &model.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"},
				Key: model.Key{Kind: "Service", Namespace: "default", Name: "probe"}, Typed: svc, Origin: model.Origin{File: "probe.yaml"}})
			next := layer(base, bgpOff(t, base))
			prev, err := Build(base)
			if err != nil {
				t.Fatal(err)
			}
			d := settle(prev, base, next)
			if d == nil || d.services[svc] == nil {
				t.Fatal("the Service is not taken from the previous twin: the case does not test the guard")
			}
			if tc.tamper != nil {
				was := d.services[svc].DeepCopy()
				tc.tamper(was)
				delete(d.serviceInputs, d.services[svc])
				d.services[svc], d.serviceInputs[was] = was, svc
			}
			d.prev = recall(prev)
			if d.prev != nil {
				d.net = d.prev.net
			}
			c, err := build(next, false, d)
			if err != nil && !errors.Is(err, errUnsettled) {
				t.Fatal(err)
			}
			if got := err == nil && d.holds(prev, c); got != tc.holds {
				t.Errorf("the derivation holds: %v, want %v", got, tc.holds)
			}
			if !tc.holds {
				return
			}
			derived, err := Derive(prev, base, next)
			if err != nil {
				t.Fatal(err)
			}
			full, err := Build(next)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(derived, full) {
				t.Error("the derived twin differs from the full build")
			}
			shared := false
			for _, s := range derived.Services {
				shared = shared || s == d.services[svc]
			}
			if !shared {
				t.Error("the derived twin does not share the previous twin's Service")
			}
		})
	}
}

// bgpOff is s's Installation with BGP off, a new object.
func bgpOff(t *testing.T, s *model.Snapshot) *model.Object {
	t.Helper()
	for _, o := range s.Objects {
		if in, ok := o.Typed.(*operator.Installation); ok {
			cp := *o
			cp.Typed, cp.Raw = copyJSON(in), nil
			off := "Disabled"
			cp.Typed.(*operator.Installation).Spec.CalicoNetwork.BGP = &off
			return &cp
		}
	}
	t.Fatal("no Installation in the snapshot")
	return nil
}
