package plan

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/calicoctl"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// The calico-node template fields the BGP step changes, as kubectl's
// jsonpath prints them.
const nodeBackendPath = `{.spec.template.spec.containers[?(@.name=="calico-node")].env[?(@.name=="CALICO_NETWORKING_BACKEND")].value}{"\n"}{.spec.template.spec.containers[?(@.name=="calico-node")].readinessProbe.exec.command}`

// verify is each step's check commands with the twin's answers after it
// (simulated): every answer is computed from the twin the step's file
// builds, with the same code `kubectl hybrid exec` and `get` use.
func verify(id string, c *model.Cluster) []Check {
	var out []Check
	node := sampleLinuxNode(c)
	switch id {
	case StepStrictAffinity:
		out = append(out, Check{Command: "calicoctl ipam show --show-configuration", Expect: calicoctl.IPAMConfiguration(c)})
	case StepEncapsulation:
		out = append(out, Check{Command: "kubectl get ippools", Expect: get(c, "ippools")})
		if node != "" {
			out = append(out, Check{Command: "ip route | grep vxlan   # on " + node, Expect: routesGrep(c, node, "vxlan")})
		}
	case StepBGP:
		out = append(out,
			Check{Command: "kubectl -n calico-system rollout status ds/calico-node", Expect: rollout(c)},
			Check{Command: "kubectl -n calico-system get ds calico-node -o jsonpath='" + nodeBackendPath + "'", Expect: dsPath(c, "calico-system", "calico-node", nodeBackendPath)},
			Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
		if node != "" {
			out2, _, _ := calicoctl.NodeStatus(c, node)
			out = append(out, Check{Command: "sudo calicoctl node status   # on " + node, Expect: out2})
		}
	case StepWindowsDataplane:
		const p = `{.spec.calicoNetwork.windowsDataplane} {.spec.serviceCIDRs}`
		var inst any
		if c.Installation != nil {
			inst = c.Installation
		}
		out = append(out,
			Check{Command: "kubectl get installation default -o jsonpath='" + p + "'", Expect: evalPath(inst, p)},
			Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
	case StepServicesEndpoint:
		const p = `{.data.KUBERNETES_SERVICE_HOST}:{.data.KUBERNETES_SERVICE_PORT}`
		var cm any
		for _, m := range c.ConfigMaps {
			if m.Namespace == "tigera-operator" && m.Name == "kubernetes-services-endpoint" {
				cm = m
			}
		}
		out = append(out,
			Check{Command: "kubectl -n tigera-operator get configmap kubernetes-services-endpoint -o jsonpath='" + p + "'", Expect: evalPath(cm, p)},
			Check{Command: "kubectl -n calico-system rollout status ds/calico-node", Expect: rollout(c)},
			Check{Command: "kubectl get tigerastatus", Expect: get(c, "tigerastatus")})
	}
	return out
}

// sampleLinuxNode is the first Linux worker by name (the node whose routes
// the runbook shows), else the first Linux node.
func sampleLinuxNode(c *model.Cluster) string {
	var workers, all []string
	for _, n := range c.Nodes {
		if n.Labels[labelOS] == "windows" {
			continue
		}
		all = append(all, n.Name)
		if _, cp := n.Labels[labelControlPlane]; !cp {
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
func routesGrep(c *model.Cluster, node, pattern string) string {
	nodes, err := linux.Compile(c)
	if err != nil {
		return "(the twin cannot compile the Linux dataplane: " + err.Error() + ")"
	}
	n, ok := nodes[node]
	if !ok {
		return "(no Linux dataplane for " + node + ")"
	}
	routes, _, _ := n.Exec([]string{"ip", "route"})
	out, _, _ := trace.Filter([]string{"grep", pattern}, routes)
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

// rollout is what `kubectl rollout status` prints once the DaemonSet has
// rolled (kubectl's DaemonSetStatusViewer), with the pods the twin runs.
func rollout(c *model.Cluster) string {
	for _, d := range c.DaemonSets {
		if d.Namespace == "calico-system" && d.Name == "calico-node" {
			return fmt.Sprintf("daemon set %q successfully rolled out (%d pods updated)", d.Name, d.Status.UpdatedNumberScheduled)
		}
	}
	return `Error from server (NotFound): daemonsets.apps "calico-node" not found`
}

// disruption says what the step disturbs, from the twins before and after:
// DaemonSets whose pod template changed roll (their pods restart one node
// at a time), and nodes whose routes to other nodes' blocks change may drop
// connections between nodes while Felix replaces them.
func disruption(id string, before, after *model.Cluster) string {
	var parts []string
	if rolled := rolledDaemonSets(before, after); len(rolled) > 0 {
		parts = append(parts, "pods restart as their DaemonSets roll, one node at a time: "+strings.Join(rolled, ", ")+"; the dataplane stays programmed meanwhile, and a pod starting on a node while its calico-node restarts waits for the CNI")
	}
	if rolled := rolledDeployments(before, after); len(rolled) > 0 {
		parts = append(parts, "Deployments roll out new pods: "+strings.Join(rolled, ", "))
	}
	if n := nodesWithNewRoutes(before, after); n > 0 {
		parts = append(parts, fmt.Sprintf("routes to other nodes' blocks are replaced on %d node(s): connections between nodes may drop for a moment while Felix replaces them (a maintenance window in production); pods keep their addresses and are not restarted", n))
	}
	if id == StepStrictAffinity && len(parts) == 0 {
		parts = append(parts, "none: only future address assignment changes")
	}
	if len(parts) == 0 {
		return "none on the Linux nodes"
	}
	return strings.Join(parts, "; ")
}

func rolledDaemonSets(before, after *model.Cluster) []string {
	old := map[string]*appsv1.DaemonSet{}
	for _, d := range before.DaemonSets {
		old[d.Namespace+"/"+d.Name] = d
	}
	var out []string
	for _, d := range after.DaemonSets {
		o, ok := old[d.Namespace+"/"+d.Name]
		if ok && !reflect.DeepEqual(o.Spec.Template, d.Spec.Template) && d.Status.DesiredNumberScheduled > 0 {
			out = append(out, fmt.Sprintf("%s/%s (%d pods)", d.Namespace, d.Name, d.Status.DesiredNumberScheduled))
		}
	}
	return out
}

func rolledDeployments(before, after *model.Cluster) []string {
	old := map[string]*appsv1.Deployment{}
	for _, d := range before.Deployments {
		old[d.Namespace+"/"+d.Name] = d
	}
	var out []string
	for _, d := range after.Deployments {
		if o, ok := old[d.Namespace+"/"+d.Name]; ok && !reflect.DeepEqual(o.Spec.Template, d.Spec.Template) {
			out = append(out, d.Namespace+"/"+d.Name)
		}
	}
	return out
}

// remoteRoutes are the routes through a next hop: to other nodes' blocks
// (and the default route), not the node's own pods.
func remoteRoutes(table string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(table, "\n") {
		if strings.Contains(l, " via ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// nodesWithNewRoutes counts Linux nodes whose routes to other nodes change.
func nodesWithNewRoutes(before, after *model.Cluster) int {
	a, err1 := linux.Compile(before)
	b, err2 := linux.Compile(after)
	if err1 != nil || err2 != nil {
		return 0
	}
	n := 0
	for name, nb := range b {
		na, ok := a[name]
		if !ok {
			continue
		}
		ra, _, _ := na.Exec([]string{"ip", "route"})
		rb, _, _ := nb.Exec([]string{"ip", "route"})
		if remoteRoutes(ra) != remoteRoutes(rb) {
			n++
		}
	}
	return n
}

// stepChanges is what changes between the two twins.
func stepChanges(before, after *model.Cluster) any {
	return nil
}
