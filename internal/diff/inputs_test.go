package diff

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// servedSlice is a Service of the lab whose EndpointSlice has at least two
// endpoints, and that slice.
func servedSlice(t *testing.T, c *model.Cluster) (*corev1.Service, *discoveryv1.EndpointSlice) {
	t.Helper()
	for _, sl := range c.EndpointSlices {
		if len(sl.Endpoints) < 2 {
			continue
		}
		for _, svc := range c.Services {
			if svc.Namespace == sl.Namespace && svc.Name == sl.Labels[discoveryv1.LabelServiceName] && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
				return svc, sl
			}
		}
	}
	t.Fatal("the lab has no Service with two endpoints")
	return nil, nil
}

// alias adds a second Service with the same endpoints as svc (its slice
// copied), at clusterIP.
func alias(c *model.Cluster, svc *corev1.Service, sl *discoveryv1.EndpointSlice, clusterIP string) {
	s2 := svc.DeepCopy()
	s2.Name, s2.Spec.ClusterIP, s2.Spec.ClusterIPs = "alias", clusterIP, []string{clusterIP}
	sl2 := sl.DeepCopy()
	sl2.Name = "alias-x1"
	sl2.Labels[discoveryv1.LabelServiceName] = "alias"
	c.Services = append(c.Services, s2)
	c.EndpointSlices = append(c.EndpointSlices, sl2)
}

// kube-proxy's table is compared by the Services whose inputs differ (and
// those sharing an address with them); the differences must be exactly
// those from rendering every node's whole table.
func TestKubeProxyDifferencesByServiceEqualThoseFromRenderingEveryNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, before, after *model.Cluster)
	}{
		{"a Service's slice loses an endpoint", func(t *testing.T, _, after *model.Cluster) {
			_, sl := servedSlice(t, after)
			sl.Endpoints = sl.Endpoints[1:]
		}},
		{"a Service loses an endpoint another Service keeps", func(t *testing.T, before, after *model.Cluster) {
			for _, c := range []*model.Cluster{before, after} {
				svc, sl := servedSlice(t, c)
				alias(c, svc, sl, "10.96.200.200")
			}
			_, sl := servedSlice(t, after)
			sl.Endpoints = sl.Endpoints[1:]
		}},
		{"two Services share a cluster IP and one changes its port", func(t *testing.T, before, after *model.Cluster) {
			for _, c := range []*model.Cluster{before, after} {
				svc, sl := servedSlice(t, c)
				alias(c, svc, sl, svc.Spec.ClusterIP)
			}
			svc, _ := servedSlice(t, after)
			svc.Spec.Ports[0].Port += 1000
		}},
		{"a backend pod moves to another address on its node", func(t *testing.T, _, after *model.Cluster) {
			_, sl := servedSlice(t, after)
			ep := &sl.Endpoints[0]
			if ep.TargetRef == nil {
				t.Fatal("the served slice's endpoint names no pod")
			}
			moved := false
			for _, p := range after.Pods {
				if p.Namespace == ep.TargetRef.Namespace && p.Name == ep.TargetRef.Name {
					p.Status.PodIP, p.Status.PodIPs = "192.168.250.250", []corev1.PodIP{{IP: "192.168.250.250"}}
					moved = true
				}
			}
			if !moved {
				t.Fatal("the endpoint's pod is not in the cluster")
			}
			ep.Addresses = []string{"192.168.250.250"}
		}},
		{"a Service is removed", func(t *testing.T, _, after *model.Cluster) {
			svc, _ := servedSlice(t, after)
			var kept []*corev1.Service
			for _, s := range after.Services {
				if s != svc {
					kept = append(kept, s)
				}
			}
			after.Services = kept
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := build(t, true), build(t, true)
			tc.change(t, before, after)
			got, err := Compare(before, after, Options{NoReach: true})
			if err != nil {
				t.Fatal(err)
			}
			want, err := Compare(before, after, Options{NoReach: true, EveryPart: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Nodes) == 0 {
				t.Fatal("the change makes no node difference: the case tests nothing")
			}
			if !reflect.DeepEqual(got.Nodes, want.Nodes) {
				t.Errorf("by Services %+v\nby every node %+v", got.Nodes, want.Nodes)
			}
		})
	}
}

func TestObjectHashesAgreeOnlyForTheSameObject(t *testing.T) {
	withCPU := func(q string) *corev1.Pod {
		p := pod("p", "a")
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		return p
	}
	labelled := pod("p", "a")
	labelled.Labels = map[string]string{"app": "x"}
	typed := pod("p", "a")
	typed.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	for _, tc := range []struct {
		name string
		a, b any
		same bool
	}{
		{"a quantity written two ways hashes the same", withCPU("1"), withCPU("1000m"), true},
		{"two quantities hash differently", withCPU("1"), withCPU("2"), false},
		{"a label hashes differently", pod("p", "a"), labelled, false},
		{"the kind and apiVersion count", pod("p", "a"), typed, false},
		{"an object without protobuf hashes its fields", &calico.IPPool{Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16"}}, &calico.IPPool{Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := objectHash(tc.a) == objectHash(tc.b); got != tc.same {
				t.Errorf("same hash %v, want %v", got, tc.same)
			}
		})
	}
}

// The digest's workers reuse one buffer for every object they encode:
// what an earlier, larger object left in it must not reach a later hash.
func TestAReusedEncodingBufferGivesEachObjectsOwnHash(t *testing.T) {
	big := pod("a-pod-with-a-much-longer-name", "a-namespace-with-a-longer-name")
	big.Labels = map[string]string{"app": "something-long-enough-to-grow-the-buffer"}
	var buf []byte
	for _, o := range []any{big, pod("p", "a"), big, pod("q", "b"), &calico.IPPool{Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16"}}} {
		if got, want := objectHashBuf(o, &buf), objectHash(o); got != want {
			t.Errorf("%T: %x with a reused buffer, %x with a fresh one", o, got, want)
		}
		if m, ok := o.(interface{ Marshal() ([]byte, error) }); ok {
			b, err := m.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if fresh := objectHash(o); fresh != hashBytesWithKind(o, b) {
				t.Errorf("%T: the hash is not that of Marshal's bytes", o)
			}
		}
	}
}

func hashBytesWithKind(o any, b []byte) uint64 { return hashEncoding(o, b) }
