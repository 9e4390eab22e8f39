package plane

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A plane made after another shares its Felix calculation, pod index and
// other indexes only where the clusters' inputs to each are the same
// objects; whatever it shares, it answers about its own cluster's.
func TestAFollowingPlaneSharesOnlyWhatItsInputsLeaveEqual(t *testing.T) {
	base := generated(t, 10)
	ready := slices.IndexFunc(base.Pods, func(p *corev1.Pod) bool {
		return !p.Spec.HostNetwork && p.Status.PodIP != "" && p.Status.Phase == corev1.PodRunning
	})
	for _, tc := range []struct {
		name               string
		change             func(c *model.Cluster)
		calc, pods, others bool
		// check asks the following plane about what changed.
		check func(t *testing.T, c *model.Cluster, p *Plane)
	}{
		{"nothing", func(*model.Cluster) {}, true, true, true, nil},
		{"an IPPool's VXLAN mode", func(c *model.Cluster) {
			pool := *c.IPPools[0]
			pool.Spec.VXLANMode = calico.ModeAlways
			c.IPPools = []*calico.IPPool{&pool}
		}, true, true, true, nil},
		{"a NetworkPolicy replaced by a copy", func(c *model.Cluster) {
			c.NetworkPolicies = slices.Clone(c.NetworkPolicies)
			c.NetworkPolicies[0] = c.NetworkPolicies[0].DeepCopy()
		}, false, true, true, nil},
		{"a Service replaced by a copy", func(c *model.Cluster) {
			c.Services = slices.Clone(c.Services)
			c.Services[0] = c.Services[0].DeepCopy()
		}, true, true, false, func(t *testing.T, c *model.Cluster, p *Plane) {
			s := c.Services[0]
			if p.Service(s.Namespace, s.Name) != s {
				t.Error("the Service by name is the other cluster's")
			}
		}},
		{"an EndpointSlice replaced by a copy", func(c *model.Cluster) {
			c.EndpointSlices = slices.Clone(c.EndpointSlices)
			c.EndpointSlices[0] = c.EndpointSlices[0].DeepCopy()
		}, true, true, false, func(t *testing.T, c *model.Cluster, p *Plane) {
			es := c.EndpointSlices[0]
			if !slices.Contains(p.EndpointSlices(es.Namespace, es.Labels["kubernetes.io/service-name"]), es) {
				t.Error("the EndpointSlices are the other cluster's")
			}
		}},
		{"a ReplicaSet replaced by a copy", func(c *model.Cluster) {
			c.ReplicaSets = slices.Clone(c.ReplicaSets)
			c.ReplicaSets[0] = c.ReplicaSets[0].DeepCopy()
		}, true, true, false, func(t *testing.T, c *model.Cluster, p *Plane) {
			if !slices.Contains(p.ReplicaSets(c.ReplicaSets[0].Namespace), c.ReplicaSets[0]) {
				t.Error("the ReplicaSets are the other cluster's")
			}
		}},
		{"a host's MTU", func(c *model.Cluster) {
			c.Hosts = slices.Clone(c.Hosts)
			c.Hosts[0].NIC.MTU = 1400
		}, true, true, false, func(t *testing.T, c *model.Cluster, p *Plane) {
			if mtu, _ := p.MTU(c.Hosts[0].Name); mtu != 1400 {
				t.Errorf("MTU %d, want 1400", mtu)
			}
		}},
		{"a running pod replaced by a copy", func(c *model.Cluster) {
			c.Pods = slices.Clone(c.Pods)
			c.Pods[ready] = c.Pods[ready].DeepCopy()
		}, false, false, false, func(t *testing.T, c *model.Cluster, p *Plane) {
			pod := c.Pods[ready]
			if p.Pod(pod.Namespace, pod.Name) != pod {
				t.Error("the pod by name is the other cluster's")
			}
			if p.PodByIP(netip.MustParseAddr(pod.Status.PodIP)) != pod {
				t.Error("the pod by address is the other cluster's")
			}
			if !slices.Contains(p.PodsOnNode(pod.Spec.NodeName), pod) {
				t.Error("the node's pods are the other cluster's")
			}
			if ep := p.Felix().EndpointOf(pod); ep.Pod != pod {
				t.Error("the endpoint is the other cluster's pod's")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := New(base)
			if err != nil {
				t.Fatal(err)
			}
			c := *base
			tc.change(&c)
			p, err := Follow(prev, &c)
			if err != nil {
				t.Fatal(err)
			}
			if p.Cluster() != &c {
				t.Fatal("the plane is not of its own cluster")
			}
			// The following plane is asked first: what it shares is made
			// from the other cluster's objects, which are its own.
			if tc.check != nil {
				tc.check(t, &c, p)
			}
			if got := p.Felix() == prev.Felix(); got != tc.calc {
				t.Errorf("shares the Felix calculation: %v, want %v", got, tc.calc)
			}
			if got := p.pods() == prev.pods(); got != tc.pods {
				t.Errorf("shares the pod index: %v, want %v", got, tc.pods)
			}
			if got := p.ix() == prev.ix(); got != tc.others {
				t.Errorf("shares the other indexes: %v, want %v", got, tc.others)
			}
		})
	}
}
