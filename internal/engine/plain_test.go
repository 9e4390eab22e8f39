package engine_test

import (
	"hash/fnv"
	"math/big"
	"math/rand"
	"net/netip"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// calicoWalk is the block each host claims, worked out here from Calico's
// documented algorithm rather than the engine's ipam package, so that the
// two can disagree (libcalico-go lib/ipam/ipam_block_reader_writer.go):
//
//   - determineSeed: FNV-32 (not 32a) of the host name seeds math/rand;
//   - randomBlockGenerator: the first block is big.Int.Rand over the pool's
//     number of blocks, then the walk goes upwards, wrapping to block 0;
//   - findUsableBlock: the host takes the first block nobody has claimed.
//
// Hosts claim in join order: each calico-node claims its block at startup.
// It also reports whether some host found its start block taken (skipped)
// and whether some walk went past the pool's last block (wrapped).
func calicoWalk(t *testing.T, pool string, blockSize int, hosts []string) (blocks map[string]string, skipped, wrapped bool) {
	t.Helper()
	p := netip.MustParsePrefix(pool)
	numBlocks := int64(1) << (blockSize - p.Bits())
	span := uint32(1) << (32 - blockSize)
	base := p.Addr().As4()
	baseInt := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	claimed := map[int64]bool{}
	blocks = map[string]string{}
	for _, h := range hosts {
		f := fnv.New32()
		f.Write([]byte(h))
		r := rand.New(rand.NewSource(int64(f.Sum32())))
		i := new(big.Int).Rand(r, big.NewInt(numBlocks)).Int64()
		for n := int64(0); claimed[i]; n++ {
			if n == numBlocks {
				t.Fatalf("pool %s has no free block left for %s", pool, h)
			}
			skipped = true
			i++
			if i == numBlocks {
				i, wrapped = 0, true
			}
		}
		claimed[i] = true
		v := baseInt + uint32(i)*span
		a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		blocks[h] = netip.PrefixFrom(a, blockSize).String()
	}
	return blocks, skipped, wrapped
}

func TestCalicoWalkReproducesTheSeedsLabBlocks(t *testing.T) {
	// The test's own algorithm against the seed's observed blocks, so that
	// the plain-path expectations below rest on something checked.
	got, _, _ := calicoWalk(t, "172.21.0.0/16", 26, []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2", "k8s-lab-win-1"})
	want := map[string]string{
		"k8s-lab-master-1": "172.21.70.192/26",
		"k8s-lab-node-1":   "172.21.211.0/26",
		"k8s-lab-node-2":   "172.21.172.0/26",
		"k8s-lab-win-1":    "172.21.41.0/26",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk gives %v, the seed shows %v", got, want)
	}
}

func TestPlainNodesAreTheHosts(t *testing.T) {
	c := buildFiles(t, examplesPlain)
	if c.Kubeadm.Init != nil || c.Kubeadm.Cluster != nil {
		t.Fatalf("no kubeadm documents were given, got %+v", c.Kubeadm)
	}
	var got []string
	for _, h := range c.Hosts {
		got = append(got, h.Name+" "+h.OS+" "+h.Address)
	}
	want := []string{"cp-01 linux 10.20.0.11", "lnx-01 linux 10.20.0.21", "lnx-02 linux 10.20.0.22", "win-01 windows 10.20.0.31"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hosts in join order %v, want %v", got, want)
	}
	for _, n := range c.Nodes {
		k := model.Key{Kind: "Node", Name: n.Name}
		if !c.Observed(k) {
			t.Errorf("Node %s is not observed", n.Name)
		}
		// Observed Nodes keep their status: the engine does not re-derive it.
		if q := n.Status.Allocatable[corev1.ResourcePods]; q.Value() != 110 {
			t.Errorf("%s allocatable pods %s, want the observed 110", n.Name, q.String())
		}
	}
	win := findNode(t, c, "win-01")
	if !reflect.DeepEqual(win.Spec.Taints, []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}) {
		t.Errorf("win-01 taints %v", win.Spec.Taints)
	}
}

func TestPlainClusterRunsCalicoOnEveryNode(t *testing.T) {
	c := buildFiles(t, examplesPlain)
	for _, name := range []string{"calico", "calico-windows", "ippools"} {
		for _, cond := range findTigeraStatus(t, c, name).Status.Conditions {
			if want := map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}[cond.Type]; cond.Status != want {
				t.Errorf("TigeraStatus %s %s = %s (%s), want %s", name, cond.Type, cond.Status, cond.Message, want)
			}
		}
	}
	if ds := findDaemonSet(t, c, "calico-system", "calico-node-windows"); ds.Status.DesiredNumberScheduled != 1 || ds.Status.NumberReady != 1 {
		t.Errorf("calico-node-windows %d/%d, want 1/1", ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
	}
	if ds := findDaemonSet(t, c, "calico-system", "calico-node"); ds.Status.DesiredNumberScheduled != 3 {
		t.Errorf("calico-node desired %d, want 3", ds.Status.DesiredNumberScheduled)
	}
	if len(c.IPPools) != 1 || c.IPPools[0].Spec.CIDR != "10.244.0.0/16" || c.IPPools[0].Spec.BlockSize != 24 || c.IPPools[0].Spec.VXLANMode != "Always" {
		t.Errorf("IPPools %+v, want 10.244.0.0/16 /24 VXLAN Always", c.IPPools)
	}
}

// plainRole names the example's nodes by what they are.
var plainRole = map[string]string{"cp-01": "cp", "lnx-01": "lnx1", "lnx-02": "lnx2", "win-01": "win"}

// host is one node of a plain-path variant: which of the example's nodes it
// is, and its name.
type host struct{ role, name string }

// plainVariant loads examples/plain/ and renames its nodes, reorders their
// joins (creationTimestamps a minute apart in the given order) and swaps the
// Installation's pool: the same Nodes with other names, pools and block
// sizes.
func plainVariant(t *testing.T, pool string, blockSize int32, hosts []host) *model.Snapshot {
	t.Helper()
	s := snapshot(t, false, examplesPlain)
	t0 := time.Date(2026, 9, 14, 8, 0, 0, 0, time.UTC)
	byRole := map[string]int{}
	for i, h := range hosts {
		byRole[h.role] = i
	}
	for _, o := range s.Objects {
		switch x := o.Typed.(type) {
		case *corev1.Node:
			i, ok := byRole[plainRole[x.Name]]
			if !ok {
				t.Fatalf("variant does not name the example's node %s", x.Name)
			}
			name := hosts[i].name
			x.Name, o.Key.Name = name, name
			x.Labels["kubernetes.io/hostname"] = name
			for j := range x.Status.Addresses {
				if x.Status.Addresses[j].Type == corev1.NodeHostName {
					x.Status.Addresses[j].Address = name
				}
			}
			x.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(i) * time.Minute))
		case *operator.Installation:
			x.Spec.CalicoNetwork.IPPools[0].CIDR = pool
			x.Spec.CalicoNetwork.IPPools[0].BlockSize = &blockSize
		}
	}
	return s
}

