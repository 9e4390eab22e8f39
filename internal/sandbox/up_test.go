package sandbox

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// TestMain lets the test binary stand in for kubectl-hybrid inside the
// namespaces: "sandbox serve …" and "sandbox probe …" as the command
// runs them, and "sandbox-test-up DIR" for the interrupted-up test.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" {
		os.Exit(helperMain(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) > 2 && os.Args[1] == "sandbox-test-up" {
		c, nodes := lab(nil)
		p, err := Build(c, nodes, Zone(c), Options{Prefix: testPrefix})
		if err == nil {
			x := &Executor{StateDir: os.Args[2], Self: os.Args[0]}
			err = x.Up(p)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helperMain(sub string, args []string) int {
	fs := flag.NewFlagSet(sub, flag.ContinueOnError)
	name := fs.String("name", "", "")
	tcp := fs.String("tcp", "", "")
	udp := fs.String("udp", "", "")
	zone := fs.String("dns-zone", "", "")
	ready := fs.String("ready", "", "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch sub {
	case "serve":
		o := ServeOptions{Name: *name, TCP: intList(*tcp), UDP: intList(*udp)}
		if *zone != "" {
			z, err := ReadZone(*zone)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
			o.Zone = append([]ZoneEntry{}, z...)
		}
		err := Serve(context.Background(), o, func() { _ = os.WriteFile(*ready, []byte("ready\n"), 0o644) })
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		return 0
	case "probe":
		a := fs.Args()
		var r ProbeResult
		switch {
		case len(a) == 2 && a[0] == "tcp":
			r = ProbeStream(a[1], time.Second)
		case len(a) == 2 && a[0] == "udp":
			r = ProbeDatagram(a[1], time.Second)
		case len(a) == 3 && a[0] == "dns":
			r = ProbeDNS(a[1], a[2], time.Second)
		default:
			return 2
		}
		fmt.Printf(`{"outcome":%q,"reply":%q,"rcode":%d,"addrs":[%s]}`+"\n", r.Outcome, r.Reply, r.Rcode, quoteList(r.Addrs))
		return 0
	}
	return 2
}

func intList(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ",")
}

// testPrefix keeps the tests' namespaces apart from a user's kh- sandbox.
const testPrefix = "kht-"

// needNamespaces skips the test where network namespaces cannot be made.
func needNamespaces(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("creates network namespaces")
	}
	if err := NamespacesAvailable(testPrefix); err != nil {
		t.Skipf("skipped: %v", err)
	}
	if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), testPrefix) {
		t.Skipf("skipped: namespaces with the prefix %s exist (another run?)", testPrefix)
	}
}

// hostState is what the sandbox must never change in the host's own
// namespace.
func hostState(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, argv := range [][]string{{"ip", "route"}, {"ip", "-o", "addr"}, {"ip", "-o", "link"}, {"nft", "list", "ruleset"}} {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v: %s", argv, err, out)
		}
		fmt.Fprintf(&b, "$ %s\n%s", strings.Join(argv, " "), out)
	}
	return b.String()
}

func inNS(t *testing.T, ns string, argv ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s in %s: %v: %s", strings.Join(argv, " "), ns, err, out)
	}
	return string(out)
}

// lineSet is the lines sorted: the kernel's neighbour and FDB dumps come
// in hash and list order the twin cannot know.
func lineSet(s string) string {
	var l []string
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimRight(line, " "); line != "" {
			l = append(l, line)
		}
	}
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// nftTokens is a ruleset as a sorted multiset of its comma- and
// brace-separated pieces: the elements of a set in any order, and chain
// priorities as numbers (nft prints a symbolic name only where its version
// accepts one for the hook).
func nftTokens(s string) string {
	s = nftScriptText(s)
	var toks []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '{' || r == '}' || r == '\n' }) {
		if f = strings.Join(strings.Fields(f), " "); f != "" {
			toks = append(toks, f)
		}
	}
	sort.Strings(toks)
	return strings.Join(toks, "\n")
}

