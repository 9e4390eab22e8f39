package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// resources are what get prints (report.Kinds), by the names kubectl uses.
var resources = []string{
	"nodes", "namespaces", "pods", "services", "configmaps", "serviceaccounts",
	"endpointslices", "daemonsets", "deployments", "replicasets", "statefulsets",
	"networkpolicies", "runtimeclasses", "certificatesigningrequests",
	"ippools", "ipamblocks", "blockaffinities", "ipamconfigurations",
	"tigerastatuses", "installations",
}

// commands are the command lines run against the lab cluster, against the
// lab itself and against the lab cluster's dump, whose output must be the
// same. The input flags are added per run (before a "--"): --kubeconfig for
// live, --lab (and -f extras) for the lab, -f dump for the dump. Add the
// lines of new commands here as they land.
//
// Lines with a labDiffers reason are compared live against the dump only,
// and their differences from the lab are logged: -o yaml prints the objects
// themselves, and the API server stores more than the twin prints (defaults,
// admission's additions); host-level answers depend on the lab's Cluster
// object (NIC names, gateways, host order), which no Kubernetes object
// holds.
var commands = func() []command {
	var out []command
	for _, r := range resources {
		out = append(out,
			command{args: []string{"get", r, "-A"}},
			command{args: []string{"get", r, "-A", "-o", "wide"}},
			command{args: []string{"get", r, "-A", "-o", "yaml"}, labDiffers: apiDefaults},
		)
	}
	out = append(out,
		command{args: []string{"get", "pods", "-n", "win-demo"}},
		command{args: []string{"get", "nodes", "-l", "kubernetes.io/os=windows", "--show-labels"}},
		command{args: []string{"get", "pods", "-A", "--field-selector", "spec.nodeName=k8s-lab-win-1", "-o", "name"}},
		command{args: []string{"get", "ipamblocks,blockaffinities,tigerastatus"}},
		command{args: []string{"get", "hnsnetworks", "--node", "k8s-lab-win-1"}},
		command{args: []string{"get", "hnsendpoints", "--node", "k8s-lab-win-1"}, labDiffers: hostMAC},
		command{args: []string{"get", "loadbalancers", "--node", "k8s-lab-win-1"}},
		command{args: []string{"get", "routes"}, labDiffers: hostNIC},
		command{args: []string{"check"}},
		command{args: []string{"check", "-o", "json"}},
		command{args: []string{"check", "--expect-windows"}},
		command{args: []string{"exec", "node/k8s-lab-node-2", "--", "ip", "route"}, labDiffers: hostNIC},
		command{args: []string{"exec", "node/k8s-lab-node-1", "--", "ip", "neigh", "show", "dev", "vxlan.calico"}, labDiffers: hostOrder},
		command{args: []string{"exec", "node/k8s-lab-node-1", "--", "bridge", "fdb", "show", "dev", "vxlan.calico"}, labDiffers: hostOrder},
		command{args: []string{"exec", "node/k8s-lab-node-2", "--", "ip", "-d", "link", "show", "vxlan.calico"}, labDiffers: hostNIC},
		command{args: []string{"exec", "node/k8s-lab-win-1", "--", "hnsdiag", "list", "loadbalancers"}},
		command{args: []string{"exec", "node/k8s-lab-win-1", "--", "Get-HnsNetwork | Format-List"}},
		command{args: []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "hello.demo.svc.cluster.local"}, labDiffers: hostNIC},
		command{args: []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "172.21.172.4", "--proto", "icmp"}, labDiffers: hostNIC},
		command{args: []string{"trace", "node/k8s-lab-win-1", "10.102.98.171", "--port", "80"}},
		command{args: []string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp"}, labDiffers: hostNIC},
	)
	return out
}()

type command struct {
	args []string
	// labDiffers says why the line is not compared with the lab.
	labDiffers string
}

// labGateway is the node network's gateway in examples/lab/00-cluster.yaml.
const labGateway = "192.168.10.1"

// Why some lines differ from the lab (see commands).
const (
	apiDefaults = "the API server stores defaults and admission's additions that the twin does not print"
	hostNIC     = "the lab's Cluster names the hosts' NICs (ens18); live, without it, the twin assumes eth0"
	hostMAC     = "the lab's Cluster records the Windows host's observed MAC; live, the twin derives one"
	hostOrder   = "the lab orders neighbours by its Cluster's host join order; live, without it, the twin orders them by address"
)

