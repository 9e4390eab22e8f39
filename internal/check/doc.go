// Package check verifies a built twin (model.Cluster) against every
// constraint of a hybrid Linux/Windows cluster the seeds and the upstream
// code state: Calico for Windows' requirements on the Installation, the IP
// pools, IPAM and Felix; kubeadm's joins and kubelet settings on Windows
// nodes; how workloads reach (or must not reach) Windows nodes; kube-proxy
// on Windows; Services, DNS names and policies as HNS sees them; the host
// firewalls; and kubeconfig files.
//
// Each constraint is a Rule: a stable ID, a title, a severity, the kinds it
// examines, a description, a remediation written as the command or manifest
// change that fixes it, references (seed sections, Kubernetes and Calico
// documentation), and a Check function. Rules are pure functions of the
// Cluster; the indexes they share (nodes by name, pods by node and by
// workload, endpoints by Service, ...) are built once per run, so nothing
// is quadratic in pods or nodes.
//
// Windows readiness blockers (Rule.Blocker) are errors when the cluster has
// Windows nodes or plans them (a Windows host in the Cluster kind, or
// Options.ExpectWindows), and warnings otherwise.
//
// A finding is suppressed by an annotation on the object it names, or on
// the object that object derives from (a Deployment for its pods, the
// Installation for what the operator renders):
//
//	metadata:
//	  annotations:
//	    kubectl-hybrid.io/skip-checks: "HYB033,HYB046"
//
// The value lists rule IDs or names, separated by commas or spaces; "*"
// suppresses every rule. Suppressed findings are counted, listed in JSON
// and SARIF (as suppressed), and never fail a run.
package check
