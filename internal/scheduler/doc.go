// Package scheduler is a deterministic model of kube-scheduler's default
// profile (v1.37) for placing pods on the twin's nodes, plus the DaemonSet
// controller's node choice and a table of Windows image/host compatibility.
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
// NotReady node filters out the way a real one does.
//
// When no node passes, Schedule returns a FitError whose Error() is the
// scheduler's FailedScheduling message, including the PostFilter part: the
// DynamicResources plugin's "no new claims to deallocate" and DefaultPreemption's
// "preemption: 0/N nodes are available: ..." dry run (pkg/scheduler/framework/
// preemption, plugins/defaultpreemption).
//
// Scoring is simplified. Instead of the weighted sum of the default score
// plugins, feasible nodes are ranked lexicographically by:
//
//  1. fewest pods of the same owner already on the node (stands in for
//     PodTopologySpread's default hostname constraint and SelectorSpread);
//  2. least allocated after placement, on cpu and memory requests with the
//     scheduler's non-zero defaults of 100m and 200Mi (NodeResourcesFit
//     LeastAllocated);
//  3. fewest untolerated PreferNoSchedule taints (TaintToleration score);
//  4. highest sum of matching preferred node-affinity weights (NodeAffinity score);
//  5. node name, where the real scheduler picks at random among equal scores.
//
// Not modelled: volumes and their plugins, inter-pod affinity and
// anti-affinity, explicit topology spread constraints, image locality,
// balanced allocation, extended-resource and DRA allocation, scheduling
// gates, PodDisruptionBudgets in preemption, and nominated pods.
package scheduler
