package engine

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// podStatus fills the status the kubelet would report for pods whose status
// the input does not give: Running and Ready once placed with an address —
// the twin assumes probes pass — or waiting when the image cannot run on the
// node's OS or build.
func (b *builder) podStatus() error {
	for _, p := range b.c.Pods {
		if len(p.Status.ContainerStatuses) > 0 || p.Spec.NodeName == "" {
			continue // observed status, or unschedulable (set by the scheduler step)
		}
		if b.d.reused(p) {
			// The previous build's status: derive.holds compares what
			// it read of the node.
			continue
		}
		n := b.nodeByName(p.Spec.NodeName)
		if n == nil {
			continue
		}
		if finished(p) {
			continue
		}
		p.Status.HostIP = addrOf(n)
		p.Status.HostIPs = []corev1.HostIP{{IP: p.Status.HostIP}}
		if p.Status.PodIP != "" {
			p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
		}
		if p.Status.StartTime == nil {
			t := p.CreationTimestamp
			p.Status.StartTime = &t
		}
		waiting := ""
		msg := ""
		for _, c := range p.Spec.Containers {
			if ok, reason := scheduler.ImageFitsNode(c.Image, n); !ok {
				waiting, msg = "CreateContainerError", reason
				b.containerFailed(p, n, c, reason)
				b.note(model.Warning, keyOf(p), "container %s: image %s cannot run on %s: %s", c.Name, c.Image, n.Name, reason)
				break
			}
		}
		if p.Status.Phase == corev1.PodPending || (p.Status.PodIP == "" && !p.Spec.HostNetwork) {
			waiting, msg = "ContainerCreating", ""
		}
		ready := waiting == ""
		cond := corev1.ConditionFalse
		if ready {
			cond = corev1.ConditionTrue
			p.Status.Phase = corev1.PodRunning
		} else {
			p.Status.Phase = corev1.PodPending
		}
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: boolCond(p.Status.PodIP != "")},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: cond},
			{Type: corev1.ContainersReady, Status: cond},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: ready, Started: &ready}
			if ready {
				cs.State.Running = &corev1.ContainerStateRunning{StartedAt: p.CreationTimestamp}
			} else {
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting, Message: msg}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
		}
		p.Status.QOSClass = qosClass(p)
	}
	return nil
}

// finished fills the status of a pod the input gives as Succeeded or
// Failed: the phase is final (the kubelet never moves a pod out of a
// terminal phase, pkg/kubelet/status/status_manager.go), its containers
// have terminated — "Completed" with exit code 0 for Succeeded, "Error"
// with exit code 1 for Failed when the input does not say — and it is not
// Ready (reason PodCompleted, pkg/kubelet/status/generate.go). An Unknown
// phase is kept as given. It reports whether the pod was one of those.
func finished(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
	case corev1.PodUnknown:
		return true
	default:
		return false
	}
	exit, reason := int32(0), "Completed"
	if p.Status.Phase == corev1.PodFailed {
		exit, reason = 1, "Error"
	}
	if p.Status.StartTime == nil {
		t := p.CreationTimestamp
		p.Status.StartTime = &t
	}
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, Reason: "PodCompleted"},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	}
	started := false
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Started: &started,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exit, Reason: reason, StartedAt: p.CreationTimestamp, FinishedAt: p.CreationTimestamp,
			}},
		})
	}
	p.Status.QOSClass = qosClass(p)
	return true
}

