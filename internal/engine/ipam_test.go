package engine_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	annoVXLAN = "projectcalico.org/IPv4VXLANTunnelAddr"
	annoIPIP  = "projectcalico.org/IPv4IPIPTunnelAddr"
)

// The lab's k8s-lab-win-1 holds .5 and .6 (aspnetapp); .3 and .4 "have been
// used by other pods before". A release puts an address at the end of the
// block's free list (libcalico-go ipam_block.go release), so the next pod
// gets .7.
func TestTheLabsNextWindowsPodGetsTheAddressAfterTheObservedOnes(t *testing.T) {
	c := buildLab(t, "testdata/ipam/next-windows-pod.yaml")
	p := findPod(t, c, "default", "next")
	if p.Spec.NodeName != "k8s-lab-win-1" || p.Status.PodIP != "172.21.41.7" {
		t.Fatalf("next pod %s on %q, want 172.21.41.7 on k8s-lab-win-1", p.Status.PodIP, p.Spec.NodeName)
	}
	b := blockOf(t, c, "172.21.41.0/26")
	if n := len(b.Spec.Unallocated); n < 2 || b.Spec.Unallocated[n-2] != 3 || b.Spec.Unallocated[n-1] != 4 {
		t.Errorf("free list ends %v, want ordinals 3 and 4 last", b.Spec.Unallocated)
	}
}

// cni-plugin/pkg/k8s/k8s.go CmdAddK8s: the namespace's and then the pod's
// cni.projectcalico.org/ipv4pools choose the pool (by name, selectors
// ignored); cni.projectcalico.org/ipAddrs asks for one address, which
// ipam.go AssignIP gives exactly.
func TestPodAndNamespaceAnnotationsReachCalicoIPAM(t *testing.T) {
	c := buildLab(t, "testdata/ipam/pod-annotations.yaml")
	extra := netip.MustParsePrefix("10.77.0.0/16")
	cases := []struct {
		name, ns, pod string
		check         func(netip.Addr) bool
		want          string
	}{
		{"the pod's ipv4pools annotation takes the named pool, whose nodeSelector selects nothing", "default", "by-pod-annotation", extra.Contains, "an address in 10.77.0.0/16"},
		{"the namespace's ipv4pools annotation applies to its pods", "team-x", "by-namespace-annotation", extra.Contains, "an address in 10.77.0.0/16"},
		{"the ipAddrs annotation gives exactly its address", "default", "fixed-address", func(a netip.Addr) bool { return a == netip.MustParseAddr("172.21.172.50") }, "172.21.172.50"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := findPod(t, c, tc.ns, tc.pod)
			if a, err := netip.ParseAddr(p.Status.PodIP); err != nil || !tc.check(a) {
				t.Errorf("%s/%s has %q, want %s", tc.ns, tc.pod, p.Status.PodIP, tc.want)
			}
		})
	}
}

// allocateip.go determineEnabledPoolCIDRs and assignHostTunnelAddr: an IPIP
// pool gives the nodes it selects an IPIP tunnel address at the first
// address of their first block in it, recorded as
// projectcalico.org/IPv4IPIPTunnelAddr; other nodes get none.
func TestAnIPIPPoolGivesItsNodesAnIPIPTunnelAddress(t *testing.T) {
	c := buildLab(t, "testdata/ipam/ipip-pool.yaml")
	a, err := netip.ParseAddr(findNode(t, c, "k8s-lab-node-2").Annotations[annoIPIP])
	if err != nil || !netip.MustParsePrefix("10.88.0.0/16").Contains(a) || netip.PrefixFrom(a, 26).Masked().Addr() != a {
		t.Fatalf("k8s-lab-node-2 IPIP tunnel address %v (%v), want the first address of a /26 in 10.88.0.0/16", a, err)
	}
	b := blockOf(t, c, netip.PrefixFrom(a, 26).Masked().String())
	if deref(b.Spec.Affinity) != "host:k8s-lab-node-2" || len(b.Spec.Attributes) != 1 || deref(b.Spec.Attributes[0].HandleID) != "ipip-tunnel-addr-k8s-lab-node-2" ||
		b.Spec.Attributes[0].ActiveOwnerAttrs["type"] != "ipipTunnelAddress" {
		t.Errorf("block %s: affinity %s, attributes %+v", b.Spec.CIDR, deref(b.Spec.Affinity), b.Spec.Attributes)
	}
	if got := findNode(t, c, "k8s-lab-node-1").Annotations[annoIPIP]; got != "" {
		t.Errorf("k8s-lab-node-1 has an IPIP tunnel address %s from a pool that does not select it", got)
	}
	if got := findNode(t, c, "k8s-lab-node-2").Annotations[annoVXLAN]; got != "172.21.172.0" {
		t.Errorf("k8s-lab-node-2 VXLAN tunnel address %s, want 172.21.172.0 as before", got)
	}
}

