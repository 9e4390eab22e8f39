package ipam

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// Each test here holds the model to an upstream code path where an earlier
// version of the model disagreed with real Calico IPAM; the expectation is
// worked out from that path, named in the test.

// node/pkg/allocateip/allocateip.go: reconcileTunnelAddrs handles IPIP
// before VXLAN; determineEnabledPoolCIDRs picks pools with ipipMode Always
// or CrossSubnet; assignHostTunnelAddr auto-assigns with handle
// "ipip-tunnel-addr-<node>" and type ipipTunnelAddress, which takes the
// first ordinal of the node's first block, so pods start one later.
func TestAnIPIPPoolGivesLinuxNodesAnIPIPTunnelAddress(t *testing.T) {
	p := labPool()
	p.VXLANMode, p.IPIPMode = "Never", "Always"
	m := newModel(t, strict(), p)
	m.SetNode("k8s-lab-node-2", linux)
	ipip, err := m.TunnelAddress("k8s-lab-node-2", AttrTypeIPIP, netip.Addr{})
	if err != nil || ipip != mustAddr("172.21.172.0") {
		t.Fatalf("IPIP tunnel address %v, %v; want 172.21.172.0", ipip, err)
	}
	o, _ := m.Lookup(ipip)
	if o.Handle != "ipip-tunnel-addr-k8s-lab-node-2" || o.Attrs[AttrType] != "ipipTunnelAddress" || o.Attrs[AttrNode] != "k8s-lab-node-2" {
		t.Errorf("owner %+v", o)
	}
	if vx, err := m.TunnelAddress("k8s-lab-node-2", AttrTypeVXLAN, netip.Addr{}); err != nil || vx.IsValid() {
		t.Errorf("VXLAN tunnel address %v, %v; want none from a pool with vxlanMode Never", vx, err)
	}
	if pod, _ := m.AssignPod("k8s-lab-node-2", PodHandle("c"), nil); pod != mustAddr("172.21.172.1") {
		t.Errorf("first pod %s, want 172.21.172.1", pod)
	}
}

// cni-plugin/pkg/k8s/k8s.go CmdAddK8s reads cni.projectcalico.org/ipv4pools
// from the namespace, then lets the pod's own annotation win; utils.go
// ResolvePools turns names into CIDRs; ipam.go determinePools uses
// requested pools unconditionally (no node or namespace selector), and
// refuses one that is not enabled.
func TestPoolAnnotationsChooseThePool(t *testing.T) {
	def := labPool()
	other := Pool{Name: "other", CIDR: netip.MustParsePrefix("10.9.0.0/16"), NodeSelector: "kubernetes.io/os == 'windows'"}
	off := Pool{Name: "off", CIDR: netip.MustParsePrefix("10.8.0.0/16"), Disabled: true}
	cases := []struct {
		name     string
		pod, ns  map[string]string
		inPool   string
		wantErr  string
		wantAddr string
	}{
		{"without annotations the node's pools are used", nil, nil, "172.21.0.0/16", "", ""},
		{"the pod's annotation names a pool by name, ignoring its node selector", map[string]string{calico.AnnotationIPv4Pools: `["other"]`}, nil, "10.9.0.0/16", "", ""},
		{"the pod's annotation may give a CIDR", map[string]string{calico.AnnotationIPv4Pools: `["10.9.0.0/16"]`}, nil, "10.9.0.0/16", "", ""},
		{"the namespace's annotation applies to its pods", nil, map[string]string{calico.AnnotationIPv4Pools: `["other"]`}, "10.9.0.0/16", "", ""},
		{"the pod's annotation wins over the namespace's", map[string]string{calico.AnnotationIPv4Pools: `["default-ipv4-ippool"]`}, map[string]string{calico.AnnotationIPv4Pools: `["other"]`}, "172.21.0.0/16", "", ""},
		{"an unknown pool name is an error", map[string]string{calico.AnnotationIPv4Pools: `["nope"]`}, nil, "", `error parsing pool "nope": invalid CIDR address: nope`, ""},
		{"a disabled pool is refused", map[string]string{calico.AnnotationIPv4Pools: `["off"]`}, nil, "", "the given pool (10.8.0.0/16) does not exist, or is not enabled", ""},
		{"an IPv6 CIDR among IPv4 pools is refused", map[string]string{calico.AnnotationIPv4Pools: `["fd00::/64"]`}, nil, "", `"fd00::" isn't a IPv4 address`, ""},
		{"the annotation must be a JSON list", map[string]string{calico.AnnotationIPv4Pools: `other`}, nil, "", "invalid character", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, strict(), def, other, off)
			m.SetNode("k8s-lab-node-1", linux)
			a, err := m.AssignPodRequest(PodRequest{Node: "k8s-lab-node-1", Handle: "h", PodAnnotations: tc.pod, NamespaceAnnotations: tc.ns})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !netip.MustParsePrefix(tc.inPool).Contains(a) {
				t.Fatalf("got %v, %v; want an address in %s", a, err, tc.inPool)
			}
		})
	}
}

