package diff

import (
	"encoding/json"
	"hash/fnv"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff/objhash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// digest is a twin's objects as hashes, made once per twin: each object's
// encoding hashed (or a token standing for it, see identities), and one
// hash per part of the dataplane over the objects that part is compiled
// from. Two twins whose hashes for a part agree compile the same state
// for it, so it is neither compiled nor compared. The encoding is the
// object's canonical form (a Quantity prints one way however it was
// parsed), and hashing it is several times cheaper than comparing two
// objects field by field through reflection.
type digest struct {
	// c is the cluster hashed.
	c       *model.Cluster
	objects []object
	// routing: Linux routes, neighbours, FDB; proxy: Linux kube-proxy's
	// state; policy: Linux Felix's rules; windows: a Windows node's HNS
	// state, which reads every input of the three and the whole
	// Installation; all: everything a trace or reach reads, which is every
	// one of them and more.
	routing, proxy, policy, windows, all uint64
	// reach is what the reach matrix reads (reachKinds): host-network pods
	// as reachAgentHash; reachWindows adds the windows part and holds
	// host-network pods whole, for twins with a Windows node.
	reach, reachWindows uint64
	// routingShared and policyShared are routing and policy over the
	// objects other than pods (see nodeInputs).
	routingShared, policyShared uint64
	// extra is what no API object holds (kubeadm's configuration, which
	// holds kube-proxy's, the hosts, the node network).
	extra uint64
	// sums are the objects' hashes, in the order of objects; start is
	// where each kind's objects begin there (objectsOf lists the cluster's
	// lists whole, kind by kind), so the hashes of c.Pods[i] are
	// sums[start["Pod"]+i]: no map by key or by object is made.
	sums  []objectSums
	start map[string]int
}

// objectSums are the hashes of one object: of its key (keyHash), of a
// host-network pod as the parts count it, and sum, what the digest's parts
// fold and the comparison compares. sum is the hash of the object's
// encoding (content), or, in a twin's own digest (see identities), a
// token standing for it: two objects hold one token only when they are
// one object or their encodings hash alike.
type objectSums struct {
	sum, key, agent uint64
	// reachAgent is a host-network pod as reach reads it (reachAgentHash).
	reachAgent uint64
	// content is the hash of the encoding, 0 until it is needed (an
	// object given a token, whose twin no later twin has compared yet).
	content uint64
	isAgent bool
}

// tokens numbers the objects given a token, in every digest of the
// process: small numbers, which no 64-bit hash of an encoding is but by a
// chance of 2^-40 in a twin of 10^7 objects.
var tokens atomic.Uint64

// sumOf is the hashes of the i-th object of the twin's list of kind
// (Node, Pod, Service, EndpointSlice, DaemonSet, Deployment, StatefulSet).
func (d *digest) sumOf(kind string, i int) objectSums { return d.sums[d.start[kind]+i] }

// align pairs each of next's objects with prev's holding the same pointer
// (a derived twin shares the objects it leaves unchanged, mostly in the
// same order): match[i] is that object's index in prev, or -1. It walks
// both lists in order and looks a few objects around the expected place
// in prev; only an object not found there is looked up in a map of prev's
// objects by pointer, made on the first such object.
func align(prev, next []object) []int32 {
	const near = 16
	match := make([]int32, len(next))
	var at map[any]int32
	j := 0
	for i, o := range next {
		match[i] = -1
		for k := j; k < min(j+near, len(prev)); k++ {
			if prev[k].obj == o.obj {
				match[i] = int32(k)
				break
			}
		}
		for k := max(0, j-near); match[i] < 0 && k < min(j, len(prev)); k++ {
			if prev[k].obj == o.obj {
				match[i] = int32(k)
			}
		}
		if match[i] < 0 {
			if at == nil {
				at = make(map[any]int32, len(prev))
				for k, p := range prev {
					at[p.obj] = int32(k)
				}
			}
			k, ok := at[o.obj]
			if !ok {
				j++ // taken to replace the object at the expected place
				continue
			}
			match[i] = k
		}
		j = int(match[i]) + 1
	}
	return match
}

func (t *Twin) digest() *digest { return t.digestAfter(nil) }

// digestAfter is the twin's digest, made on first use reusing prev's
// hashes of the objects the two twins share (see newDigest); the twin
// keeps the pairing by pointer with prev for the objects' comparison.
// Made without prev (the first twin of a plan, either twin of a diff), it
// gives each object a token instead of hashing it (see identities).
func (t *Twin) digestAfter(prev *digest) *digest {
	t.digOnce.Do(func() { t.dig, t.digMatch = newDigestMatch(t.c, prev, true); t.digPrev = prev })
	return t.dig
}

// matchWith is the pairing by pointer of the twin's objects with prev's
// (see align), nil unless the twin's digest was made after prev's.
func (t *Twin) matchWith(prev *digest) []int32 {
	if t.digPrev == nil || t.digPrev != prev {
		return nil
	}
	return t.digMatch
}

// identities: a digest made without an earlier one need not hash its
// objects, only tell them apart. Its objects take tokens (distinct
// numbers) for sums, and their encodings are hashed only when a later
// twin's digest is made from it and holds a copy of one (not the same
// pointer, the same kind, namespace and name): that copy takes the
// object's token when their encodings hash alike, else its own encoding's
// hash. So tokens agree exactly where encodings do, between a twin and
// the twins derived from it, and a plan hashes, of its first twin, only
// the objects its first step replaces rather than the tens of thousands
// it shares with every step. Two digests made apart, each without an
// earlier one, share no token: a comparison of them finds every object
// and part different and compares them all, which gives the same result,
// slowly; CompareTwins always makes the after twin's digest from the
// before twin's. Held to hashing every object by
// TestComparisonsThroughTokensEqualThoseThroughHashes.

// newDigestMatch hashes the cluster's objects, and returns the pairing by
// pointer of c's objects with prev's (align; nil without prev);
// identities gives the objects tokens when there is no prev. An object
// prev's twin holds too (the same pointer: a twin derived from another
// shares the objects it leaves unchanged) takes prev's hashes instead of
// being encoded again. That is sound because a built twin's objects are
// never changed after the build (NewTwin requires it; the comparison and
// the commands only read them), and prev holds its objects, so no other
// object can take a shared one's address while prev exists. Held to
// hashing every object by
// TestADigestReusingAnEarlierTwinsHashesEqualsOneMadeFromScratch.
func newDigestMatch(c *model.Cluster, prev *digest, identities bool) (*digest, []int32) {
	objs := objectsOf(c)
	sums := make([]objectSums, len(objs))
	d := &digest{c: c, objects: objs, sums: sums, start: map[string]int{}}
	for i := len(objs) - 1; i >= 0; i-- {
		d.start[objs[i].key.Kind] = i
	}
	var match []int32
	if prev != nil {
		match = align(prev.objects, objs)
	}
	var todo []int
	for i := range objs {
		if match != nil && match[i] >= 0 {
			sums[i] = prev.sums[match[i]]
		} else {
			todo = append(todo, i)
		}
	}
	var token uint64
	if prev == nil && identities {
		token = tokens.Add(uint64(len(todo))) - uint64(len(todo))
	}
	// The copies in prev of the objects not shared: their tokens are kept
	// where the encodings hash alike; those prev holds as tokens alone
	// are hashed first.
	var copyOf []int32
	if prev != nil && len(todo) > 0 {
		copyOf = copiesIn(prev, match, objs, todo)
	}
	parallel(len(todo), func(j int, buf *[]byte) {
		i := todo[j]
		o := objs[i].obj
		s := objectSums{key: keyHash(objs[i].key)}
		if prev == nil && identities {
			s.sum = token + uint64(j) + 1
		} else {
			s.content = objectHashBuf(o, buf)
			s.sum = s.content
			if copyOf != nil && copyOf[j] >= 0 && prev.sums[copyOf[j]].content == s.content {
				s.sum = prev.sums[copyOf[j]].sum
			}
		}
		// A pod on the pod network is routed to and policed by all it
		// holds; a host-network pod (an agent: calico-node, kube-proxy)
		// counts in the Linux parts by where and whether it runs, not by
		// its spec, which a rollout of the agent changes.
		if p, ok := o.(*corev1.Pod); ok && p.Spec.HostNetwork {
			s.agent, s.isAgent = agentHash(p), true
			s.reachAgent = reachAgentHash(p, buf)
		}
		sums[i] = s
	})
	// What no API object holds: hosts, the node network, kubeadm's files,
	// Calico Node resources.
	var extra uint64
	if prev != nil && sameExtra(prev.c, c) {
		extra = prev.extra
	} else {
		extra = valueHash(struct {
			Hosts       any
			Network     any
			NetworkFrom string
			Kubeadm     any
			CalicoNodes []*calico.Node
		}{c.Hosts, c.Network, c.NetworkFrom, c.Kubeadm, c.CalicoNodes})
	}
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
	routing, policy := valueHash(ls.Routing), valueHash(ls.Policy)
	d.routing = mix(d.routing, routing, "linux routing settings")
	d.policy = mix(d.policy, policy, "linux policy settings")
	d.routingShared, d.policyShared = d.routing, d.policy
	d.reach = mix(mix(extra, routing, "linux routing settings"), policy, "linux policy settings")
	reachWhole := d.reach
	podParts := []*uint64{&d.routing, &d.proxy, &d.policy, &d.windows}
	var targets []*uint64
	kind := "\x00" // objectsOf lists the objects kind by kind
	inReach := false
	for i, o := range objs {
		if o.key.Kind != kind {
			kind = o.key.Kind
			inReach = reachKinds[kind]
			targets = append(targets[:0], parts[kind]...)
			if kind == "Pod" {
				targets = append(targets[:0], podParts...)
			}
			if !notCompiled[kind] {
				targets = append(targets, &d.all)
			}
		}
		sum := sums[i].sum
		kh := sums[i].key
		if inReach {
			reachWhole = mixKey(reachWhole, sum, kh)
			rs := sum
			if sums[i].isAgent {
				rs = sums[i].reachAgent
			}
			d.reach = mixKey(d.reach, rs, kh)
		}
		// A host-network pod counts in the Linux parts by where and whether
		// it runs; the Windows compiler reads the Windows kube-proxy pod's
		// flags and environment (internal/dataplane/windows kubeproxy.go
		// kubeProxyFlags), so the windows part, and all, hold it whole.
		whole := sum
		if sums[i].isAgent {
			sum = sums[i].agent
		}
		for _, t := range targets {
			if t == &d.windows || t == &d.all {
				*t = mixKey(*t, whole, kh)
				continue
			}
			*t = mixKey(*t, sum, kh)
			if o.key.Kind == "Pod" {
				continue
			}
			switch t {
			case &d.routing:
				d.routingShared = mixKey(d.routingShared, sum, kh)
			case &d.policy:
				d.policyShared = mixKey(d.policyShared, sum, kh)
			}
		}
	}
	d.reachWindows = mix(mix(fnvOffset64, reachWhole, "reach"), d.windows, "windows")
	return d, match
}

// copiesIn are, for each object todo names, the index in prev of the
// object of its kind, namespace and name that the twins do not share, or
// -1; the encodings of those prev holds a token for are hashed into prev
// (content is a cache: the hash the object always has).
func copiesIn(prev *digest, match []int32, objs []object, todo []int) []int32 {
	_, at := unshared(prev.objects, match)
	copyOf := make([]int32, len(todo))
	var hash []int32
	seen := map[int32]bool{}
	for j, i := range todo {
		k, ok := at[objs[i].key]
		if !ok {
			copyOf[j] = -1
			continue
		}
		copyOf[j] = k
		if prev.sums[k].content == 0 && !seen[k] {
			seen[k] = true
			hash = append(hash, k)
		}
	}
	parallel(len(hash), func(j int, buf *[]byte) {
		k := hash[j]
		prev.sums[k].content = objectHashBuf(prev.objects[k].obj, buf)
	})
	return copyOf
}

// parallel runs do(0..n-1) on all cores, each worker with one encoding
// buffer of its own.
func parallel(n int, do func(j int, buf *[]byte)) {
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), max(1, n))
	var crashed crash.Group
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer crashed.Recover()
			var buf []byte // one encoding buffer per worker, not per object
			for j := w; j < n; j += workers {
				do(j, &buf)
			}
		}()
	}
	wg.Wait()
	crashed.Repanic()
}