// A pool overlapping an older one is Allocatable=False
// (kube-controllers ippool/pool_controller.go) and GetEnabledPools skips it
// (lib/clientv3/client.go filterIPPool): no block comes from it, and
// calico-node, which asks for every VXLAN pool by CIDR, gets no tunnel
// address. The API server refuses such a pool, so only a dump (here:
// validation off) holds one.
func TestAnOverlappingPoolIsNotAllocatedFrom(t *testing.T) {
	s, err := load.Load(load.Options{Lab: true, Filenames: []string{"testdata/ipam/overlapping-pool.yaml"}, Validation: load.ValidateIgnore})
	if err != nil {
		t.Fatal(err)
	}
	c := build(t, s)
	for _, b := range c.IPAMBlocks {
		if strings.HasSuffix(b.Spec.CIDR, "/28") {
			t.Errorf("block %s comes from the overlapping pool", b.Spec.CIDR)
		}
	}
	pool := model.Key{Group: "projectcalico.org", Kind: "IPPool", Name: "aaa-overlap"}
	if notes := notesAbout(c, pool); len(notes) != 1 || !strings.Contains(notes[0], "Allocatable condition to False") {
		t.Errorf("notes on the pool %q", notes)
	}
	n := findNode(t, c, "k8s-lab-node-1")
	if got := n.Annotations[annoVXLAN]; got != "" {
		t.Errorf("k8s-lab-node-1 got VXLAN tunnel address %s", got)
	}
	want := "calico-node cannot start: the given pool (172.21.128.0/17) does not exist, or is not enabled"
	if notes := notesAbout(c, model.Key{Kind: "Node", Name: n.Name}); !contains(notes, want) {
		t.Errorf("notes on k8s-lab-node-1 %q, want %q", notes, want)
	}
}

// allocateip.go ensureHostTunnelAddress: once the tunnel address's pool is
// disabled it is no longer valid, and calico-node assigns one in the enabled
// VXLAN pool and updates the Node.
func TestATunnelAddressInADisabledPoolMovesToTheEnabledPool(t *testing.T) {
	c := buildLab(t, "testdata/ipam/tunnel-in-disabled-pool.yaml")
	n := findNode(t, c, "k8s-lab-node-1")
	if got := n.Annotations[annoVXLAN]; got != "172.21.211.0" {
		t.Fatalf("k8s-lab-node-1 VXLAN tunnel address %s, want 172.21.211.0 (its block's first address)", got)
	}
	notes := notesAbout(c, model.Key{Kind: "Node", Name: n.Name})
	if !containsPrefix(notes, "calico-node moves the VXLAN tunnel address from 172.30.12.0 to 172.21.211.0") {
		t.Errorf("notes %q", notes)
	}
}

// Calico keys the block walk by the Node's name, and kubeadm registers a
// host under its lower-cased name (GetHostname): a Cluster host named in
// upper case lands on the block of its lower-case name.
func TestAnUpperCaseHostLandsOnTheBlockOfItsLowerCaseName(t *testing.T) {
	dir := t.TempDir()
	src := "../../examples/what-if/second-windows-node"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		// The host, its firewall rules and its join file name it in upper
		// case (Windows' default host names are); its DNS name stays.
		s := strings.ReplaceAll(string(b), "k8s-lab-win-2.example.com", "DNSNAME")
		s = strings.ReplaceAll(s, "k8s-lab-win-2", "K8S-LAB-WIN-2")
		s = strings.ReplaceAll(s, "DNSNAME", "k8s-lab-win-2.example.com")
		f := filepath.Join(dir, e.Name())
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	upper := buildLab(t, files...)
	lower := buildLab(t, src+"/")
	want := blocksByNode(lower)["k8s-lab-win-2"]
	if got := blocksByNode(upper)["k8s-lab-win-2"]; len(want) != 1 || len(got) != 1 || got[0] != want[0] {
		t.Errorf("K8S-LAB-WIN-2's blocks %v, want %v as for k8s-lab-win-2", got, want)
	}
	if n := findNode(t, upper, "k8s-lab-win-2"); n.Labels["kubernetes.io/hostname"] != "k8s-lab-win-2" {
		t.Errorf("hostname label %q", n.Labels["kubernetes.io/hostname"])
	}
	for _, n := range upper.Nodes {
		if n.Name != strings.ToLower(n.Name) {
			t.Errorf("Node %s is named in upper case", n.Name)
		}
	}
}

