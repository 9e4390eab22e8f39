package engine

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// candidate is a pod on its way in: who creates it decides how a refusal
// is reported.
type candidate struct {
	pod *corev1.Pod
	// creator is "" for a pod the user applies, else the controller kind
	// and name ("ReplicaSet demo/hello-55fb8f8684").
	creator string
	// running: the pod is observed as created (it has a node or a status),
	// so it went through admission already; only its stub is completed.
	running bool
	// stub: the pod was observed as a stub and completed from its
	// controller's template; admission's mutations apply to it.
	stub bool
	// daemon: a DaemonSet's pod, admitted before the rest so that node
	// readiness (which needs the CNI's DaemonSet pods) is known in time;
	// node is the node it is made for.
	daemon bool
	node   string
}

// workloads expands the controllers into pods, admits them and places them.
// Order matters for the scheduler and IPAM: static and DaemonSet pods first,
// then the system Deployments, then the user's objects in input order.
func (b *builder) workloads() error {
	c := b.c
	idx := controllers.IndexPods(c.Pods)
	// Every pod, and one per DaemonSet and node at most besides: one
	// allocation each, not a run of growing ones.
	size := len(c.Pods) + len(c.DaemonSets)*len(c.Nodes)
	cands := make([]candidate, 0, size)
	claimed := make(map[*corev1.Pod]bool, size)
	// Whether each pod came as a stub, taken before expanding completes
	// it. A reused pod is judged by its input (the stub it was, its
	// phase), which nothing changes: only the others are recorded.
	stubs := make(map[*corev1.Pod]bool, max(0, len(c.Pods)-b.d.reusedPods()))
	for _, p := range c.Pods {
		if b.d.inputOf(p) == p {
			stubs[p] = controllers.IsStub(p)
		}
	}
	stub := func(p *corev1.Pod) bool {
		if in := b.d.inputOf(p); in != p {
			return controllers.IsStub(in)
		}
		return stubs[p]
	}
	daemon := false
	add := func(p *corev1.Pod, creator string) {
		claimed[p] = true
		cands = append(cands, candidate{pod: p, creator: creator, running: isRunning(b.d.inputOf(p)), stub: stub(p), daemon: daemon})
	}

	// DaemonSets: one pod per eligible node.
	daemon = true
	// A derivation may take the previous build's pod of an unchanged
	// DaemonSet (derive_daemons.go): held at its candidate's index until
	// the running pods' scheduler state says whether its node changed.
	kept := b.keptDaemons()
	made := make([]map[string]*corev1.Pod, len(c.DaemonSets))
	// maybes are the candidates holding a previous pod, by index: the
	// DaemonSet's index.
	maybes := map[int]int{}
	daemonPods := make([]*controllers.DaemonPods, len(c.DaemonSets))
	for i, ds := range c.DaemonSets {
		daemonPods[i] = controllers.NewDaemonPods(ds)
		observed := map[string]*corev1.Pod{}
		for _, p := range idx.Owned(ds.Namespace, "DaemonSet", ds.Name) {
			observed[p.Spec.NodeName] = p
		}
		creator := "DaemonSet " + ds.Namespace + "/" + ds.Name
		made[i] = map[string]*corev1.Pod{}
		for _, node := range scheduler.DaemonSetNodes(ds, c.Nodes) {
			if observed[node] == nil && kept != nil && kept[i][node] != nil {
				maybes[len(cands)] = i
				add(kept[i][node], creator)
			} else {
				add(daemonPods[i].Pod(node, observed[node]), creator)
			}
			cands[len(cands)-1].node = node
			if observed[node] == nil {
				// Derived: the controller creates it now, so it goes
				// through admission though it is bound to its node already.
				cands[len(cands)-1].running = false
				made[i][node] = cands[len(cands)-1].pod
			}
			delete(observed, node)
		}
		leftover := make([]string, 0, len(observed))
		for node := range observed {
			leftover = append(leftover, node)
		}
		sort.Strings(leftover)
		for _, node := range leftover {
			p := observed[node]
			b.note(model.Warning, keyOf(p), "observed on node %s, where DaemonSet %s/%s would not run", p.Spec.NodeName, ds.Namespace, ds.Name)
			add(p, "")
			cands[len(cands)-1].node = node
		}
	}
	daemon = false
	// Deployments → ReplicaSets → pods.
	haveRS := make(map[string]bool, len(c.ReplicaSets))
	for _, r := range c.ReplicaSets {
		haveRS[r.Namespace+"/"+r.Name] = true
	}
	observedRS := b.replicaSetHashes(c.Pods)
	for _, d := range c.Deployments {
		if rs := b.d.replicaSetOf(d); rs != nil {
			// Reused: ExpandDeployment would give this ReplicaSet and
			// its observed pods, every one reused, in the index's order.
			if !haveRS[rs.Namespace+"/"+rs.Name] {
				c.ReplicaSets = append(c.ReplicaSets, rs)
			}
			creator := "ReplicaSet " + rs.Namespace + "/" + rs.Name
			for _, p := range idx.Owned(d.Namespace, "ReplicaSet", rs.Name) {
				add(p, creator)
			}
			continue
		}
		rs, pods, notes := controllers.ExpandDeployment(d, idx, observedRS)
		for _, n := range notes {
			b.note(model.Warning, keyOf(d), "%s", n)
		}
		if !haveRS[rs.Namespace+"/"+rs.Name] {
			rs.CreationTimestamp = b.ref
			c.ReplicaSets = append(c.ReplicaSets, rs)
		}
		creator := "ReplicaSet " + rs.Namespace + "/" + rs.Name
		for _, p := range pods {
			add(p, creator)
		}
	}
	for _, rs := range c.ReplicaSets {
		if kind, _ := controllers.ControllerOf(rs); kind == "Deployment" {
			continue
		}
		for _, p := range controllers.ExpandReplicaSet(rs, idx) {
			add(p, "ReplicaSet "+rs.Namespace+"/"+rs.Name)
		}
	}
	for _, s := range c.StatefulSets {
		for _, p := range controllers.ExpandStatefulSet(s, idx) {
			add(p, "StatefulSet "+s.Namespace+"/"+s.Name)
		}
	}
	// Pods given on their own (and observed pods whose controller is absent).
	for _, p := range c.Pods {
		if !claimed[p] {
			if stub(p) {
				kind, name := controllers.ControllerOf(p)
				b.note(model.Warning, keyOf(p), "pod stub owned by %s %s, which the input does not contain; dropped", kind, name)
				claimed[p] = true
				continue
			}
			add(p, "")
		}
	}

	// Pods already on a node count against it before anything new is
	// placed; a derivation starts from the previous build's record of
	// them (scheduler.NewBase records only the nodes whose pods changed).
	running := make([]*corev1.Pod, 0, len(cands))
	for _, cd := range cands {
		if cd.pod.Spec.NodeName != "" && cd.running {
			running = append(running, cd.pod)
		}
	}
	b.carry.sched = scheduler.NewBase(b.d.schedBase(), running)
	state := b.carry.sched.State()
	// daemonsOn are the DaemonSets' pods placed on each node, in order.
	daemonsOn := map[string][]*corev1.Pod{}
	// sched places the pods admitted after readiness: it caches per node
	// and per class of pod spec what Schedule re-derives for every pod
	// (same placements, same FitErrors), which needs the nodes to stay as
	// they are; readiness changes their conditions and taints, so it is
	// made after that.
	var sched *scheduler.Scheduler
	var admitted []*corev1.Pod
	if len(cands) > 0 {
		admitted = make([]*corev1.Pod, 0, len(cands))
	}
	admit := func(cd candidate) {
		p := cd.pod
		if p.CreationTimestamp.IsZero() {
			p.CreationTimestamp = b.ref
		}
		if p.TypeMeta.Kind == "" {
			p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		}
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		if cd.stub {
			b.markField(keyOf(p), "spec")
		}
		// A reused pod was admitted by the previous build, which said
		// nothing about it, and admission reads nothing a derivation
		// lets change (derive.go).
		reused := b.d.reused(p)
		if reused && b.d.kept[p] && scheduler.ReadsOtherNodes(p, state) {
			// A kept DaemonSet pod whose placement would now read
			// other nodes: a pod placed before it has anti-affinity.
			b.d.broken = true
		}
		if (!cd.running || cd.stub) && !reused {
			if msg := b.admit(p, cd.creator); msg != "" {
				if cd.running {
					b.note(model.Warning, keyOf(p), "observed running, but the API server would refuse it now: %s", msg)
				} else {
					b.c.Rejected = append(b.c.Rejected, model.Rejection{Key: keyOf(p), Origin: b.c.Origins[keyOf(p)], Message: strings.TrimRight(msg, "\n")})
					return
				}
			}
		}
		if p.Spec.NodeName == "" {
			var node string
			var ferr *scheduler.FitError
			if cd.daemon {
				node, ferr = scheduler.Schedule(p, c.Nodes, state)
			} else {
				if sched == nil {
					sched = scheduler.NewScheduler(c.Nodes, state)
				}
				node, ferr = sched.Schedule(p)
			}
			if ferr != nil {
				p.Status = corev1.PodStatus{
					Phase: corev1.PodPending,
					Conditions: []corev1.PodCondition{{
						Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
						Reason: corev1.PodReasonUnschedulable, Message: ferr.Error(),
					}},
					// Preemption found room: the scheduler nominates the
					// node (victims are not evicted in the twin).
					NominatedNodeName: ferr.NominatedNode,
				}
				// The scheduler's FailedScheduling event (pkg/scheduler/schedule_one.go handleSchedulingFailure).
				b.event(p, corev1.EventTypeWarning, "FailedScheduling", componentScheduler, "", ferr.Error())
				admitted = append(admitted, p)
				return
			}
			p.Spec.NodeName = node
			state.Add(p, node)
		} else if !cd.running {
			// Created bound to its node: it counts there from now on.
			state.Add(p, p.Spec.NodeName)
		} else {
			admitted = append(admitted, p)
			return
		}
		if cd.daemon {
			daemonsOn[p.Spec.NodeName] = append(daemonsOn[p.Spec.NodeName], p)
		}
		admitted = append(admitted, p)
	}
	// A DaemonSet pod the previous build made is kept where the node's
	// running pods are the previous build's and the DaemonSets' pods
	// placed there before it weigh in the scheduler's state as the
	// previous build's did, in the same order (derive_daemons.go): decided
	// in its turn, once those are placed.
	weighsOther := map[string]bool{}
	for i := range cands {
		cd := &cands[i]
		if !cd.daemon {
			continue
		}
		if ds, ok := maybes[i]; ok {
			node := cd.node
			if !weighsOther[node] && b.keepDaemon(cd.pod, node, len(daemonsOn[node]), state) {
				b.d.keep(cd.pod)
			} else {
				cd.pod = daemonPods[ds].Pod(node, nil)
				made[ds][node] = cd.pod
			}
		}
		admit(*cd)
		if node := cd.pod.Spec.NodeName; len(maybes) > 0 && !cd.running && node != "" {
			if on := daemonsOn[node]; len(on) > 0 && on[len(on)-1] == cd.pod {
				b.weighDaemon(node, on, weighsOther)
			}
		}
	}
	b.readiness(admitted)
	for _, cd := range cands {
		if !cd.daemon {
			admit(cd)
		}
	}
	c.Pods = admitted
	b.madeDaemons(made, daemonsOn)
	return nil
}