func TestPlainNodesClaimTheBlocksOfCalicosWalk(t *testing.T) {
	example := []host{{"cp", "cp-01"}, {"lnx1", "lnx-01"}, {"lnx2", "lnx-02"}, {"win", "win-01"}}
	tests := []struct {
		name      string
		pool      string
		blockSize int32
		hosts     []host // in join order
		// skips and wraps: the case is chosen so that some host's walk
		// must step past a claimed block (skips), past the last block (wraps).
		skips, wraps bool
	}{
		{name: "the example: 10.244.0.0/16 in /24 blocks", pool: "10.244.0.0/16", blockSize: 24, hosts: example},
		{name: "the example's pool in /27 blocks", pool: "10.244.0.0/16", blockSize: 27, hosts: example},
		{name: "a /12 pool of 16384 /26 blocks", pool: "172.16.0.0/12", blockSize: 26, hosts: example},
		{name: "/29 blocks, the smallest that holds Windows' four reserved addresses", pool: "10.32.0.0/22", blockSize: 29, hosts: example},
		{
			name: "cloud-style host names", pool: "10.244.0.0/16", blockSize: 26,
			hosts: []host{{"cp", "ip-10-0-1-10"}, {"lnx1", "ip-10-0-1-11"}, {"lnx2", "ip-10-0-1-12"}, {"win", "ip-10-0-1-13"}},
		},
		{
			name: "a pool of four blocks: lnx-01 and win-01 find their start block taken and walk on",
			pool: "10.10.0.0/24", blockSize: 26, hosts: example, skips: true,
		},
		{
			name: "the same four blocks with the joins reversed give other blocks",
			pool: "10.10.0.0/24", blockSize: 26, skips: true,
			hosts: []host{{"win", "win-01"}, {"lnx2", "lnx-02"}, {"lnx1", "lnx-01"}, {"cp", "cp-01"}},
		},
		{
			name: "a walk that starts on the last, taken block wraps to the first",
			pool: "10.10.0.0/24", blockSize: 26, skips: true, wraps: true,
			hosts: []host{{"cp", "cp-2"}, {"lnx1", "linux-3"}, {"lnx2", "linux-1"}, {"win", "windows-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var order []string
			for _, h := range tt.hosts {
				order = append(order, h.name)
			}
			want, skipped, wrapped := calicoWalk(t, tt.pool, int(tt.blockSize), order)
			if skipped != tt.skips || wrapped != tt.wraps {
				t.Fatalf("test data: walk skipped=%v wrapped=%v, the case wants skips=%v wraps=%v", skipped, wrapped, tt.skips, tt.wraps)
			}
			c := build(t, plainVariant(t, tt.pool, tt.blockSize, tt.hosts))
			got := map[string]string{}
			for node, cidrs := range blocksByNode(c) {
				if len(cidrs) != 1 {
					t.Errorf("%s holds blocks %v, want one", node, cidrs)
				}
				got[node] = cidrs[0]
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("blocks %v\nwant   %v", got, want)
			}
			// Every pod on the pod network has an address in its node's block.
			for _, p := range c.Pods {
				if p.Spec.HostNetwork {
					continue
				}
				if p.Status.PodIP == "" {
					t.Errorf("pod %s/%s on %q has no address", p.Namespace, p.Name, p.Spec.NodeName)
					continue
				}
				if !netip.MustParsePrefix(want[p.Spec.NodeName]).Contains(addr(t, p.Status.PodIP)) {
					t.Errorf("pod %s/%s on %s has %s outside the node's block %s", p.Namespace, p.Name, p.Spec.NodeName, p.Status.PodIP, want[p.Spec.NodeName])
				}
			}
			// The Windows node's block carries the Windows reservations.
			var win string
			for _, h := range tt.hosts {
				if h.role == "win" {
					win = h.name
				}
			}
			b := blockOf(t, c, want[win])
			n := len(b.Spec.Allocations)
			for _, o := range []int{0, 1, 2, n - 1} {
				if a := b.Spec.Allocations[o]; a == nil || deref(b.Spec.Attributes[*a].HandleID) != "windows-reserved-ipam-handle" {
					t.Errorf("ordinal %d of %s is not reserved for Windows", o, want[win])
				}
			}
		})
	}
}

func TestPlainLinuxDeploymentStaysOnLinuxWorkers(t *testing.T) {
	c := buildFiles(t, examplesPlain)
	pods := podsWithPrefix(c, "web", "nginx-")
	if len(pods) != 3 {
		t.Fatalf("nginx pods %v, want 3", names(pods))
	}
	for _, p := range pods {
		if p.Spec.NodeName != "lnx-01" && p.Spec.NodeName != "lnx-02" {
			t.Errorf("%s on %q, want a Linux worker", p.Name, p.Spec.NodeName)
		}
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s is %s", p.Name, p.Status.Phase)
		}
	}
	es := slicesFor(c, "web", "nginx")
	if len(es) != 1 || len(es[0].Endpoints) != 3 || len(es[0].Ports) != 1 || *es[0].Ports[0].Port != 80 {
		t.Errorf("nginx EndpointSlices %+v, want 3 endpoints on port 80", es)
	}
}