// The claim of each node's block is stamped with its join time, in join
// order (the Nodes' creationTimestamps here), not one time for all: that is
// what lets a later node reclaim an empty block over a minute old
// (ipam_block_reader_writer.go findUsableBlock).
func TestBlockClaimTimesFollowTheJoinOrder(t *testing.T) {
	c := buildLab(t)
	want := map[string]string{
		"k8s-lab-master-1": "2026-11-06T18:47:40Z",
		"k8s-lab-node-1":   "2026-11-06T18:54:40Z",
		// node-2 was created at the same second as node-1 and joins after it.
		"k8s-lab-node-2": "2026-11-06T18:55:40Z",
		"k8s-lab-win-1":  "2026-11-06T20:16:40Z",
	}
	for _, b := range c.IPAMBlocks {
		node := strings.TrimPrefix(deref(b.Spec.Affinity), "host:")
		if b.Spec.AffinityClaimTime == nil {
			t.Errorf("block %s has no claim time", b.Spec.CIDR)
			continue
		}
		if got := b.Spec.AffinityClaimTime.UTC().Format(time.RFC3339); got != want[node] {
			t.Errorf("block %s of %s claimed at %s, want %s", b.Spec.CIDR, node, got, want[node])
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsPrefix(list []string, prefix string) bool {
	for _, x := range list {
		if strings.HasPrefix(x, prefix) {
			return true
		}
	}
	return false
}

// calico-kube-controllers cleans up IPAM for a node that is gone from the
// Kubernetes API (kube-controllers node/ipam.go checkAllocations,
// garbageCollectIPs, cleanupNode): the addresses of pods that no longer
// exist are released at once, then, when nothing on the node is in use, its
// tunnel addresses and its block affinities, empty blocks being deleted.
// A pod that still exists keeps its address, and the node its block.
func TestIPAMStateOfANodeNotInTheInputIsCleanedUpAsKubeControllersWould(t *testing.T) {
	cases := []struct {
		name      string
		file      string
		block     string // the gone node's block
		released  bool   // affinity released and block deleted
		noteLevel model.Severity
		want      string
	}{
		{"an affinity whose block does not exist is released", "testdata/ipam/affinity-of-a-deleted-node.yaml", "172.21.9.0/26", true, model.Info,
			"simulated: kube-controllers' node cleanup: node k8s-lab-node-9 is not a Node of the input, so calico-kube-controllers released the block affinities of 172.21.9.0/26"},
		{"the tunnel address, a gone pod's address, the affinity and the empty block are released", "testdata/ipam/deleted-node-with-state.yaml", "172.21.172.0/26", true, model.Info,
			"calico-kube-controllers released the addresses 172.21.172.1, 172.21.172.0, released the block affinities of 172.21.172.0/26, deleted the empty blocks 172.21.172.0/26"},
		{"a block holding a live pod's address is kept with its affinity", "testdata/ipam/deleted-node-with-live-pod.yaml", "172.21.9.0/26", false, model.Warning,
			"node k8s-lab-node-9 is not a Node of the input but keeps IPAM state: the addresses 172.21.9.1 belong to pods that still exist"},
		{"an allocation that names no pod keeps the node's state", "testdata/ipam/deleted-node-with-unknown-allocation.yaml", "172.21.9.0/26", false, model.Warning,
			"keeps IPAM state: the addresses 172.21.9.1 name no pod, so nothing says they are free"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := buildLab(t, tc.file)
			var notes []string
			for _, n := range c.Notes {
				if n.Object == (model.Key{Kind: "Node", Name: "k8s-lab-node-9"}) && n.Severity == tc.noteLevel {
					notes = append(notes, n.Message)
				}
			}
			if len(notes) != 1 || !strings.Contains(notes[0], tc.want) {
				t.Errorf("notes %q, want one saying %q", notes, tc.want)
			}
			affOf, blockOf := "", ""
			for _, a := range c.BlockAffinities {
				if a.Spec.CIDR == tc.block {
					affOf = a.Spec.Node
				}
			}
			for _, b := range c.IPAMBlocks {
				if b.Spec.CIDR == tc.block && b.Spec.Affinity != nil {
					blockOf = *b.Spec.Affinity
				}
			}
			if tc.released && (affOf == "k8s-lab-node-9" || blockOf == "host:k8s-lab-node-9") {
				t.Errorf("%s still held by k8s-lab-node-9 (affinity %q, block %q)", tc.block, affOf, blockOf)
			}
			if !tc.released && (affOf != "k8s-lab-node-9" || blockOf != "host:k8s-lab-node-9") {
				t.Errorf("%s: affinity %q, block %q, want both k8s-lab-node-9's", tc.block, affOf, blockOf)
			}
		})
	}
}

// The block a gone node held is free again: the host-seeded walk of the
// node that joins next reaches it first and claims it
// (ipam_block_reader_writer.go findUsableBlock), as in a cluster where
// calico-kube-controllers had cleaned up (node/ipam.go cleanupNode).
func TestTheNextNodeToJoinGetsTheBlockAGoneNodeHeld(t *testing.T) {
	c := buildLab(t, "testdata/ipam/deleted-node-with-state.yaml")
	got := ""
	for _, a := range c.BlockAffinities {
		if a.Spec.Node == "k8s-lab-node-2" {
			got += a.Spec.CIDR + " "
		}
	}
	if got != "172.21.172.0/26 " {
		t.Errorf("k8s-lab-node-2 is affine to %q, want 172.21.172.0/26", got)
	}
	if n := findNode(t, c, "k8s-lab-node-2"); n.Annotations[annoVXLAN] != "172.21.172.0" {
		t.Errorf("k8s-lab-node-2's VXLAN tunnel address %q, want 172.21.172.0", n.Annotations[annoVXLAN])
	}
}

// What is not modelled is said: Calico seeds the walk over one-address
// blocks from the clock (ipam_block_reader_writer.go determineSeed), and
// skips IPReservation ranges (ipam_block.go autoAssign).
func TestUnpredictableAndUnmodelledIPAMInputsAreNoted(t *testing.T) {
	c := buildLab(t, "testdata/ipam/one-address-blocks.yaml")
	cases := []struct {
		name string
		key  model.Key
		want string
	}{
		{"a pool of /32 blocks is not predictable", model.Key{Group: "projectcalico.org", Kind: "IPPool", Name: "singles"}, "not predictable"},
		{"an IPReservation is not honoured", model.Key{Group: "projectcalico.org", Kind: "IPReservation", Name: "keep-out"}, "IPReservation keep-out is not modelled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if notes := notesAbout(c, tc.key); len(notes) != 1 || !strings.Contains(notes[0], tc.want) {
				t.Errorf("notes on %v: %q, want one saying %q", tc.key, notes, tc.want)
			}
		})
	}
}

