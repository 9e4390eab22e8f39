package scheduler

import (
	"maps"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// State is what the model knows about pods already bound to nodes: their
// requests, host ports, priority and owner. The zero value is an empty
// cluster. Schedule only reads it; callers record each placement with Add so
// that later replicas see the earlier ones.
type State struct {
	nodes map[string][]*podInfo
	// totals are running sums per node of what the filters and scores add
	// up over a node's pods, so that a Scheduler reads them in O(1) instead
	// of summing every pod on every node for every pod it places.
	totals map[string]*nodeTotals
	// log is the node of every Add, in order: a Scheduler replays what it
	// has not seen yet to refresh what it keeps per node.
	log []string
	// byOwner lists, per (non-empty) owner key, the nodes holding its pods,
	// each once, in the order they got the first.
	byOwner map[string][]string
	// claims are the PersistentVolumeClaims that exist, "namespace/name";
	// nil means unknown, and then a pod's claims are not checked.
	claims map[string]bool
	// antiAffinity counts the recorded pods with required pod
	// anti-affinity: the InterPodAffinity filter runs for every pod then.
	antiAffinity int
	// withAffinity counts the recorded pods with any pod (anti-)affinity:
	// InterPodAffinity scores them for every pod.
	withAffinity int
	// gen numbers this State among those sharing node totals (Base).
	gen uint64
}

// nodeTotals sums the pods recorded on one node.
type nodeTotals struct {
	count                  int64
	requests               resources
	nonZeroCPU, nonZeroMem int64
	// owners counts the pods per (non-empty) owner key (ownerCount):
	// those added since the totals were copied from ownersBase, the
	// counts of the totals they were copied from, when set (own).
	owners, ownersBase map[string]int
	// withPorts are the pods that claim host ports, in the order added.
	withPorts []*podInfo
	// first tells, per pod in the order added, whether it was its owner's
	// first on the node (the State's byOwner got the node then).
	first []bool
	// antiAffinity and withAffinity count the node's share of the State's.
	antiAffinity, withAffinity int
	// gen is the State that may change these totals in place (Base).
	gen uint64
}

// NewState returns an empty State.
func NewState() *State {
	return &State{}
}

// SetClaims records which PersistentVolumeClaims exist ("namespace/name"),
// so that a pod naming another one stays Pending as VolumeRestrictions'
// PreFilter keeps it.
func (s *State) SetClaims(keys []string) {
	s.claims = make(map[string]bool, len(keys))
	for _, k := range keys {
		s.claims[k] = true
	}
}

// finished reports whether the pod ran to completion: the scheduler's pod
// informer leaves out Succeeded and Failed pods (pkg/scheduler/scheduler.go
// NewInformerFactory), so they hold no resources, ports or pod slots.
func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Add records pod as running on node. A finished pod is not recorded.
func (s *State) Add(pod *corev1.Pod, node string) {
	if finished(pod) {
		return
	}
	if s.nodes == nil {
		s.nodes = map[string][]*podInfo{}
		s.totals = map[string]*nodeTotals{}
		s.byOwner = map[string][]string{}
	}
	t := s.own(node)
	anti, with := t.antiAffinity, t.withAffinity
	pi := t.record(newPodInfo(pod))
	s.nodes[node] = append(s.nodes[node], pi)
	s.antiAffinity += t.antiAffinity - anti
	s.withAffinity += t.withAffinity - with
	if t.first[len(t.first)-1] {
		s.byOwner[pi.owner] = append(s.byOwner[pi.owner], node)
	}
	s.log = append(s.log, node)
}

// record adds pi to the node's sums and returns it.
func (t *nodeTotals) record(pi *podInfo) *podInfo {
	t.count++
	t.requests.add(pi.requests)
	t.nonZeroCPU += pi.nonZeroMilliCPU
	t.nonZeroMem += pi.nonZeroMemory
	first := false
	if pi.owner != "" {
		t.owners[pi.owner]++
		first = t.ownerCount(pi.owner) == 1
	}
	t.first = append(t.first, first)
	if len(pi.ports) > 0 {
		t.withPorts = append(t.withPorts, pi)
	}
	if len(requiredAnti(pi.pod)) > 0 {
		t.antiAffinity++
	}
	if withAffinity(pi.pod) {
		t.withAffinity++
	}
	return pi
}

// ownerCount is the number of the node's pods with the owner key.
func (t *nodeTotals) ownerCount(owner string) int {
	return t.ownersBase[owner] + t.owners[owner]
}

// Pods returns the pods recorded on node, in the order they were added.
func (s *State) Pods(node string) []*corev1.Pod {
	if s == nil {
		return nil
	}
	infos := s.nodes[node]
	out := make([]*corev1.Pod, 0, len(infos))
	for _, pi := range infos {
		out = append(out, pi.pod)
	}
	return out
}

// totalsOn is the running sums of the pods on node (zero for none).
func (s *State) totalsOn(node string) *nodeTotals {
	if s == nil || s.totals[node] == nil {
		return &noTotals
	}
	return s.totals[node]
}

func (s *State) on(node string) []*podInfo {
	if s == nil {
		return nil
	}
	return s.nodes[node]
}

// resources is a pod's request or a node's capacity in the scheduler's units.
type resources struct {
	milliCPU, memory, ephemeral int64
	scalar                      map[corev1.ResourceName]int64
}

func (r *resources) add(o resources) {
	r.milliCPU += o.milliCPU
	r.memory += o.memory
	r.ephemeral += o.ephemeral
	for k, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = map[corev1.ResourceName]int64{}
		}
		r.scalar[k] += v
	}
}

