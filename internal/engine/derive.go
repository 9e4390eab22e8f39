package engine

import (
	"errors"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
)

// Derive is Build(next) for a snapshot that differs from prevSnap, whose
// twin prev is (Build's or Derive's, not BuildOwned's), only in the Calico
// configuration a migration step changes (the operator's Installation, the
// IPAMConfiguration, the operator's kubernetes-services-endpoint
// ConfigMap) and in pods that came, went or changed. The result equals
// Build(next); it costs less because the input's workload pods that the
// previous build settled (bound and addressed in the input, unchanged, no
// note or event about them) are taken from prev as they are, and skip the
// copy, the stub's completion, admission and the kubelet's status: those
// read nothing such a change touches. So are the input's Deployments whose
// pods are all reused (with their ReplicaSets) and the input's
// EndpointSlices and NetworkPolicies. Every stage still runs over every
// pod (IPAM's order, the scheduler's state, the Services' endpoints).
// Where the reuse's conditions fail (other objects changed, the reference
// time moved, a node's readiness or a namespace differs, a stage would
// change a reused pod) it is a full Build. prev is never changed: the
// derived twin shares those objects with it.
func Derive(prev *model.Cluster, prevSnap, next *model.Snapshot) (*model.Cluster, error) {
	d := settle(prev, prevSnap, next)
	if d == nil {
		return Build(next)
	}
	d.prev = recall(prev)
	if d.prev != nil {
		d.net = d.prev.net // IPAM may restore its replay from prev's (derive_network.go)
	}
	c, err := build(next, false, d)
	if err != nil || !d.holds(prev, c) {
		// errUnsettled, or an error Build words from its own pods.
		return Build(next)
	}
	shareEqual(prev, c) // objects built again unchanged become prev's (derive_share.go)
	return c, nil
}

// errUnsettled stops a derivation whose reuse turned out not to hold.
var errUnsettled = errors.New("a reused pod would change")

// derivation is what a Derive reuses of the previous twin.
type derivation struct {
	// reuse maps an input pod (the snapshot's object) to the previous
	// twin's pod built from it; input is the reverse.
	reuse map[*corev1.Pod]*corev1.Pod
	input map[*corev1.Pod]*corev1.Pod
	// deployments maps an input Deployment whose pods are all reused to
	// the previous twin's (status filled), rs that one to its ReplicaSet;
	// slices and policies map input objects the engine only stamps to the
	// previous twin's.
	deployments map[*appsv1.Deployment]*appsv1.Deployment
	rs          map[*appsv1.Deployment]*appsv1.ReplicaSet
	slices      map[*discoveryv1.EndpointSlice]*discoveryv1.EndpointSlice
	policies    map[*networkingv1.NetworkPolicy]*networkingv1.NetworkPolicy
	// services maps the input's Services to the previous twin's, which
	// the services stage allocates again without writing (status.go
	// allocatedAgain); serviceInputs is the reverse.
	services      map[*corev1.Service]*corev1.Service
	serviceInputs map[*corev1.Service]*corev1.Service
	// broken is set by a stage that would change a reused pod.
	broken bool
	// prev is what the previous build kept (carry.go), nil if nothing.
	prev *carried
	// spoken are the objects the previous build said something about;
	// kept are its DaemonSets' pods taken as they are (derive_daemons.go).
	spoken map[model.Key]bool
	kept   map[*corev1.Pod]bool
	// podNet: IPAM reads what it read for the previous build, so
	// DaemonSet pods on the pod network may be kept too.
	podNet bool
	// origins are the previous twin's Origins, layered the objects whose
	// origin the next one sets (nil: collect reads every object's).
	origins map[model.Key]model.Origin
	layered []*model.Object
	// net is what the previous twin's network stage kept (netMemo).
	net *netMemo
}

func (d *derivation) keep(p *corev1.Pod) {
	if d.kept == nil {
		d.kept = map[*corev1.Pod]bool{}
	}
	d.kept[p] = true
}

func (d *derivation) reusedDeployments(t *appsv1.Deployment) *appsv1.Deployment {
	if d == nil {
		return nil
	}
	return d.deployments[t]
}

