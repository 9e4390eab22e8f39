package reach

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	labfs "github.com/kubectl-hybrid/kubectl-hybrid/examples/lab"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

var _ = golden.Update

// What-ifs layered on the lab, as -f files would be.
const (
	denyAllIngress = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all-ingress, namespace: win-demo}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`
	allowFromDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-from-demo, namespace: win-demo}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: aspnetapp}}
  ingress:
    - from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: demo}}}]
`
	egressDNSOnly = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress-dns-only, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{namespaceSelector: {}, podSelector: {matchLabels: {k8s-app: kube-dns}}}]
      ports: [{port: 53, protocol: UDP}]
`
	windowsEgressToDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: to-demo-only, namespace: win-demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: demo}}}]
      ports: [{port: 8080}]
`
	fromNode1Block = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-node-1-block, namespace: demo}
spec:
  podSelector: {}
  ingress:
    - from: [{ipBlock: {cidr: 172.21.211.0/26}}]
`
	namedPortOnWindows = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: http-only, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - ports: [{port: http}]
`
	calicoDenyFromDemo = `apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: deny-demo, namespace: win-demo}
spec:
  selector: app.kubernetes.io/name == 'aspnetapp'
  types: [Ingress]
  ingress:
    - action: Deny
      source:
        namespaceSelector: projectcalico.org/name == 'demo'
    - action: Allow
`
	serviceWithoutEndpoints = `apiVersion: v1
kind: Service
metadata: {name: nothing, namespace: demo}
spec:
  clusterIP: 10.97.0.99
  selector: {app: none}
  ports: [{port: 81}]
`
	serviceLocal = `apiVersion: v1
kind: Service
metadata: {name: hello-local, namespace: demo}
spec:
  clusterIP: 10.97.0.98
  internalTrafficPolicy: Local
  selector: {app.kubernetes.io/name: hello}
  ports: [{port: 80, targetPort: http}]
`
)