func (r *resources) max(o resources) {
	r.milliCPU = max(r.milliCPU, o.milliCPU)
	r.memory = max(r.memory, o.memory)
	r.ephemeral = max(r.ephemeral, o.ephemeral)
	for k, v := range o.scalar {
		if r.scalar == nil {
			r.scalar = map[corev1.ResourceName]int64{}
		}
		r.scalar[k] = max(r.scalar[k], v)
	}
}

func (r resources) isZero() bool {
	if r.milliCPU != 0 || r.memory != 0 || r.ephemeral != 0 {
		return false
	}
	for _, v := range r.scalar {
		if v != 0 {
			return false
		}
	}
	return true
}

// fromList converts a ResourceList the way the scheduler's Resource.Add does:
// cpu in millicores, everything else in base units; "pods" is skipped.
func fromList(list corev1.ResourceList) resources {
	var r resources
	for name, q := range list {
		r.addQuantity(name, q)
	}
	return r
}

// addQuantity adds one entry of a ResourceList (fromList).
func (r *resources) addQuantity(name corev1.ResourceName, q resource.Quantity) {
	switch name {
	case corev1.ResourceCPU:
		r.milliCPU += q.MilliValue()
	case corev1.ResourceMemory:
		r.memory += q.Value()
	case corev1.ResourceEphemeralStorage:
		r.ephemeral += q.Value()
	case corev1.ResourcePods:
	default:
		if isScalarResource(name) {
			if r.scalar == nil {
				r.scalar = map[corev1.ResourceName]int64{}
			}
			r.scalar[name] += q.Value()
		}
	}
}

// isScalarResource approximates pkg/scheduler/util IsScalarResourceName:
// prefixed (extended or kubernetes.io/) names, hugepages-* and
// attachable-volumes-*.
func isScalarResource(name corev1.ResourceName) bool {
	n := string(name)
	return strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(n, "attachable-volumes-") ||
		(strings.Contains(n, "/") && !strings.HasPrefix(n, "requests."))
}

// containerRequests is fromList of what the API server stores as the
// container's requests: the requests, or the limits where a request is
// missing (pod defaulting copies limits into absent requests); cpu and
// memory report whether that list names them. Summed from the two lists
// in place, without making the merged one.
func containerRequests(c *corev1.Container) (r resources, cpu, memory bool) {
	req, lim := c.Resources.Requests, c.Resources.Limits
	for name, q := range lim {
		if _, ok := req[name]; !ok {
			r.addQuantity(name, q)
		}
	}
	for name, q := range req {
		r.addQuantity(name, q)
	}
	_, cpuReq := req[corev1.ResourceCPU]
	_, cpuLim := lim[corev1.ResourceCPU]
	_, memReq := req[corev1.ResourceMemory]
	_, memLim := lim[corev1.ResourceMemory]
	return r, cpuReq || cpuLim, memReq || memLim
}

// podRequests follows component-helpers resource.PodRequests: the sum of the
// regular containers and of the restartable (sidecar) init containers, or the
// largest ordinary init container plus the sidecars started before it if
// that is more, plus spec.overhead. Pod-level requests, when given, replace
// the container sums for cpu and memory.
func podRequests(pod *corev1.Pod) resources {
	return podRequestsWith(pod, false)
}

// podRequestsWith is podRequests; nonZero puts the scheduler's defaults in
// for a container's missing cpu and memory requests (PodResourcesOptions
// NonMissingContainerRequests), as the scoring plugins count a pod and
// NodeInfo's NonZeroRequested sums them (pkg/scheduler/framework/types.go).
func podRequestsWith(pod *corev1.Pod, nonZero bool) resources {
	podLevel := pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0
	req := func(c *corev1.Container) resources {
		r, cpu, memory := containerRequests(c)
		if nonZero && !podLevel {
			if !cpu {
				r.milliCPU = defaultMilliCPURequest
			}
			if !memory {
				r.memory = defaultMemoryRequest
			}
		}
		return r
	}
	var sum resources
	for i := range pod.Spec.Containers {
		sum.add(req(&pod.Spec.Containers[i]))
	}
	var sidecars, initPeak resources
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := req(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum.add(req)
			sidecars.add(req)
			initPeak.max(sidecars)
			continue
		}
		req.add(sidecars)
		initPeak.max(req)
	}
	sum.max(initPeak)
	if pr := pod.Spec.Resources; pr != nil {
		if q, ok := pr.Requests[corev1.ResourceCPU]; ok {
			sum.milliCPU = q.MilliValue()
		}
		if q, ok := pr.Requests[corev1.ResourceMemory]; ok {
			sum.memory = q.Value()
		}
	}
	sum.add(fromList(pod.Spec.Overhead))
	return sum
}

