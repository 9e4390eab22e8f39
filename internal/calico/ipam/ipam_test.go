package ipam

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/big"
	"math/rand"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

var (
	linux   = map[string]string{"kubernetes.io/os": "linux"}
	windows = map[string]string{"kubernetes.io/os": "windows"}
)

func labPool() Pool {
	return Pool{Name: "default-ipv4-ippool", CIDR: netip.MustParsePrefix("172.21.0.0/16"), BlockSize: 26, VXLANMode: "Always", NodeSelector: "all()"}
}

func newModel(t *testing.T, cfg Config, pools ...Pool) *IPAM {
	t.Helper()
	m, err := New(pools, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func strict() Config { c := DefaultConfig(); c.StrictAffinity = true; return c }

// startIndex recomputes, independently of walk.go, the block index a host
// starts from: FNV-32 of the name seeds math/rand, and big.Int.Rand draws
// from [0, n).
func startIndex(host string, n int64) int64 {
	h := fnv.New32()
	h.Write([]byte(host))
	r := rand.New(rand.NewSource(int64(h.Sum32())))
	return new(big.Int).Rand(r, big.NewInt(n)).Int64()
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestLabBlocks(t *testing.T) {
	// The lab of seed 000: three Linux nodes and a Windows node joining in
	// this order, pool 172.21.0.0/16 with /26 blocks, strictAffinity true.
	cases := []struct {
		name       string
		node       string
		labels     map[string]string
		wantBlock  string
		wantTunnel string
	}{
		{"the control plane node gets 172.21.70.192/26 and its first address as tunnel", "k8s-lab-master-1", linux, "172.21.70.192/26", "172.21.70.192"},
		{"the first worker gets 172.21.211.0/26", "k8s-lab-node-1", linux, "172.21.211.0/26", "172.21.211.0"},
		{"the second worker gets 172.21.172.0/26", "k8s-lab-node-2", linux, "172.21.172.0/26", "172.21.172.0"},
		{"the Windows node gets 172.21.41.0/26 and .1 as tunnel", "k8s-lab-win-1", windows, "172.21.41.0/26", "172.21.41.1"},
	}
	m := newModel(t, strict(), labPool())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m.SetNode(c.node, c.labels)
			tun, err := m.VXLANTunnelAddress(c.node)
			if err != nil {
				t.Fatal(err)
			}
			if tun.String() != c.wantTunnel {
				t.Errorf("tunnel address = %s, want %s", tun, c.wantTunnel)
			}
			if got := m.BlockOf(c.node); len(got) != 1 || got[0].String() != c.wantBlock {
				t.Errorf("blocks of %s = %v, want [%s]", c.node, got, c.wantBlock)
			}
		})
	}
	t.Run("the start index of the walk is what FNV-32 and math/rand give", func(t *testing.T) {
		// 172.21.70.192/26 is block 70*4+3 = 283 of 1024 and nothing was
		// claimed before it, so it must be the master's start index.
		if got := startIndex("k8s-lab-master-1", 1024); got != 283 {
			t.Errorf("start index = %d, want 283", got)
		}
	})
}

func TestBlocksOfOtherPoolsAndHosts(t *testing.T) {
	cases := []struct {
		name  string
		pool  Pool
		hosts []string
	}{
		{"a /16 pool with /24 blocks", Pool{Name: "p", CIDR: netip.MustParsePrefix("10.244.0.0/16"), BlockSize: 24}, []string{"worker-a", "worker-b", "cp-1"}},
		{"a /20 pool with /28 blocks", Pool{Name: "p", CIDR: netip.MustParsePrefix("192.168.16.0/20"), BlockSize: 28}, []string{"n1", "n2", "n3", "n4"}},
		{"a /12 pool with the default /26 blocks", Pool{Name: "p", CIDR: netip.MustParsePrefix("100.64.0.0/12")}, []string{"k8s-prod-node-17"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, strict(), c.pool)
			bs := c.pool.BlockSize
			if bs == 0 {
				bs = 26
			}
			n := int64(1) << (bs - c.pool.CIDR.Bits())
			for _, h := range c.hosts {
				m.SetNode(h, linux)
				got, err := m.AssignPod(h, PodHandle(h), nil)
				if err != nil {
					t.Fatal(err)
				}
				// With no collisions the block is the host's start block and
				// the pod its first address.
				idx := startIndex(h, n)
				want := addrAdd(c.pool.CIDR.Addr(), new(big.Int).Lsh(big.NewInt(idx), uint(32-bs)))
				if got != want {
					t.Errorf("%s got %s, want %s (block index %d)", h, got, want, idx)
				}
			}
		})
	}
}

func TestWalkWrapsAndSkipsClaimedBlocks(t *testing.T) {
	// Pool of four /30 blocks: 10.0.0.0, .4, .8, .12.
	p := Pool{Name: "small", CIDR: netip.MustParsePrefix("10.0.0.0/28"), BlockSize: 30}
	host := "wrapper"
	s := startIndex(host, 4)
	m := newModel(t, strict(), p)
	m.SetNode(host, linux)
	m.SetNode("other", linux)
	// Take the host's start block for another node first.
	startBlock := netip.PrefixFrom(mustAddr(fmt.Sprintf("10.0.0.%d", 4*s)), 30)
	if err := m.AssignObserved("other", startBlock.Addr(), "h-other", nil); err != nil {
		t.Fatal(err)
	}
	got, err := m.AssignPod(host, "h", nil)
	if err != nil {
		t.Fatal(err)
	}
	next := (s + 1) % 4 // upward, wrapping to block 0 after the last
	if want := mustAddr(fmt.Sprintf("10.0.0.%d", 4*next)); got != want {
		t.Errorf("a host whose start block is taken got %s, want the next block's %s", got, want)
	}
}