func boolCond(v bool) corev1.ConditionStatus {
	if v {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// qosClass follows pkg/apis/core/helper/qos: Guaranteed when every container
// has equal cpu and memory requests and limits, BestEffort with none at all.
func qosClass(p *corev1.Pod) corev1.PodQOSClass {
	hasAny, guaranteed := false, true
	for _, c := range p.Spec.Containers {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[r]
			lim, hasLim := c.Resources.Limits[r]
			if hasReq || hasLim {
				hasAny = true
			}
			if !hasLim || (hasReq && req.Cmp(lim) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !hasAny:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// services allocates ClusterIPs and NodePorts and writes EndpointSlices.
func (b *builder) services() error {
	c := b.c
	sr, err := controllers.NewServiceRange(b.serviceSubnet())
	if err != nil {
		return errorAt(model.Origin{}, "%v", err)
	}
	nodePorts := map[int32]bool{}
	// ClusterIPs asked for are allocated in the order the API server saw the
	// Services: kubeadm's (derived here) at init, then the input's in order.
	// A second claim on an address is refused (ipallocator ErrAllocated).
	ordered := make([]*corev1.Service, 0, len(c.Services))
	for _, observed := range []bool{false, true} {
		for _, s := range c.Services {
			if c.Observed(keyOf(s)) == observed {
				ordered = append(ordered, s)
			}
		}
	}
	// What a Service asked for: one taken from the previous twin
	// (derive.go) holds what that build allocated to it, its input not.
	asked := func(s *corev1.Service) *corev1.Service {
		if in := b.d.serviceInput(s); in != nil {
			return in
		}
		return s
	}
	for _, s := range ordered {
		s := asked(s)
		if a, ok := parseAddr(s.Spec.ClusterIP); ok {
			reason := ""
			switch {
			case !sr.Contains(a):
				reason = fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", s.Spec.ClusterIP, sr.Prefix)
			case sr.Used[a]:
				reason = "provided IP is already allocated"
			}
			if reason != "" {
				c.Rejected = append(c.Rejected, model.Rejection{Key: keyOf(s), Origin: c.Origins[keyOf(s)],
					Message: fmt.Sprintf("The Service %q is invalid: spec.clusterIPs: Invalid value: []string{%q}: failed to allocate IP %s: %s",
						s.Name, s.Spec.ClusterIP, s.Spec.ClusterIP, reason)})
				continue
			}
			sr.Reserve(a)
		}
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				nodePorts[p.NodePort] = true
			}
		}
		if s.Spec.HealthCheckNodePort != 0 {
			nodePorts[s.Spec.HealthCheckNodePort] = true
		}
	}
	var kept []*corev1.Service
	// Services by key, so that marking the rejected ones is not a scan of
	// every Service per rejection (pods' rejections are in the list too).
	svcByKey := make(map[model.Key][]*corev1.Service, len(c.Services))
	for _, s := range c.Services {
		svcByKey[keyOf(s)] = append(svcByKey[keyOf(s)], s)
	}
	rejected := map[*corev1.Service]bool{}
	for _, r := range c.Rejected {
		for _, s := range svcByKey[r.Key] {
			rejected[s] = true
		}
	}
	podsByNS := map[string][]*corev1.Pod{}
	for _, p := range c.Pods {
		podsByNS[p.Namespace] = append(podsByNS[p.Namespace], p)
	}
	slicesFor := map[string]bool{}
	for _, es := range c.EndpointSlices {
		slicesFor[es.Namespace+"/"+es.Labels[discoveryv1.LabelServiceName]] = true
	}
	for _, s := range c.Services {
		if rejected[s] {
			continue
		}
		if in := b.d.serviceInput(s); in != nil {
			b.allocatedAgain(s, in, sr, nodePorts)
		} else {
			b.settleService(s, sr, nodePorts)
		}
		kept = append(kept, s)
		if slicesFor[s.Namespace+"/"+s.Name] || s.Spec.Selector == nil {
			continue
		}
		var pods []*corev1.Pod
		for _, p := range podsByNS[s.Namespace] {
			if matchesSelector(s.Spec.Selector, p.Labels) {
				pods = append(pods, p)
			}
		}
		for _, es := range controllers.EndpointSlices(s, pods) {
			es.CreationTimestamp = b.ref
			c.EndpointSlices = append(c.EndpointSlices, es)
		}
	}
	c.Services = kept
	return nil
}

// settleService fills in what the API server defaults and allocates on a
// Service's create: its type, creation time, ClusterIP and node ports
// (pkg/apis/core/v1/defaults.go SetDefaults_Service,
// pkg/registry/core/service/storage/alloc.go).
func (b *builder) settleService(s *corev1.Service, sr *controllers.ServiceRange, nodePorts map[int32]bool) {
	if s.Spec.Type == "" {
		s.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if s.CreationTimestamp.IsZero() && !b.ref.IsZero() {
		s.CreationTimestamp = b.ref
	}
	if s.Spec.ClusterIP == "" && s.Spec.Type != corev1.ServiceTypeExternalName {
		a, ok := sr.Allocate(s.Namespace + "/" + s.Name)
		if !ok {
			b.note(model.Warning, keyOf(s), "the service subnet %s is full", sr.Prefix)
		} else {
			s.Spec.ClusterIP = a.String()
		}
	}
	if s.Spec.ClusterIP != "" && len(s.Spec.ClusterIPs) == 0 {
		s.Spec.ClusterIPs = []string{s.Spec.ClusterIP}
	}
	for i := range s.Spec.Ports {
		sp := &s.Spec.Ports[i]
		if sp.Protocol == "" {
			sp.Protocol = corev1.ProtocolTCP
		}
		if sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal == 0 {
			sp.TargetPort = intstr.FromInt32(sp.Port)
		}
		if needsNodePort(s) && sp.NodePort == 0 {
			sp.NodePort = allocateNodePort(nodePorts, s.Namespace+"/"+s.Name+"/"+sp.Name)
		}
	}
	if needsHealthCheckNodePort(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = allocateNodePort(nodePorts, s.Namespace+"/"+s.Name+"/health")
	}
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
}

// allocatedAgain makes for a Service taken from the previous twin the
// allocations settleService would make for its input, in the same turn,
// and stops the derivation where one differs from what the taken Service
// holds (the Services allocated before it changed). It writes nothing:
// the rest of what settleService fills in comes from the input alone.
func (b *builder) allocatedAgain(s, in *corev1.Service, sr *controllers.ServiceRange, nodePorts map[int32]bool) {
	if in.Spec.ClusterIP == "" && s.Spec.Type != corev1.ServiceTypeExternalName {
		if a, ok := sr.Allocate(s.Namespace + "/" + s.Name); !ok || a.String() != s.Spec.ClusterIP {
			b.d.broken = true
		}
	}
	if len(in.Spec.Ports) != len(s.Spec.Ports) {
		b.d.broken = true
		return
	}
	for i, sp := range s.Spec.Ports {
		if needsNodePort(s) && in.Spec.Ports[i].NodePort == 0 && allocateNodePort(nodePorts, s.Namespace+"/"+s.Name+"/"+sp.Name) != sp.NodePort {
			b.d.broken = true
		}
	}
	if needsHealthCheckNodePort(s) && in.Spec.HealthCheckNodePort == 0 && allocateNodePort(nodePorts, s.Namespace+"/"+s.Name+"/health") != s.Spec.HealthCheckNodePort {
		b.d.broken = true
	}
}

// needsNodePort: the API server allocates node ports to NodePort Services
// and to LoadBalancer ones unless spec.allocateLoadBalancerNodePorts is
// false (pkg/registry/core/service/storage/alloc.go
// shouldAllocateNodePorts); a node port the user set is kept either way.
func needsNodePort(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// needsHealthCheckNodePort: a LoadBalancer Service with
// externalTrafficPolicy Local gets a healthCheckNodePort from the node port
// range (alloc.go allocHealthCheckNodePort, apis/core/v1/helper
// NeedsHealthCheck), whether or not it has node ports.
func needsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// allocateNodePort picks from the default range 30000-32767
// (pkg/registry/core/service/portallocator), seeded for stability.
func allocateNodePort(used map[int32]bool, seed string) int32 {
	const base, size = 30000, 2768
	start := int32(0)
	for _, ch := range suffix(seed) {
		start = (start*31 + ch) % size
	}
	for i := int32(0); i < size; i++ {
		p := base + (start+i)%size
		if !used[p] {
			used[p] = true
			return p
		}
	}
	return 0
}

func matchesSelector(sel, l map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if l[k] != v {
			return false
		}
	}
	return true
}

// controllerStatus fills the status counters of the workload controllers
// from their pods, as `kubectl get ds,deploy` shows them.
func (b *builder) controllerStatus() error {
	c := b.c
	// Only the controllers whose status is filled have their pods
	// counted (a derivation's reused Deployments and ReplicaSets keep
	// theirs), keyed without building a string per pod.
	type owner struct{ namespace, kind, name string }
	type counts struct{ total, ready int32 }
	owned := map[owner]*counts{}
	need := func(ns, kind, name string) { owned[owner{ns, kind, name}] = &counts{} }
	for _, ds := range c.DaemonSets {
		if ds.Status.DesiredNumberScheduled == 0 && ds.Status.ObservedGeneration == 0 {
			need(ds.Namespace, "DaemonSet", ds.Name)
		}
	}
	rsByOwner := map[nsName][]string{}
	for _, rs := range c.ReplicaSets {
		if kind, name := controllers.ControllerOf(rs); kind == "Deployment" {
			k := nsName{rs.Namespace, name}
			rsByOwner[k] = append(rsByOwner[k], rs.Name)
		}
		if rs.Status.ObservedGeneration == 0 {
			need(rs.Namespace, "ReplicaSet", rs.Name)
		}
	}
	for _, d := range c.Deployments {
		if d.Status.ObservedGeneration == 0 {
			for _, name := range rsByOwner[nsName{d.Namespace, d.Name}] {
				need(d.Namespace, "ReplicaSet", name)
			}
		}
	}
	for _, s := range c.StatefulSets {
		if s.Status.ObservedGeneration == 0 {
			need(s.Namespace, "StatefulSet", s.Name)
		}
	}
	for _, p := range c.Pods {
		kind, name := controllers.ControllerOf(p)
		if n := owned[owner{p.Namespace, kind, name}]; n != nil {
			n.total++
			if controllers.PodReady(p) {
				n.ready++
			}
		}
	}
	count := func(ns, kind, name string) (total, ready int32) {
		if n := owned[owner{ns, kind, name}]; n != nil {
			return n.total, n.ready
		}
		return 0, 0
	}
	for _, ds := range c.DaemonSets {
		if ds.Status.DesiredNumberScheduled != 0 || ds.Status.ObservedGeneration != 0 {
			continue
		}
		desired := int32(len(scheduler.DaemonSetNodes(ds, c.Nodes)))
		total, ready := count(ds.Namespace, "DaemonSet", ds.Name)
		ds.Status = appsv1.DaemonSetStatus{
			DesiredNumberScheduled: desired, CurrentNumberScheduled: total, NumberReady: ready,
			UpdatedNumberScheduled: total, NumberAvailable: ready, ObservedGeneration: 1,
		}
		if desired > ready {
			ds.Status.NumberUnavailable = desired - ready
		}
		if ds.CreationTimestamp.IsZero() {
			ds.CreationTimestamp = b.ref
		}
	}
	for _, rs := range c.ReplicaSets {
		if rs.Status.ObservedGeneration == 0 {
			total, ready := count(rs.Namespace, "ReplicaSet", rs.Name)
			rs.Status = appsv1.ReplicaSetStatus{Replicas: total, ReadyReplicas: ready, AvailableReplicas: ready, FullyLabeledReplicas: total, ObservedGeneration: 1}
		}
	}
	for _, d := range c.Deployments {
		if d.Status.ObservedGeneration != 0 {
			continue
		}
		var total, ready int32
		for _, name := range rsByOwner[nsName{d.Namespace, d.Name}] {
			t, r := count(d.Namespace, "ReplicaSet", name)
			total, ready = total+t, ready+r
		}
		d.Status = appsv1.DeploymentStatus{Replicas: total, UpdatedReplicas: total, ReadyReplicas: ready, AvailableReplicas: ready, ObservedGeneration: 1}
		if total > ready {
			d.Status.UnavailableReplicas = total - ready
		}
		if d.CreationTimestamp.IsZero() {
			d.CreationTimestamp = b.ref
		}
	}
	for _, s := range c.StatefulSets {
		if s.Status.ObservedGeneration == 0 {
			total, ready := count(s.Namespace, "StatefulSet", s.Name)
			s.Status = appsv1.StatefulSetStatus{Replicas: total, ReadyReplicas: ready, CurrentReplicas: total, UpdatedReplicas: total, AvailableReplicas: ready, ObservedGeneration: 1}
		}
	}
	return nil
}