// labWithFirewall is the lab's Cluster kind with firewall rules added.
func labWithFirewall(t testing.TB, rules string) string {
	t.Helper()
	b, err := labfs.FS.ReadFile("00-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), "    firewall:\n", "    firewall:\n"+rules, 1)
}

const vxlanBlockedIntoLinux = `      - name: no-vxlan-into-linux
        hosts: [k8s-lab-master-1, k8s-lab-node-1, k8s-lab-node-2]
        protocol: UDP
        ports: [4789]
        action: Block
`

func filters(t testing.TB, specs ...string) []classes.Filter {
	t.Helper()
	var out []classes.Filter
	for _, s := range specs {
		f, err := classes.ParseFilter(s, "default")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// cellOf finds the cell of a source and a destination by their labels
// (and the destination's port, 0 for any).
func cellOf(t *testing.T, m *Matrix, from, to string, port int) (Cell, Reason) {
	t.Helper()
	for i, s := range m.Sources {
		if s.Label != from {
			continue
		}
		for j, d := range m.Destinations {
			if d.Label == to && (port == 0 || d.Port == port) {
				c := m.At(i, j)
				r := Reason{}
				r.Text, r.Hop = m.Why(c)
				return c, r
			}
		}
	}
	t.Fatalf("no cell %s → %s:%d", from, to, port)
	return Cell{}, Reason{}
}

func text(t *testing.T, m *Matrix) string {
	t.Helper()
	var b bytes.Buffer
	if err := printers.text(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name), got)
}

func TestTheLabMatrixAllowsEveryPairOfClassesByDefault(t *testing.T) {
	e := lab(t)
	m, err := Compute(e, Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, s := range m.Sources {
		rows = append(rows, fmt.Sprintf("%s (%d)", s.Label, len(s.Pods)))
	}
	want := "calico-system/calico-kube-controllers (1), calico-system/calico-webhooks (2), calico-system/csi-node-driver (3), " +
		"demo/hello (2), kube-system/coredns (2), win-demo/aspnetapp (2)"
	if got := strings.Join(rows, ", "); got != want {
		t.Errorf("classes:\n got %s\nwant %s", got, want)
	}
	for i, s := range m.Sources {
		for j, d := range m.Destinations {
			c := m.At(i, j)
			switch {
			case c.Verdict == Allowed:
			case c.Verdict == NotApplicable && d.noListen:
			default:
				t.Errorf("%s → %s %s: %s (%s)", s.Label, d.Label, d.PortLabel(), c.Verdict, m.Reasons[c.Reason].Text)
			}
		}
	}
	if m.Stats.Classes != 6 || m.Stats.Pods != 12 || m.Stats.NodeGroups != 2 {
		t.Errorf("stats %+v", m.Stats)
	}
	verifyAgainstTraces(t, e, m, 0)
	checkGolden(t, "lab-all-namespaces.txt", text(t, m))
}

// scenario is a what-if on the lab: the cells it must produce, and every
// cell compared with full traces between every pair of its pods.
type scenario struct {
	name  string
	extra []string
	opt   Options
	cells []wantCell
	// golden names a golden file of the text output.
	golden string
}

type wantCell struct {
	from, to string
	port     int
	verdict  Verdict
	reason   string // a substring of the reason, when not empty
}

func TestWhatIfsOnTheLab(t *testing.T) {
	cases := []scenario{
		{
			name:  "a deny-all ingress policy in win-demo blocks Linux pods and Linux nodes but not the Windows node's own pods",
			extra: []string{denyAllIngress},
			opt:   Options{AllNamespaces: true, Nodes: true, To: filters(t, "ns/win-demo")},
			cells: []wantCell{
				{"demo/hello", "win-demo/aspnetapp", 8080, Denied, "selected for ingress by win-demo/deny-all-ingress"},
				{"demo/hello", "svc/win-demo/aspnetapp", 80, Denied, "selected for ingress by win-demo/deny-all-ingress"},
				{"kube-system/coredns", "win-demo/aspnetapp", 8080, Denied, ""},
				{"win-demo/aspnetapp", "win-demo/aspnetapp", 8080, Denied, ""},
				{"node/k8s-lab-node-1", "win-demo/aspnetapp", 8080, Denied, "vxlan.calico of k8s-lab-node-1"},
				{"node/k8s-lab-win-1", "win-demo/aspnetapp", 8080, Allowed, "the host's own traffic to its pods"},
				{"node/k8s-lab-win-1", "svc/win-demo/aspnetapp", 80, Denied, "a Windows host cannot reach ClusterIPs"},
			},
			golden: "deny-all-ingress-win-demo.txt",
		},
		{
			name:  "an ingress rule from namespace demo re-allows hello and nothing else",
			extra: []string{denyAllIngress, allowFromDemo},
			opt:   Options{AllNamespaces: true, Nodes: true, To: filters(t, "ns/win-demo")},
			cells: []wantCell{
				{"demo/hello", "win-demo/aspnetapp", 8080, Allowed, "allowed by NetworkPolicy win-demo/allow-from-demo ingress rule 0"},
				{"demo/hello", "svc/win-demo/aspnetapp", 80, Allowed, ""},
				{"kube-system/coredns", "win-demo/aspnetapp", 8080, Denied, "win-demo/allow-from-demo, win-demo/deny-all-ingress"},
				{"node/k8s-lab-win-1", "win-demo/aspnetapp", 8080, Allowed, ""},
				{"node/k8s-lab-node-2", "win-demo/aspnetapp", 8080, Denied, ""},
			},
			golden: "allow-from-demo.txt",
		},
		{
			name: "a Windows host cannot reach ClusterIPs but reaches pods, and Linux hosts reach both",
			opt:  Options{AllNamespaces: true, Nodes: true, From: filters(t, "node/k8s-lab-win-1", "node/k8s-lab-node-1"), To: filters(t, "ns/demo", "ns/kube-system")},
			cells: []wantCell{
				{"node/k8s-lab-win-1", "svc/demo/hello", 80, Denied, "a Windows host cannot reach ClusterIPs"},
				{"node/k8s-lab-win-1", "svc/kube-system/kube-dns", 53, Denied, "a Windows host cannot reach ClusterIPs"},
				{"node/k8s-lab-win-1", "demo/hello", 8080, Allowed, ""},
				{"node/k8s-lab-node-1", "svc/demo/hello", 80, Allowed, ""},
			},
			golden: "windows-host.txt",
		},
		{
			name:  "egress limited to DNS over UDP denies hello everything else",
			extra: []string{egressDNSOnly},
			opt:   Options{AllNamespaces: true, From: filters(t, "ns/demo")},
			cells: []wantCell{
				{"demo/hello", "svc/kube-system/kube-dns", 53, Denied, ""},
				{"demo/hello", "win-demo/aspnetapp", 8080, Denied, "selected for egress by demo/egress-dns-only"},
				{"demo/hello", "demo/hello", 8080, Denied, "selected for egress"},
			},
		},
		{
			name:  "a Windows pod's egress policy is its endpoint's outbound ACLs",
			extra: []string{windowsEgressToDemo},
			opt:   Options{AllNamespaces: true, From: filters(t, "ns/win-demo")},
			cells: []wantCell{
				{"win-demo/aspnetapp", "demo/hello", 8080, Allowed, "allowed by NetworkPolicy win-demo/to-demo-only egress rule 0"},
				{"win-demo/aspnetapp", "svc/demo/hello", 80, Allowed, ""},
				{"win-demo/aspnetapp", "svc/kube-system/kube-dns", 53, Denied, "selected for egress by win-demo/to-demo-only"},
			},
		},
		{
			name:  "an ipBlock over one node's IPAM block splits hello into two classes",
			extra: []string{fromNode1Block},
			opt:   Options{AllNamespaces: true, To: filters(t, "ns/demo")},
			cells: []wantCell{
				{"demo/hello[k8s-lab-node-1]", "demo/hello[k8s-lab-node-2]", 8080, Allowed, "from-node-1-block"},
				{"demo/hello[k8s-lab-node-2]", "demo/hello[k8s-lab-node-1]", 8080, Denied, "no rule allows TCP/8080"},
				{"win-demo/aspnetapp", "demo/hello[k8s-lab-node-1]", 8080, Denied, ""},
			},
			golden: "ipblock-splits-classes.txt",
		},
		{
			name:  "a named port the Windows ACLs skip denies what Kubernetes semantics allow",
			extra: []string{namedPortOnWindows},
			opt:   Options{AllNamespaces: true, To: filters(t, "ns/win-demo")},
			cells: []wantCell{
				{"demo/hello", "win-demo/aspnetapp", 8080, Denied, "Calico on Windows does not program every rule"},
			},
		},
		{
			name:  "a Calico policy selecting a Windows pod is its endpoint's ACLs, and Felix's calculation agrees with them",
			extra: []string{calicoDenyFromDemo},
			opt:   Options{AllNamespaces: true, Nodes: true, To: filters(t, "ns/win-demo")},
			cells: []wantCell{
				{"demo/hello", "win-demo/aspnetapp", 8080, Denied, "denied by projectcalico.org NetworkPolicy win-demo/deny-demo ingress rule 0"},
				{"demo/hello", "svc/win-demo/aspnetapp", 80, Denied, ""},
				{"kube-system/coredns", "win-demo/aspnetapp", 8080, Allowed, ""},
				{"node/k8s-lab-win-1", "win-demo/aspnetapp", 8080, Allowed, "allow-host-to-endpoint"},
			},
		},
		{
			name:  "a Service without endpoints is rejected by kube-proxy and dropped by HNS",
			extra: []string{serviceWithoutEndpoints},
			opt:   Options{AllNamespaces: true, To: filters(t, "svc/demo/nothing")},
			cells: []wantCell{
				{"demo/hello", "svc/demo/nothing", 81, Denied, "no ready endpoints"},
				{"win-demo/aspnetapp", "svc/demo/nothing", 81, Denied, ""},
			},
		},
		{
			name:  "internalTrafficPolicy Local reaches the backends on the source's node only",
			extra: []string{serviceLocal},
			opt:   Options{AllNamespaces: true, To: filters(t, "svc/demo/hello-local")},
			cells: []wantCell{
				{"demo/hello", "svc/demo/hello-local", 80, Allowed, ""},
				{"kube-system/coredns", "svc/demo/hello-local", 80, Partial, "internalTrafficPolicy Local"},
				{"calico-system/calico-webhooks", "svc/demo/hello-local", 80, Denied, "internalTrafficPolicy Local"},
			},
		},
		{
			name:  "a firewall dropping VXLAN into every Linux node splits the Linux node group by node",
			extra: []string{labWithFirewall(t, vxlanBlockedIntoLinux)},
			opt:   Options{AllNamespaces: true, To: filters(t, "ns/demo")},
			cells: []wantCell{
				{"demo/hello[k8s-lab-node-1]", "svc/demo/hello", 80, Partial, "no-vxlan-into-linux"},
				{"demo/hello[k8s-lab-node-1]", "demo/hello[k8s-lab-node-2]", 8080, Denied, "no-vxlan-into-linux"},
				{"win-demo/aspnetapp", "demo/hello[k8s-lab-node-1]", 8080, Denied, "no-vxlan-into-linux"},
			},
			golden: "vxlan-blocked-split.txt",
		},
		{
			name: "ICMP reaches every pod and no ClusterIP",
			opt:  Options{AllNamespaces: true, Proto: trace.ICMP, To: filters(t, "ns/demo", "ns/win-demo")},
			cells: []wantCell{
				{"demo/hello", "win-demo/aspnetapp", 0, Allowed, ""},
				{"win-demo/aspnetapp", "demo/hello", 0, Allowed, ""},
				{"demo/hello", "svc/demo/hello", 0, Denied, "answers only on its service ports"},
				{"win-demo/aspnetapp", "svc/demo/hello", 0, Denied, "VFP load balancers match TCP and UDP ports only"},
			},
		},
		{
			name: "a port nothing listens on is refused",
			opt:  Options{AllNamespaces: true, Port: 9999, To: filters(t, "ns/demo")},
			cells: []wantCell{
				{"win-demo/aspnetapp", "demo/hello", 9999, Denied, "nothing listens on TCP/9999"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := withExtra(t, tc.extra...)
			m, err := Compute(e, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.cells {
				c, r := cellOf(t, m, w.from, w.to, w.port)
				if c.Verdict != w.verdict || !strings.Contains(r.Text, w.reason) {
					t.Errorf("%s → %s:%d: %s (%s), want %s (…%s…)", w.from, w.to, w.port, c.Verdict, r.Text, w.verdict, w.reason)
				}
			}
			verifyAgainstTraces(t, e, m, 0)
			if tc.golden != "" {
				checkGolden(t, tc.golden, text(t, m))
			}
		})
	}
}

func TestFiltersSelectRowsAndColumns(t *testing.T) {
	e := lab(t)
	cases := []struct {
		name       string
		opt        Options
		rows, cols string
	}{
		{"the default namespace holds no pods, only the kubernetes Service", Options{}, "", "svc/default/kubernetes"},
		{"-n demo scopes rows and columns", Options{Namespace: "demo"}, "demo/hello", "demo/hello svc/demo/hello"},
		{"a label selector picks pods and the Services selecting them", Options{AllNamespaces: true, To: filters(t, "app.kubernetes.io/name=aspnetapp")},
			"calico-system/calico-kube-controllers calico-system/calico-webhooks calico-system/csi-node-driver demo/hello kube-system/coredns win-demo/aspnetapp",
			"win-demo/aspnetapp svc/win-demo/aspnetapp"},
		{"ns/NAME reaches beyond -n", Options{Namespace: "demo", From: filters(t, "ns/win-demo")}, "win-demo/aspnetapp", "demo/hello svc/demo/hello"},
		{"deploy/NS/NAME picks a workload's class", Options{From: filters(t, "deploy/kube-system/coredns"), To: filters(t, "svc/kube-system/kube-dns")},
			"kube-system/coredns", "svc/kube-system/kube-dns svc/kube-system/kube-dns svc/kube-system/kube-dns"},
		{"svc/NAME as a source picks the pods it selects", Options{From: filters(t, "svc/win-demo/aspnetapp"), To: filters(t, "ns/demo")},
			"win-demo/aspnetapp", "demo/hello svc/demo/hello"},
		{"pod/NS/NAME picks the pod's class", Options{From: filters(t, "pod/demo/hello-55fb8f8684-nztv2"), To: filters(t, "pod/demo/hello-55fb8f8684-nztv2")},
			"demo/hello", "demo/hello"},
		{"node/NAME adds one node row", Options{From: filters(t, "node/k8s-lab-win-1"), To: filters(t, "ns/demo")},
			"node/k8s-lab-win-1", "demo/hello svc/demo/hello"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compute(e, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var rows, cols []string
			for _, s := range m.Sources {
				rows = append(rows, s.Label)
			}
			for _, d := range m.Destinations {
				cols = append(cols, d.Label)
			}
			if got := strings.Join(rows, " "); got != tc.rows {
				t.Errorf("rows %q, want %q", got, tc.rows)
			}
			if got := strings.Join(cols, " "); got != tc.cols {
				t.Errorf("columns %q, want %q", got, tc.cols)
			}
		})
	}
}

func TestFilterSyntax(t *testing.T) {
	cases := []struct {
		in, kind, ns, name, err string
	}{
		{in: "ns/demo", kind: "ns", ns: "demo", name: "demo"},
		{in: "deploy/web", kind: "workload", ns: "default", name: "web"},
		{in: "sts/db/postgres", kind: "workload", ns: "db", name: "postgres"},
		{in: "svc/kube-system/kube-dns", kind: "svc", ns: "kube-system", name: "kube-dns"},
		{in: "node/k8s-lab-win-1", kind: "node", name: "k8s-lab-win-1"},
		{in: "app.kubernetes.io/name=hello", kind: "labels"},
		{in: "app.kubernetes.io/name", kind: "labels"},
		{in: "tier in (web,api),!canary", kind: "labels"},
		{in: "pod/a/b/c", err: "use pod/NAME or pod/NAMESPACE/NAME"},
		{in: "ns/", err: "use ns/NAME"},
		{in: "app=(", err: "neither KIND/NAME nor a label selector"},
	}
	for _, tc := range cases {
		f, err := classes.ParseFilter(tc.in, "default")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want …%s…", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || f.Kind != tc.kind || f.NS != tc.ns || f.Name != tc.name {
			t.Errorf("%q: %+v %v", tc.in, f, err)
		}
	}
}

func TestJSONAndCSVListEveryCell(t *testing.T) {
	e := withExtra(t, denyAllIngress)
	m, err := Compute(e, Options{AllNamespaces: true, From: filters(t, "ns/demo", "node/k8s-lab-win-1"), To: filters(t, "ns/win-demo")})
	if err != nil {
		t.Fatal(err)
	}
	var j, c bytes.Buffer
	if err := printers.json(&j, m); err != nil {
		t.Fatal(err)
	}
	if err := printers.csv(&c, m); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "deny-all-ingress.json", j.String())
	checkGolden(t, "deny-all-ingress.csv", c.String())
}

// Every class pair's policy decision equals the Felix calculation's for
// its representative pods, and every Windows endpoint's compiled ACLs
// equal the trace engine's.
func TestClassDecisionsMatchTheFelixCalculationAndTheACLs(t *testing.T) {
	e := withExtra(t, denyAllIngress, allowFromDemo, egressDNSOnly, windowsEgressToDemo, fromNode1Block, namedPortOnWindows, calicoDenyFromDemo)
	checkDecisions(t, e, 0)
}

func TestASyntheticClusterMatchesSampledTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-pod cluster")
	}
	e := synthEngine(t)
	m, err := Compute(e, Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Stats.Pods < 9500 {
		t.Fatalf("only %d pods", m.Stats.Pods)
	}
	n := verifyAgainstTraces(t, e, m, 400)
	t.Logf("%d pods in %d classes on %d node groups: %d cells, %d representative traces; %d sampled pairs agree with full traces",
		m.Stats.Pods, m.Stats.Classes, m.Stats.NodeGroups, m.NumCells(), m.Stats.Traces, n)
	checkDecisions(t, e, 3000)
}

func TestAGeneratedClusterMatchesSampledTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated cluster")
	}
	e := genEngine(t, 1500)
	for _, opt := range []Options{{AllNamespaces: true, Nodes: true}, {AllNamespaces: true, Proto: trace.UDP}, {AllNamespaces: true, Proto: trace.ICMP}} {
		m, err := Compute(e, opt)
		if err != nil {
			t.Fatal(err)
		}
		n := verifyAgainstTraces(t, e, m, 1500)
		t.Logf("%q (\"\": tcp and udp), nodes %t: %d classes, %d cells, %d sampled pairs agree with full traces", opt.Proto, opt.Nodes, m.Stats.Classes, m.NumCells(), n)
	}
	checkDecisions(t, e, 3000)
}