func (d *derivation) reusedEndpointSlices(t *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	if d == nil {
		return nil
	}
	return d.slices[t]
}

func (d *derivation) reusedServices(t *corev1.Service) *corev1.Service {
	if d == nil {
		return nil
	}
	return d.services[t]
}

// serviceInput is the input Service a Service taken from the previous
// twin stands for, nil for one built.
func (d *derivation) serviceInput(s *corev1.Service) *corev1.Service {
	if d == nil {
		return nil
	}
	return d.serviceInputs[s]
}

func (d *derivation) reusedNetworkPolicies(t *networkingv1.NetworkPolicy) *networkingv1.NetworkPolicy {
	if d == nil {
		return nil
	}
	return d.policies[t]
}

// replicaSetOf is the previous twin's ReplicaSet of a reused Deployment,
// nil when d is built again.
func (d *derivation) replicaSetOf(dep *appsv1.Deployment) *appsv1.ReplicaSet {
	if d == nil {
		return nil
	}
	return d.rs[dep]
}

// reused reports whether p is a pod taken from the previous twin.
func (d *derivation) reused(p *corev1.Pod) bool {
	if d == nil {
		return false
	}
	_, ok := d.input[p]
	return ok || d.kept[p]
}

// reusedPods is the number of pods taken from the previous twin.
func (d *derivation) reusedPods() int {
	if d == nil {
		return 0
	}
	return len(d.input)
}

// inputOf is the input pod p was built from: the snapshot's object for a
// reused pod (its stub, its phase), else p itself.
func (d *derivation) inputOf(p *corev1.Pod) *corev1.Pod {
	if d != nil {
		if in, ok := d.input[p]; ok {
			return in
		}
	}
	return p
}

// derivable are the kinds that may change, come or go for a derivation:
// what the operator renders from and Calico IPAM reads (nothing else in the
// engine reads them; ConfigMaps are read by name, the operator's only), and
// pods: a changed pod is built again, and what the others read of it (the
// reference time) is compared.
func derivable(o *model.Object) bool {
	switch {
	case o.Key.Group == "" && o.Key.Kind == "Pod":
		return true
	case o.Key.Group == "operator.tigera.io" && o.Key.Kind == "Installation":
		return true
	case strings.HasSuffix(o.Key.Group, "projectcalico.org") && o.Key.Kind == "IPAMConfiguration":
		return true
	case o.Key.Group == "" && o.Key.Kind == "ConfigMap" && o.Key.Namespace == "tigera-operator" && o.Key.Name == "kubernetes-services-endpoint":
		return true
	}
	return false
}

