// Package scheduler is a deterministic model of kube-scheduler's default
// profile (v1.37) for placing pods on the twin's nodes, plus the DaemonSet
// controller's node choice and a table of Windows image/host compatibility.
//
// Before the scheduler: a pod with spec.nodeName is bound as it is; a pod
// with scheduling gates carries the SchedulingGated condition the API
// server gives it; a pod naming another schedulerName gets no answer.
//
// PreFilter: NodeAffinity narrows the nodes to those a metadata.name term
// names (a DaemonSet's pods); the others count as "node(s) didn't satisfy
// plugin(s) [NodeAffinity]" (schedule_one.go findNodesThatFitPod). A
// PersistentVolumeClaim that does not exist rejects the pod outright
// (VolumeRestrictions), when the claims are known (State.SetClaims).
//
// Filters, run per node in the default profile's order and stopping at the
// first one that fails, as the framework does:
//
//	NodeUnschedulable  "node(s) were unschedulable"
//	TaintToleration    "node(s) had untolerated taint(s)"  (NoSchedule, NoExecute)
//	NodeAffinity       "node(s) didn't match Pod's node affinity/selector"
//	NodePorts          "node(s) didn't have free ports for the requested pod ports"
//	NodeResourcesFit   "Too many pods", "Insufficient cpu", "Insufficient memory", ...
//
// Node conditions are turned into the taints the node lifecycle controller
// adds (TaintNodesByCondition) when the node does not carry them yet, so a
// NotReady node filters out the way a real one does. Succeeded and Failed
// pods hold nothing (the scheduler does not watch them).
//
// When no node passes, Schedule returns a FitError whose Error() is the
// scheduler's FailedScheduling message (framework/types.go FitError.Error),
// including DefaultPreemption's part: the dry run's "preemption: 0/N nodes
// are available: ..." or, when lower-priority pods make room, "preemption:
// found a potential placement for pod on node X, preempting N victims" with
// the node nominated (pkg/scheduler/framework/preemption).
//
// Scoring is the weighted sum of the default score plugins
// (schedule_one.go prioritizeNodes), each normalised as upstream:
// TaintToleration ×3 (PreferNoSchedule taints, reversed), NodeAffinity ×2
// (preferred terms), NodeResourcesFit ×1 (LeastAllocated on non-zero cpu
// and memory requests), NodeResourcesBalancedAllocation ×1,
// PodTopologySpread ×2 (ScheduleAnyway constraints, or the system defaults
// for a pod with a controller, whose pods the model takes to be the ones
// of the same owner), InterPodAffinity ×2 (preferred terms, existing pods'
// terms) and ImageLocality ×1 (node status.images). The scheduler does not
// score when one node is feasible. The real scheduler picks at random among
// the top-scored nodes; Decide lists them (Outcome.Candidates) and Schedule
// takes the first by name. A Scheduler on more than 200 nodes ranks
// lexicographically instead (see Scheduler).
//
// Not modelled: namespaceSelector in pod affinity terms (the namespaces'
// labels are not known), matchLabelKeys, volume plugins beyond a missing
// claim, extended-resource and DRA allocation, PodDisruptionBudgets in
// preemption, nominated pods, and the random offset of preemption's dry
// run (candidates tie-break by name).
package scheduler