// With HYBRID_REACH_APPS=1600 (about 150,000 pods; builds in a minute or
// two and needs some 3 GB): the whole-cluster matrix against sampled
// traces and decisions.
func TestALargeSyntheticClusterMatchesSampledTraces(t *testing.T) {
	apps, _ := strconv.Atoi(os.Getenv("HYBRID_REACH_APPS"))
	if apps <= 0 {
		t.Skip("set HYBRID_REACH_APPS (1600: about 150,000 pods)")
	}
	e, err := buildEngine(synthetic(apps, apps/10, apps, 90, 20), widePool)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compute(e, Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods in %d classes: %v", m.Stats.Pods, m.Stats.Classes, m.Counts())
	verifyAgainstTraces(t, e, m, 300)
	checkDecisions(t, e, 2000)
}

func TestPolicyACLNamesDropTheirStandInHash(t *testing.T) {
	for _, c := range [][2]string{
		{"policy-KubernetesNetworkPolicy/win-demo/to-demo-only-0GpfrNvAljnTWdzL-0", "policy-KubernetesNetworkPolicy/win-demo/to-demo-only, ACL 0"},
		{"allow-host-to-endpoint", "allow-host-to-endpoint"},
		{"profile-kns.win-demo-MQEUCbpjktS8xYB5-0", "profile-kns.win-demo-MQEUCbpjktS8xYB5-0"},
	} {
		if got := classes.StableID(c[0]); got != c[1] {
			t.Errorf("%s: %s, want %s", c[0], got, c[1])
		}
	}
}

// cellText is a cell as the output shows it: verdict and reason texts.
func cellText(m *Matrix, c Cell) string {
	s := c.Verdict.String()
	if c.Reason >= 0 {
		s += ": " + m.Reasons[c.Reason].Hop + " " + m.Reasons[c.Reason].Text
	}
	if c.Also >= 0 {
		s += "; " + m.Reasons[c.Also].Hop + " " + m.Reasons[c.Also].Text
	}
	return s
}

func TestRowsCopiedFromTemplatesAreTheRowsComputedCellByCell(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated cluster")
	}
	cases := []struct {
		name string
		e    *trace.Engine
		opt  Options
	}{
		{"a generated cluster of 3,000 pods", genEngine(t, 3000), Options{AllNamespaces: true}},
		{"the same with node rows, UDP", genEngine(t, 3000), Options{AllNamespaces: true, Nodes: true, Proto: trace.UDP}},
		{"the lab with policies and Windows ACLs", withExtra(t, denyAllIngress, allowFromDemo, egressDNSOnly, windowsEgressToDemo, fromNode1Block, namedPortOnWindows), Options{AllNamespaces: true, Nodes: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(tc.e, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			full := tc.opt
			full.everyCell = true
			want, err := Compute(tc.e, full)
			if err != nil {
				t.Fatal(err)
			}
			if got.NumCells() != want.NumCells() || len(got.Sources) != len(want.Sources) {
				t.Fatalf("%d cells, %d cell by cell", got.NumCells(), want.NumCells())
			}
			diff := 0
			var buf []Cell
			for i := range got.Sources {
				row := got.Row(i, buf)
				for j := range got.Destinations {
					g, w := cellText(got, got.At(i, j)), cellText(want, want.At(i, j))
					if r := cellText(got, row[j]); r != g {
						t.Errorf("%s → %s: the row gives %q, the cell %q", got.Sources[i].Label, got.Destinations[j].Label, r, g)
					}
					if g != w {
						if diff++; diff <= 5 {
							t.Errorf("%s → %s: copied %q, computed %q", got.Sources[i].Label, got.Destinations[j].Label, g, w)
						}
					}
				}
			}
			if diff > 0 {
				t.Errorf("%d of %d cells differ", diff, got.NumCells())
			}
			if got.Stats.Templates >= len(got.Sources) {
				t.Errorf("%d templates for %d rows: nothing was copied", got.Stats.Templates, len(got.Sources))
			}
			if got.Stats.Stored >= got.Stats.Cells || want.Stats.Stored != want.Stats.Cells {
				t.Errorf("%d of %d cells held, %d of %d cell by cell: copied rows should hold only their differences", got.Stats.Stored, got.Stats.Cells, want.Stats.Stored, want.Stats.Cells)
			}
			t.Logf("%d rows from %d templates, %d cells, %d held", len(got.Sources), got.Stats.Templates, got.NumCells(), got.Stats.Stored)
		})
	}
}