// dumpLive runs `dump` against the lab cluster as user kubeconfig and writes
// it to a file.
func dumpLive(t *testing.T, kubeconfig, name string) (string, result) {
	t.Helper()
	r := hybrid(context.Background(), "dump", "--kubeconfig", kubeconfig)
	if r.code != 0 {
		t.Fatalf("dump: %s", r)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, r
}

// extrasFile writes the objects of the dump that the lab has no object for
// (neither in its input nor among what the twin derives): what the API
// server makes itself (kube-system/extension-apiserver-authentication), what
// kubeadm uploads (kubeadm-config, kubelet-config, kube-proxy), what a real
// API server needs that the lab leaves out (the ServiceAccounts its pods run
// as), and deploy/rbac.yaml's. The lab run reads them with -f, so that the
// same objects are compared.
func extrasFile(t *testing.T, dump string) string {
	t.Helper()
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := load.DecodeDocuments(f, dump)
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	var names []string
	for _, o := range objs {
		if labKeys[o.Key] || isEmbedded(o) {
			continue
		}
		items = append(items, o.Raw)
		names = append(names, o.Key.String())
	}
	t.Logf("objects of the live cluster the lab has none of (%d): %s", len(names), strings.Join(names, "; "))
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "extras.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// isEmbedded tells the documents the live reader takes out of kubeadm's
// ConfigMaps: the lab has them as documents of its own.
func isEmbedded(o *model.Object) bool {
	switch o.Key.Group {
	case "kubeadm.k8s.io", "kubelet.config.k8s.io", "kubeproxy.config.k8s.io":
		return true
	}
	return false
}

var spaces = regexp.MustCompile(`\s+$`)

// normalize makes outputs comparable: in tables, the AGE column (the API
// server stamps creationTimestamp itself, so ages differ) is masked, and
// cells are cut at the header's column starts and re-joined so that the
// masked column's width does not shift the others. Anything else is kept.
func normalize(out string) string {
	var b strings.Builder
	var starts []int
	age := -1
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			starts, age = nil, -1
			b.WriteString("\n")
			continue
		}
		if starts == nil && (strings.HasPrefix(line, "NAME") || strings.HasPrefix(line, "NAMESPACE")) {
			starts, age = columns(line)
		}
		if starts == nil {
			b.WriteString(line + "\n")
			continue
		}
		cells := make([]string, len(starts))
		for i, s := range starts {
			if s >= len(line) {
				break
			}
			end := len(line)
			if i+1 < len(starts) && starts[i+1] < len(line) {
				end = starts[i+1]
			}
			cells[i] = strings.TrimSpace(line[s:end])
		}
		if age >= 0 && cells[age] != "AGE" {
			cells[age] = "<age>"
		}
		b.WriteString(spaces.ReplaceAllString(strings.Join(cells, " | "), "") + "\n")
	}
	return b.String()
}

// serverAssigned are the metadata fields the API server sets on create; the
// lab's own values of them are not kept.
var serverAssigned = regexp.MustCompile(`(?m)^(\s*)(uid|resourceVersion|creationTimestamp|generation): .*\n`)

// normalizeYAML drops the fields the API server assigns from -o yaml|json
// output, and the ages of tables.
func normalizeOutput(args []string, out string) string {
	for i, a := range args {
		if (a == "-o" || a == "--output") && i+1 < len(args) && (args[i+1] == "yaml" || args[i+1] == "json") {
			return serverAssigned.ReplaceAllString(out, "")
		}
	}
	return normalize(out)
}

// columns finds where each header word starts, and the AGE column.
func columns(header string) ([]int, int) {
	var starts []int
	age := -1
	for i := 0; i < len(header); i++ {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			if i > 0 && i >= 2 && header[i-2] != ' ' {
				continue // one space inside a header word ("NOMINATED NODE")
			}
			if strings.HasPrefix(header[i:], "AGE") && (i+3 == len(header) || header[i+3] == ' ') {
				age = len(starts)
			}
			starts = append(starts, i)
		}
	}
	return starts, age
}

