package diff

import (
	"fmt"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// nodeInputs split what a twin's Linux nodes are compiled from into what
// every node shares and what only one node holds (its Node and its own
// pods), per part: a comparison renders a node's part only when the
// shared inputs of that part or the node's own differ, rather than every
// node's whole table whenever anything the part reads changed somewhere.
// A part shared by all nodes is thereby compared once, not per node.
type nodeInputs struct {
	// own is, per node, its Node object and the pods its Linux state reads
	// (linux.ReadsPod), as hashed in the digest.
	own map[string]uint64
	// routing: the Node objects, Settings.Routing, the FelixConfiguration
	// and BGP objects, what no API object holds, and each pod's node and
	// address (a pod outside its node's blocks is routed on every node).
	routing uint64
	// policyObjects: Settings.Policy and the policy, namespace and
	// service account objects; with linux.PeerInputs (made from the
	// twin's plane's Felix calculation on first use) the shared Felix inputs.
	policyObjects uint64

	peerOnce sync.Once
	peer     uint64

	// services is, per Service ("namespace/name"), its hash with its
	// EndpointSlices'; shares are the addresses and node ports through
	// which its items in kube-proxy's sets may equal another Service's.
	services map[string]uint64
	shares   map[string][]string
}

// inputs are the twin's node inputs, made on first use.
func (t *Twin) inputs() *nodeInputs {
	t.inOnce.Do(func() { t.in = newNodeInputs(t) })
	return t.in
}

func newNodeInputs(t *Twin) *nodeInputs {
	d := t.digest()
	in := &nodeInputs{own: map[string]uint64{}, routing: d.routingShared, policyObjects: d.policyShared}
	for i, n := range t.c.Nodes {
		in.own[n.Name] = mix(fnvOffset64, d.sumOf("Node", i).sum, n.Name)
	}
	// Pod facts are summed: the sum does not depend on the order of the
	// twin's pod list, which a replaced pod's new name reorders.
	var podFacts uint64
	for i, p := range t.c.Pods {
		// Of a node's pods, its Linux state reads only its workload
		// endpoints, whole (linux.ReadsPod): an agent's rollout (a
		// host-network pod) renders none of the node's parts again.
		if linux.ReadsPod(p) {
			s := d.sumOf("Pod", i)
			in.own[p.Spec.NodeName] = mixKey(in.own[p.Spec.NodeName], s.sum, s.key)
		}
		podFacts += routingFacts(p)
	}
	in.routing = mix(in.routing, podFacts, "pods")
	in.services, in.shares = map[string]uint64{}, map[string][]string{}
	for i, svc := range t.c.Services {
		k := svc.Namespace + "/" + svc.Name
		in.services[k] = mix(fnvOffset64, d.sumOf("Service", i).sum, k)
		sh := append([]string{svc.Spec.ClusterIP, svc.Spec.LoadBalancerIP}, svc.Spec.ClusterIPs...)
		sh = append(sh, svc.Spec.ExternalIPs...)
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			sh = append(sh, ing.IP)
		}
		for _, sp := range svc.Spec.Ports {
			if sp.NodePort != 0 {
				sh = append(sh, fmt.Sprintf("nodePort %s %d", sp.Protocol, sp.NodePort))
			}
		}
		in.shares[k] = append(in.shares[k], sh...)
	}
	for i, sl := range t.c.EndpointSlices {
		k := sl.Namespace + "/" + sl.Labels[discoveryv1.LabelServiceName]
		in.services[k] = mix(in.services[k], d.sumOf("EndpointSlice", i).sum, sl.Name)
		for _, ep := range sl.Endpoints {
			in.shares[k] = append(in.shares[k], ep.Addresses...)
		}
	}
	return in
}

// changedServices are the Services whose kube-proxy items may differ
// between two twins: those whose Service or EndpointSlices differ, and,
// since a set keeps the first of two equal elements, every Service that
// shares an address or node port with one of those, in either twin.
func changedServices(a, b *nodeInputs) map[string]bool {
	out := map[string]bool{}
	var queue []string
	see := func(k string) {
		if !out[k] {
			out[k] = true
			queue = append(queue, k)
		}
	}
	for k, h := range a.services {
		if hb, ok := b.services[k]; !ok || hb != h {
			see(k)
		}
	}
	for k := range b.services {
		if _, ok := a.services[k]; !ok {
			see(k)
		}
	}
	if len(queue) == 0 {
		return out
	}
	by := map[string][]string{}
	for _, in := range []*nodeInputs{a, b} {
		for svc, keys := range in.shares {
			for _, k := range keys {
				if k != "" && k != corev1.ClusterIPNone {
					by[k] = append(by[k], svc)
				}
			}
		}
	}
	for len(queue) > 0 {
		svc := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, in := range []*nodeInputs{a, b} {
			for _, k := range in.shares[svc] {
				if k == "" || k == corev1.ClusterIPNone {
					continue
				}
				for _, o := range by[k] {
					see(o)
				}
			}
		}
	}
	return out
}

const fnvOffset64 = 14695981039346656037

func keyOf(group, kind string, o metav1.Object) model.Key {
	return model.Key{Group: group, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// routingFacts is what the routes of a node read of a pod it may not own
// (a borrowed address is routed to its node everywhere).
func routingFacts(p *corev1.Pod) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p.Spec.NodeName))
	h.Write([]byte{0})
	h.Write([]byte(p.Status.PodIP))
	h.Write([]byte{0})
	h.Write([]byte(p.Status.Phase))
	if p.Spec.HostNetwork {
		h.Write([]byte{1})
	}
	return h.Sum64()
}

// policy is the shared Felix inputs: the objects and the peers' members.
func (in *nodeInputs) policy(t *Twin) (uint64, error) {
	p, err := t.comparedPlane()
	if err != nil {
		return 0, err
	}
	in.peerOnce.Do(func() { in.peer = mix(in.policyObjects, linux.PeerInputs(p.Felix()), "peers") })
	return in.peer, nil
}