func TestUpPlaysTheTwinOnTheKernelAndDownLeavesNothing(t *testing.T) {
	needNamespaces(t)
	before := hostState(t)
	c, nodes := lab(t)
	p, err := Build(c, nodes, Zone(c), Options{Prefix: testPrefix})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	x := &Executor{StateDir: state, Self: os.Args[0]}
	t.Cleanup(func() { _, _ = x.Down(testPrefix) })
	if err := x.Up(p); err != nil {
		t.Fatal(err)
	}

	tw := console.FromCluster(c)
	ns := testPrefix + "k8s-lab-node-2"
	for _, tc := range []struct {
		name  string
		argv  []string
		equal func(string) string
	}{
		{"ip route is the twin's, byte for byte", []string{"ip", "route"}, func(s string) string { return s }},
		{"ip neigh of vxlan.calico holds the twin's entries", []string{"ip", "neigh", "show", "dev", "vxlan.calico"}, lineSet},
		{"bridge fdb of vxlan.calico holds the twin's entries", []string{"bridge", "fdb", "show", "dev", "vxlan.calico"}, lineSet},
		{"kube-proxy's table holds the twin's sets, maps and rules", []string{"nft", "list", "table", "ip", "kube-proxy"}, nftTokens},
		{"Felix's table holds the twin's sets, chains and rules", []string{"nft", "list", "table", "ip", "calico"}, nftTokens},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := console.Exec(tw, console.Target{Kind: console.KindNode, Name: "k8s-lab-node-2"}, tc.argv)
			if err != nil || out.Code != 0 {
				t.Fatalf("the twin's %v exits %d: %v", tc.argv, out.Code, err)
			}
			twin := out.Stdout
			real := inNS(t, ns, tc.argv...)
			if got, want := tc.equal(real), tc.equal(twin); got != want {
				t.Errorf("real and twin differ (- twin, + real):\n%s", golden.Diff(want, got))
			}
		})
	}

	e, err := trace.New(c)
	if err != nil {
		t.Fatal(err)
	}
	probes, _ := Probes(p, c, ProbeOptions{})
	res := RunProbes(probes, e, &Runner{Self: os.Args[0]}, p.StandIns())
	var out strings.Builder
	_ = WriteResults(&out, res, false)
	if !strings.HasSuffix(out.String(), fmt.Sprintf("sandbox: %d/%d probes agree\n", len(res), len(res))) {
		t.Errorf("probes disagree:\n%s", out.String())
	}
	// The seed's TTLs seen by real ping: one forward on each node between
	// pods, one between a node and a pod on another node.
	for _, tc := range []struct {
		from, to string
		ttl      int
	}{
		{"pod/demo/hello-55fb8f8684-69mvv", "pod/kube-system/coredns-8f97fdbd9-9gc9h", 62},
		{"pod/demo/hello-55fb8f8684-69mvv", "pod/demo/hello-55fb8f8684-nztv2", 62},
		{"node/k8s-lab-node-1", "pod/demo/hello-55fb8f8684-nztv2", 63},
		{"pod/demo/hello-55fb8f8684-nztv2", "node/k8s-lab-node-2", 64},
	} {
		found := false
		for _, r := range res {
			if r.Probe.Proto == trace.ICMP && r.Probe.From == tc.from && r.Probe.To == tc.to {
				found = true
				if r.Real.TTL != tc.ttl {
					t.Errorf("ping %s → %s: ttl %d, want %d", tc.from, tc.to, r.Real.TTL, tc.ttl)
				}
			}
		}
		if !found {
			t.Errorf("no ping %s → %s among the probes", tc.from, tc.to)
		}
	}

	removed, err := x.Down(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != len(p.Namespaces) {
		t.Errorf("down removed %d namespaces, up created %d", len(removed), len(p.Namespaces))
	}
	assertNothingLeft(t, state)
	if after := hostState(t); after != before {
		t.Errorf("the host's namespace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// nftScriptText writes a listing's symbolic priorities as numbers, as
// nftScript does for the script it loads.
func nftScriptText(s string) string {
	return priorityRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := priorityRE.FindStringSubmatch(m)
		v := stdPriority[sub[1]]
		if sub[2] != "" {
			var d int
			fmt.Sscan(strings.TrimSpace(sub[2][2:]), &d)
			if strings.Contains(sub[2], "-") {
				v -= d
			} else {
				v += d
			}
		}
		return fmt.Sprintf("priority %d;", v)
	})
}

func assertNothingLeft(t *testing.T, state string) {
	t.Helper()
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), testPrefix) {
		t.Errorf("namespaces left: %s", out)
	}
	if _, err := os.Stat(filepath.Join(state, testPrefix)); err == nil {
		t.Errorf("state left in %s", filepath.Join(state, testPrefix))
	}
	if out, _ := exec.Command("pgrep", "-f", "sandbox serve --name").Output(); len(out) > 0 {
		// Only servers of this test binary count.
		for _, pid := range strings.Fields(string(out)) {
			if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), os.Args[0]) {
				t.Errorf("server %s left running", pid)
			}
		}
	}
}

func TestDownAfterAnInterruptedUpLeavesNothing(t *testing.T) {
	needNamespaces(t)
	before := hostState(t)
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "sandbox-test-up", state)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	x := &Executor{StateDir: state}
	t.Cleanup(func() { _, _ = x.Down(testPrefix) })
	// Kill up once it has created a few namespaces.
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(state, testPrefix, "namespaces"))
		if strings.Count(string(b), "\n") >= 4 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("up created no namespaces within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	removed, err := x.Down(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) < 3 {
		t.Errorf("down removed %v", removed)
	}
	assertNothingLeft(t, state)
	if after := hostState(t); after != before {
		t.Errorf("the host's namespace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