// TestLiveMatchesLab runs every command line against the lab cluster and
// against the lab itself, and against the dump of the lab cluster, and wants
// the same stdout, stderr and exit code from all three.
func TestLiveMatchesLab(t *testing.T) {
	dump, dr := dumpLive(t, env.admin, "dump.yaml")
	if dr.stderr != "" {
		t.Errorf("dump of the lab cluster wrote to stderr:\n%s", dr.stderr)
	}
	extras := extrasFile(t, dump)
	ctx := context.Background()
	for _, c := range commands {
		args := c.args
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			// No Kubernetes object holds the node network's gateway: the
			// live and dump runs state the one the lab's Cluster names.
			live := hybrid(ctx, withInput(args, "--kubeconfig", env.admin, "--node-gateway", labGateway)...)
			lab := hybrid(ctx, withInput(args, "--lab", "-f", extras)...)
			file := hybrid(ctx, withInput(args, "-f", dump, "--node-gateway", labGateway)...)
			if live.code != 0 && live.code != 1 {
				t.Errorf("live: %s", live)
			}
			compare(t, args, "live", live, "-f dump", file)
			if c.labDiffers != "" {
				if live.code != lab.code {
					t.Errorf("exit code: live %d, --lab %d", live.code, lab.code)
				}
				if d := diff("live", normalizeOutput(args, live.stdout), "--lab", normalizeOutput(args, lab.stdout)); d != "" {
					t.Logf("differs from the lab in %d lines, not asserted: %s", strings.Count(d, "\n"), c.labDiffers)
				}
				return
			}
			compare(t, args, "live", live, "--lab", lab)
		})
	}
}

// withInput puts the input flags into a command line, before "--" when it
// has one (exec's command follows it).
func withInput(args []string, input ...string) []string {
	for i, a := range args {
		if a == "--" {
			out := append(append(append([]string{}, args[:i]...), input...), args[i:]...)
			return out
		}
	}
	return append(append([]string{}, args...), input...)
}

func compare(t *testing.T, args []string, aName string, a result, bName string, b result) {
	t.Helper()
	if a.code != b.code {
		t.Errorf("exit code: %s %d, %s %d", aName, a.code, bName, b.code)
	}
	if na, nb := normalizeOutput(args, a.stdout), normalizeOutput(args, b.stdout); na != nb {
		t.Errorf("stdout differs:\n%s", diff(aName, na, bName, nb))
	}
	if a.stderr != b.stderr {
		t.Errorf("stderr differs:\n%s", diff(aName, a.stderr, bName, b.stderr))
	}
}

// diff shows the lines only one side has, in order.
func diff(aName, a, bName, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	inB := map[string]int{}
	for _, l := range bl {
		inB[l]++
	}
	inA := map[string]int{}
	for _, l := range al {
		inA[l]++
	}
	var out bytes.Buffer
	for _, l := range al {
		if inB[l] == 0 {
			out.WriteString("  " + aName + ": " + l + "\n")
		} else {
			inB[l]--
		}
	}
	for _, l := range bl {
		if inA[l] == 0 {
			out.WriteString("  " + bName + ": " + l + "\n")
		} else {
			inA[l]--
		}
	}
	if out.Len() == 0 && a != b {
		return "  the same lines in another order:\n--- " + aName + "\n" + a + "\n--- " + bName + "\n" + b
	}
	return out.String()
}

// TestDumpIsAListOfWhatWasRead checks the dump's form: a v1 List whose
// items keep what the API server gave except managedFields.
func TestDumpIsAListOfWhatWasRead(t *testing.T) {
	r := hybrid(context.Background(), "dump", "--kubeconfig", env.admin, "-o", "json")
	if r.code != 0 {
		t.Fatalf("dump -o json: %s", r)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) == 0 {
		t.Fatalf("dump is %s %s with %d items", list.APIVersion, list.Kind, len(list.Items))
	}
	kinds := map[string]int{}
	for _, it := range list.Items {
		kinds[it["kind"].(string)]++
		md, _ := it["metadata"].(map[string]any)
		if _, ok := md["managedFields"]; ok {
			t.Errorf("%s %v keeps managedFields", it["kind"], md["name"])
		}
		if it["kind"] == "Secret" {
			t.Errorf("the dump has a Secret: %v", md["name"])
		}
	}
	for _, k := range []string{"Node", "Pod", "ConfigMap", "IPAMBlock", "TigeraStatus", "ClusterConfiguration", "KubeletConfiguration", "KubeProxyConfiguration", "APIServer"} {
		if kinds[k] == 0 {
			t.Errorf("the dump has no %s: %v", k, kinds)
		}
	}
	y := hybrid(context.Background(), "dump", "--kubeconfig", env.admin)
	var fromYAML map[string]any
	if err := yaml.Unmarshal([]byte(y.stdout), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if n := len(fromYAML["items"].([]any)); n != len(list.Items) {
		t.Errorf("yaml dump has %d items, json %d", n, len(list.Items))
	}
}