// settle finds the pods the derivation reuses, nil when it cannot derive.
// plan.Layer keeps every unchanged object as the same pointer, so an
// object that is not the same pointer changed.
func settle(prev *model.Cluster, prevSnap, next *model.Snapshot) *derivation {
	if prev == nil || prevSnap == nil || next == nil || len(prevSnap.Actions) > 0 || len(next.Actions) > 0 ||
		!reflect.DeepEqual(prevSnap.Network, next.Network) {
		return nil
	}
	ok, podsChanged, layered := onlyDerivableChanged(prevSnap.Objects, next.Objects)
	if !ok {
		return nil
	}
	// unchanged are the input pods prevSnap holds too (nil: all of them).
	var unchanged map[*corev1.Pod]bool
	if podsChanged {
		// Reused objects were stamped with the previous build's reference
		// time (the newest creation time of the input's nodes, pods and
		// CSRs): a pod that came, went or changed must leave it as it was.
		if was, now := snapshotRef(prevSnap), snapshotRef(next); !was.Equal(&now) {
			return nil
		}
		unchanged = make(map[*corev1.Pod]bool, len(prevSnap.Objects))
		for _, o := range prevSnap.Objects {
			if p, ok := o.Typed.(*corev1.Pod); ok {
				unchanged[p] = true
			}
		}
	}
	// What the previous build said about each pod: a pod it noted, warned
	// about, refused or recorded an event for is built again.
	spoken := map[model.Key]bool{}
	for _, n := range prev.Notes {
		spoken[n.Object] = true
	}
	for _, r := range prev.Rejected {
		spoken[r.Key] = true
	}
	for _, r := range prev.Warned {
		spoken[r.Key] = true
	}
	for _, e := range prev.Events {
		if e.InvolvedObject.Kind == "Pod" {
			spoken[model.Key{Kind: "Pod", Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}] = true
		}
	}
	if !podsChanged {
		// The previous derivation's choice holds again when the previous
		// build spoke of nothing it had not spoken of (carry.go).
		if was := recall(prev); was != nil && was.settled != nil && was.settled.covers(spoken) {
			d := *was.settled
			d.spoken = spoken
			d.originsFrom(prev, prevSnap, layered)
			return &d
		}
	}
	// built are the previous twin's pods by namespace and name (nil for a
	// name held twice).
	built := make(map[nsName]*corev1.Pod, len(prev.Pods))
	for _, p := range prev.Pods {
		k := nsName{p.Namespace, p.Name}
		if _, dup := built[k]; dup {
			built[k] = nil
			continue
		}
		built[k] = p
	}
	podSpoken := false
	for k := range spoken {
		podSpoken = podSpoken || (k.Group == "" && k.Kind == "Pod")
	}
	// The input's workload controllers, which own the pods it reuses.
	inputs := map[model.Key]bool{}
	for _, o := range next.Objects {
		if o.Key.Group == "apps" {
			inputs[o.Key] = true
		}
	}
	d := &derivation{reuse: make(map[*corev1.Pod]*corev1.Pod, len(prev.Pods)), input: make(map[*corev1.Pod]*corev1.Pod, len(prev.Pods)), spoken: spoken}
	// Consecutive pods mostly share their controller: its verdict is kept.
	var last struct {
		ns, kind, name string
		ok, set        bool
	}
	owned := func(in *corev1.Pod) bool {
		kind, name := controllers.ControllerOf(in)
		if !last.set || last.ns != in.Namespace || last.kind != kind || last.name != name {
			last.ns, last.kind, last.name, last.set = in.Namespace, kind, name, true
			last.ok = ownedByInput(in, inputs)
		}
		return last.ok
	}
	for _, o := range next.Objects {
		in, ok := o.Typed.(*corev1.Pod)
		if !ok {
			continue
		}
		k := o.Key
		p := built[nsName{k.Namespace, k.Name}]
		if p == in {
			return nil // prev took the snapshot's objects (BuildOwned): its input is gone
		}
		if p == nil || (unchanged != nil && !unchanged[in]) || keyOf(in) != k || !settled(in, p) || (podSpoken && spoken[k]) || !owned(in) {
			continue
		}
		d.reuse[in], d.input[p] = p, in
	}
	if len(d.reuse) == 0 {
		return nil
	}
	d.reuseObjects(prev, next, spoken, inputs)
	d.originsFrom(prev, prevSnap, layered)
	return d
}

// originsFrom lets collect start the twin's Origins from prev's when next
// is prevSnap layered in place (layered its new objects) and prevSnap
// holds each key once, so that prev's Origins are prevSnap's objects'.
func (d *derivation) originsFrom(prev *model.Cluster, prevSnap *model.Snapshot, layered []*model.Object) {
	if layered != nil && len(prev.Origins) == len(prevSnap.Objects) {
		d.origins, d.layered = prev.Origins, layered
	}
}

