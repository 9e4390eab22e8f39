package windows

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// syntheticCluster is a mid-size hybrid cluster: the fixture's Windows node
// plus 3 more, 60 Linux nodes, 40 pods per node, 400 services of 6 backends
// spread over all nodes, and 20 NetworkPolicies selecting the apps.
func syntheticCluster() *fixture {
	const linux, windows, podsPerNode, services, backends, policies = 60, 3, 40, 400, 6, 20
	f := newFixture(linux)
	for w := 1; w <= windows; w++ {
		f.node(fmt.Sprintf("win-%d", w), hybrid.OSWindows, fmt.Sprintf("192.168.2.%d", w), fmt.Sprintf("10.0.%d.0/26", 200+w), fmt.Sprintf("00:15:5d:00:00:%02x", w))
	}
	var pods []string
	var podNode []string
	for i, n := range f.c.Nodes {
		block := netip.MustParsePrefix(f.c.IPAMBlocks[i].Spec.CIDR)
		a := block.Addr().Next().Next().Next()
		for p := 0; p < podsPerNode; p++ {
			app := fmt.Sprintf("app-%d", (i*podsPerNode+p)%services)
			f.pod("ns-"+fmt.Sprint(p%10), fmt.Sprintf("%s-%d", n.Name, p), n.Name, a.String(), map[string]string{"app": app})
			pods = append(pods, a.String())
			podNode = append(podNode, n.Name)
			a = a.Next()
		}
	}
	for s := 0; s < services; s++ {
		var bes []bk
		for b := 0; b < backends; b++ {
			k := (s*backends + b*97) % len(pods)
			bes = append(bes, bk{ip: pods[k], node: podNode[k]})
		}
		ip := netip.AddrFrom4([4]byte{10, 96, byte(1 + s/250), byte(s%250 + 1)})
		f.service("ns-"+fmt.Sprint(s%10), fmt.Sprintf("svc-%d", s), ip.String(), tcpPort("http", 80, intstr.FromInt32(8080)), 8080, bes...)
	}
	for p := 0; p < policies; p++ {
		ns := "ns-" + fmt.Sprint(p%10)
		f.c.NetworkPolicies = append(f.c.NetworkPolicies, npIngress(ns, fmt.Sprintf("np-%d", p), map[string]string{"app": fmt.Sprintf("app-%d", p)},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}, NamespaceSelector: &metav1.LabelSelector{}}},
			networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(8080))}))
	}
	return f
}

func BenchmarkCompileSyntheticCluster(b *testing.B) {
	f := syntheticCluster()
	b.ReportAllocs()
	for b.Loop() {
		m, err := Compile(f.c)
		if err != nil {
			b.Fatal(err)
		}
		if len(m) != 4 || len(m["win"].LoadBalancers()) == 0 {
			b.Fatalf("compiled %d nodes", len(m))
		}
	}
}

func TestSyntheticClusterCompiles(t *testing.T) {
	f := syntheticCluster()
	m, err := Compile(f.c)
	if err != nil {
		t.Fatal(err)
	}
	n := m["win"]
	if len(n.LoadBalancers()) != 400 || len(n.Networks()[1].Policies) != 1+60+3 {
		t.Errorf("%d load balancers, %d network policies", len(n.LoadBalancers()), len(n.Networks()[1].Policies))
	}
	for _, ep := range n.Endpoints() {
		if ep.Kind == KindPod && ep.ACLCount < 7 {
			t.Errorf("%s: %d ACLs", ep.Pod, ep.ACLCount)
		}
	}
}

func TestEndpointsAloneCarryTheSameACLsAsTheWholeNode(t *testing.T) {
	f := syntheticCluster()
	m, err := Compile(f.c)
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewCompiler(f.c)
	if err != nil {
		t.Fatal(err)
	}
	var win *corev1.Node
	for _, n := range f.c.Nodes {
		if n.Name == "win" {
			win = n
		}
	}
	eps, err := x.Endpoints(win)
	if err != nil {
		t.Fatal(err)
	}
	whole := map[string]*Endpoint{}
	for _, ep := range m["win"].Endpoints() {
		if ep.Kind == KindPod && !ep.IsRemoteEndpoint {
			whole[ep.IPAddress] = ep
		}
	}
	if len(eps) == 0 || len(eps) != len(whole) {
		t.Fatalf("%d endpoints alone, %d in the whole node", len(eps), len(whole))
	}
	acls := 0
	for _, ep := range eps {
		w := whole[ep.IPAddress]
		if w == nil {
			t.Fatalf("%s: not in the whole node", ep.IPAddress)
		}
		if !reflect.DeepEqual(ep.Policies, w.Policies) || !reflect.DeepEqual(ep.ACLReport, w.ACLReport) {
			t.Errorf("%s: policies differ:\n%+v\n%+v", ep.IPAddress, ep.Policies, w.Policies)
		}
		acls += ep.ACLCount
	}
	if acls == 0 {
		t.Error("no ACLs compared")
	}
}

func TestANodeCompiledAloneIsTheNodeCompileGivesWithTheOthers(t *testing.T) {
	f := syntheticCluster()
	all, err := Compile(f.c)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, n := range f.c.Nodes {
		want, ok := all[n.Name]
		if !ok {
			continue
		}
		x, err := NewCompiler(f.c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.Node(n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(shown(got), shown(want)) {
			t.Errorf("%s compiled alone differs from Compile's", n.Name)
		}
		compared++
	}
	if compared != 4 {
		t.Errorf("compared %d Windows nodes, want 4", compared)
	}
}

// nodeShown is everything a compiled node shows, its objects made.
type nodeShown struct {
	Name, Address, HostMAC, SourceVIP string
	DSR, KubeProxy                    bool
	Networks                          []*Network
	Endpoints                         []*Endpoint
	Namespaces                        []*Namespace
	LoadBalancers                     []*LoadBalancer
	Adapters                          []*Adapter
	FirewallRules                     []*FirewallRule
	Ports                             []*VFPPort
	Warnings, Notes                   []string
}

func shown(n *Node) nodeShown {
	return nodeShown{
		Name: n.Name, Address: n.Address, HostMAC: n.HostMAC, SourceVIP: n.SourceVIP, DSR: n.DSR, KubeProxy: n.KubeProxy,
		Networks: n.Networks(), Endpoints: n.Endpoints(), Namespaces: n.Namespaces, LoadBalancers: n.LoadBalancers(),
		Adapters: n.Adapters, FirewallRules: n.FirewallRules, Ports: n.Ports(), Warnings: n.Warnings, Notes: n.Notes,
	}
}