// isRunning: a pod with a status phase was observed in a cluster, so it went
// through admission already. A manifest with only spec.nodeName is still a
// create request and is admitted like any other.
func isRunning(p *corev1.Pod) bool {
	return p.Status.Phase != ""
}

// admit runs the API server's admission chain for a pod create, in the
// order of the default plugin list (pkg/kubeapiserver/options/plugins.go):
// mutating NamespaceLifecycle, ServiceAccount, Priority,
// DefaultTolerationSeconds and RuntimeClass, then validation (metadata and
// spec), then validating PodSecurity. It returns what kubectl (or the
// controller's FailedCreate event) prints on refusal, or "".
func (b *builder) admit(p *corev1.Pod, creator string) string {
	// kubectl prints the refusal of a pod the user applies; a controller's
	// refusal is its FailedCreate event, "Error creating: %v" of the API
	// server's error (pkg/controller/controller_utils.go createPods).
	refuse := func(err error) string {
		if creator == "" {
			return admission.FormatError(err)
		}
		return fmt.Sprintf("%s: Error creating: %v", creator, err)
	}
	// Mutating admission runs before the registry generates a name: a pod
	// whose name load generated from generateName is nameless until then.
	name := p.Name
	if p.GenerateName != "" && names.IsGenerated(p.Name, p.GenerateName) {
		p.Name = ""
	}
	err := b.mutatingAdmission(p, creator)
	p.Name = name
	if err != nil {
		return refuse(err)
	}
	if errs := admission.ValidatePodCreate(p, admission.DefaultOptions()); len(errs) > 0 {
		return refuse(apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, p.Name, errs))
	}
	// The registry's warnings on a valid pod reach the client before
	// validating admission runs, so they come with a Pod Security refusal
	// too (k8s.io/apiserver pkg/registry/rest/create.go BeforeCreate). A
	// controller's creates warn the controller, not the user.
	if creator == "" {
		for _, w := range admission.PodWarnings(p) {
			b.c.Warned = append(b.c.Warned, model.Rejection{Key: keyOf(p), Origin: b.c.Origins[keyOf(p)], Message: w})
		}
	}
	res := admission.CheckPodSecurity(b.namespace(p.Namespace), p)
	if !res.Allowed {
		return refuse(res.Err)
	}
	for _, w := range res.Warnings {
		b.note(model.Warning, keyOf(p), "%s", w)
		if creator == "" {
			b.c.Warned = append(b.c.Warned, model.Rejection{Key: keyOf(p), Origin: b.c.Origins[keyOf(p)], Message: w})
		}
	}
	return ""
}

