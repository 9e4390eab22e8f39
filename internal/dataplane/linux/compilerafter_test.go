package linux

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A compiler made after another takes its kube-proxy Service model only
// when kube-proxy reads the same of both clusters, and its nodes compile
// to what a compiler of their own cluster alone gives.
func TestACompilerMadeAfterAnotherTakesItsServiceModelOnlyWhenItsInputsAreTheSame(t *testing.T) {
	base, _ := lab(t)
	svc := slices.IndexFunc(base.Services, func(s *corev1.Service) bool { return s.Spec.ClusterIP != "" && len(s.Spec.Ports) > 0 })
	for _, tc := range []struct {
		name   string
		change func(c *model.Cluster)
		shares bool
	}{
		{"an IPPool's natOutgoing", func(c *model.Cluster) {
			pool := *c.IPPools[0]
			pool.Spec.NATOutgoing = !pool.Spec.NATOutgoing
			c.IPPools = append([]*calico.IPPool{&pool}, c.IPPools[1:]...)
		}, true},
		{"a Service's port", func(c *model.Cluster) {
			c.Services = slices.Clone(c.Services)
			s := c.Services[svc].DeepCopy()
			s.Spec.Ports[0].Port++
			c.Services[svc] = s
		}, false},
		{"an EndpointSlice removed", func(c *model.Cluster) {
			c.EndpointSlices = c.EndpointSlices[1:]
		}, false},
		{"kube-proxy's masqueradeAll", func(c *model.Cluster) {
			kp := *c.Kubeadm.KubeProxy
			kp.NFTables.MasqueradeAll = !kp.NFTables.MasqueradeAll
			c.Kubeadm.KubeProxy = &kp
		}, false},
		{"the service subnet", func(c *model.Cluster) {
			cc := *c.Kubeadm.Cluster
			cc.Networking.ServiceSubnet = "10.97.0.0/16"
			c.Kubeadm.Cluster = &cc
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := NewCompilerLazy(base, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := *base
			tc.change(&c)
			after, err := NewCompilerAfter(prev, &c, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := after.cc.kp == prev.cc.kp; got != tc.shares {
				t.Errorf("takes the Service model: %v, want %v", got, tc.shares)
			}
			own, err := NewCompilerLazy(&c, nil)
			if err != nil {
				t.Fatal(err)
			}
			compared := 0
			for name := range after.byName {
				a, _ := after.Node(name)
				b, _ := own.Node(name)
				for _, cmd := range []string{"ip route", "nft list ruleset"} {
					if got, want := run(t, a, cmd), run(t, b, cmd); got != want {
						t.Errorf("%s on %s:\n%s", cmd, name, lineDiff(want, got))
					}
				}
				compared++
			}
			if compared == 0 {
				t.Fatal("no Linux node compared")
			}
		})
	}
}
