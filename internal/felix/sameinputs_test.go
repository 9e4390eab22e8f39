package felix

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Two clusters share one calculation only when New reads the same objects
// of both: a change to anything else (a pool, a Service, a host-network
// or finished pod) leaves them sharing, an equal copy of an object read
// does not.
func TestTwoClustersShareTheCalculationOnlyWhenItReadsTheSameObjects(t *testing.T) {
	pod := func(name string, hostNetwork bool) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "web", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{NodeName: "node-1", HostNetwork: hostNetwork},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0." + name[1:]},
		}
	}
	base := &model.Cluster{
		Namespaces:            []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "web"}}},
		ServiceAccounts:       []*corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "default"}}},
		Pods:                  []*corev1.Pod{pod("p1", false), pod("p2", true), pod("p3", false)},
		NetworkPolicies:       []*networkingv1.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "deny"}}},
		CalicoPolicies:        []*calico.NetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "allow"}}},
		GlobalNetworkPolicies: []*calico.GlobalNetworkPolicy{{ObjectMeta: metav1.ObjectMeta{Name: "global"}}},
		IPPools:               []*calico.IPPool{{ObjectMeta: metav1.ObjectMeta{Name: "pool"}}},
		Services:              []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web"}}},
	}
	base.Pods[2].Status.Phase = corev1.PodSucceeded // not ready: Calico gives it no endpoint
	for _, tc := range []struct {
		name   string
		change func(c *model.Cluster)
		same   bool
	}{
		{"nothing", func(*model.Cluster) {}, true},
		{"an IPPool", func(c *model.Cluster) {
			c.IPPools = []*calico.IPPool{{ObjectMeta: metav1.ObjectMeta{Name: "pool"}, Spec: calico.IPPoolSpec{VXLANMode: calico.ModeAlways}}}
		}, true},
		{"a Service", func(c *model.Cluster) { c.Services = nil }, true},
		{"a host-network pod", func(c *model.Cluster) { c.Pods[1] = c.Pods[1].DeepCopy() }, true},
		{"a finished pod", func(c *model.Cluster) { c.Pods[2] = c.Pods[2].DeepCopy() }, true},
		{"a finished pod removed", func(c *model.Cluster) { c.Pods = c.Pods[:2] }, true},
		{"a ready pod's equal copy", func(c *model.Cluster) { c.Pods[0] = c.Pods[0].DeepCopy() }, false},
		{"a ready pod added", func(c *model.Cluster) { c.Pods = append(c.Pods, pod("p4", false)) }, false},
		{"a ready pod removed", func(c *model.Cluster) { c.Pods = c.Pods[1:] }, false},
		{"a finished pod made ready", func(c *model.Cluster) {
			c.Pods[2] = c.Pods[2].DeepCopy()
			c.Pods[2].Status.Phase = corev1.PodRunning
		}, false},
		{"a Namespace", func(c *model.Cluster) { c.Namespaces[0] = c.Namespaces[0].DeepCopy() }, false},
		{"a ServiceAccount", func(c *model.Cluster) { c.ServiceAccounts[0] = c.ServiceAccounts[0].DeepCopy() }, false},
		{"a NetworkPolicy", func(c *model.Cluster) { c.NetworkPolicies[0] = c.NetworkPolicies[0].DeepCopy() }, false},
		{"a Calico NetworkPolicy's equal copy", func(c *model.Cluster) {
			cp := *c.CalicoPolicies[0]
			c.CalicoPolicies[0] = &cp
		}, false},
		{"a GlobalNetworkPolicy", func(c *model.Cluster) { c.GlobalNetworkPolicies = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *base
			c.Namespaces, c.ServiceAccounts, c.Pods = slices.Clone(c.Namespaces), slices.Clone(c.ServiceAccounts), slices.Clone(c.Pods)
			c.NetworkPolicies, c.CalicoPolicies = slices.Clone(c.NetworkPolicies), slices.Clone(c.CalicoPolicies)
			tc.change(&c)
			if got := SameInputs(base, &c); got != tc.same {
				t.Errorf("SameInputs = %v, want %v", got, tc.same)
			}
			if got := SameInputs(&c, base); got != tc.same {
				t.Errorf("SameInputs the other way = %v, want %v", got, tc.same)
			}
			if tc.same {
				// What a shared calculation holds is what the cluster's own does.
				a, b := New(base), New(&c)
				if fmt.Sprint(a.Endpoints) != fmt.Sprint(b.Endpoints) || len(a.Policies) != len(b.Policies) {
					t.Errorf("the calculations differ:\n%v\n%v", a.Endpoints, b.Endpoints)
				}
			}
		})
	}
	if SameInputs(nil, base) || SameInputs(base, nil) {
		t.Error("a nil cluster shares a calculation")
	}
}