// ipam.go determinePools with lib/ipam/pools.go SelectsNamespace: a pool
// with a namespaceSelector serves only pods of namespaces it selects; a
// request without a namespace (a tunnel address) is matched against no
// labels.
func TestNamespaceSelectorsChooseThePool(t *testing.T) {
	teamA := Pool{Name: "a-team", CIDR: netip.MustParsePrefix("10.10.0.0/16"), NamespaceSelector: "team == 'a'"}
	rest := Pool{Name: "b-rest", CIDR: netip.MustParsePrefix("10.20.0.0/16"), NamespaceSelector: "!has(team)", VXLANMode: "Always"}
	cases := []struct {
		name   string
		labels map[string]string
		inPool string
	}{
		{"a namespace the selector matches uses the pool", map[string]string{"team": "a"}, "10.10.0.0/16"},
		{"a namespace it does not match uses another pool", map[string]string{"team": "b"}, ""},
		{"a namespace without labels uses the pool for no team", nil, "10.20.0.0/16"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, strict(), teamA, rest)
			m.SetNode("n", linux)
			a, err := m.AssignPodRequest(PodRequest{Node: "n", Handle: "h", NamespaceLabels: tc.labels})
			if tc.inPool == "" {
				if err == nil || err.Error() != "no configured Calico pools for node n" {
					t.Fatalf("got %v, %v; want no pool for the node", a, err)
				}
				return
			}
			if err != nil || !netip.MustParsePrefix(tc.inPool).Contains(a) {
				t.Fatalf("got %v, %v; want an address in %s", a, err, tc.inPool)
			}
		})
	}
	t.Run("a request without a namespace is matched against no labels", func(t *testing.T) {
		m := newModel(t, strict(), teamA)
		m.SetNode("w", windows)
		if _, err := m.EnsureWindowsBlock("w"); err == nil || err.Error() != "no configured Calico pools for node w" {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a tunnel address asks for its pools by CIDR, so selectors do not apply", func(t *testing.T) {
		m := newModel(t, strict(), teamA, rest)
		m.SetNode("n", linux)
		m.pools[1].NamespaceSelector = "has(team)"
		if a, err := m.TunnelAddress("n", AttrTypeVXLAN, netip.Addr{}); err != nil || !rest.CIDR.Contains(a) {
			t.Errorf("got %v, %v; want an address in %s", a, err, rest.CIDR)
		}
	})
}