// sameExtra says whether two twins hold deeply equal inputs that no API
// object holds (hashed into digest.extra alike).
func sameExtra(a, b *model.Cluster) bool {
	return a != nil && b != nil && a.NetworkFrom == b.NetworkFrom &&
		reflect.DeepEqual(a.Hosts, b.Hosts) && reflect.DeepEqual(a.Network, b.Network) &&
		reflect.DeepEqual(a.Kubeadm, b.Kubeadm) && reflect.DeepEqual(a.CalicoNodes, b.CalicoNodes)
}

// agentHash is a host-network pod as the parts count it: by where and
// whether it runs (its name, node, phase, address and controller).
func agentHash(p *corev1.Pod) uint64 {
	h := uint64(fnvOffset64)
	for _, s := range []string{p.Namespace, p.Name, p.Spec.NodeName, string(p.Status.Phase), p.Status.PodIP} {
		h = fnvString(h, s)
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		for _, s := range []string{ref.APIVersion, ref.Kind, ref.Name, string(ref.UID)} {
			h = fnvString(h, s)
		}
		h = fnvBool(fnvBool(h, ref.Controller), ref.BlockOwnerDeletion)
	}
	return h
}

// mix folds an object's hash and key into a part's hash (FNV-1a over
// the three, without allocating).
func mix(part, sum uint64, key string) uint64 {
	return fnvString(fnvUint64(fnvUint64(fnvOffset64, part), sum), key)
}