// mutatingAdmission runs the mutating plugins of the default chain that
// act on pods, in order. The pod's own ServiceAccount is judged only when
// the input holds ServiceAccounts of its namespace (a live read holds them
// all; a file seldom does), and a pod in a namespace the input lacks is
// refused only when the input holds Namespaces at all.
func (b *builder) mutatingAdmission(p *corev1.Pod, creator string) error {
	ns := b.namespace(p.Namespace)
	if b.assumedNS[p.Namespace] {
		ns = nil
	}
	if err := admission.AdmitNamespace(p, ns); err != nil {
		return err
	}
	var exists func(string) bool
	if accounts := b.serviceAccounts(p.Namespace); accounts != nil {
		exists = func(name string) bool { return accounts[name] }
	} else if sa := p.Spec.ServiceAccountName; sa != "" && sa != admission.DefaultServiceAccount && !b.saNoted[p.Namespace+"/"+sa] && b.fromInput(p, creator) {
		// Add-ons the twin derives (kube-proxy, CoreDNS, Calico) come
		// with their accounts; a pod of the input is the user's to check.
		if b.saNoted == nil {
			b.saNoted = map[string]bool{}
		}
		b.saNoted[p.Namespace+"/"+sa] = true
		if !model.Holds(b.c.ServiceAccounts, p.Namespace, sa) {
			b.note(model.Info, keyOf(p), "ServiceAccount %s/%s is not in the input; taken to exist (the API server refuses the pod if it does not)", p.Namespace, sa)
		}
	}
	if err := admission.AdmitServiceAccount(p, exists); err != nil {
		return err
	}
	if err := admission.AdmitPriority(p, b.c.PriorityClasses); err != nil {
		return err
	}
	admission.DefaultTolerations(p)
	// RuntimeClass admission also judges a pod without a RuntimeClass (an
	// overhead of its own is refused).
	var rc *nodev1.RuntimeClass
	if p.Spec.RuntimeClassName != nil {
		rc = b.runtimeClass(*p.Spec.RuntimeClassName)
	}
	return admission.ApplyRuntimeClass(p, rc)
}

