package linux

import (
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// randomFixture is a cluster with the cases the lookups must get right:
// nodes sharing a creation time, a node without a VTEP, a shared tunnel
// address and MAC, CrossSubnet and unencapsulated pools, borrowed
// addresses, duplicate pod addresses, a second block per node, an IPAM block
// of no node, services sharing ports and node ports.
func randomFixture(r *rand.Rand) *fixture {
	f := newFixture()
	f.c.Network.CIDR = "10.0.0.0/16"
	if r.Intn(2) == 0 {
		f.pool.Spec.VXLANMode = calico.ModeCrossSubnet
	}
	if r.Intn(4) == 0 {
		f.c.IPPools = append(f.c.IPPools, &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
			Spec: calico.IPPoolSpec{CIDR: "10.250.0.0/16", VXLANMode: calico.ModeNever, IPIPMode: calico.ModeNever, BlockSize: 28}})
	}
	n := 4 + r.Intn(12)
	var nodes []*corev1.Node
	for i := 0; i < n; i++ {
		ip := fmt.Sprintf("10.0.%d.%d", r.Intn(3), 10+i)
		nd := f.node(fmt.Sprintf("node-%02d", i), ip, i, r.Intn(4))
		nd.Annotations[calico.AnnotationIPv4Address] = ip + "/" + []string{"16", "24"}[r.Intn(2)]
		switch r.Intn(8) {
		case 0:
			delete(nd.Annotations, calico.AnnotationIPv4VXLANTunnelAddr)
		case 1:
			nd.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] = "10.244.0.0" // another node's tunnel address
		case 2:
			nd.Annotations[calico.AnnotationVXLANTunnelMACAddr] = "66:00:00:00:00:01"
		}
		nodes = append(nodes, nd)
		if r.Intn(4) == 0 {
			aff := "host:" + nd.Name
			f.c.IPAMBlocks = append(f.c.IPAMBlocks, &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{
				CIDR: fmt.Sprintf("10.250.%d.%d/28", i, 16*r.Intn(4)), Affinity: &aff}})
		}
	}
	aff := "host:gone"
	f.c.IPAMBlocks = append(f.c.IPAMBlocks, &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{CIDR: "10.244.200.0/26", Affinity: &aff}})
	for k := 0; k < 6*n; k++ {
		i := r.Intn(n)
		home := i
		if r.Intn(6) == 0 {
			home = r.Intn(n) // borrowed from another node's block
		}
		ip := netip.AddrFrom4([4]byte{10, 244, byte(home / 4), byte(home%4*64 + 1 + r.Intn(20))})
		p := f.pod(fmt.Sprint("ns-", k%3), fmt.Sprint("pod-", k), nodes[i].Name, ip.String(), map[string]string{"app": fmt.Sprint(k % 4)})
		p.CreationTimestamp = metav1.NewTime(f.t0.Add(time.Duration(r.Intn(3)) * time.Minute))
		if k%5 == 0 {
			f.service(fmt.Sprint("ns-", k%3), fmt.Sprint("svc-", k), fmt.Sprintf("10.96.0.%d", 1+r.Intn(4)), tcpPort("http", int32(80+r.Intn(2))), 8080,
				ep{ip: ip.String(), node: nodes[i].Name})
			if r.Intn(2) == 0 {
				s := f.c.Services[len(f.c.Services)-1]
				s.Spec.Type = corev1.ServiceTypeNodePort
				s.Spec.Ports[0].NodePort = int32(30000 + r.Intn(3))
			}
		}
	}
	return f
}

