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
// is quadratic in pods or nodes. Rules are written in package rule's terms
// and grouped by area in calicorules, noderules, workloadrules and
// kubeconfigrules; this package runs them and writes the reports.
//
// A rule never passes on input it did not get. Run leaves a rule out, and
// Report.NotRun lists it under its cause, when the input holds no cluster,
// when a kind it examines could not be read (a live read refused or not
// served it: Options.Unread), or when the input lacks what it declares it
// needs (Rule.Needs: no Installation among the manifests). The first two
// make the report Incomplete, which the command turns into its own exit
// code.
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