func TestNodeSelectorFiltersPools(t *testing.T) {
	winPool := Pool{Name: "a-windows", CIDR: netip.MustParsePrefix("10.10.0.0/24"), NodeSelector: "kubernetes.io/os == 'windows'"}
	linPool := Pool{Name: "b-linux", CIDR: netip.MustParsePrefix("10.20.0.0/24"), NodeSelector: "kubernetes.io/os == 'linux'"}
	m := newModel(t, strict(), winPool, linPool)
	m.SetNode("l", linux)
	m.SetNode("w", windows)
	cases := []struct {
		name, node string
		want       netip.Prefix
	}{
		{"a Linux node only uses the pool that selects Linux", "l", linPool.CIDR},
		{"a Windows node only uses the pool that selects Windows", "w", winPool.CIDR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := range 5 {
				a, err := m.AssignPod(c.node, fmt.Sprintf("%s-%d", c.node, i), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !c.want.Contains(a) {
					t.Fatalf("%s got %s outside %s", c.node, a, c.want)
				}
			}
		})
	}
	t.Run("a node no pool selects gets upstream's error", func(t *testing.T) {
		m.SetNode("mac", map[string]string{"kubernetes.io/os": "darwin"})
		_, err := m.AssignPod("mac", "x", nil)
		if err == nil || err.Error() != "no configured Calico pools for node mac" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an unknown node is an error, not an address", func(t *testing.T) {
		_, err := m.AssignPod("ghost", "x", nil)
		if err == nil || !strings.Contains(err.Error(), `nodes "ghost" not found`) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestWindowsBlocks(t *testing.T) {
	m := newModel(t, strict(), labPool())
	m.SetNode("k8s-lab-win-1", windows)
	block := netip.MustParsePrefix("172.21.41.0/26")

	t.Run("calico-node on Windows claims the block with four reserved addresses", func(t *testing.T) {
		got, err := m.EnsureWindowsBlock("k8s-lab-win-1")
		if err != nil || got != block {
			t.Fatalf("EnsureWindowsBlock = %v, %v", got, err)
		}
		for _, ip := range []string{"172.21.41.0", "172.21.41.1", "172.21.41.2", "172.21.41.63"} {
			o, ok := m.Lookup(mustAddr(ip))
			if !ok || !o.Reserved || o.Handle != WindowsReservedHandle || o.Attrs["note"] != "windows host rsvd" {
				t.Errorf("%s: owner %+v, %v", ip, o, ok)
			}
		}
		u := m.Usage()[0]
		if u.Reserved != 4 || u.Free != 60 || u.Allocated != 0 {
			t.Errorf("usage %+v, want 4 reserved and 60 free", u)
		}
	})

	var got []netip.Addr
	t.Run("a Windows node never gets .0 .1 .2 or the last address", func(t *testing.T) {
		for i := range 60 {
			a, err := m.AssignPod("k8s-lab-win-1", PodHandle(fmt.Sprint(i)), PodAttrs("k8s-lab-win-1", "win-demo", fmt.Sprint("p", i)))
			if err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
			got = append(got, a)
		}
		for i, a := range got {
			if want := nthAddr(block, 3+i); a != want {
				t.Fatalf("pod %d got %s, want %s", i, a, want)
			}
		}
	})
	t.Run("the 61st pod fails with the per-host block limit, not a second block", func(t *testing.T) {
		_, err := m.AssignPod("k8s-lab-win-1", PodHandle("61"), nil)
		if !errors.Is(err, ErrBlockLimit) || err.Error() != "cannot allocate new block due to per host block limit" {
			t.Errorf("err = %v", err)
		}
		if n := len(m.BlockOf("k8s-lab-win-1")); n != 1 {
			t.Errorf("the node holds %d blocks", n)
		}
	})
	t.Run("the Windows tunnel address is .1 and is not allocated separately", func(t *testing.T) {
		a, err := m.VXLANTunnelAddress("k8s-lab-win-1")
		if err != nil || a != mustAddr("172.21.41.1") {
			t.Errorf("tunnel = %v, %v", a, err)
		}
		if ips := m.IPsByHandle(VXLANTunnelHandle("k8s-lab-win-1")); len(ips) != 0 {
			t.Errorf("a tunnel handle holds %v", ips)
		}
	})
}

func TestWindowsNeedsStrictAffinity(t *testing.T) {
	m := newModel(t, DefaultConfig(), labPool())
	m.SetNode("k8s-lab-win-1", windows)
	for name, f := range map[string]func() error{
		"the CNI plugin on Windows refuses to assign": func() error { _, err := m.AssignPod("k8s-lab-win-1", "h", nil); return err },
		"calico-node on Windows refuses to claim":     func() error { _, err := m.VXLANTunnelAddress("k8s-lab-win-1"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if err := f(); err == nil || err.Error() != "global strict affinity should not be false for Windows node" {
				t.Errorf("err = %v", err)
			}
		})
	}
	t.Run("no block was claimed", func(t *testing.T) {
		if len(m.Blocks()) != 0 {
			t.Errorf("blocks: %v", m.Blocks())
		}
	})
}

func TestWindowsRejectsBlocksTooSmallForTheReservation(t *testing.T) {
	m := newModel(t, strict(), Pool{Name: "tiny", CIDR: netip.MustParsePrefix("10.0.0.0/24"), BlockSize: 30})
	m.SetNode("w", windows)
	_, err := m.AssignPod("w", "h", nil)
	if !errors.Is(err, ErrNoQualifiedPool) || err.Error() != "cannot find a qualified ippool" {
		t.Errorf("err = %v", err)
	}
}

func TestAnObservedWindowsAddressInABlockTooSmallForTheReservationIsRefused(t *testing.T) {
	for _, bs := range []int{30, 31, 32} {
		t.Run(fmt.Sprintf("blockSize %d", bs), func(t *testing.T) {
			m := newModel(t, strict(), Pool{Name: "tiny", CIDR: netip.MustParsePrefix("10.0.0.0/24"), BlockSize: bs})
			m.SetNode("w", windows)
			err := m.AssignObserved("w", mustAddr("10.0.0.9"), "h", nil)
			if !errors.Is(err, ErrNoQualifiedPool) || !strings.Contains(err.Error(), fmt.Sprintf(`IP pool "tiny" has blockSize %d`, bs)) {
				t.Errorf("err = %v", err)
			}
			if len(m.Blocks()) != 0 {
				t.Errorf("a block was claimed: %v", m.Blocks())
			}
		})
	}
	t.Run("a Linux node takes the same address", func(t *testing.T) {
		m := newModel(t, strict(), Pool{Name: "tiny", CIDR: netip.MustParsePrefix("10.0.0.0/24"), BlockSize: 32})
		m.SetNode("l", linux)
		if err := m.AssignObserved("l", mustAddr("10.0.0.9"), "h", nil); err != nil {
			t.Errorf("err = %v", err)
		}
	})
}

func TestOrdinalReuseOrder(t *testing.T) {
	// One /29 block of 8 addresses for one node.
	p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.1.0.0/29"), BlockSize: 29}
	handles := 0
	seq := func(m *IPAM, n int) []string {
		var out []string
		for range n {
			handles++
			a, err := m.AssignPod("n", fmt.Sprint("h-", handles), nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a.String())
		}
		return out
	}
	cases := []struct {
		name    string
		first   int
		release []string
		then    int
		want    []string
	}{
		{"addresses come from the front of the block", 3, nil, 0, nil},
		{"a released address goes to the back of the queue", 3, []string{"10.1.0.1"}, 6, []string{"10.1.0.3", "10.1.0.4", "10.1.0.5", "10.1.0.6", "10.1.0.7", "10.1.0.1"}},
		{"addresses released together queue in ordinal order", 4, []string{"10.1.0.3", "10.1.0.0"}, 6, []string{"10.1.0.4", "10.1.0.5", "10.1.0.6", "10.1.0.7", "10.1.0.0", "10.1.0.3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, strict(), p)
			m.SetNode("n", linux)
			first := seq(m, c.first)
			for i, a := range first {
				if a != fmt.Sprintf("10.1.0.%d", i) {
					t.Fatalf("first round %v", first)
				}
			}
			var rel []netip.Addr
			for _, r := range c.release {
				rel = append(rel, mustAddr(r))
			}
			if skipped := m.ReleaseIPs(rel...); len(skipped) != 0 {
				t.Fatalf("skipped %v", skipped)
			}
			if got := seq(m, c.then); !slices.Equal(got, c.want) && c.then > 0 {
				t.Errorf("after release got %v, want %v", got, c.want)
			}
		})
	}
	t.Run("separate releases queue in release order", func(t *testing.T) {
		m := newModel(t, strict(), p)
		m.SetNode("n", linux)
		seq(m, 8)
		m.ReleaseIPs(mustAddr("10.1.0.6"))
		m.ReleaseIPs(mustAddr("10.1.0.2"))
		if got := seq(m, 2); !slices.Equal(got, []string{"10.1.0.6", "10.1.0.2"}) {
			t.Errorf("got %v", got)
		}
	})
	t.Run("the seed's Windows pods get .5 and .6 after .3 and .4 were used and freed", func(t *testing.T) {
		m := newModel(t, strict(), labPool())
		m.SetNode("k8s-lab-win-1", windows)
		a1, _ := m.AssignPod("k8s-lab-win-1", "old-1", nil)
		a2, _ := m.AssignPod("k8s-lab-win-1", "old-2", nil)
		m.ReleaseByHandle("old-1")
		m.ReleaseByHandle("old-2")
		b1, _ := m.AssignPod("k8s-lab-win-1", "new-1", nil)
		b2, _ := m.AssignPod("k8s-lab-win-1", "new-2", nil)
		got := []string{a1.String(), a2.String(), b1.String(), b2.String()}
		if want := []string{"172.21.41.3", "172.21.41.4", "172.21.41.5", "172.21.41.6"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("releasing an address nobody holds reports it back", func(t *testing.T) {
		m := newModel(t, strict(), p)
		m.SetNode("n", linux)
		seq(m, 1)
		skipped := m.ReleaseIPs(mustAddr("10.1.0.5"), mustAddr("192.0.2.1"))
		if len(skipped) != 2 {
			t.Errorf("skipped %v", skipped)
		}
	})
}

func TestCooldown(t *testing.T) {
	p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.1.0.0/30"), BlockSize: 30}
	cfg := strict()
	cfg.IPCooldownSeconds = 30
	cfg.Now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	m := newModel(t, cfg, p)
	m.SetNode("n", linux)
	for i := range 4 {
		if _, err := m.AssignPod("n", fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	m.ReleaseIPs(mustAddr("10.1.0.2"))
	t.Run("a released address stays unusable during the cooldown", func(t *testing.T) {
		if u := m.Usage()[0]; u.Cooldown != 1 || u.Free != 0 {
			t.Errorf("usage %+v", u)
		}
		_, err := m.AssignPod("n", "x", nil)
		if err == nil || !strings.Contains(err.Error(), "Assigned 0 out of 1 requested IPv4 addresses") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("after the cooldown it is handed out again", func(t *testing.T) {
		m.Advance(31 * time.Second)
		a, err := m.AssignPod("n", "y", nil)
		if err != nil || a != mustAddr("10.1.0.2") {
			t.Errorf("got %v, %v", a, err)
		}
	})
}

func TestBorrowing(t *testing.T) {
	// Two /30 blocks (10.9.0.0 and 10.9.0.4); nodes a and b take one each
	// with a tunnel-less pod, then node c arrives.
	p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.9.0.0/29"), BlockSize: 30}
	setup := func(cfg Config) *IPAM {
		m := newModel(t, cfg, p)
		for _, n := range []string{"a", "b", "c"} {
			m.SetNode(n, linux)
		}
		for _, n := range []string{"a", "b"} {
			if _, err := m.AssignPod(n, "first-"+n, nil); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	t.Run("without strict affinity a node with no block borrows in its walk order", func(t *testing.T) {
		m := setup(DefaultConfig())
		got, err := m.AssignPod("c", "c-1", PodAttrs("c", "default", "p"))
		if err != nil {
			t.Fatal(err)
		}
		// c's walk starts at block startIndex("c", 2); the first free
		// address there is ordinal 1 (ordinal 0 went to that block's owner).
		want := mustAddr(fmt.Sprintf("10.9.0.%d", 4*startIndex("c", 2)+1))
		if got != want {
			t.Errorf("borrowed %s, want %s", got, want)
		}
		if len(m.BlockOf("c")) != 0 {
			t.Error("borrowing must not claim a block")
		}
		o, _ := m.Lookup(got)
		if o.Attrs[AttrNode] != "c" || o.Handle != "c-1" {
			t.Errorf("owner %+v", o)
		}
		var borrowed int
		for _, u := range m.Usage() {
			borrowed += u.Borrowed
		}
		if borrowed != 1 {
			t.Errorf("usage reports %d borrowed", borrowed)
		}
	})
	t.Run("a node whose own block is full borrows from another node's block", func(t *testing.T) {
		m := setup(DefaultConfig())
		for i := range 3 {
			if _, err := m.AssignPod("a", fmt.Sprint("a-", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.AssignPod("a", "a-over", nil)
		if err != nil {
			t.Fatal(err)
		}
		bBlock := m.BlockOf("b")[0]
		if !bBlock.Contains(got) {
			t.Errorf("a overflowed to %s, want inside b's %s", got, bBlock)
		}
	})
	t.Run("with strict affinity there is no borrowing", func(t *testing.T) {
		m := setup(strict())
		_, err := m.AssignPod("c", "c-1", nil)
		want := "failed to request IPv4 addresses: Assigned 0 out of 1 requested IPv4 addresses; No more free affine blocks and strict affinity enabled"
		if err == nil || err.Error() != want {
			t.Errorf("err = %v\nwant %s", err, want)
		}
	})
	t.Run("a node at its block limit fails instead of borrowing", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.MaxBlocksPerHost = 1
		m := setup(cfg)
		for i := range 3 {
			m.AssignPod("a", fmt.Sprint("a-", i), nil)
		}
		_, err := m.AssignPod("a", "a-over", nil)
		if !errors.Is(err, ErrBlockLimit) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("releasing the last borrowed address of an unaffine block deletes it", func(t *testing.T) {
		m := setup(DefaultConfig())
		got, _ := m.AssignPod("c", "c-1", nil)
		owner := m.BlockOf("a")[0]
		if !owner.Contains(got) {
			owner = m.BlockOf("b")[0]
		}
		// Drop the owner's affinity while the block is in use (the block
		// stays, without affinity), then free everything in it.
		if err := m.releaseBlockAffinity(m.blocks[owner].host(), owner, false, nil); err != nil {
			t.Fatal(err)
		}
		m.ReleaseIPs(nthAddr(owner, 0), got)
		if _, ok := m.blocks[owner]; ok {
			t.Error("an empty block without affinity must be deleted")
		}
	})
}

func TestFullPool(t *testing.T) {
	p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.7.0.0/30"), BlockSize: 30}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"a full pool without strict affinity names the exhausted pool", DefaultConfig(),
			"failed to request IPv4 addresses: Assigned 0 out of 1 requested IPv4 addresses; No IPs available in pools: [10.7.0.0/30]"},
		{"a full pool with strict affinity says so", strict(),
			"failed to request IPv4 addresses: Assigned 0 out of 1 requested IPv4 addresses; No more free affine blocks and strict affinity enabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.cfg, p)
			m.SetNode("a", linux)
			m.SetNode("b", linux)
			for i := range 4 {
				if _, err := m.AssignPod("a", fmt.Sprint(i), nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []string{"a", "b"} {
				a, err := m.AssignPod(n, "late", nil)
				if err == nil || err.Error() != c.want {
					t.Errorf("%s: got %v, %v\nwant %s", n, a, err, c.want)
				}
			}
		})
	}
	t.Run("automatic block allocation off fails when the host has no room", func(t *testing.T) {
		cfg := strict()
		cfg.AutoAllocateBlocks = false
		m := newModel(t, cfg, p)
		m.SetNode("a", linux)
		if _, err := m.AssignPod("a", "x", nil); err == nil || err.Error() != "failed to find or claim a block" {
			t.Errorf("err = %v", err)
		}
	})
}

func TestEmptyBlockReclaim(t *testing.T) {
	p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.3.0.0/30"), BlockSize: 30}
	cfg := strict()
	cfg.Now = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	m := newModel(t, cfg, p)
	m.SetNode("a", linux)
	m.SetNode("b", linux)
	a, _ := m.AssignPod("a", "x", nil)
	m.ReleaseIPs(a)
	t.Run("an empty block claimed less than a minute ago is not taken", func(t *testing.T) {
		if _, err := m.AssignPod("b", "y", nil); err == nil {
			t.Error("b got an address from a's fresh block")
		}
	})
	t.Run("after a minute another node reclaims the empty block", func(t *testing.T) {
		m.Advance(2 * time.Minute)
		got, err := m.AssignPod("b", "y", nil)
		if err != nil || got != mustAddr("10.3.0.0") {
			t.Fatalf("got %v, %v", got, err)
		}
		if len(m.BlockOf("a")) != 0 || len(m.BlockOf("b")) != 1 {
			t.Errorf("affinities a=%v b=%v", m.BlockOf("a"), m.BlockOf("b"))
		}
	})
}

func TestSmallBlocksUseTheConfiguredSeed(t *testing.T) {
	p := Pool{Name: "lb", CIDR: netip.MustParsePrefix("10.5.0.0/28"), BlockSize: 32}
	for _, seed := range []int64{1, 42} {
		cfg := strict()
		cfg.SmallBlockSeed = seed
		m := newModel(t, cfg, p)
		m.SetNode("n", linux)
		got, err := m.AssignPod("n", "x", nil)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(seed))
		want := nthAddr(p.CIDR, int(new(big.Int).Rand(r, big.NewInt(16)).Int64()))
		if got != want {
			t.Errorf("seed %d: got %s, want %s", seed, got, want)
		}
	}
}

func TestTunnelAddresses(t *testing.T) {
	t.Run("a Linux node's tunnel address is allocated under its handle", func(t *testing.T) {
		m := newModel(t, strict(), labPool())
		m.SetNode("k8s-lab-node-2", linux)
		a, _ := m.VXLANTunnelAddress("k8s-lab-node-2")
		again, _ := m.VXLANTunnelAddress("k8s-lab-node-2")
		if a != again {
			t.Errorf("second call moved the address: %s -> %s", a, again)
		}
		o, _ := m.Lookup(a)
		if o.Handle != "vxlan-tunnel-addr-k8s-lab-node-2" || o.Attrs[AttrType] != "vxlanTunnelAddress" || o.Attrs[AttrNode] != "k8s-lab-node-2" {
			t.Errorf("owner %+v", o)
		}
		pod, _ := m.AssignPod("k8s-lab-node-2", PodHandle("c1"), nil)
		if pod != mustAddr("172.21.172.1") {
			t.Errorf("first pod got %s, want 172.21.172.1", pod)
		}
	})
	t.Run("pools without VXLAN give no tunnel address", func(t *testing.T) {
		p := labPool()
		p.VXLANMode = "Never"
		m := newModel(t, strict(), p)
		m.SetNode("n", linux)
		if a, err := m.VXLANTunnelAddress("n"); err != nil || a.IsValid() {
			t.Errorf("got %v, %v", a, err)
		}
	})
}

func TestObservedState(t *testing.T) {
	aff := "host:k8s-lab-master-1"
	idx0, idx1 := 0, 1
	h0, h1 := "vxlan-tunnel-addr-k8s-lab-master-1", "k8s-pod-network.abc"
	allocs := make([]*int, 64)
	allocs[0], allocs[3] = &idx0, &idx1
	var unalloc []int
	for i := 1; i < 64; i++ {
		if i != 3 {
			unalloc = append(unalloc, i)
		}
	}
	observed := &calico.IPAMBlock{
		ObjectMeta: metav1.ObjectMeta{Name: "172-21-70-192-26"},
		Spec: calico.IPAMBlockSpec{
			CIDR: "172.21.70.192/26", Affinity: &aff, Allocations: allocs, Unallocated: unalloc,
			Attributes: []calico.AllocationAttribute{
				{HandleID: &h0, ActiveOwnerAttrs: map[string]string{"node": "k8s-lab-master-1", "type": "vxlanTunnelAddress"}},
				{HandleID: &h1, ActiveOwnerAttrs: map[string]string{"node": "k8s-lab-master-1", "namespace": "kube-system", "pod": "coredns"}},
			},
			SequenceNumber: 7,
		},
	}
	affObj := &calico.BlockAffinity{ObjectMeta: metav1.ObjectMeta{Name: "k8s-lab-master-1-172-21-70-192-26"},
		Spec: calico.BlockAffinitySpec{State: "confirmed", Node: "k8s-lab-master-1", CIDR: "172.21.70.192/26"}}

	load := func(cfg Config) *IPAM {
		m := newModel(t, cfg, labPool())
		for _, n := range []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2"} {
			m.SetNode(n, linux)
		}
		m.SetNode("k8s-lab-win-1", windows)
		if err := m.Load([]*calico.IPAMBlock{observed}, []*calico.BlockAffinity{affObj}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Run("a loaded block continues from its unallocated list", func(t *testing.T) {
		m := load(strict())
		a, err := m.AssignPod("k8s-lab-master-1", "p", nil)
		if err != nil || a != mustAddr("172.21.70.193") {
			t.Errorf("got %v, %v", a, err)
		}
		if tun, _ := m.VXLANTunnelAddress("k8s-lab-master-1"); tun != mustAddr("172.21.70.192") {
			t.Errorf("the loaded tunnel address was not kept: %s", tun)
		}
	})
	t.Run("a loaded block renders back unchanged", func(t *testing.T) {
		m := load(strict())
		got, _ := json.Marshal(m.Blocks()[0].Spec)
		want, _ := json.Marshal(observed.Spec)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("an observed pod address marks its ordinal used", func(t *testing.T) {
		m := load(strict())
		if err := m.AssignObserved("k8s-lab-master-1", mustAddr("172.21.70.196"), "kc", PodAttrs("k8s-lab-master-1", "calico-system", "calico-kube-controllers")); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range 4 {
			a, _ := m.AssignPod("k8s-lab-master-1", "p", nil)
			got = append(got, a.String())
		}
		// .195 (ordinal 3) was loaded as taken, .196 was just observed.
		if want := []string{"172.21.70.193", "172.21.70.194", "172.21.70.197", "172.21.70.198"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		if err := m.AssignObserved("k8s-lab-master-1", mustAddr("172.21.70.196"), "again", nil); err == nil ||
			err.Error() != "resource already exists: 172.21.70.196 with error: Address already assigned in block" {
			t.Errorf("double assignment: %v", err)
		}
	})
	t.Run("an observed address in an unclaimed block claims it for the node", func(t *testing.T) {
		m := load(strict())
		if err := m.AssignObserved("k8s-lab-node-2", mustAddr("172.21.172.3"), "coredns-2", nil); err != nil {
			t.Fatal(err)
		}
		if b := m.BlockOf("k8s-lab-node-2"); len(b) != 1 || b[0].String() != "172.21.172.0/26" {
			t.Errorf("blocks %v", b)
		}
		if u := m.Usage(); u[1].Node != "k8s-lab-node-2" || u[1].Allocated != 1 {
			t.Errorf("usage %+v", u[1])
		}
	})
	t.Run("an observed Windows address claims the block with the reservation", func(t *testing.T) {
		m := load(strict())
		if err := m.AssignObserved("k8s-lab-win-1", mustAddr("172.21.41.6"), "asp", nil); err != nil {
			t.Fatal(err)
		}
		if o, ok := m.Lookup(mustAddr("172.21.41.63")); !ok || !o.Reserved {
			t.Errorf("last address not reserved: %+v", o)
		}
		a, _ := m.AssignPod("k8s-lab-win-1", "next", nil)
		if a != mustAddr("172.21.41.3") {
			t.Errorf("next pod %s", a)
		}
	})
	t.Run("with strict affinity an observed address in another node's block is refused", func(t *testing.T) {
		m := load(strict())
		err := m.AssignObserved("k8s-lab-node-1", mustAddr("172.21.70.200"), "x", nil)
		if err == nil || err.Error() != "Block host affinity does not match" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("without strict affinity it is recorded as borrowed", func(t *testing.T) {
		m := load(DefaultConfig())
		if err := m.AssignObserved("k8s-lab-node-1", mustAddr("172.21.70.200"), "x", PodAttrs("k8s-lab-node-1", "d", "p")); err != nil {
			t.Fatal(err)
		}
		if u := m.Usage()[0]; u.Borrowed != 1 {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("an address outside every pool is refused", func(t *testing.T) {
		m := load(strict())
		err := m.AssignObserved("k8s-lab-node-1", mustAddr("192.168.10.24"), "host-net", nil)
		if err == nil || err.Error() != "The provided IP address is not in a configured pool\n" {
			t.Errorf("err = %q", err)
		}
	})
	t.Run("a corrupt block is rejected on load", func(t *testing.T) {
		bad := *observed
		bad.Spec.Allocations = bad.Spec.Allocations[:10]
		if err := newModel(t, strict(), labPool()).Load([]*calico.IPAMBlock{&bad}, nil); err == nil {
			t.Error("no error")
		}
	})
}

func TestResources(t *testing.T) {
	cfg := strict()
	cfg.Now = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	m := newModel(t, cfg, labPool())
	m.SetNode("k8s-lab-win-1", windows)
	m.SetNode("k8s-lab-node-1", linux)
	m.VXLANTunnelAddress("k8s-lab-win-1")
	m.VXLANTunnelAddress("k8s-lab-node-1")
	m.AssignPod("k8s-lab-win-1", PodHandle("abc"), PodAttrs("k8s-lab-win-1", "win-demo", "aspnetapp"))

	blocks := m.Blocks()
	t.Run("blocks are named as Calico names them and sorted by name", func(t *testing.T) {
		var names []string
		for _, b := range blocks {
			names = append(names, b.Name)
		}
		if want := []string{"172-21-211-0-26", "172-21-41-0-26"}; !slices.Equal(names, want) {
			t.Errorf("names %v", names)
		}
	})
	t.Run("a Windows block lists the reservation then the pod", func(t *testing.T) {
		b := blocks[1]
		if b.APIVersion != "projectcalico.org/v3" || b.Kind != "IPAMBlock" || *b.Spec.Affinity != "host:k8s-lab-win-1" {
			t.Errorf("meta %v %v", b.TypeMeta, b.Spec.Affinity)
		}
		if *b.Spec.Attributes[0].HandleID != WindowsReservedHandle || *b.Spec.Attributes[1].HandleID != "k8s-pod-network.abc" {
			t.Errorf("attributes %v", b.Spec.Attributes)
		}
		for _, o := range []int{0, 1, 2, 63} {
			if b.Spec.Allocations[o] == nil || *b.Spec.Allocations[o] != 0 {
				t.Errorf("ordinal %d not reserved", o)
			}
		}
		if *b.Spec.Allocations[3] != 1 || b.Spec.Unallocated[0] != 4 || len(b.Spec.Unallocated) != 59 {
			t.Errorf("allocation 3=%v unallocated %v", *b.Spec.Allocations[3], b.Spec.Unallocated)
		}
		if b.Spec.AffinityClaimTime == nil || !b.Spec.AffinityClaimTime.Time.Equal(cfg.Now) {
			t.Errorf("claim time %v", b.Spec.AffinityClaimTime)
		}
		js, _ := json.Marshal(b)
		for _, want := range []string{`"handle_id":"windows-reserved-ipam-handle"`, `"secondary":{"note":"windows host rsvd"}`, `"name":"172-21-41-0-26"`} {
			if !strings.Contains(string(js), want) {
				t.Errorf("JSON lacks %s: %s", want, js)
			}
		}
	})
	t.Run("affinities are named <node>-<block> and carry Calico's labels", func(t *testing.T) {
		affs := m.Affinities()
		if len(affs) != 2 || affs[0].Name != "k8s-lab-node-1-172-21-211-0-26" || affs[1].Name != "k8s-lab-win-1-172-21-41-0-26" {
			t.Fatalf("affinities %v", affs)
		}
		a := affs[1]
		if a.Spec.State != "confirmed" || a.Spec.Node != "k8s-lab-win-1" || a.Spec.CIDR != "172.21.41.0/26" || a.Spec.Type != "host" {
			t.Errorf("spec %+v", a.Spec)
		}
		if a.Labels[LabelIPVersion] != "4" || a.Labels[LabelAffinityType] != "host" || len(a.Labels[LabelHostnameHash]) != 52 {
			t.Errorf("labels %v", a.Labels)
		}
	})
	t.Run("usage separates allocated, reserved and free", func(t *testing.T) {
		u := m.Usage()
		if u[0].CIDR.String() != "172.21.41.0/26" || u[0].Allocated != 1 || u[0].Reserved != 4 || u[0].Free != 59 || u[0].Capacity != 64 {
			t.Errorf("windows block %+v", u[0])
		}
		if u[1].Allocated != 1 || u[1].Reserved != 0 || u[1].Free != 63 {
			t.Errorf("linux block %+v", u[1])
		}
	})
}

func TestNames(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"an IPv4 block", BlockName(netip.MustParsePrefix("172.21.41.0/26")), "172-21-41-0-26"},
		{"an IPv6 block", BlockName(netip.MustParsePrefix("fd00:10:244::40/122")), "fd00-10-244--40-122"},
		{"an affinity", AffinityName("k8s-lab-win-1", netip.MustParsePrefix("172.21.41.0/26")), "k8s-lab-win-1-172-21-41-0-26"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	t.Run("a very long node name is shortened with a hash", func(t *testing.T) {
		long := strings.Repeat("n", 250)
		n := AffinityName(long, netip.MustParsePrefix("10.0.0.0/26"))
		if len(n) != 252 || !strings.Contains(n, "-10-0-0-0-26-") {
			t.Errorf("%d %q", len(n), n)
		}
	})
}

func TestConfigAndPools(t *testing.T) {
	f := false
	cfg := ConfigFrom(&calico.IPAMConfiguration{Spec: calico.IPAMConfigurationSpec{StrictAffinity: true, AutoAllocateBlocks: &f, MaxBlocksPerHost: 3}})
	if !cfg.StrictAffinity || cfg.AutoAllocateBlocks || cfg.MaxBlocksPerHost != 3 {
		t.Errorf("ConfigFrom = %+v", cfg)
	}
	if d := ConfigFrom(nil); d.StrictAffinity || !d.AutoAllocateBlocks {
		t.Errorf("default config %+v", d)
	}
	p, err := PoolFromCalico(&calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16", VXLANMode: "Always"}})
	if err != nil || p.CIDR.String() != "10.0.0.0/16" || p.VXLANMode != "Always" {
		t.Errorf("PoolFromCalico = %+v, %v", p, err)
	}
	for name, bad := range map[string]Pool{
		"a block size below 20 is refused":        {Name: "a", CIDR: netip.MustParsePrefix("10.0.0.0/8"), BlockSize: 16},
		"a block larger than the pool is refused": {Name: "b", CIDR: netip.MustParsePrefix("10.0.0.0/28"), BlockSize: 26},
		"an invalid node selector is refused":     {Name: "c", CIDR: netip.MustParsePrefix("10.0.0.0/16"), NodeSelector: "os = 'x'"},
	} {
		if _, err := New([]Pool{bad}, DefaultConfig()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDisabledPoolsAreNotUsed(t *testing.T) {
	a := Pool{Name: "a-old", CIDR: netip.MustParsePrefix("10.1.0.0/24"), Disabled: true}
	b := Pool{Name: "b-new", CIDR: netip.MustParsePrefix("10.2.0.0/24")}
	m := newModel(t, strict(), a, b)
	m.SetNode("n", linux)
	got, err := m.AssignPod("n", "x", nil)
	if err != nil || !b.CIDR.Contains(got) {
		t.Errorf("got %v, %v", got, err)
	}
}

func TestIPv6Pools(t *testing.T) {
	p := Pool{Name: "v6", CIDR: netip.MustParsePrefix("fd00:10:244::/56")}
	m := newModel(t, DefaultConfig(), p)
	m.SetNode("a", linux)
	m.SetNode("b", linux)
	ia, err := m.AutoAssign(AutoAssignArgs{Host: "a", Handle: "h", Use: UseWorkload, Version: 6, Num: 2})
	if err != nil || ia.PartialFulfillmentError() != nil {
		t.Fatalf("%v %v", err, ia.PartialFulfillmentError())
	}
	blk := m.BlockOf("a")
	if len(blk) != 0 {
		t.Errorf("IPv4 affinities %v", blk)
	}
	cidr := netip.PrefixFrom(ia.IPs[0], 122).Masked()
	if ia.IPs[0] != cidr.Addr() || ia.IPs[1] != ia.IPs[0].Next() || !p.CIDR.Contains(ia.IPs[0]) {
		t.Errorf("got %v in %s", ia.IPs, cidr)
	}
	// 2^66 blocks: the walk stops at the first unclaimed one.
	start := new(big.Int).Rand(rand.New(rand.NewSource(func() int64 { h := fnv.New32(); h.Write([]byte("a")); return int64(h.Sum32()) }())), new(big.Int).Lsh(big.NewInt(1), 66))
	want := addrAdd(p.CIDR.Addr(), new(big.Int).Lsh(start, 6))
	if cidr.Addr() != want {
		t.Errorf("block %s, want %s", cidr, want)
	}
}

func TestHandles(t *testing.T) {
	m := newModel(t, strict(), labPool())
	m.SetNode("n", linux)
	ia, err := m.AutoAssign(AutoAssignArgs{Host: "n", Handle: "multi", Use: UseWorkload, Num: 3})
	if err != nil || len(ia.IPs) != 3 {
		t.Fatalf("%v %v", ia, err)
	}
	if got := m.IPsByHandle("multi"); !slices.Equal(got, ia.IPs) {
		t.Errorf("IPsByHandle %v, want %v", got, ia.IPs)
	}
	if n := m.ReleaseByHandle("multi\r\n"); n != 3 {
		t.Errorf("released %d", n)
	}
	if got := m.IPsByHandle("multi"); len(got) != 0 {
		t.Errorf("still held: %v", got)
	}
	if _, err := m.AutoAssign(AutoAssignArgs{Host: "n"}); !errors.Is(err, ErrUseRequired) {
		t.Errorf("no use: %v", err)
	}
	t.Run("EnsureBlock returns the node's block even when it is full", func(t *testing.T) {
		p := Pool{Name: "p", CIDR: netip.MustParsePrefix("10.0.0.0/29"), BlockSize: 30}
		m := newModel(t, strict(), p)
		m.SetNode("n", linux)
		for i := range 4 {
			m.AssignPod("n", fmt.Sprint(i), nil)
		}
		b, err := m.EnsureBlock(BlockArgs{Host: "n"})
		if err != nil || b != m.BlockOf("n")[0] {
			t.Errorf("%v %v", b, err)
		}
	})
}