// reuseObjects finds the objects besides pods the derivation takes from
// the previous twin: the input's Deployments whose ReplicaSet (named by
// their observed pods) has only reused pods, at least as many as the
// Deployment's replicas, with that ReplicaSet (their statuses read only
// those pods); and the input's EndpointSlices and NetworkPolicies, which
// the engine only stamps with the reference time (the same: it is the
// newest creation time of nodes, pods and CSRs, none of which changed);
// and the input's Services, whose addresses and node ports the services
// stage allocates again and compares (allocatedAgain).
func (d *derivation) reuseObjects(prev *model.Cluster, next *model.Snapshot, spoken, inputs map[model.Key]bool) {
	d.deployments = map[*appsv1.Deployment]*appsv1.Deployment{}
	d.rs = map[*appsv1.Deployment]*appsv1.ReplicaSet{}
	d.slices = map[*discoveryv1.EndpointSlice]*discoveryv1.EndpointSlice{}
	d.policies = map[*networkingv1.NetworkPolicy]*networkingv1.NetworkPolicy{}
	d.services = map[*corev1.Service]*corev1.Service{}
	d.serviceInputs = map[*corev1.Service]*corev1.Service{}
	deps := byName(prev.Deployments)
	sets := byName(prev.ReplicaSets)
	slices := byName(prev.EndpointSlices)
	policies := byName(prev.NetworkPolicies)
	services := byName(prev.Services)
	// owned are the input's pods by ReplicaSet; observedRS the hash of
	// each Deployment's ReplicaSet the input's pods name, the last pod's
	// (controllers.ObservedReplicaSets).
	owned := map[nsName][]*corev1.Pod{}
	observedRS := map[nsName]string{}
	// A Deployment's status counts the pods of every ReplicaSet it owns,
	// the input's older ones too: one with any is built again.
	olderRS := map[nsName]bool{}
	for _, o := range next.Objects {
		switch t := o.Typed.(type) {
		case *corev1.Pod:
			kind, name := controllers.ControllerOf(t)
			if kind != "ReplicaSet" {
				continue
			}
			k := nsName{t.Namespace, name}
			owned[k] = append(owned[k], t)
			if i := strings.LastIndex(name, "-"); i > 0 {
				observedRS[nsName{t.Namespace, name[:i]}] = name[i+1:]
			}
		case *appsv1.ReplicaSet:
			if kind, name := controllers.ControllerOf(t); kind == "Deployment" {
				olderRS[nsName{t.Namespace, name}] = true
			}
		}
	}
	for _, o := range next.Objects {
		switch t := o.Typed.(type) {
		case *discoveryv1.EndpointSlice:
			if was := slices[nsName{t.Namespace, t.Name}]; was != nil && prev.Observed(o.Key) && !spoken[o.Key] {
				d.slices[t] = was
			}
		case *networkingv1.NetworkPolicy:
			if was := policies[nsName{t.Namespace, t.Name}]; was != nil && prev.Observed(o.Key) && !spoken[o.Key] {
				d.policies[t] = was
			}
		case *corev1.Service:
			if was := services[nsName{t.Namespace, t.Name}]; was != nil && prev.Observed(o.Key) && !spoken[o.Key] && d.serviceInputs[was] == nil {
				d.services[t], d.serviceInputs[was] = was, t
			}
		case *appsv1.Deployment:
			if !prev.Observed(o.Key) || spoken[o.Key] {
				continue
			}
			hash := observedRS[nsName{t.Namespace, t.Name}]
			rsName := t.Name + "-" + hash
			dep, rs := deps[nsName{t.Namespace, t.Name}], sets[nsName{t.Namespace, rsName}]
			if hash == "" || dep == nil || rs == nil || olderRS[nsName{t.Namespace, t.Name}] || inputs[model.Key{Group: "apps", Kind: "ReplicaSet", Namespace: t.Namespace, Name: rsName}] {
				continue
			}
			if kind, name := controllers.ControllerOf(rs); kind != "Deployment" || name != t.Name {
				continue
			}
			replicas := 1
			if t.Spec.Replicas != nil {
				replicas = int(*t.Spec.Replicas)
			}
			mine := owned[nsName{t.Namespace, rsName}]
			all := len(mine) > 0 && len(mine) >= replicas
			for _, p := range mine {
				all = all && d.reuse[p] != nil
			}
			if all {
				d.deployments[t], d.rs[dep] = dep, rs
			}
		}
	}
}

// nsName is an object's namespace and name, a map key.
type nsName struct{ namespace, name string }

