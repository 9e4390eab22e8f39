package migrate

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/calicoctl"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// The calico-node template fields the BGP step changes, as kubectl's
// jsonpath prints them.
const nodeBackendPath = `{.spec.template.spec.containers[?(@.name=="calico-node")].env[?(@.name=="CALICO_NETWORKING_BACKEND")].value}{"\n"}{.spec.template.spec.containers[?(@.name=="calico-node")].readinessProbe.exec.command}`

// verify is each step's check commands with the twin's answers after it
// (simulated): every answer is computed from the twin the step's file
// builds, with the same code `kubectl hybrid exec` and `get` use.
func verify(id string, t *diff.Twin) []plan.Check {
	c := t.Cluster()
	var out []plan.Check
	node := sampleLinuxNode(c)
	switch id {
	case StepStrictAffinity:
		out = append(out, plan.Check{Command: "calicoctl ipam show --show-configuration", Expect: calicoctl.IPAMConfiguration(c)})
	case StepEncapsulation:
		out = append(out, plan.Check{Command: "kubectl get ippools", Expect: get(c, "ippools")})
		if node != "" {
			out = append(out, plan.Check{Command: "ip route | grep vxlan   # on " + node, Expect: routesGrep(t, node, "vxlan")})
		}
	case StepBGP:
		out = append(out,
			plan.Check{Command: "kubectl -n calico-system rollout status ds/calico-node", Expect: rollout(c)},
			plan.Check{Command: "kubectl -n calico-system get ds calico-node -o jsonpath='" + nodeBackendPath + "'", Expect: dsPath(c, "calico-system", "calico-node", nodeBackendPath)},
			plan.Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
		if node != "" {
			out2, _, _ := calicoctl.NodeStatus(c, node)
			out = append(out, plan.Check{Command: "sudo calicoctl node status   # on " + node, Expect: out2})
		}
	case StepWindowsDataplane:
		const p = `{.spec.calicoNetwork.windowsDataplane} {.spec.serviceCIDRs}`
		var inst any
		if c.Installation != nil {
			inst = c.Installation
		}
		out = append(out,
			plan.Check{Command: "kubectl get installation default -o jsonpath='" + p + "'", Expect: evalPath(inst, p)},
			plan.Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
	case StepServicesEndpoint:
		const p = `{.data.KUBERNETES_SERVICE_HOST}:{.data.KUBERNETES_SERVICE_PORT}`
		var cm any
		for _, m := range c.ConfigMaps {
			if m.Namespace == "tigera-operator" && m.Name == "kubernetes-services-endpoint" {
				cm = m
			}
		}
		out = append(out,
			plan.Check{Command: "kubectl -n tigera-operator get configmap kubernetes-services-endpoint -o jsonpath='" + p + "'", Expect: evalPath(cm, p)},
			plan.Check{Command: "kubectl -n calico-system rollout status ds/calico-node", Expect: rollout(c)},
			plan.Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
	}
	return out
}

// sampleLinuxNode is the first Linux worker by name (the node whose routes
// the runbook shows), else the first Linux node.
func sampleLinuxNode(c *model.Cluster) string {
	var workers, all []string
	for _, n := range c.Nodes {
		if n.Labels[corev1.LabelOSStable] == "windows" {
			continue
		}
		all = append(all, n.Name)
		if _, cp := n.Labels[wellknown.LabelControlPlane]; !cp {
			workers = append(workers, n.Name)
		}
	}
	sort.Strings(workers)
	sort.Strings(all)
	if len(workers) > 0 {
		return workers[0]
	}
	if len(all) > 0 {
		return all[0]
	}
	return ""
}

// routesGrep is `ip route | grep PATTERN` on a Linux node of the twin.
func routesGrep(t *diff.Twin, node, pattern string) string {
	n, err := t.LinuxNode(node)
	if err != nil {
		return "(the twin cannot compile the dataplane: " + err.Error() + ")"
	}
	if n == nil {
		return "(no Linux dataplane for " + node + ")"
	}
	routes := n.IPRoute()
	out, _, _ := console.Filter([]string{"grep", pattern}, routes)
	return out
}

// get is `kubectl get ARGS` on the twin.
func get(c *model.Cluster, args ...string) string {
	var b bytes.Buffer
	notice, err := report.Get(&b, c, report.Request{Args: args})
	if err != nil {
		return err.Error()
	}
	if b.Len() == 0 {
		return notice
	}
	return b.String()
}

func dsPath(c *model.Cluster, ns, name, path string) string {
	for _, d := range c.DaemonSets {
		if d.Namespace == ns && d.Name == name {
			return evalPath(d, path)
		}
	}
	return fmt.Sprintf(`Error from server (NotFound): daemonsets.apps %q not found`, name)
}

// evalPath is kubectl's -o jsonpath on an object of the twin.
func evalPath(o any, path string) string {
	if o == nil || reflect.ValueOf(o).IsNil() {
		return "Error from server (NotFound)"
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err.Error()
	}
	jp := jsonpath.New("out")
	if err := jp.Parse(path); err != nil {
		return err.Error()
	}
	var b bytes.Buffer
	if err := jp.Execute(&b, u); err != nil {
		return err.Error()
	}
	return b.String()
}

// rollout is the last line `kubectl rollout status` prints once the
// DaemonSet has rolled (kubectl's DaemonSetStatusViewer); the twin holds
// the rolled state, not the progress lines before it.
func rollout(c *model.Cluster) string {
	for _, d := range c.DaemonSets {
		if d.Namespace == "calico-system" && d.Name == "calico-node" {
			return fmt.Sprintf("daemon set %q successfully rolled out", d.Name)
		}
	}
	return `Error from server (NotFound): daemonsets.apps "calico-node" not found`
}

// disruption says what the step disturbs, from the twins' difference:
// workloads whose pod template changed roll (their pods restart), and
// nodes whose routes through another node change may drop connections
// between nodes while Felix replaces them.
func disruption(id string, ch *diff.Result) string {
	var parts []string
	for _, w := range ch.Workloads {
		if len(w.Restarts) == 0 {
			continue
		}
		how := ""
		if w.Rollout != "" {
			how = " (" + w.Rollout + ")"
		}
		parts = append(parts, fmt.Sprintf("%s/%s restarts %d pod(s)%s", w.Workload.Namespace, w.Workload.Name, len(w.Restarts), how))
	}
	if len(parts) > 0 {
		parts[0] = "pods restart: " + parts[0]
		parts[len(parts)-1] += "; the dataplane stays programmed meanwhile, and a pod starting on a node while its calico-node restarts waits for the CNI"
	}
	n := 0
	for _, nd := range ch.Nodes {
		if throughOtherNode(nd.Routes.Added) || throughOtherNode(nd.Routes.Removed) {
			n++
		}
	}
	if n > 0 {
		parts = append(parts, fmt.Sprintf("routes to other nodes' blocks change on %d node(s): connections between nodes may drop for a moment while Felix replaces a route (a maintenance window in production); pods keep their addresses", n))
	}
	if len(parts) == 0 {
		if id == StepStrictAffinity {
			return "none: only future address assignment changes"
		}
		return "none: no pod restarts and no route changes"
	}
	return strings.Join(parts, "; ")
}

// throughOtherNode: a route with a next hop, other than the default.
func throughOtherNode(routes []string) bool {
	for _, r := range routes {
		if strings.Contains(r, " via ") && !strings.HasPrefix(r, "default") {
			return true
		}
	}
	return false
}