// A Node named in upper case never reaches IPAM: the API server refuses it
// (metadata.name must be a lowercase RFC 1123 subdomain), and so does the
// loader.
func TestANodeNamedInUpperCaseIsRefusedAsTheAPIServerWould(t *testing.T) {
	f := filepath.Join(t.TempDir(), "node.yaml")
	doc := "apiVersion: v1\nkind: Node\nmetadata:\n  name: WIN-A\n  labels:\n    kubernetes.io/os: windows\n"
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := load.Load(load.Options{Filenames: []string{f}})
	if err == nil || !strings.Contains(err.Error(), `Node WIN-A: metadata.name: Invalid value: "WIN-A": a lowercase RFC 1123 subdomain`) {
		t.Errorf("err %v", err)
	}
}

// allocateip.go removeHostTunnelAddr: with no enabled IPIP pool selecting
// the node, calico-node releases its IPIP tunnel address and clears the
// Node's record of it.
func TestAnIPIPTunnelAddressIsRemovedOnceNoPoolUsesIPIP(t *testing.T) {
	c := buildLab(t, "testdata/ipam/ipip-tunnel-after-migration.yaml")
	n := findNode(t, c, "k8s-lab-node-1")
	if got, ok := n.Annotations[annoIPIP]; ok {
		t.Errorf("k8s-lab-node-1 still records IPIP tunnel address %q", got)
	}
	if got := n.Annotations[annoVXLAN]; got != "172.21.211.0" {
		t.Errorf("VXLAN tunnel address %q, want 172.21.211.0", got)
	}
	if notes := notesAbout(c, model.Key{Kind: "Node", Name: n.Name}); !containsPrefix(notes, "no enabled IP pool selecting the node has IPIP encapsulation: calico-node releases the tunnel address 172.30.12.1") {
		t.Errorf("notes %q", notes)
	}
}