// byName indexes objects by namespace and name, leaving out names held
// twice.
func byName[T metav1.Object](objs []T) map[nsName]T {
	m := make(map[nsName]T, len(objs))
	twice := map[nsName]bool{}
	for _, o := range objs {
		k := nsName{o.GetNamespace(), o.GetName()}
		if _, ok := m[k]; ok {
			twice[k] = true
		}
		m[k] = o
	}
	for k := range twice {
		delete(m, k)
	}
	return m
}

// onlyDerivableChanged reports whether next holds every object of prev,
// the same pointer unless derivable, plus derivable ones, and whether a pod
// is among those that came, went or changed. plan.Layer keeps each
// object's position and appends new ones, which is checked first; other
// snapshots are compared by key. layered are the objects of next that
// are not prev's (replaced in place or added) when next is prev layered
// that way, else nil.
func onlyDerivableChanged(prev, next []*model.Object) (ok, podsChanged bool, layered []*model.Object) {
	isPod := func(o *model.Object) bool { return o.Key.Group == "" && o.Key.Kind == "Pod" }
	if len(next) >= len(prev) {
		inPlace := true
		for i, o := range prev {
			if n := next[i]; n != o {
				if n.Key != o.Key || !derivable(n) {
					inPlace = false
					break
				}
				layered = append(layered, n)
				podsChanged = podsChanged || isPod(n)
			}
		}
		if inPlace {
			keys := make(map[model.Key]bool, len(next)-len(prev))
			for _, o := range next[len(prev):] {
				if !derivable(o) || keys[o.Key] {
					return false, false, nil
				}
				keys[o.Key] = true
				layered = append(layered, o)
				podsChanged = podsChanged || isPod(o)
			}
			if len(keys) > 0 {
				for _, o := range prev {
					if keys[o.Key] {
						return false, false, nil // a key twice: not a layering
					}
				}
			}
			return true, podsChanged, layered
		}
		layered = nil
	}
	before := make(map[model.Key]*model.Object, len(prev))
	for _, o := range prev {
		if _, dup := before[o.Key]; dup {
			return false, false, nil
		}
		before[o.Key] = o
	}
	seen := map[model.Key]bool{}
	for _, o := range next {
		was, ok := before[o.Key]
		if seen[o.Key] {
			return false, false, nil
		}
		seen[o.Key] = true
		if (!ok || was != o) && !derivable(o) {
			return false, false, nil
		}
	}
	for k, o := range before {
		if !seen[k] && !derivable(o) {
			return false, false, nil // an object was removed
		}
	}
	return true, true, nil // pods may have moved or gone: compared one by one
}

// snapshotRef is the reference time Build takes from the snapshot
// (newestTimestamp over what collect gives it).
func snapshotRef(s *model.Snapshot) metav1.Time {
	var t metav1.Time
	see := func(x metav1.Time) {
		if t.Before(&x) {
			t = x
		}
	}
	hosts := false
	for _, o := range s.Objects {
		switch v := o.Typed.(type) {
		case *hybrid.Cluster:
			if hosts {
				continue // collect refuses a second one
			}
			hosts = true
			for _, h := range v.Spec.Hosts {
				if h.Observed.CreationTimestamp != nil {
					see(*h.Observed.CreationTimestamp)
				}
			}
		case *corev1.Node:
			see(v.CreationTimestamp)
		case *corev1.Pod:
			see(v.CreationTimestamp)
		case *certv1.CertificateSigningRequest:
			see(v.CreationTimestamp)
		}
	}
	return t
}

// settled: the input pod in is bound and addressed, so the build neither
// schedules it nor asks IPAM for its address, and p (its previous build)
// records nothing admission adds that the scheduler's state reads of a
// running pod before admission (priority, overhead, preemption policy).
func settled(in, p *corev1.Pod) bool {
	if in.Spec.NodeName == "" || in.Status.PodIP == "" || in.Spec.HostNetwork || p.Spec.HostNetwork ||
		in.DeletionTimestamp != nil {
		return false
	}
	switch in.Status.Phase {
	case "", corev1.PodRunning:
	default:
		return false
	}
	if p.Spec.NodeName != in.Spec.NodeName || p.Status.PodIP != in.Status.PodIP || p.Status.Phase != corev1.PodRunning {
		return false
	}
	if p.Spec.PriorityClassName != "" || (p.Spec.Priority != nil && *p.Spec.Priority != 0) || p.Spec.Overhead != nil ||
		(p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != corev1.PreemptLowerPriority) {
		return false
	}
	return true
}

