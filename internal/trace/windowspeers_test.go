package trace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

var (
	secondWindowsMu  sync.Mutex
	secondWindowsEng *Engine
)

// secondWindows is the lab with the what-if
// examples/what-if/second-windows-node (k8s-lab-win-2 joined without an
// observed VTEP MAC, aspnetapp at 4 replicas), built once.
func secondWindows(t *testing.T) *Engine {
	t.Helper()
	secondWindowsMu.Lock()
	defer secondWindowsMu.Unlock()
	if secondWindowsEng != nil {
		return secondWindowsEng
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "what-if", "second-windows-node", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the second-windows-node what-if: %v (%d files)", err, len(files))
	}
	var docs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	secondWindowsEng = buildWith(t, docs...)
	return secondWindowsEng
}

func TestEveryNodeSeesTheSecondWindowsNodesPlaceholderVTEPMAC(t *testing.T) {
	e := secondWindows(t)
	var n *corev1.Node
	for _, x := range e.Cluster().Nodes {
		if x.Name == "k8s-lab-win-2" {
			n = x
		}
	}
	if n == nil {
		t.Fatal("no node k8s-lab-win-2")
	}
	mac := n.Annotations["projectcalico.org/VXLANTunnelMACAddr"]
	if mac == "" || n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] == "" {
		t.Fatalf("k8s-lab-win-2 has no marked placeholder VTEP MAC: %v", n.Annotations)
	}
	dash := strings.ToUpper(strings.ReplaceAll(mac, ":", "-"))
	for _, lin := range []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2"} {
		ln := e.LinuxNode(lin)
		found := 0
		for _, nb := range ln.Neighbors() {
			if nb.Node == "k8s-lab-win-2" {
				found++
				if nb.MAC.String() != mac || nb.IP.String() != "172.21.81.129" {
					t.Errorf("%s: neighbour %s lladdr %s, want 172.21.81.129 lladdr %s", lin, nb.IP, nb.MAC, mac)
				}
			}
		}
		for _, f := range ln.FDB() {
			if f.Node == "k8s-lab-win-2" {
				found++
				if f.MAC.String() != mac || f.Dst.String() != "192.168.10.27" {
					t.Errorf("%s: fdb %s dst %s, want %s dst 192.168.10.27", lin, f.MAC, f.Dst, mac)
				}
			}
		}
		if found != 2 {
			t.Errorf("%s: %d neighbour and FDB entries for k8s-lab-win-2, want 2", lin, found)
		}
	}
	win1 := e.WindowsNode("k8s-lab-win-1")
	var routes []windows.NetworkPolicy
	for _, p := range win1.Networks()[1].Policies {
		if p.Type == windows.PolicyRemoteSubnetRoute {
			routes = append(routes, p)
		}
	}
	if len(routes) != 4 {
		t.Errorf("k8s-lab-win-1 has %d RemoteSubnetRoutes, want one per other node (4)", len(routes))
	}
	var toWin2 *windows.NetworkPolicy
	for i := range routes {
		if routes[i].DestinationPrefix == "172.21.81.128/26" {
			toWin2 = &routes[i]
		}
	}
	if toWin2 == nil || toWin2.ProviderAddress != "192.168.10.27" || strings.ToUpper(toWin2.DistributedRouterMacAddress) != dash {
		t.Errorf("k8s-lab-win-1's route to 172.21.81.128/26 is %+v, want PA 192.168.10.27 DR MAC %s", toWin2, dash)
	}
	win2 := e.WindowsNode("k8s-lab-win-2")
	if got := win2.Networks()[1].DrMacAddress; got != dash {
		t.Errorf("k8s-lab-win-2's DrMacAddress is %s, want %s", got, dash)
	}
	dr := ""
	for _, a := range win2.Adapters {
		if strings.HasPrefix(a.Name, "vEthernet (DrPort ") {
			dr = a.MacAddress
		}
	}
	if dr != dash {
		t.Errorf("k8s-lab-win-2's DrPort adapter has MAC %q, want %s", dr, dash)
	}
}