// cni-plugin/pkg/k8s/k8s.go ipAddrsResult → ipam_plugin.go (IP in CNI_ARGS)
// → ipam.go AssignIP: exactly that address, under the pod's handle, its
// block claimed for the node when it does not exist (getPendingAffinity,
// claimAffineBlock). validateAndExtractIPs allows one address per family.
func TestTheIPAddrsAnnotationAssignsExactlyThatAddress(t *testing.T) {
	t.Run("the address is assigned and its block becomes the node's", func(t *testing.T) {
		m := newModel(t, strict(), labPool())
		m.SetNode("k8s-lab-node-1", linux)
		a, err := m.AssignPodRequest(PodRequest{Node: "k8s-lab-node-1", Handle: "h", PodAnnotations: map[string]string{calico.AnnotationIPAddrs: `["172.21.5.77"]`}})
		if err != nil || a != mustAddr("172.21.5.77") {
			t.Fatalf("got %v, %v", a, err)
		}
		if b := m.BlockOf("k8s-lab-node-1"); !slices.Equal(b, []netip.Prefix{netip.MustParsePrefix("172.21.5.64/26")}) {
			t.Errorf("node's blocks %v, want 172.21.5.64/26", b)
		}
		if o, _ := m.Lookup(a); o.Handle != "h" {
			t.Errorf("owner %+v", o)
		}
	})
	cases := []struct {
		name, value, want string
	}{
		{"two IPv4 addresses are refused", `["172.21.5.77","172.21.5.78"]`, `cannot have more than one IPv4 address for "cni.projectcalico.org/ipAddrs" annotation`},
		{"an empty list is refused", `[]`, `annotation "cni.projectcalico.org/ipAddrs" specified but empty`},
		{"a value that is not an address is refused", `["nope"]`, "invalid IP format: nope"},
		{"an address outside every pool is refused", `["10.1.1.1"]`, "error getting IP from IPAM: The provided IP address is not in a configured pool"},
		{"an address in use is refused", `["172.21.211.0"]`, "error getting IP from IPAM: resource already exists: 172.21.211.0 with error: Address already assigned in block"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, strict(), labPool())
			m.SetNode("k8s-lab-node-1", linux)
			if _, err := m.VXLANTunnelAddress("k8s-lab-node-1"); err != nil {
				t.Fatal(err)
			}
			_, err := m.AssignPodRequest(PodRequest{Node: "k8s-lab-node-1", Handle: "h", PodAnnotations: map[string]string{calico.AnnotationIPAddrs: tc.value}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// kube-controllers/pkg/controllers/ippool/pool_controller.go sets
// Allocatable=False on a pool overlapping an older one;
// lib/clientv3/client.go filterIPPool then leaves it out of
// GetEnabledPools. allocateip.go determineEnabledPoolCIDRs does not look
// at the condition, so calico-node asks for that pool by CIDR and
// determinePools refuses it: the tunnel allocation fails.
func TestAnOverlappingPoolIsNotUsed(t *testing.T) {
	older := &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "z-old", CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Spec: calico.IPPoolSpec{CIDR: "172.21.0.0/16"}}
	newer := &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "a-new", CreationTimestamp: metav1.NewTime(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))},
		Spec: calico.IPPoolSpec{CIDR: "172.21.128.0/17", VXLANMode: "Always", BlockSize: 28}}
	off := &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "off"}, Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/8", Disabled: true}}
	alloc := Allocatable([]*calico.IPPool{older, newer, off})
	if want := map[string]bool{"z-old": true, "a-new": false, "off": false}; len(alloc) != 3 || alloc["z-old"] != want["z-old"] || alloc["a-new"] != want["a-new"] || alloc["off"] != want["off"] {
		t.Fatalf("Allocatable = %v, want %v", alloc, want)
	}
	var pools []Pool
	for _, p := range []*calico.IPPool{older, newer} {
		pp, err := PoolFromCalico(p)
		if err != nil {
			t.Fatal(err)
		}
		pp.Unallocatable = !alloc[p.Name]
		pools = append(pools, pp)
	}
	m := newModel(t, strict(), pools...)
	m.SetNode("k8s-lab-node-1", linux)
	t.Run("pods get addresses from the older pool only", func(t *testing.T) {
		for i := range 3 {
			if _, err := m.AssignPod("k8s-lab-node-1", PodHandle(string(rune('a'+i))), nil); err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
		}
		// The pools' block sizes tell their blocks apart (the newer pool
		// lies inside the older one).
		for _, u := range m.Usage() {
			if u.CIDR.Bits() != 26 {
				t.Errorf("block %s is the overlapping pool's", u.CIDR)
			}
		}
	})
	t.Run("the VXLAN tunnel allocation fails", func(t *testing.T) {
		_, err := m.TunnelAddress("k8s-lab-node-1", AttrTypeVXLAN, netip.Addr{})
		if err == nil || err.Error() != "the given pool (172.21.128.0/17) does not exist, or is not enabled" {
			t.Errorf("err %v", err)
		}
	})
}

