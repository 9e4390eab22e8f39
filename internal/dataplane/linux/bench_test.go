package linux

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// syntheticCluster is 500 Linux nodes with 30 pods each (15,000 pods) and
// 1,000 ClusterIP services of 15 endpoints spread over the nodes.
func syntheticCluster() *fixture {
	const nodes, podsPerNode, services, epsPerService = 500, 30, 1000, 15
	f := newFixture()
	f.c.Network.CIDR = "10.0.0.0/16"
	type podRef struct{ ip, node string }
	var pods []podRef
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("node-%03d", i)
		ip := fmt.Sprintf("10.0.%d.%d", 1+i/250, 1+i%250)
		nd := f.node(name, ip, i, i/50)
		nd.Annotations[calico.AnnotationIPv4Address] = ip + "/16"
		base := netip.AddrFrom4([4]byte{10, 244, byte(i / 4), byte(i % 4 * 64)})
		for j := 0; j < podsPerNode; j++ {
			a := base
			for k := 0; k < j+2; k++ {
				a = a.Next()
			}
			ns := fmt.Sprintf("ns-%d", (i*podsPerNode+j)%50)
			f.pod(ns, fmt.Sprintf("pod-%d-%d", i, j), name, a.String(), map[string]string{"app": fmt.Sprintf("app-%d", j)})
			pods = append(pods, podRef{a.String(), name})
		}
	}
	for s := 0; s < services; s++ {
		var eps []ep
		for e := 0; e < epsPerService; e++ {
			p := pods[(s*epsPerService+e*977)%len(pods)]
			eps = append(eps, ep{ip: p.ip, node: p.node})
		}
		cip := netip.AddrFrom4([4]byte{10, 96, byte(1 + s/250), byte(1 + s%250)})
		f.service(fmt.Sprintf("ns-%d", s%50), fmt.Sprintf("svc-%d", s), cip.String(), tcpPort("http", 80), 8080, eps...)
	}
	return f
}

func TestSyntheticClusterCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	f := syntheticCluster()
	nodes := f.compile(t)
	if len(nodes) != 500 {
		t.Fatalf("%d nodes", len(nodes))
	}
	n := nodes["node-123"]
	// 1 default + 1 connected + 1 blackhole + 30 workloads + 499 remote blocks.
	if got := len(n.Routes()); got != 532 {
		t.Errorf("%d routes on node-123", got)
	}
	if got := len(n.Neighbors()); got != 499 {
		t.Errorf("%d neighbours", got)
	}
	if got := len(n.ServicePorts()); got != 1000 {
		t.Errorf("%d service ports", got)
	}
}

func BenchmarkCompileSyntheticCluster(b *testing.B) {
	f := syntheticCluster()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Compile(f.c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNFTListRulesetOneNodeOfSyntheticCluster(b *testing.B) {
	f := syntheticCluster()
	nodes, err := Compile(f.c)
	if err != nil {
		b.Fatal(err)
	}
	n := nodes["node-123"]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(n.NFTTables()) == 0 {
			b.Fatal("no nft tables")
		}
	}
}