// fromInput reports whether pod p (created by creator, "" for the user)
// comes from the input: given as a pod, or made from a workload the input
// holds (a ReplicaSet's Deployment counts for it).
func (b *builder) fromInput(p *corev1.Pod, creator string) bool {
	if creator == "" {
		return true
	}
	kind, ref, _ := strings.Cut(creator, " ")
	ns, name, _ := strings.Cut(ref, "/")
	key := model.Key{Group: "apps", Kind: kind, Namespace: ns, Name: name}
	if b.c.Observed(key) {
		return true
	}
	if kind == "ReplicaSet" {
		for _, rs := range b.c.ReplicaSets {
			if rs.Namespace == ns && rs.Name == name {
				if k, n := controllers.ControllerOf(rs); k == "Deployment" {
					return b.c.Observed(model.Key{Group: "apps", Kind: k, Namespace: ns, Name: n})
				}
			}
		}
	}
	return false
}

// serviceAccounts is the set of ServiceAccount names the input holds in
// namespace ns, nil when it holds none there.
func (b *builder) serviceAccounts(ns string) map[string]bool {
	if b.saIdx == nil {
		// Derived accounts (the add-ons') count once the input speaks
		// for the namespace.
		b.saIdx = map[string]map[string]bool{}
		for _, sa := range b.c.ServiceAccounts {
			if b.c.Observed(keyOf(sa)) && b.saIdx[sa.Namespace] == nil {
				b.saIdx[sa.Namespace] = map[string]bool{}
			}
		}
		for _, sa := range b.c.ServiceAccounts {
			if set := b.saIdx[sa.Namespace]; set != nil {
				set[sa.Name] = true
			}
		}
	}
	return b.saIdx[ns]
}

func (b *builder) runtimeClass(name string) *nodev1.RuntimeClass {
	if b.rcIdx == nil {
		b.rcIdx = make(map[string]*nodev1.RuntimeClass, len(b.c.RuntimeClasses))
		for _, rc := range b.c.RuntimeClasses {
			b.rcIdx[rc.Name] = rc
		}
	}
	return b.rcIdx[name]
}

func keyOf(o metav1.Object) model.Key {
	kind := ""
	group := ""
	switch o.(type) {
	case *corev1.Pod:
		kind = "Pod"
	case *appsv1.Deployment:
		kind, group = "Deployment", "apps"
	case *appsv1.DaemonSet:
		kind, group = "DaemonSet", "apps"
	case *corev1.Node:
		kind = "Node"
	case *corev1.Service:
		kind = "Service"
	case *corev1.ServiceAccount:
		kind = "ServiceAccount"
	}
	return model.Key{Group: group, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}