// ipam_block.go release and garbageCollect append a released ordinal to
// the end of Unallocated: addresses free below the highest one observed in
// use were released, and come after every address never handed out.
func TestAddressesReleasedBeforeTheSnapshotAreReusedLast(t *testing.T) {
	m := newModel(t, strict(), labPool())
	m.SetNode("k8s-lab-win-1", windows)
	for _, a := range []string{"172.21.41.6", "172.21.41.5"} {
		if err := m.AssignObserved("k8s-lab-win-1", mustAddr(a), "obs-"+a, nil); err != nil {
			t.Fatal(err)
		}
	}
	m.SettleObserved()
	var got []string
	for i := range 58 {
		a, err := m.AssignPod("k8s-lab-win-1", PodHandle(string(rune('A'+i))), nil)
		if err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
		got = append(got, a.String())
	}
	if got[0] != "172.21.41.7" {
		t.Errorf("next pod %s, want 172.21.41.7", got[0])
	}
	if tail := got[56:]; !slices.Equal(tail, []string{"172.21.41.3", "172.21.41.4"}) {
		t.Errorf("last two %v, want .3 and .4", tail)
	}
	t.Run("a block read from an IPAMBlock keeps its own list", func(t *testing.T) {
		m2 := newModel(t, strict(), labPool())
		m2.SetNode("k8s-lab-win-1", windows)
		if _, err := m2.EnsureWindowsBlock("k8s-lab-win-1"); err != nil {
			t.Fatal(err)
		}
		if err := m2.AssignObserved("k8s-lab-win-1", mustAddr("172.21.41.6"), "x", nil); err != nil {
			t.Fatal(err)
		}
		loaded := newModel(t, strict(), labPool())
		loaded.SetNode("k8s-lab-win-1", windows)
		if err := loaded.Load(m2.Blocks(), m2.Affinities()); err != nil {
			t.Fatal(err)
		}
		loaded.SettleObserved()
		if a, _ := loaded.AssignPod("k8s-lab-win-1", "p", nil); a != mustAddr("172.21.41.3") {
			t.Errorf("next pod %s, want 172.21.41.3 from the loaded list", a)
		}
	})
}

// ipam_block_reader_writer.go findUsableBlock: with no unclaimed block
// left, a host takes another host's empty block (only the Windows
// reservation in it) claimed at least EmptyBlockMinReclaimAge ago
// (releaseBlockAffinity, then a fresh claim). The claim time is when the
// owner claimed it, so it depends on the join order.
func TestAnEmptyWindowsBlockIsReclaimedOnlyOnceAMinuteOld(t *testing.T) {
	p := Pool{Name: "small", CIDR: netip.MustParsePrefix("10.4.0.0/25"), BlockSize: 26, VXLANMode: "Always"}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		joinGap time.Duration
		wantErr string
	}{
		{"a node joining 30 seconds later finds no free block", 30 * time.Second, "No Free Blocks"},
		{"a node joining two minutes later takes the empty Windows block", 2 * time.Minute, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := strict()
			cfg.Now = t0
			m := newModel(t, cfg, p)
			m.SetNode("win-1", windows)
			m.SetNode("lin-1", linux)
			m.SetNode("win-2", windows)
			winBlock, err := m.EnsureWindowsBlock("win-1")
			if err != nil {
				t.Fatalf("win-1: %v", err)
			}
			m.SetNow(t0.Add(tc.joinGap / 2))
			if _, err := m.VXLANTunnelAddress("lin-1"); err != nil {
				t.Fatalf("lin-1: %v", err)
			}
			m.SetNow(t0.Add(tc.joinGap))
			b, err := m.EnsureWindowsBlock("win-2")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("win-2 got %v, %v; want %q", b, err, tc.wantErr)
				}
				return
			}
			if err != nil || b != winBlock {
				t.Fatalf("win-2 got %v, %v; want win-1's %s", b, err, winBlock)
			}
			if len(m.BlockOf("win-1")) != 0 {
				t.Errorf("win-1 still holds %v", m.BlockOf("win-1"))
			}
		})
	}
}

