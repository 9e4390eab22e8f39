package engine

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derivation takes the previous twin's Service only when the input's
// asks the services stage for no address and no node port: one that does
// is allocated again among the others (whose order a step may change),
// and its previous address, taken as asked for, would be reserved first.
func TestOnlyServicesThatAskForNoAddressOrPortAreTakenFromThePreviousTwin(t *testing.T) {
	tests := []struct {
		name  string
		spec  corev1.ServiceSpec
		taken bool
	}{
		{"a Service with its ClusterIP is taken", corev1.ServiceSpec{ClusterIP: "10.96.7.7", Ports: []corev1.ServicePort{{Port: 80}}}, true},
		{"a Service without a ClusterIP is built again", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}, false},
		{"a NodePort Service without its node port is built again", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.7.8", Ports: []corev1.ServicePort{{Port: 80}}}, false},
		{"a NodePort Service with its node port is taken", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.7.9", Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}}}, true},
		{"a local LoadBalancer Service without its health check port is built again", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.7.10",
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30081}}}, false},
		{"an ExternalName Service is taken", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}, true},
	}
	dir := t.TempDir()
	if _, err := gen.WriteDir(dir, gen.Options{Nodes: 4, Namespaces: 1, Pods: 40, Services: 4, Seed: 1, ObservedIPs: true}); err != nil {
		t.Fatal(err)
	}
	generated, err := load.Load(load.Options{Filenames: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
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
			if d == nil {
				t.Fatal("nothing qualifies for reuse: the case does not test the guard")
			}
			if _, ok := d.services[svc]; ok != tc.taken {
				t.Errorf("the Service is taken from the previous twin: %v, want %v", ok, tc.taken)
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
