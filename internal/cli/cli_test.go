package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = golden.Update

// seedNow is 153 minutes after the lab's control plane joined: the moment of
// seed 000's final `kubectl get nodes -o wide`.
var seedNow = time.Date(2026, 11, 6, 21, 20, 40, 0, time.UTC)

// run executes the command line as the binary would, with the clock fixed.
func run(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// No kubeconfig: commands without -f or --lab must not reach a real cluster.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	saved := clock
	clock = func() time.Time { return seedNow }
	defer func() { clock = saved }()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code = Execute(streams, args)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/golden/name, rewriting it with -update
// and leaving actual_<name> beside it on a mismatch.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

func lineDiff(want, got string) string { return golden.Diff(want, got) }

// secondWindows is the what-if with a second Windows node.
const secondWindows = "../../examples/what-if/second-windows-node"

func TestCommandsMatchTheirGoldenFiles(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"the lab walkthrough", []string{"lab"}},
		{"the lab verified with a deny-all what-if", []string{"lab", "--verify", "-f", "../../examples/what-if/deny-win-demo-ingress.yaml"}},
		{"ipam blocks of the lab", []string{"get", "ipamblocks", "--lab"}},
		{"lab nodes wide", []string{"get", "nodes", "-o", "wide", "--lab"}},
		{"every lab pod wide", []string{"get", "pods", "-A", "-o", "wide", "--lab"}},
		{"calico daemonsets", []string{"get", "ds", "-n", "calico-system", "--lab"}},
		// The operator's render (tigera/operator release-v1.44 pkg/render/
		// node.go nodeDaemonset, windows.go windowsDaemonset).
		{"calico-node of the lab as yaml", []string{"get", "ds", "-n", "calico-system", "calico-node", "-o", "yaml", "--lab"}},
		{"calico-node-windows of the lab as yaml", []string{"get", "ds", "-n", "calico-system", "calico-node-windows", "-o", "yaml", "--lab"}},
		{"calico-node of the main cluster as yaml", []string{"get", "ds", "-n", "calico-system", "calico-node", "-o", "yaml", "-f", "../../examples/main-cluster"}},
		{"calico-node-windows of the main cluster as yaml", []string{"get", "ds", "-n", "calico-system", "calico-node-windows", "-o", "yaml", "-f", "../../examples/main-cluster"}},
		{"the cni-config ConfigMaps of the lab", []string{"get", "cm", "-n", "calico-system", "-o", "yaml", "--lab"}},
		// core_controller.go setDefaultsOnFelixConfiguration.
		{"felixconfigurations of the lab", []string{"get", "felixconfigurations", "--lab"}},
		{"the default felixconfiguration of the lab as yaml", []string{"get", "felixconfig", "default", "-o", "yaml", "--lab"}},
		// pool_controller.go Reconcile reverts a direct edit of a pool it owns.
		{"a directly edited operator pool is reverted", []string{"get", "ippools", "-o", "wide", "-f", "../../examples/main-cluster", "-f", "testdata/operator/edited-operator-pool.yaml"}},
		{"all daemonsets", []string{"get", "ds", "-A", "--lab"}},
		{"tigerastatus of the lab", []string{"get", "tigerastatus", "--lab"}},
		{"kubelet serving csrs", []string{"get", "csr", "--lab"}},
		{"services and pods of win-demo", []string{"get", "pods,svc", "-n", "win-demo", "-o", "wide", "--lab"}},
		{"services of every namespace", []string{"get", "svc", "-A", "--lab"}},
		{"endpointslices of demo", []string{"get", "endpointslices", "-n", "demo", "--lab"}},
		{"deployments of every namespace", []string{"get", "deploy", "-A", "--lab"}},
		{"runtimeclasses", []string{"get", "runtimeclasses", "--lab"}},
		{"ippools wide", []string{"get", "ippools", "-o", "wide", "--lab"}},
		{"the windows node as yaml", []string{"get", "node", "k8s-lab-win-1", "-o", "yaml", "--lab"}},
		{"pod names", []string{"get", "pods", "-n", "win-demo", "-o", "name", "--lab"}},
		{"a missing pod", []string{"get", "pod", "nope", "-n", "demo", "--lab"}},
		{"an unknown resource type", []string{"get", "widgets", "--lab"}},
		{"an empty namespace", []string{"get", "pods", "-n", "empty", "--lab"}},
		{"no input at all", []string{"get", "pods"}},
		{"an unknown output format", []string{"get", "pods", "-o", "xml", "--lab"}},
		{"check of the lab", []string{"check", "--lab"}},
		{"check of the main cluster before migration", []string{"check", "-f", "../../examples/main-cluster", "--expect-windows", "-o", "json"}},
		{"check of the main cluster without windows plans", []string{"check", "-f", "../../examples/main-cluster"}},
		{"check with an unknown rule", []string{"check", "--lab", "--rule", "HYB999"}},
		{"check of the main cluster with a config file", []string{"check", "-f", "../../examples/main-cluster", "--expect-windows", "--config", "../../examples/check-config.yaml"}},
		{"check of the main cluster as junit with a config file", []string{"check", "-f", "../../examples/main-cluster", "--expect-windows", "--config", "../../examples/check-config.yaml", "-o", "junit"}},
		{"check with a config naming an unknown rule", []string{"check", "--lab", "--config", "testdata/check-config-unknown-rule.yaml"}},
		{"check of an empty directory", []string{"check", "-f", "testdata/empty", "-o", "json"}},
		{"ip route on node-2", []string{"exec", "node/k8s-lab-node-2", "--lab", "--", "ip", "route"}},
		{"ip neigh on node-1", []string{"exec", "node/k8s-lab-node-1", "--lab", "--", "ip", "neigh", "show", "dev", "vxlan.calico"}},
		{"bridge fdb on node-1", []string{"exec", "node/k8s-lab-node-1", "--lab", "--", "bridge", "fdb", "show", "dev", "vxlan.calico"}},
		{"vxlan link on node-2", []string{"exec", "node/k8s-lab-node-2", "--lab", "--", "ip", "-d", "link", "show", "vxlan.calico"}},
		{"hnsdiag load balancers", []string{"exec", "node/k8s-lab-win-1", "--lab", "--", "hnsdiag", "list", "loadbalancers"}},
		{"hns networks as a table", []string{"exec", "node/k8s-lab-win-1", "--lab", "--", "Get-HnsNetwork | Select-Object Name, Type, @{n='Subnet';e={$_.Subnets.AddressPrefix}}, @{n='Gateway';e={$_.Subnets.GatewayAddress}}, ManagementIP | Format-Table"}},
		{"a command that is not emulated", []string{"exec", "node/k8s-lab-node-2", "--lab", "--", "tcpdump", "-ni", "ens18"}},
		{"exec on a missing node", []string{"exec", "node/nope", "--lab", "--", "ip", "route"}},
		{"hns networks of the windows node", []string{"get", "hnsnetworks", "--node", "k8s-lab-win-1", "--lab"}},
		{"hns endpoints of the windows node", []string{"get", "hnsendpoints", "--node", "k8s-lab-win-1", "--lab"}},
		{"load balancers of the windows node", []string{"get", "loadbalancers", "--node", "k8s-lab-win-1", "--lab"}},
		{"routes of every node", []string{"get", "routes", "--lab"}},
		{"hns networks as json", []string{"get", "hnsnetworks", "--node", "k8s-lab-win-1", "-o", "json", "--lab"}},
		{"hns endpoints of a linux node", []string{"get", "hnsendpoints", "--node", "k8s-lab-node-1", "--lab"}},
		{"main cluster routes before the migration", []string{"exec", "node/k8s-node-1", "-f", "../../examples/main-cluster", "--", "ip", "route"}},
		{"main cluster routes after the migration", []string{"exec", "node/k8s-node-1", "-f", "../../examples/main-cluster", "-f", "../../examples/what-if/main-cluster-migrated.yaml", "--", "ip", "route"}},
		// An IPIP pool: BIRD's routes through tunl0, the device itself,
		// traces through it, and a migration's diff and plan from it.
		{"main cluster routes on an ipip pool", []string{"exec", "node/k8s-node-1", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml", "--", "ip", "route"}},
		{"main cluster addresses on an ipip pool", []string{"exec", "node/k8s-node-1", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml", "--", "ip", "addr"}},
		{"a host to a pod on another node on an ipip pool", []string{"trace", "node/k8s-node-1", "pod/calico-system/calico-webhooks-557b87bcb6-5kqn4", "--port", "6443", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml"}},
		{"a trace to another node on an ipip pool", []string{"trace", "pod/kube-system/coredns-55fd646b4-ggdcf", "pod/calico-system/calico-webhooks-557b87bcb6-5kqn4", "--port", "6443", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml"}},
		{"the migration plan of the main cluster on an ipip pool", []string{"plan", "migrate", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml"}},
		{"reach of the main cluster on an ipip pool", []string{"reach", "-A", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml"}},
		{"a diff from an ipip pool to vxlan", []string{"diff", "-f", "../../examples/main-cluster", "-f", "testdata/main-cluster-ipip.yaml", "--to", "../../examples/main-cluster", "--to", "../../examples/what-if/main-cluster-migrated.yaml"}},
		{"exec without a command", []string{"exec", "node/k8s-lab-node-2", "--lab"}},
		{"pods of demo with a finished job", []string{"get", "pods", "-n", "demo", "--lab", "-f", "../engine/testdata/finished-pods.yaml"}},
		{"resolve-dnsname srv on the windows node", []string{"exec", "node/k8s-lab-win-1", "--lab", "--", "Resolve-DnsName", "-Type", "SRV", "_http._tcp.hello.demo.svc.cluster.local", "-Server", "172.21.172.3"}},
		// Plain Kubernetes objects, no Cluster kind: the overlay Calico
		// would program, with the node network inferred and said so.
		{"ip route on a plain linux node", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--", "ip", "route"}},
		{"ip neigh on a plain linux node", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--", "ip", "neigh", "show", "dev", "vxlan.calico"}},
		{"bridge fdb on a plain linux node", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--", "bridge", "fdb", "show", "dev", "vxlan.calico"}},
		{"vxlan link on a plain linux node", []string{"exec", "node/lnx-02", "-f", "../../examples/plain", "--", "ip", "-d", "link", "show", "vxlan.calico"}},
		{"ip route on a plain node with the node network stated", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--node-network", "10.20.0.0/16", "--node-gateway", "10.20.0.1", "--", "ip", "route"}},
		{"a node network that is no cidr", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--node-network", "10.20.0.0", "--", "ip", "route"}},
		{"a node gateway outside the node network", []string{"exec", "node/lnx-01", "-f", "../../examples/plain", "--node-network", "10.20.0.0/24", "--node-gateway", "10.30.0.1", "--", "ip", "route"}},
		{"routes of every plain node", []string{"get", "routes", "-f", "../../examples/plain"}},
		// kubectl's printers (k8s.io/kubectl/pkg/cmd/get) on the twin's kinds.
		{"pod addresses as jsonpath", []string{"get", "pods", "-A", "-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\t\"}{.status.podIP}{\"\\n\"}{end}", "--lab"}},
		{"pods as custom columns sorted by node", []string{"get", "pods", "-A", "--sort-by", ".spec.nodeName", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IP:.status.podIP", "--lab"}},
		{"pods sorted by address", []string{"get", "pods", "-A", "--sort-by", "{.status.podIP}", "--no-headers", "--lab"}},
		{"hns endpoint addresses as jsonpath", []string{"get", "hnsendpoints", "--node", "k8s-lab-win-1", "-o", "jsonpath={.items[*].spec.ipAddress}", "--lab"}},
		{"hns endpoints as custom columns sorted by address", []string{"get", "hnsep", "--node", "k8s-lab-win-1", "--sort-by", ".spec.ipAddress", "-o", "custom-columns=IP:.spec.ipAddress,KIND:.spec.kind,NODE:.metadata.labels.kubernetes\\.io/hostname", "--lab"}},
		{"routes sorted by destination with labels", []string{"get", "routes", "--node", "k8s-lab-node-1", "--sort-by", ".spec.destination", "--show-labels", "--lab"}},
		{"hns networks and endpoints together", []string{"get", "hnsnetworks,hnsendpoints", "--node", "k8s-lab-win-1", "--lab"}},
		{"hns networks as yaml", []string{"get", "hnsnet", "--node", "k8s-lab-win-1", "-o", "yaml", "--lab"}},
		{"hns network names", []string{"get", "hnsnetworks", "-o", "name", "--lab"}},
		{"load balancers by go-template", []string{"get", "lb", "--node", "k8s-lab-win-1", "-o", "go-template={{range .items}}{{.spec.service}} {{.spec.vip}}{{\"\\n\"}}{{end}}", "--lab"}},
		{"everything in demo", []string{"get", "all", "-n", "demo", "--lab"}},
		{"a sort by a map field", []string{"get", "pods", "-A", "--sort-by", ".metadata.labels", "--lab"}},
		{"a sort by a field no pod has", []string{"get", "pods", "-A", "--sort-by", ".spec.nope", "--lab"}},
		{"a bad jsonpath", []string{"get", "pods", "-o", "jsonpath={.items[", "--lab"}},
		{"the node flag on pods", []string{"get", "pods", "--node", "k8s-lab-win-1", "--lab"}},
		{"the version as xml", []string{"version", "-o", "xml"}},
		// kubectl's describers (k8s.io/kubectl/pkg/describe) on the twin.
		{"describe the hello pods by prefix", []string{"describe", "pods", "hello", "-n", "demo", "--lab"}},
		{"describe the hello service", []string{"describe", "svc/hello", "-n", "demo", "--lab"}},
		{"describe the ip pools", []string{"describe", "ippools", "--lab"}},
		{"describe the windows node's hns networks", []string{"describe", "hnsnetworks", "--node", "k8s-lab-win-1", "--lab"}},
		{"describe a missing pod", []string{"describe", "pod", "nope", "-n", "demo", "--lab"}},
		{"describe an unknown resource type", []string{"describe", "widgets", "--lab"}},
		{"trace across plain linux nodes", []string{"trace", "-n", "web", "pod/nginx-cffbb69fd-cl8gg", "pod/nginx-cffbb69fd-gcxrz", "--port", "80", "-f", "../../examples/plain"}},
		{"hns networks of the plain windows node", []string{"exec", "node/win-01", "-f", "../../examples/plain", "--", "Get-HnsNetwork | Select-Object Name, Type, @{n='Subnet';e={$_.Subnets.AddressPrefix}}, @{n='Gateway';e={$_.Subnets.GatewayAddress}}, ManagementIP | Format-Table"}},
		{"trace from the plain windows node to a linux pod", []string{"trace", "node/win-01", "pod/web/nginx-cffbb69fd-gcxrz", "--port", "80", "-f", "../../examples/plain"}},
		// A second Windows node joined without an observed VTEP MAC: every
		// view shows the one placeholder MAC.
		{"second windows node lab walkthrough", []string{"lab", "-f", secondWindows}},
		{"second windows node ip neigh on node-1", []string{"exec", "node/k8s-lab-node-1", "--lab", "-f", secondWindows, "--", "ip", "neigh", "show", "dev", "vxlan.calico"}},
		{"second windows node bridge fdb on node-1", []string{"exec", "node/k8s-lab-node-1", "--lab", "-f", secondWindows, "--", "bridge", "fdb", "show", "dev", "vxlan.calico"}},
		{"second windows node hns networks of win-1 as json", []string{"get", "hnsnetworks", "--node", "k8s-lab-win-1", "-o", "json", "--lab", "-f", secondWindows}},
		{"second windows node remote subnet routes on win-1", []string{"exec", "node/k8s-lab-win-1", "--lab", "-f", secondWindows, "--", "Get-HnsNetwork | Where-Object Name -eq Calico | Select-Object -ExpandProperty Policies | Format-List"}},
		{"second windows node get-netadapter on win-2", []string{"exec", "node/k8s-lab-win-2", "--lab", "-f", secondWindows, "--", "Get-NetAdapter"}},
		{"second windows node hns endpoints of win-1", []string{"get", "hnsendpoints", "--node", "k8s-lab-win-1", "--lab", "-f", secondWindows}},
		{"second windows node check", []string{"check", "--lab", "-f", secondWindows}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(tc.args, " "), out, errOut, code)
			goldenFile(t, strings.ReplaceAll(tc.name, " ", "-")+".txt", got)
		})
	}
}

func TestBadInputExitsTwoWithOneMessageNamingTheFile(t *testing.T) {
	dir := filepath.Join("..", "load", "testdata", "bad")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			path := filepath.Join(dir, e.Name())
			out, errOut, code := run(t, "", "get", "pods", "-f", path)
			if code != ExitBadInput {
				t.Fatalf("exit code %d, want %d; stderr %q", code, ExitBadInput, errOut)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got %q", out)
			}
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], path) {
				t.Errorf("want one line naming %s, got %q", path, errOut)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
				t.Errorf("stack trace on stderr: %q", errOut)
			}
		})
	}
}

func TestStdinIsReadWithDash(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n"
	out, errOut, code := run(t, in, "get", "ns", "from-stdin", "-f", "-", "-o", "name")
	if code != 0 || out != "namespace/from-stdin\n" {
		t.Fatalf("code %d, out %q, err %q", code, out, errOut)
	}
}

func TestTheVersionCommandNamesWhatItModels(t *testing.T) {
	out, _, code := run(t, "", "version")
	if code != 0 || !strings.HasPrefix(out, "kubectl-hybrid ") || !strings.Contains(out, "Kubernetes 1.37") {
		t.Fatalf("code %d, out %q", code, out)
	}
}

// The final `kubectl get nodes -o wide` of seed 000, at the moment it ran.
const seedNodesWide = `NAME               STATUS   ROLES           AGE    VERSION   INTERNAL-IP     EXTERNAL-IP   OS-IMAGE                         KERNEL-VERSION             CONTAINER-RUNTIME
k8s-lab-master-1   Ready    control-plane   153m   v1.37.2   192.168.10.23   <none>        Ubuntu 26.04.1 LTS               7.0.0-42-generic (amd64)   containerd://2.2.2
k8s-lab-node-1     Ready    <none>          146m   v1.37.2   192.168.10.24   <none>        Ubuntu 26.04.1 LTS               7.0.0-42-generic (amd64)   containerd://2.2.2
k8s-lab-node-2     Ready    <none>          146m   v1.37.2   192.168.10.26   <none>        Ubuntu 26.04.1 LTS               7.0.0-42-generic (amd64)   containerd://2.2.2
k8s-lab-win-1      Ready    <none>          64m    v1.37.2   192.168.10.25   <none>        Windows Server 2025 Datacenter   10.0.26100.33438 (amd64)   containerd://2.2.2
`

func TestGetNodesWideReproducesTheSeed(t *testing.T) {
	out, errOut, code := run(t, "", "get", "nodes", "-o", "wide", "--lab")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != seedNodesWide {
		t.Errorf("differs from seed 000:\n%s", lineDiff(seedNodesWide, out))
	}
	if !strings.Contains(readSeed(t), strings.Split(seedNodesWide, "\n")[4]) {
		t.Errorf("the expectation is not the seed's text any more")
	}
}

func readSeed(t *testing.T) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "seeds", "000_*.txt"))
	if len(matches) == 0 {
		t.Skip("seed articles are not beside the checkout")
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestYAMLOutputReadsBackToTheSameCluster(t *testing.T) {
	kinds := "nodes,ns,pods,svc,ds,deploy,rs,endpointslices,runtimeclasses,cm,csr,ippools,ipamblocks,blockaffinities,ipamconfigurations,tigerastatus,installation"
	dump, errOut, code := run(t, "", "get", kinds, "-A", "-o", "yaml", "--lab")
	if code != 0 {
		t.Fatalf("dump failed (%d): %s", code, errOut)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(path, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"get", "ipamblocks"},
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "ds", "-A"},
		{"get", "tigerastatus"},
		{"get", "nodes", "-o", "wide"},
		{"get", "svc", "-A"},
	} {
		fromLab, _, _ := run(t, "", append(args, "--lab")...)
		fromDump, errOut, code := run(t, "", append(args, "-f", path)...)
		if code != 0 || fromLab != fromDump {
			t.Errorf("%v differs after a round trip (exit %d, %s):\n%s", args, code, errOut, lineDiff(fromLab, fromDump))
		}
	}
}