// mixKey is mix with the key given by its hash (keyHash).
func mixKey(part, sum, kh uint64) uint64 {
	return fnvUint64(fnvUint64(fnvUint64(fnvOffset64, part), sum), kh)
}

// keyHash is an object key's FNV-1a hash.
func keyHash(k model.Key) uint64 {
	h := uint64(fnvOffset64)
	for _, s := range []string{k.Group, k.Kind, k.Namespace, k.Name} {
		h = fnvString(h, s)
	}
	return h
}

const fnvPrime64 = 1099511628211

func fnvUint64(h, v uint64) uint64 {
	for j := 0; j < 8; j++ {
		h ^= uint64(byte(v >> (8 * j)))
		h *= fnvPrime64
	}
	return h
}

// fnvString adds s and a separator (no string is a prefix of another's
// hashing then).
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	h ^= 0
	h *= fnvPrime64
	return h
}

func fnvBool(h uint64, b *bool) uint64 {
	v := uint64(0)
	if b != nil {
		v = 1
		if *b {
			v = 2
		}
	}
	return fnvUint64(h, v)
}

// objectHash is the hash of the object's protobuf encoding and its kind
// for the Kubernetes types (generated code, several times cheaper than
// JSON through reflection; maps in key order, a Quantity in its canonical
// form), else of its fields (objhash.FieldHash: what its JSON reads, without
// encoding it). Equal encodings are equal objects; the protobuf one is
// finer than JSON (it keeps a time's nanoseconds), which makes a
// comparison look where JSON would not and find nothing. Metadata the
// twin stamps (creationTimestamp) is in it: a what-if that moves the
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
			return hashEncoding(o, (*buf)[size-n:size])
		}
	}
	return valueHash(o)
}

// hashEncoding is the hash of an object's kind and its encoding b.
func hashEncoding(o any, b []byte) uint64 {
	kind := ""
	if k, ok := o.(kruntime.Object); ok {
		kind = k.GetObjectKind().GroupVersionKind().String()
	}
	return objhash.Encoding(kind, b)
}

// valueHash is v's objhash.FieldHash, or the hash of its JSON where the fields
// cannot be read.
func valueHash(v any) uint64 {
	if h, ok := objhash.FieldHash(v); ok {
		return h
	}
	return hashJSON(v)
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

// unshared marks the objects of before that match pairs with an object of
// the after list by pointer, and indexes the others by key.
func unshared(before []object, match []int32) (shared []bool, at map[model.Key]int32) {
	shared = make([]bool, len(before))
	n := 0
	for _, k := range match {
		if k >= 0 {
			shared[k] = true
			n++
		}
	}
	at = make(map[model.Key]int32, max(0, len(before)-n))
	for k, o := range before {
		if !shared[k] {
			at[o.key] = int32(k)
		}
	}
	return shared, at
}
