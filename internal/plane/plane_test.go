package plane

import (
	"fmt"
	"net/netip"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// generated builds a cluster of the generator's shape: nodes nodes, a
// tenth of them Windows, 30 pods per node.
func generated(tb testing.TB, nodes int) *model.Cluster {
	tb.Helper()
	o := gentest.Shape(nodes)
	o.WindowsNodes = nodes / 10
	c, err := engine.Build(gentest.Snapshot(tb, o, load.Options{}))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// names are the first Linux worker and the first Windows node of c.
func names(tb testing.TB, c *model.Cluster) (lx, win string) {
	tb.Helper()
	for _, n := range c.Nodes {
		switch {
		case n.Labels["kubernetes.io/os"] == "windows" && win == "":
			win = n.Name
		case n.Labels["kubernetes.io/os"] != "windows" && lx == "" && n.Labels["node-role.kubernetes.io/control-plane"] == "" && len(n.Spec.Taints) == 0:
			lx = n.Name
		}
	}
	if lx == "" || win == "" {
		tb.Fatalf("the generated cluster lacks a Linux worker (%q) or a Windows node (%q)", lx, win)
	}
	return lx, win
}

func TestANodeCompilesOnFirstUseAndOnce(t *testing.T) {
	c := generated(t, 20)
	lx, win := names(t, c)
	for _, tc := range []struct {
		name string
		ask  func(p *Plane)
		want Compiled
	}{
		{"a new plane has compiled nothing", func(p *Plane) {}, Compiled{}},
		{"asking for a Linux node compiles that node", func(p *Plane) { p.Linux(lx) }, Compiled{Linux: 1}},
		{"asking twice compiles once", func(p *Plane) { p.Linux(lx); p.Linux(lx) }, Compiled{Linux: 1}},
		{"asking for a Windows node compiles that node", func(p *Plane) { _, _ = p.Windows(win) }, Compiled{Windows: 1}},
		{"a Linux node asked as Windows compiles nothing", func(p *Plane) { _, _ = p.Windows(lx) }, Compiled{}},
		{"a Windows node asked as Linux compiles nothing", func(p *Plane) { p.Linux(win) }, Compiled{}},
		{"an unknown node compiles nothing", func(p *Plane) { p.Linux("nope"); _, _ = p.Windows("nope") }, Compiled{}},
		{"a tunnel address compiles nothing", func(p *Plane) { p.LinuxTunnel(lx) }, Compiled{}},
		{"the Windows compiler alone compiles nothing", func(p *Plane) { _, _ = p.WindowsCompiler() }, Compiled{}},
		{"many goroutines asking for one node compile it once", func(p *Plane) {
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() { defer wg.Done(); p.Linux(lx); _, _ = p.Windows(win) }()
			}
			wg.Wait()
		}, Compiled{Linux: 1, Windows: 1}},
		{"every node, asked for twice, compiles once", func(p *Plane) {
			p.LinuxNodes()
			p.LinuxNodes()
			_, _ = p.WindowsNodes()
		}, Compiled{Linux: 18, Windows: 2}},
		{"warming a small cluster compiles every node once", func(p *Plane) { p.Linux(lx); p.Warm(); p.Warm() }, Compiled{Linux: 18, Windows: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			tc.ask(p)
			if got := p.Compiled(); got != tc.want {
				t.Errorf("compiled %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A node compiled alone is the node compiling the whole cluster gives.
func TestANodeCompiledAloneEqualsItsWholeClusterCompilation(t *testing.T) {
	c := generated(t, 20)
	allLx, err := linux.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	allWin, err := windows.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range allLx {
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Linux(name)
		if got == nil {
			t.Fatalf("%s: not compiled", name)
		}
		if !reflect.DeepEqual(got.Routes(), want.Routes()) || !reflect.DeepEqual(got.Neighbors(), want.Neighbors()) ||
			!reflect.DeepEqual(got.FDB(), want.FDB()) || !reflect.DeepEqual(got.Links(), want.Links()) ||
			!reflect.DeepEqual(got.Notes(), want.Notes()) {
			t.Errorf("%s: the node compiled alone differs from the whole cluster's", name)
		}
		if out, wantOut := got.NFTTables(), want.NFTTables(); !reflect.DeepEqual(out, wantOut) || len(wantOut) == 0 {
			t.Errorf("%s: nft list ruleset differs or is empty", name)
		}
		if a, ok := p.LinuxTunnel(name); ok {
			l, _ := want.Link("vxlan.calico")
			if len(l.Addrs) == 0 || l.Addrs[0].Addr() != a {
				t.Errorf("%s: tunnel address %s, the compiled device has %v", name, a, l.Addrs)
			}
		} else if _, ok := want.Link("vxlan.calico"); ok {
			t.Errorf("%s: no tunnel address, but the compiled node has vxlan.calico", name)
		}
	}
	for name, want := range allWin {
		p, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Windows(name)
		if err != nil || got == nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, cmd := range []string{"Get-HnsNetwork | ConvertTo-Json -Depth 5", "Get-HnsEndpoint | ConvertTo-Json -Depth 5", "hnsdiag list loadbalancers"} {
			g, _, _ := powershell.Exec(got, []string{cmd})
			w, _, _ := powershell.Exec(want, []string{cmd})
			if g != w || w == "" {
				t.Errorf("%s: %q differs from the whole cluster's compilation or prints nothing", name, cmd)
			}
		}
	}
}

func TestTheIndexesAnswerAsAScanOfTheCluster(t *testing.T) {
	c := generated(t, 20)
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		var want []string
		for _, pod := range c.Pods {
			if pod.Spec.NodeName == n.Name {
				want = append(want, pod.Namespace+"/"+pod.Name)
			}
		}
		var got []string
		for _, pod := range p.PodsOnNode(n.Name) {
			got = append(got, pod.Namespace+"/"+pod.Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("pods on %s: %v, want %v", n.Name, got, want)
		}
		if p.Node(n.Name) != n {
			t.Errorf("node %s not found by name", n.Name)
		}
	}
	for _, pod := range c.Pods {
		if p.Pod(pod.Namespace, pod.Name) != pod {
			t.Errorf("pod %s/%s not found by name", pod.Namespace, pod.Name)
		}
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil && !pod.Spec.HostNetwork && pod.Status.Phase == "Running" {
			if got := p.PodByIP(a); got != pod {
				t.Errorf("pod %s/%s not found by %s", pod.Namespace, pod.Name, a)
			}
		}
	}
	for _, s := range c.Services {
		if p.Service(s.Namespace, s.Name) != s {
			t.Errorf("service %s/%s not found by name", s.Namespace, s.Name)
		}
		if a, err := netip.ParseAddr(s.Spec.ClusterIP); err == nil && p.ServiceByIP(a) != s {
			t.Errorf("service %s/%s not found by %s", s.Namespace, s.Name, a)
		}
		n := 0
		for _, es := range c.EndpointSlices {
			if es.Namespace == s.Namespace && es.Labels["kubernetes.io/service-name"] == s.Name {
				n++
			}
		}
		if got := len(p.EndpointSlices(s.Namespace, s.Name)); got != n {
			t.Errorf("service %s/%s: %d EndpointSlices, want %d", s.Namespace, s.Name, got, n)
		}
	}
	if p.Node("nope") != nil || p.Pod("default", "nope") != nil || p.Service("default", "nope") != nil {
		t.Error("an unknown name was found")
	}
}

func TestANilClusterIsRefused(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("no error")
	}
}

// Reuse keeps only what the previous plane compiled itself, so that a
// chain of planes holds at most one older cluster: an unchanged node is
// reused by the next plane and compiled again by the one after.
func TestReuseKeepsOnlyWhatThePreviousPlaneCompiled(t *testing.T) {
	c := generated(t, 20)
	lx, win := names(t, c)
	prev, err := Reuse(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	wantCompiles := []Compiled{{Linux: 1, Windows: 1}, {}, {Linux: 1, Windows: 1}, {}}
	for i, want := range wantCompiles {
		p := prev
		if i > 0 {
			// The same cluster: every input is equal.
			if p, err = Reuse(prev, c); err != nil {
				t.Fatal(err)
			}
		}
		if p.Linux(lx) == nil {
			t.Fatalf("plane %d: no Linux node %s", i, lx)
		}
		if n, err := p.Windows(win); err != nil || n == nil {
			t.Fatalf("plane %d: Windows node %s: %v", i, win, err)
		}
		if got := p.Compiled(); got != want {
			t.Errorf("plane %d compiled %+v, want %+v", i, got, want)
		}
		prev = p
	}
}

// Reach tells nodes apart by their vxlan.calico without compiling them:
// what LinuxTunnel and LinuxVXLAN read is the device the compiled node has
// (or none), whatever the Felix configuration says.
func TestTheTunnelReadWithoutCompilingIsTheCompiledNodesDevice(t *testing.T) {
	base := generated(t, 20)
	lx, _ := names(t, base)
	ptr := func(v int) *int { return &v }
	off := false
	with := func(fcs ...*calico.FelixConfiguration) *model.Cluster {
		c := *base
		c.FelixConfigs = fcs
		return &c
	}
	fc := func(name string, spec calico.FelixConfigurationSpec) *calico.FelixConfiguration {
		return &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	}
	for _, tc := range []struct {
		name string
		c    *model.Cluster
	}{
		{"the generated cluster", base},
		{"a default configuration with its own VNI and port", with(fc("default", calico.FelixConfigurationSpec{VXLANVNI: ptr(4097), VXLANPort: ptr(8472)}))},
		{"one node's configuration with its own VNI", with(fc("node."+lx, calico.FelixConfigurationSpec{VXLANVNI: ptr(7)}))},
		{"one node with VXLAN disabled", with(fc("node."+lx, calico.FelixConfigurationSpec{VXLANEnabled: &off}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tc.c.Nodes {
				before := p.Compiled()
				a, aok := p.LinuxTunnel(n.Name)
				vni, port, vok := p.LinuxVXLAN(n.Name)
				if p.Compiled() != before {
					t.Fatalf("reading %s's tunnel compiled a node", n.Name)
				}
				var want linux.Link
				wok := false
				if ln := p.Linux(n.Name); ln != nil {
					want, wok = ln.Link(linux.VXLANDevice)
				}
				got := fmt.Sprintf("%t %v / %t %d %d", aok, a, vok, vni, port)
				exp := fmt.Sprintf("%t %v / %t %d %d", false, netip.Addr{}, false, 0, 0)
				if wok {
					exp = fmt.Sprintf("%t %v / %t %d %d", true, want.Addrs[0].Addr(), true, want.VXLAN.VNI, want.VXLAN.DstPort)
				}
				if got != exp {
					t.Errorf("%s: read %s, compiled %s", n.Name, got, exp)
				}
			}
		})
	}
}
