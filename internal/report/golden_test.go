package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

var update = golden.Update

// checkGolden compares got with testdata/golden/<name>.golden. With -update
// it rewrites the file; on a mismatch it writes actual_<name>.golden next to
// it and fails with a line diff.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), got)
}

func lineDiff(want, got string) string { return golden.Diff(want, got) }

// run prints a transcript of `kubectl get` against the cluster: the command,
// stdout, then stderr lines after "[stderr]".
func run(t *testing.T, cmd string, req Request) string {
	t.Helper()
	var out bytes.Buffer
	notice, err := Get(&out, labCluster(), req)
	var sb strings.Builder
	fmt.Fprintf(&sb, "$ %s\n%s", cmd, out.String())
	if notice != "" || err != nil {
		sb.WriteString("[stderr]\n")
		if notice != "" {
			sb.WriteString(notice + "\n")
		}
		if err != nil {
			sb.WriteString(err.Error() + "\n")
		}
	}
	return sb.String()
}

type goldenCmd struct {
	cmd string
	req Request
}

func opts(output string) Options { return Options{Output: output, Now: now} }

// TestGoldenTables prints every kind the twin knows from the finished lab
// cluster, plain and -o wide.
func TestGoldenTables(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.Resource, func(t *testing.T) {
			var sb strings.Builder
			for _, o := range []string{OutputTable, OutputWide} {
				cmd := "kubectl get " + k.Resource + " -A"
				if o != "" {
					cmd += " -o " + o
				}
				sb.WriteString(run(t, cmd, Request{Args: []string{k.Resource}, Options: Options{Output: o, AllNamespaces: true, Now: now}}))
			}
			checkGolden(t, "table_"+k.Resource, sb.String())
		})
	}
}

// TestGoldenCommands covers output formats, several kinds at once and the
// error and notice lines.
func TestGoldenCommands(t *testing.T) {
	groups := map[string][]goldenCmd{
		"multi_kind": {
			{"kubectl -n demo get pods,svc,deploy,rs", Request{Args: []string{"pods,svc,deploy,rs"}, Namespace: "demo", Options: opts("")}},
			{"kubectl -n demo get pods,svc -o wide --no-headers", Request{Args: []string{"pods,svc"}, Namespace: "demo", Options: Options{Output: OutputWide, NoHeaders: true, Now: now}}},
			{"kubectl get ippools,ipamblocks,blockaffinities", Request{Args: []string{"ippools,ipamblocks,blockaffinities"}, Options: opts("")}},
			{"kubectl -n demo get pod/hello-55fb8f8684-69mvv svc/hello", Request{Args: []string{"pod/hello-55fb8f8684-69mvv", "svc/hello"}, Namespace: "demo", Options: opts("")}},
			{"kubectl get nodes --show-kind", Request{Args: []string{"nodes"}, Options: Options{ShowKind: true, Now: now}}},
			{"kubectl -n demo get pods,configmaps (no config maps in demo)", Request{Args: []string{"pods,configmaps"}, Namespace: "demo", Options: opts("")}},
			{"kubectl get ns --show-labels", Request{Args: []string{"ns"}, Options: Options{ShowLabels: true, Now: now}}},
		},
		"output_name": {
			{"kubectl get nodes -o name", Request{Args: []string{"nodes"}, Options: opts(OutputName)}},
			{"kubectl get pods,svc,deploy -A -o name", Request{Args: []string{"pods,svc,deploy"}, Options: Options{Output: OutputName, AllNamespaces: true, Now: now}}},
			{"kubectl get ippools,ipamblocks,blockaffinities,ipamconfigurations,tigerastatus,installations,csr,runtimeclasses -o name",
				Request{Args: []string{"ippools,ipamblocks,blockaffinities,ipamconfigurations,tigerastatus,installations,csr,runtimeclasses"}, Options: opts(OutputName)}},
		},
		"output_json": {
			{"kubectl -n demo get pods,svc -o json", Request{Args: []string{"pods,svc"}, Namespace: "demo", Options: opts(OutputJSON)}},
			{"kubectl get node k8s-lab-win-1 -o json", Request{Args: []string{"node", "k8s-lab-win-1"}, Options: opts(OutputJSON)}},
			{"kubectl -n default get pods -o json", Request{Args: []string{"pods"}, Options: opts(OutputJSON)}},
		},
		"output_yaml": {
			{"kubectl get ippools -o yaml", Request{Args: []string{"ippools"}, Options: opts(OutputYAML)}},
			{"kubectl get tigerastatus calico-windows -o yaml", Request{Args: []string{"tigerastatus", "calico-windows"}, Options: opts(OutputYAML)}},
			{"kubectl get ipamblock 172-21-41-0-26 -o yaml", Request{Args: []string{"ipamblock", "172-21-41-0-26"}, Options: opts(OutputYAML)}},
			{"kubectl get installation default -o yaml", Request{Args: []string{"installation", "default"}, Options: opts(OutputYAML)}},
		},
		"errors": {
			{"kubectl -n demo get pod x", Request{Args: []string{"pod", "x"}, Namespace: "demo", Options: opts("")}},
			{"kubectl -n demo get pods hello-55fb8f8684-69mvv x y", Request{Args: []string{"pods", "hello-55fb8f8684-69mvv", "x", "y"}, Namespace: "demo", Options: opts("")}},
			{"kubectl get ippool nope -o json", Request{Args: []string{"ippool", "nope"}, Options: opts(OutputJSON)}},
			{"kubectl get deploy.apps nope", Request{Args: []string{"deploy.apps", "nope"}, Options: opts("")}},
			{"kubectl get frobs", Request{Args: []string{"frobs"}, Options: opts("")}},
			{"kubectl get", Request{Options: opts("")}},
			{"kubectl get pods x -A", Request{Args: []string{"pods", "x"}, Options: Options{AllNamespaces: true, Now: now}}},
			{"kubectl -n empty get pods", Request{Args: []string{"pods"}, Namespace: "empty", Options: opts("")}},
			{"kubectl -n empty get pods,svc -o name", Request{Args: []string{"pods,svc"}, Namespace: "empty", Options: opts(OutputName)}},
			{"kubectl -n empty get pods -o json", Request{Args: []string{"pods"}, Namespace: "empty", Options: opts(OutputJSON)}},
			{"kubectl get pods -A -l app=none", Request{Args: []string{"pods"}, LabelSelector: "app=none", Options: Options{AllNamespaces: true, Now: now}}},
			{"kubectl -n empty get pods,nodes", Request{Args: []string{"pods,nodes"}, Namespace: "empty", Options: opts("")}},
			{"kubectl get pods --field-selector spec.foo=bar", Request{Args: []string{"pods"}, FieldSelector: "spec.foo=bar", Options: opts("")}},
			{"kubectl get pods -l app=x hello", Request{Args: []string{"pods", "hello"}, LabelSelector: "app=x", Options: opts("")}},
			{"kubectl get pods -o custom", Request{Args: []string{"pods"}, Options: opts("custom")}},
		},
	}
	for name, cmds := range groups {
		t.Run(name, func(t *testing.T) {
			var sb strings.Builder
			for _, c := range cmds {
				sb.WriteString(run(t, c.cmd, c.req))
			}
			checkGolden(t, name, sb.String())
		})
	}
}
