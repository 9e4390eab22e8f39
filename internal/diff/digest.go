package diff

import (
	"encoding/json"
	"hash/fnv"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// digest is a twin's objects as hashes, made once per twin: each object's
// JSON hashed, and one hash per part of the dataplane over the objects
// that part is compiled from. Two twins whose hashes for a part agree
// compile the same state for it, so it is neither compiled nor compared.
// JSON is the object's canonical form (a Quantity prints one way however
// it was parsed), and hashing it is several times cheaper than comparing
// two objects field by field through reflection.
type digest struct {
	objects []object
	hashes  map[model.Key]uint64
	// routing: Linux routes, neighbours, FDB; proxy: Linux kube-proxy's
	// state; policy: Linux Felix's rules; windows: a Windows node's HNS
	// state, which reads every input of the three and the whole
	// Installation; all: everything a trace or reach reads, which is every
	// one of them and more.
	routing, proxy, policy, windows, all uint64
	// routingShared and policyShared are routing and policy over the
	// objects other than pods (see nodeInputs).
	routingShared, policyShared uint64
	// extra is what no API object holds (kubeadm's configuration, which
	// holds kube-proxy's, the hosts, the node network).
	extra uint64
	// agents are the host-network pods' hashes as the parts count them.
	agents map[model.Key]uint64
}

func (t *Twin) digest() *digest {
	t.digOnce.Do(func() { t.dig = newDigest(t.c) })
	return t.dig
}

func newDigest(c *model.Cluster) *digest {
	d := &digest{objects: objectsOf(c), hashes: map[model.Key]uint64{}, agents: map[model.Key]uint64{}}
	sums := make([]uint64, len(d.objects))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // one encoding buffer per worker, not per object
			for i := w; i < len(d.objects); i += workers {
				sums[i] = objectHashBuf(d.objects[i].obj, &buf)
			}
		}()
	}
	wg.Wait()
	for i, o := range d.objects {
		d.hashes[o.key] = sums[i]
	}
	// What no API object holds: hosts, the node network, kubeadm's files,
	// Calico Node resources.
	extra := hashJSON(struct {
		Hosts       any
		Network     any
		NetworkFrom string
		Kubeadm     any
		CalicoNodes []*calico.Node
	}{c.Hosts, c.Network, c.NetworkFrom, c.Kubeadm, c.CalicoNodes})
	parts := map[string][]*uint64{
		"Node":                {&d.routing, &d.proxy, &d.policy, &d.windows},
		"IPPool":              {&d.windows},
		"IPAMBlock":           {&d.windows},
		"BlockAffinity":       {&d.routing, &d.windows},
		"FelixConfiguration":  {&d.routing, &d.policy, &d.windows},
		"BGPConfiguration":    {&d.routing, &d.windows},
		"Installation":        {&d.windows},
		"Service":             {&d.proxy, &d.windows},
		"EndpointSlice":       {&d.proxy, &d.windows},
		"NetworkPolicy":       {&d.policy, &d.windows},
		"GlobalNetworkPolicy": {&d.policy, &d.windows},
		"Namespace":           {&d.policy, &d.windows},
		"ServiceAccount":      {&d.policy, &d.windows},
		"ConfigMap":           {&d.windows},
		"RuntimeClass":        {&d.proxy, &d.windows},
	}
	// Controllers count through their pods, the IPAM configuration through
	// the blocks and addresses the engine gave; the rest is read by no
	// compiler, trace or reach.
	notCompiled := map[string]bool{"Deployment": true, "DaemonSet": true, "StatefulSet": true,
		"CertificateSigningRequest": true, "TigeraStatus": true, "IPAMConfiguration": true, "APIServer": true}
	d.extra = extra
	for _, p := range []*uint64{&d.routing, &d.proxy, &d.policy, &d.windows, &d.all} {
		*p = extra
	}
	// The Linux dataplane reads of the IP pools and the Installation only
	// what it declares (linux.ReadSettings): a pool's encapsulation reaches
	// the routes, never Felix's table; Linux kube-proxy reads its
	// configuration from kubeadm's, not from a ConfigMap. The rest
	// (windowsDataplane, serviceCIDRs, the ConfigMaps) is the Windows
	// dataplane's and the operator's.
	ls := linux.ReadSettings(c)
	d.routing = mix(d.routing, hashJSON(ls.Routing), "linux routing settings")
	d.policy = mix(d.policy, hashJSON(ls.Policy), "linux policy settings")
	d.routingShared, d.policyShared = d.routing, d.policy
	for i, o := range d.objects {
		targets := parts[o.key.Kind]
		if p, ok := o.obj.(*corev1.Pod); ok {
			// A pod on the pod network is routed to and policed by all
			// it holds; a host-network pod (an agent: calico-node,
			// kube-proxy) counts by where and whether it runs, not by its
			// spec, which a rollout of the agent changes.
			if p.Spec.HostNetwork {
				sums[i] = hashJSON([]any{p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP, metav1.GetControllerOf(p)})
				d.agents[o.key] = sums[i]
			}
			targets = []*uint64{&d.routing, &d.proxy, &d.policy, &d.windows}
		}
		if !notCompiled[o.key.Kind] {
			targets = append(targets, &d.all)
		}
		for _, t := range targets {
			*t = mix(*t, sums[i], o.key.String())
			if o.key.Kind == "Pod" {
				continue
			}
			switch t {
			case &d.routing:
				d.routingShared = mix(d.routingShared, sums[i], o.key.String())
			case &d.policy:
				d.policyShared = mix(d.policyShared, sums[i], o.key.String())
			}
		}
	}
	return d
}