// Defaults the scheduler assumes for scoring when a container requests no
// cpu or memory (pkg/scheduler/util DefaultMilliCPURequest, DefaultMemoryRequest).
const (
	defaultMilliCPURequest int64 = 100
	defaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// nonZeroRequests is the cpu and memory LeastAllocated counts for a pod.
func nonZeroRequests(pod *corev1.Pod) (milliCPU, memory int64) {
	r := podRequestsWith(pod, true)
	return r.milliCPU, r.memory
}

// hostPort is one host port a pod claims.
type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

func (p hostPort) conflicts(o hostPort) bool {
	if p.port != o.port || p.protocol != o.protocol {
		return false
	}
	wild := func(ip string) bool { return ip == "" || ip == "0.0.0.0" || ip == "::" }
	return p.ip == o.ip || wild(p.ip) || wild(o.ip)
}

// hostPorts lists the host ports of the restartable (sidecar) init
// containers and of the regular containers (pkg/scheduler/util
// GetHostPorts); on a hostNetwork pod an unset hostPort is the
// containerPort, as pod defaulting makes it.
func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			port := p.HostPort
			if port == 0 && pod.Spec.HostNetwork {
				port = p.ContainerPort
			}
			if port == 0 {
				continue
			}
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out = append(out, hostPort{ip: p.HostIP, protocol: proto, port: port})
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

// Priorities the Priority admission plugin resolves for the two built-in
// PriorityClasses (pkg/apis/scheduling SystemCriticalPriority and +1000).
const (
	systemClusterCritical int32 = 2000000000
	systemNodeCritical    int32 = 2000001000
)

// podPriority is spec.priority, or the value of a built-in PriorityClass when
// the twin's pod has not been through the Priority admission plugin.
func podPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	switch pod.Spec.PriorityClassName {
	case "system-node-critical":
		return systemNodeCritical
	case "system-cluster-critical":
		return systemClusterCritical
	}
	return 0
}

// ownerKey groups replicas for spreading: the controlling owner reference,
// or, for pods without one, the namespace and the full label set (pods from
// one template share it). Pods with neither are not grouped.
func ownerKey(pod *corev1.Pod) string {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return pod.Namespace + "/" + ref.Kind + "/" + ref.Name
		}
	}
	if len(pod.OwnerReferences) > 0 {
		ref := pod.OwnerReferences[0]
		return pod.Namespace + "/" + ref.Kind + "/" + ref.Name
	}
	if len(pod.Labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(pod.Labels))
	for k := range pod.Labels {
		keys = append(keys, k+"="+pod.Labels[k])
	}
	sort.Strings(keys)
	return pod.Namespace + "/labels/" + strings.Join(keys, ",")
}

// podInfo caches what the filters and scores need from a pod.
type podInfo struct {
	pod              *corev1.Pod
	requests         resources
	nonZeroMilliCPU  int64
	nonZeroMemory    int64
	ports            []hostPort
	priority         int32
	owner            string
	qualifiedName    string
	preemptNeverFlag bool
}

// SameWeight reports whether pods a and b, each recorded on one node,
// weigh the same for every pod placed on that node after them: what State
// records of them (podInfo: requests, host ports, priority, owner, name,
// preemption policy) and what the filters and scores read of the pods on
// a node besides (interpod.go, spreadscore.go, morescores.go: namespace,
// labels, deletion, pod (anti-)affinity).
func SameWeight(a, b *corev1.Pod) bool {
	if finished(a) || finished(b) {
		return finished(a) && finished(b) // neither recorded
	}
	x, y := *newPodInfo(a), *newPodInfo(b)
	x.pod, y.pod = nil, nil
	return reflect.DeepEqual(x, y) && a.Namespace == b.Namespace && maps.Equal(a.Labels, b.Labels) &&
		reflect.DeepEqual(a.DeletionTimestamp, b.DeletionTimestamp) && reflect.DeepEqual(a.Spec.Affinity, b.Spec.Affinity)
}

func newPodInfo(pod *corev1.Pod) *podInfo {
	cpu, mem := nonZeroRequests(pod)
	return &podInfo{
		pod:              pod,
		requests:         podRequests(pod),
		nonZeroMilliCPU:  cpu,
		nonZeroMemory:    mem,
		ports:            hostPorts(pod),
		priority:         podPriority(pod),
		owner:            ownerKey(pod),
		qualifiedName:    pod.Namespace + "/" + pod.Name,
		preemptNeverFlag: pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever,
	}
}

// allocatable is the node's status.allocatable, falling back to capacity
// for twin nodes built without it; pods is the allowed pod count.
func allocatable(node *corev1.Node) (r resources, pods int64) {
	list := node.Status.Allocatable
	if len(list) == 0 {
		list = node.Status.Capacity
	}
	if q, ok := list[corev1.ResourcePods]; ok {
		pods = q.Value()
	}
	return fromList(list), pods
}