// ownedByInput: the pod's controller (and a ReplicaSet's Deployment) is an
// object of the input, which the derivation's step did not change; the
// operator's and kubeadm's workloads are rendered again.
func ownedByInput(p *corev1.Pod, inputs map[model.Key]bool) bool {
	kind, name := controllers.ControllerOf(p)
	switch kind {
	case "":
		return true
	case "DaemonSet", "StatefulSet":
		return inputs[model.Key{Group: "apps", Kind: kind, Namespace: p.Namespace, Name: name}]
	case "ReplicaSet":
		if inputs[model.Key{Group: "apps", Kind: kind, Namespace: p.Namespace, Name: name}] {
			return true
		}
		i := strings.LastIndex(name, "-")
		return i > 0 && inputs[model.Key{Group: "apps", Kind: "Deployment", Namespace: p.Namespace, Name: name[:i]}]
	}
	return false
}

// holds checks, on the derived twin, what the reused pods read of their
// nodes and namespaces: equal to what the previous build read, else the
// kubelet's status or admission could differ. The nodes and namespaces
// are compared first, the pods looked at only if some differ.
func (d *derivation) holds(prev, c *model.Cluster) bool {
	if d.broken {
		return false
	}
	index := func(nodes []*corev1.Node) map[string]*corev1.Node {
		m := make(map[string]*corev1.Node, len(nodes))
		for _, n := range nodes {
			m[n.Name] = n
		}
		return m
	}
	was, now := index(prev.Nodes), index(c.Nodes)
	// changed: the view a reused pod reads differs (or the node came or
	// went); placed: so does what placing a kept DaemonSet pod reads.
	changed, placed := map[string]bool{}, map[string]bool{}
	for name, a := range was {
		b := now[name]
		switch {
		case b == nil || !sameNodeView(a, b):
			changed[name], placed[name] = true, true
		case a.Spec.Unschedulable != b.Spec.Unschedulable || !objeq.Equal(a.Status.Allocatable, b.Status.Allocatable):
			placed[name] = true
		}
	}
	for name := range now {
		if was[name] == nil {
			changed[name], placed[name] = true, true
		}
	}
	nsWas := map[string]*corev1.Namespace{}
	for _, ns := range prev.Namespaces {
		nsWas[ns.Name] = ns
	}
	nsChanged := map[string]bool{}
	for _, ns := range c.Namespaces {
		if a := nsWas[ns.Name]; a == nil || !objeq.Equal(a, ns) {
			nsChanged[ns.Name] = true
		}
		delete(nsWas, ns.Name)
	}
	for name := range nsWas {
		nsChanged[name] = true
	}
	if len(changed) > 0 || len(nsChanged) > 0 {
		for p := range d.input {
			if changed[p.Spec.NodeName] || nsChanged[p.Namespace] {
				return false
			}
		}
	}
	for p := range d.kept {
		// Placed again on its node: what the scheduler reads of it too.
		if placed[p.Spec.NodeName] || now[p.Spec.NodeName] == nil || nsChanged[p.Namespace] {
			return false
		}
	}
	return true
}

// sameNodeView compares what a pod's build reads of its node: the address
// (status.hostIP), the OS and build (whether its images run), readiness
// and taints (the node lifecycle controller, the network's readiness).
func sameNodeView(a, b *corev1.Node) bool {
	return objeq.Equal(a.Labels, b.Labels) && objeq.Equal(&a.Status.Addresses, &b.Status.Addresses) &&
		objeq.Equal(&a.Status.NodeInfo, &b.Status.NodeInfo) && objeq.Equal(&a.Status.Conditions, &b.Status.Conditions) &&
		objeq.Equal(&a.Spec.Taints, &b.Spec.Taints)
}