// mix folds an object's hash and key into a part's hash.
func mix(part, sum uint64, key string) uint64 {
	h := fnv.New64a()
	var b [16]byte
	for j := 0; j < 8; j++ {
		b[j] = byte(part >> (8 * j))
		b[8+j] = byte(sum >> (8 * j))
	}
	h.Write(b[:])
	h.Write([]byte(key))
	return h.Sum64()
}

// objectHash is the hash of the object's protobuf encoding and its kind
// for the Kubernetes types (generated code, several times cheaper than
// JSON through reflection; maps in key order, a Quantity in its canonical
// form), else of its JSON. Equal encodings are equal objects; the
// protobuf one is finer than JSON (it keeps a time's nanoseconds), which
// makes a comparison look where JSON would not and find nothing. Metadata
// the twin stamps (creationTimestamp) is in it: a what-if that moves the
// stamp makes the parts look changed, and the comparison then finds no
// difference there.
func objectHash(o any) uint64 {
	var buf []byte
	return objectHashBuf(o, &buf)
}

// objectHashBuf is objectHash encoding into *buf, grown as needed: the
// same bytes as Marshal (which sizes the object and fills a new buffer
// from its end), without a buffer per object for the collector.
func objectHashBuf(o any, buf *[]byte) uint64 {
	if m, ok := o.(interface {
		Size() int
		MarshalToSizedBuffer([]byte) (int, error)
	}); ok {
		size := m.Size()
		if cap(*buf) < size {
			*buf = make([]byte, size+size/4)
		}
		if n, err := m.MarshalToSizedBuffer((*buf)[:size]); err == nil {
			b := (*buf)[size-n : size]
			h := fnv.New64a()
			if k, ok := o.(kruntime.Object); ok {
				h.Write([]byte(k.GetObjectKind().GroupVersionKind().String()))
				h.Write([]byte{0})
			}
			h.Write(b)
			return h.Sum64()
		}
	}
	return hashJSON(o)
}

func hashJSON(v any) uint64 {
	h := fnv.New64a()
	if err := json.NewEncoder(h).Encode(v); err != nil {
		// Not expected for the twin's types; a hash that matches nothing
		// makes the comparison look.
		return 0
	}
	return h.Sum64()
}
