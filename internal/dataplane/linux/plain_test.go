package linux

import (
	"net/netip"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var (
	plainOnce    sync.Once
	plainCluster *model.Cluster
	plainNodes   map[string]*Node
	plainErr     error
)

// plain compiles examples/plain (plain Nodes, no Cluster kind) once.
func plain(t testing.TB) (*model.Cluster, map[string]*Node) {
	t.Helper()
	plainOnce.Do(func() {
		s, err := load.Load(load.Options{Filenames: []string{"../../../examples/plain"}})
		if err != nil {
			plainErr = err
			return
		}
		plainCluster, plainErr = engine.Build(s)
		if plainErr != nil {
			return
		}
		plainNodes, plainErr = Compile(plainCluster)
	})
	if plainErr != nil {
		t.Fatalf("examples/plain: %v", plainErr)
	}
	return plainCluster, plainNodes
}

func TestGoldenEveryEmulatedCommandOnEveryPlainLinuxNode(t *testing.T) {
	_, nodes := plain(t)
	var names []string
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "cp-01,lnx-01,lnx-02" {
		t.Fatalf("plain Linux nodes = %v", names)
	}
	var notes strings.Builder
	for _, name := range names {
		for _, g := range goldenCommands {
			if g.file == "nft-list-table-ip-kube-proxy" {
				continue // kube-proxy runs in its default iptables mode here
			}
			t.Run(name+"/"+g.file, func(t *testing.T) {
				checkGolden(t, "plain/"+name+"/"+g.file, run(t, nodes[name], g.cmd))
			})
		}
		notes.WriteString(name + ":\n")
		for _, n := range nodes[name].Notes() {
			notes.WriteString("  " + n + "\n")
		}
	}
	t.Run("notes", func(t *testing.T) { checkGolden(t, "plain/notes", notes.String()) })
}

// Felix on a Linux node of a plain cluster programs, for every other node
// with a VTEP, a route to that node's block via its tunnel address, an ARP
// entry for the tunnel address and an FDB entry to the node's address
// (felix/dataplane/linux/vxlan_mgr.go). The expectations are read from the
// Nodes' annotations and the IPAM blocks, not from the compiler.
func TestPlainLinuxNodesReachEveryOtherNodesBlockThroughItsVTEP(t *testing.T) {
	c, nodes := plain(t)
	type peer struct {
		block, tunnel, host netip.Addr
		bits                int
	}
	peers := map[string]peer{}
	for _, b := range c.IPAMBlocks {
		owner := strings.TrimPrefix(*b.Spec.Affinity, "host:")
		p := netip.MustParsePrefix(b.Spec.CIDR)
		peers[owner] = peer{block: p.Addr(), bits: p.Bits()}
	}
	for _, n := range c.Nodes {
		p := peers[n.Name]
		p.tunnel = netip.MustParseAddr(n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr])
		for _, a := range n.Status.Addresses {
			if a.Type == "InternalIP" {
				p.host = netip.MustParseAddr(a.Address)
			}
		}
		peers[n.Name] = p
	}
	if len(peers) != 4 {
		t.Fatalf("peers %v, want the example's four nodes", peers)
	}
	for _, self := range []string{"cp-01", "lnx-01", "lnx-02"} {
		for other, p := range peers {
			if other == self {
				continue
			}
			t.Run(self+" to "+other, func(t *testing.T) {
				n := nodes[self]
				dst := netip.PrefixFrom(p.block, p.bits)
				var route *Route
				for _, r := range n.Routes() {
					if r.Dst == dst {
						route = &r
					}
				}
				if route == nil || route.Via != p.tunnel || route.Dev != vxlanDevice || !route.OnLink {
					t.Fatalf("route to %s: %+v, want via %s dev %s onlink", dst, route, p.tunnel, vxlanDevice)
				}
				var mac string
				for _, ne := range n.Neighbors() {
					if ne.IP == p.tunnel {
						mac = ne.MAC.String()
					}
				}
				if mac == "" {
					t.Fatalf("no ARP entry for %s", p.tunnel)
				}
				found := false
				for _, f := range n.FDB() {
					if f.MAC.String() == mac {
						found = true
						if f.Dst != p.host {
							t.Errorf("FDB %s dst %s, want %s", mac, f.Dst, p.host)
						}
					}
				}
				if !found {
					t.Errorf("no FDB entry for %s", mac)
				}
			})
		}
	}
}