// allocateip.go ensureHostTunnelAddress: an address still this node's
// allocation of that type is kept only while it lies in one of the pools
// determineEnabledPoolCIDRs returns; otherwise it is released by handle
// and a new one is assigned (the Node annotation follows).
// removeHostTunnelAddr releases it when no pool asks for that tunnel.
func TestAPoolMigrationMovesTheTunnelAddress(t *testing.T) {
	old := Pool{Name: "a-old", CIDR: netip.MustParsePrefix("172.20.0.0/16"), VXLANMode: "Always", IPIPMode: "Never"}
	nw := Pool{Name: "b-new", CIDR: netip.MustParsePrefix("172.21.0.0/16"), VXLANMode: "Always"}
	record := func(m *IPAM, node, typ string, a netip.Addr) {
		t.Helper()
		if err := m.AssignIP(AssignIPArgs{IP: a, Handle: TunnelHandle(node, typ), Attrs: tunnelAttrs(node, typ), Host: node, Use: UseTunnel}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("an address in an enabled VXLAN pool is kept", func(t *testing.T) {
		m := newModel(t, strict(), old, nw)
		m.SetNode("k8s-node-1", linux)
		cur := mustAddr("172.20.9.0")
		record(m, "k8s-node-1", AttrTypeVXLAN, cur)
		if a, err := m.TunnelAddress("k8s-node-1", AttrTypeVXLAN, cur); err != nil || a != cur {
			t.Errorf("got %v, %v; want %s kept", a, err, cur)
		}
	})
	t.Run("once its pool is disabled the address moves to the enabled pool", func(t *testing.T) {
		m := newModel(t, strict(), old, nw)
		m.SetNode("k8s-node-1", linux)
		cur := mustAddr("172.20.9.0")
		record(m, "k8s-node-1", AttrTypeVXLAN, cur)
		m.pools[0].Disabled = true
		a, err := m.TunnelAddress("k8s-node-1", AttrTypeVXLAN, cur)
		if err != nil || !nw.CIDR.Contains(a) {
			t.Fatalf("got %v, %v; want an address in %s", a, err, nw.CIDR)
		}
		if held := m.IPsByHandle(VXLANTunnelHandle("k8s-node-1")); !slices.Equal(held, []netip.Addr{a}) {
			t.Errorf("handle holds %v, want only %s", held, a)
		}
	})
	t.Run("an IPIP address is released when no pool asks for IPIP", func(t *testing.T) {
		ip := old
		ip.IPIPMode, ip.VXLANMode = "Always", "Never"
		m := newModel(t, strict(), ip, nw)
		m.SetNode("k8s-node-1", linux)
		cur := mustAddr("172.20.9.0")
		record(m, "k8s-node-1", AttrTypeIPIP, cur)
		m.pools[0].IPIPMode = "Never"
		if a, err := m.TunnelAddress("k8s-node-1", AttrTypeIPIP, cur); err != nil || a.IsValid() {
			t.Errorf("got %v, %v; want no IPIP address", a, err)
		}
		if _, ok := m.Lookup(cur); ok {
			t.Errorf("%s is still allocated", cur)
		}
	})
	t.Run("an address another allocation holds is replaced, the other kept", func(t *testing.T) {
		m := newModel(t, strict(), nw)
		m.SetNode("k8s-node-1", linux)
		pod := mustAddr("172.21.50.10")
		if err := m.AssignIP(AssignIPArgs{IP: pod, Handle: PodHandle("x"), Attrs: PodAttrs("k8s-node-1", "d", "p"), Host: "k8s-node-1"}); err != nil {
			t.Fatal(err)
		}
		a, err := m.TunnelAddress("k8s-node-1", AttrTypeVXLAN, pod)
		if err != nil || a == pod || !a.IsValid() {
			t.Errorf("got %v, %v; want a new address", a, err)
		}
		if o, ok := m.Lookup(pod); !ok || o.Handle != PodHandle("x") {
			t.Errorf("the pod's allocation is gone: %+v", o)
		}
	})
}