func TestPodsOnTwoWindowsNodesReachEachOther(t *testing.T) {
	e := secondWindows(t)
	win1, win2 := podsOn(e, "k8s-lab-win-1"), podsOn(e, "k8s-lab-win-2")
	if len(win1) != 2 || len(win2) != 2 {
		t.Fatalf("aspnetapp pods: %v on k8s-lab-win-1, %v on k8s-lab-win-2; want two on each", win1, win2)
	}
	cases := []struct {
		name     string
		src, dst string
		proto    Proto
	}{
		{"win-1 pings win-2", win1[0], win2[0], ICMP},
		{"win-2 pings win-1", win2[1], win1[1], ICMP},
		{"win-1 connects to win-2", win1[1], win2[1], TCP},
		{"win-2 connects to win-1", win2[0], win1[0], TCP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := traceOf(t, e, "pod/"+tc.src, "pod/"+tc.dst, "win-demo", tc.proto, 8080)
			if !r.Delivered {
				t.Fatalf("not delivered: %s", r.Reason)
			}
			// One routing step at the source's HNS distributed router each
			// way; the destination's VFP switches into the pod's subnet.
			if r.RequestTTL != 127 || r.ReplyTTL != 127 {
				t.Errorf("TTLs %d/%d, want 127/127", r.RequestTTL, r.ReplyTTL)
			}
			encap := 0
			for _, h := range r.Hops {
				if h.Action == "encapsulate" {
					encap++
				}
			}
			if encap != 2 {
				t.Errorf("%d VXLAN encapsulations, want one each way", encap)
			}
		})
	}
}

func TestTheServiceFromAWindowsPodReachesABackendOnTheOtherWindowsNode(t *testing.T) {
	e := secondWindows(t)
	win2 := map[string]bool{}
	for _, p := range podsOn(e, "k8s-lab-win-2") {
		win2[p] = true
	}
	reached := false
	for _, src := range podsOn(e, "k8s-lab-win-1") {
		r := traceOf(t, e, "pod/"+src, "svc/aspnetapp", "win-demo", TCP, 0)
		if !r.Delivered {
			t.Fatalf("%s: not delivered: %s", src, r.Reason)
		}
		if r.DeliveredTo == nil || !win2[r.DeliveredTo.Name] {
			continue
		}
		reached = true
		via := ""
		for _, h := range r.Hops {
			if h.Action == "encapsulate" && h.Node == "k8s-lab-win-1" {
				via = h.Reason
			}
		}
		if !strings.Contains(via, "remote endpoint") || !strings.Contains(via, "PA 192.168.10.27") {
			t.Errorf("%s → %s encapsulated by %q, want kube-proxy's remote endpoint with PA 192.168.10.27", src, r.DeliveredTo.Name, via)
		}
	}
	if !reached {
		t.Error("no aspnetapp pod on k8s-lab-win-1 has the Service choose a backend on k8s-lab-win-2")
	}
}

// podsOn names the aspnetapp pods on a node, in name order.
func podsOn(e *Engine, node string) []string {
	var out []string
	for _, p := range e.Cluster().Pods {
		if p.Namespace == "win-demo" && p.Spec.NodeName == node && strings.HasPrefix(p.Name, "aspnetapp-") {
			out = append(out, p.Name)
		}
	}
	return out
}

func TestAWindowsNodeThatHasNotPublishedItsVTEPGetsNoPodTraffic(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "check", "testdata", "HYB071", "fail.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e := buildWith(t, string(b))
	cases := []struct {
		name, src, dst, ns string
		proto              Proto
	}{
		{"a Linux pod's ping", "deploy/hello", "pod/win-demo/aspnetapp-769559d8ff-dkp9z", "demo", ICMP},
		{"a Linux pod's connection through the Service", "deploy/hello", "svc/win-demo/aspnetapp", "demo", TCP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, 0)
			if r.Delivered {
				t.Fatal("delivered, though the node's neighbours address it with a MAC its DrPort does not have")
			}
			if r.AtNode != "k8s-lab-win-1" || !strings.Contains(r.Reason, "the DrPort's MAC is 00:15:5d:eb:90:ae") || !strings.Contains(r.Fix, "HYB071") {
				t.Errorf("dropped at %s %s: %s (fix %q)", r.AtNode, r.AtComp, r.Reason, r.Fix)
			}
		})
	}
}