// TestLookupsMatchTheTables compares RouteTo, NeighborFor, FDBFor and the
// service port lookups with scans of the full tables, on every node of
// random clusters and for every address that matters.
func TestLookupsMatchTheTables(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		f := randomFixture(r)
		nodes := f.compile(t)
		var dsts []netip.Addr
		for _, p := range f.c.Pods {
			a := netip.MustParseAddr(p.Status.PodIP)
			dsts = append(dsts, a, a.Next())
		}
		for _, b := range f.c.IPAMBlocks {
			p := netip.MustParsePrefix(b.Spec.CIDR)
			dsts = append(dsts, p.Addr(), p.Addr().Next().Next())
		}
		for _, nd := range f.c.Nodes {
			dsts = append(dsts, netip.MustParseAddr(nd.Status.Addresses[0].Address))
			if a, err := netip.ParseAddr(nd.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]); err == nil {
				dsts = append(dsts, a)
			}
		}
		dsts = append(dsts, netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.96.0.1"), netip.MustParseAddr("::1"), netip.Addr{})
		for name, n := range nodes {
			// Lookups first, then the tables, then the lookups again.
			var before []Route
			for _, d := range dsts {
				rt, _ := n.RouteTo(d)
				before = append(before, rt)
			}
			routes := n.Routes()
			for i, d := range dsts {
				want, wantOK := n.tableRouteTo(d)
				got, gotOK := n.RouteTo(d)
				if gotOK != wantOK || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(before[i], want) {
					t.Fatalf("seed %d, node %s, RouteTo(%s):\n got: %+v %v\nwant: %+v %v", seed, name, d, got, gotOK, want, wantOK)
				}
			}
			if len(routes) == 0 {
				t.Fatalf("seed %d, node %s: no routes", seed, name)
			}
			neigh, fdb := n.Neighbors(), n.FDB()
			for _, d := range dsts {
				var want Neighbor
				found := false
				for _, e := range neigh {
					if e.IP == d {
						want, found = e, true
					}
				}
				got, ok := n.NeighborFor(d)
				if ok != found || !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, node %s, NeighborFor(%s): %+v %v, want %+v %v", seed, name, d, got, ok, want, found)
				}
				if !found {
					continue
				}
				var wantF FDBEntry
				foundF := false
				for _, e := range fdb {
					if string(e.MAC) == string(want.MAC) {
						wantF, foundF = e, true
					}
				}
				gotF, okF := n.FDBFor(want.MAC)
				if okF != foundF || !reflect.DeepEqual(gotF, wantF) {
					t.Fatalf("seed %d, node %s, FDBFor(%s): %+v, want %+v", seed, name, want.MAC, gotF, wantF)
				}
			}
			all := n.ServicePorts()
			if n.HasServicePorts() != (all != nil) {
				t.Fatalf("seed %d, node %s: HasServicePorts %v with %d ports", seed, name, n.HasServicePorts(), len(all))
			}
			for _, sp := range all {
				var want, wantNP []ServicePort
				for _, o := range all {
					if o.ClusterIP == sp.ClusterIP && o.Port == sp.Port && o.Protocol == sp.Protocol {
						want = append(want, o)
					}
					if o.NodePort == sp.NodePort && o.Protocol == sp.Protocol {
						wantNP = append(wantNP, o)
					}
				}
				if got := n.ServicePortsFor(sp.ClusterIP, sp.Port, sp.Protocol); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, node %s: ServicePortsFor(%s:%d) = %+v, want %+v", seed, name, sp.ClusterIP, sp.Port, got, want)
				}
				if got := n.ServicePortsByNodePort(sp.NodePort, sp.Protocol); !reflect.DeepEqual(got, wantNP) {
					t.Fatalf("seed %d, node %s: ServicePortsByNodePort(%d) = %+v, want %+v", seed, name, sp.NodePort, got, wantNP)
				}
			}
		}
	}
}

// TestLazyTablesKeepTheNotesInOrder: notes of the tables come between the
// node's own and the later ones, as an eager compile ordered them.
func TestLazyTablesKeepTheNotesInOrder(t *testing.T) {
	f := randomFixture(rand.New(rand.NewSource(3)))
	iptables := "Iptables"
	f.c.Installation.Spec.CalicoNetwork.LinuxDataplane = &iptables // a late note, from the Calico view
	f.c.Hosts[0].NIC.Name = ""                                     // an early note
	delete(f.c.Nodes[1].Annotations, calico.AnnotationIPv4VXLANTunnelAddr)
	nodes := f.compile(t)
	n := nodes[f.c.Nodes[0].Name]
	notes := n.Notes()
	if len(notes) < 3 || !strings.HasPrefix(notes[1], "remote IPAM block") || notes[0] != "the host NIC name is not given; assumed eth0" ||
		notes[len(notes)-1] != "Calico's Linux dataplane is not Nftables: Felix programs iptables, which nft list does not show as table ip calico" {
		t.Fatalf("notes out of order: %q", notes)
	}
}
