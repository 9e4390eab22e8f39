package engine_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

const (
	annoIPv4    = "projectcalico.org/IPv4Address"
	annoTunnel  = "projectcalico.org/IPv4VXLANTunnelAddr"
	annoMAC     = "projectcalico.org/VXLANTunnelMACAddr"
	derivedAnno = "metadata.annotations["
)

// plainJoinOrder is examples/plain's nodes by creationTimestamp.
var plainJoinOrder = []string{"cp-01", "lnx-01", "lnx-02", "win-01"}

// nthAddr is the n-th address of a prefix.
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for ; n > 0; n-- {
		a = a.Next()
	}
	return a
}

func TestPlainNodesGetTheTunnelAddressCalicoNodeAllocates(t *testing.T) {
	// The blocks come from the test's own reading of Calico's walk; the
	// tunnel address is the block's first address on Linux (allocateip
	// asks IPAM for one address before any pod) and the HNS gateway, the
	// second, on Windows (startup_windows.go).
	blocks, _, _ := calicoWalk(t, "10.244.0.0/16", 24, plainJoinOrder)
	c := buildFiles(t, examplesPlain)
	tests := []struct {
		name    string
		node    string
		ordinal int
		ip      string
	}{
		{"the control plane takes its block's first address", "cp-01", 0, "10.20.0.11/24"},
		{"a Linux worker takes its block's first address", "lnx-01", 0, "10.20.0.21/24"},
		{"the other Linux worker too", "lnx-02", 0, "10.20.0.22/24"},
		{"the Windows worker's tunnel address is its HNS gateway, the second address", "win-01", 1, "10.20.0.31/24"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := findNode(t, c, tt.node)
			want := nthAddr(mustPrefix(t, blocks[tt.node]), tt.ordinal).String()
			if got := n.Annotations[annoTunnel]; got != want {
				t.Errorf("%s = %q, want %q", annoTunnel, got, want)
			}
			if got := n.Annotations[annoIPv4]; got != tt.ip {
				t.Errorf("%s = %q, want %q", annoIPv4, got, tt.ip)
			}
			k := model.Key{Kind: "Node", Name: tt.node}
			for _, a := range []string{annoTunnel, annoIPv4} {
				if !c.Derived(k, derivedAnno+a+"]") {
					t.Errorf("%s is not marked derived on the observed Node", a)
				}
			}
			// A Linux VTEP's MAC is Felix's to derive from the name; a
			// Windows one (the DrPort's) only the host knows, so the node
			// whose tunnel address the engine derived gets the one
			// placeholder, marked as such and as derived.
			mac, ok := n.Annotations[annoMAC]
			switch {
			case tt.ordinal == 0 && ok:
				t.Errorf("a VTEP MAC %q was recorded on a Linux node; Felix derives it from the name", mac)
			case tt.ordinal == 1 && mac != engine.WindowsVTEPPlaceholder(tt.node):
				t.Errorf("the Windows VTEP MAC is %q, want the placeholder %s", mac, engine.WindowsVTEPPlaceholder(tt.node))
			case tt.ordinal == 1 && (n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] == "" || !c.Derived(k, derivedAnno+annoMAC+"]")):
				t.Errorf("the Windows placeholder VTEP MAC is not marked as a placeholder and derived")
			}
		})
	}
}

// plainWith loads examples/plain plus extra documents (written to a file
// beside it), with annotations added to the Nodes before the build.
func plainWith(t *testing.T, extra string, annotations map[string]map[string]string) *model.Cluster {
	t.Helper()
	files := []string{examplesPlain}
	if extra != "" {
		p := filepath.Join(t.TempDir(), "extra.yaml")
		if err := os.WriteFile(p, []byte(extra), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	s := snapshot(t, false, files...)
	for _, o := range s.Objects {
		if n, ok := o.Typed.(*corev1.Node); ok {
			for k, v := range annotations[n.Name] {
				n.Annotations[k] = v
			}
		}
	}
	return build(t, s)
}

const calicoNodeV3 = `apiVersion: projectcalico.org/v3
kind: Node
metadata:
  name: lnx-02
spec:
  addresses:
  - address: 10.20.0.22/16
    type: CalicoNodeIP
  - address: 10.20.0.22
    type: InternalIP
  ipv4VXLANTunnelAddr: 10.244.160.9
  vxlanTunnelMACAddr: 66:01:02:03:04:05
  orchRefs:
  - nodeName: lnx-02
    orchestrator: k8s
status: {}
---
apiVersion: projectcalico.org/v3
kind: Node
metadata:
  name: win-01
spec:
  bgp:
    ipv4Address: 10.20.0.31/16
  ipv4VXLANTunnelAddr: 10.244.190.1
  vxlanTunnelMACAddr: 00:15:5d:aa:bb:cc
`

func TestWhatCalicoRecordsWinsOverWhatTheTwinDerives(t *testing.T) {
	tests := []struct {
		name        string
		extra       string
		annotations map[string]map[string]string
		node        string
		want        map[string]string // annotation → value
		observed    []string          // annotations that must not be marked derived
		warning     string            // a note that must be there
	}{
		{
			name:        "a Node's own tunnel annotation is kept and claimed in IPAM",
			annotations: map[string]map[string]string{"lnx-01": {annoTunnel: "10.244.185.9"}},
			node:        "lnx-01",
			want:        map[string]string{annoTunnel: "10.244.185.9", annoIPv4: "10.20.0.21/24"},
			observed:    []string{annoTunnel},
		},
		{
			name:        "a Node's recorded address and subnet are kept",
			annotations: map[string]map[string]string{"lnx-01": {annoIPv4: "10.20.0.21/20"}},
			node:        "lnx-01",
			want:        map[string]string{annoIPv4: "10.20.0.21/20", annoTunnel: "10.244.185.0"},
			observed:    []string{annoIPv4},
		},
		{
			name:     "a projectcalico.org/v3 Node's addresses and MAC land on its Node",
			extra:    calicoNodeV3,
			node:     "lnx-02",
			want:     map[string]string{annoIPv4: "10.20.0.22/16", annoTunnel: "10.244.160.9", annoMAC: "66:01:02:03:04:05"},
			observed: []string{annoIPv4, annoTunnel, annoMAC},
		},
		{
			name:     "a Windows node's VTEP MAC is read from its Calico Node",
			extra:    calicoNodeV3,
			node:     "win-01",
			want:     map[string]string{annoIPv4: "10.20.0.31/16", annoTunnel: "10.244.190.1", annoMAC: "00:15:5d:aa:bb:cc"},
			observed: []string{annoMAC},
		},
		{
			name:     "a crd.projectcalico.org/v1 Node is read the same way",
			extra:    strings.ReplaceAll(calicoNodeV3, "projectcalico.org/v3", "crd.projectcalico.org/v1"),
			node:     "lnx-02",
			want:     map[string]string{annoTunnel: "10.244.160.9", annoMAC: "66:01:02:03:04:05"},
			observed: []string{annoTunnel, annoMAC},
		},
		{
			name:        "a Node's annotation wins over a different Calico Node value, with a warning",
			extra:       calicoNodeV3,
			annotations: map[string]map[string]string{"lnx-02": {annoTunnel: "10.244.160.7"}},
			node:        "lnx-02",
			want:        map[string]string{annoTunnel: "10.244.160.7"},
			warning:     "spec.ipv4VXLANTunnelAddr 10.244.160.9 differs from Node lnx-02's annotation",
		},
		{
			name:    "a Calico Node without a Kubernetes Node is reported",
			extra:   strings.ReplaceAll(calicoNodeV3, "nodeName: lnx-02", "nodeName: lnx-09"),
			node:    "lnx-02",
			want:    map[string]string{annoTunnel: "10.244.160.0"},
			warning: "no Kubernetes Node lnx-09",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := plainWith(t, tt.extra, tt.annotations)
			n := findNode(t, c, tt.node)
			for k, v := range tt.want {
				if got := n.Annotations[k]; got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			for _, k := range tt.observed {
				if c.Derived(model.Key{Kind: "Node", Name: tt.node}, derivedAnno+k+"]") {
					t.Errorf("%s is marked derived, but the input records it", k)
				}
			}
			var notes []string
			for _, nt := range c.Notes {
				notes = append(notes, string(nt.Severity)+": "+nt.Message)
			}
			if tt.warning != "" && !strings.Contains(strings.Join(notes, "\n"), tt.warning) {
				t.Errorf("no note %q in\n%s", tt.warning, strings.Join(notes, "\n"))
			}
			for _, nt := range c.Notes {
				if nt.Severity == model.Warning && strings.Contains(nt.Message, "does not fit Calico IPAM") {
					t.Errorf("unexpected IPAM warning: %s", nt.Message)
				}
			}
			// The recorded tunnel address is the one IPAM holds for the node.
			tunnel := n.Annotations[annoTunnel]
			for _, p := range c.Pods {
				if p.Status.PodIP == tunnel {
					t.Errorf("pod %s/%s was given the tunnel address %s", p.Namespace, p.Name, tunnel)
				}
			}
		})
	}
}

func TestTheNodeNetworkIsStatedRecordedOrInferred(t *testing.T) {
	assumptions := func(c *model.Cluster) []string {
		var out []string
		for _, n := range c.Notes {
			if n.Severity == model.Assumption {
				out = append(out, n.Message)
			}
		}
		return out
	}
	tests := []struct {
		name        string
		cluster     func(t *testing.T) *model.Cluster
		cidr, gw    string
		lnx01       string   // lnx-01's projectcalico.org/IPv4Address
		assumptions []string // substrings, one per Assumption note, in order
	}{
		{
			name:    "plain Nodes: inferred from the InternalIPs, no gateway",
			cluster: func(t *testing.T) *model.Cluster { return buildFiles(t, examplesPlain) },
			cidr:    "10.20.0.0/24", lnx01: "10.20.0.21/24",
			assumptions: []string{"node network 10.20.0.0/24 is inferred", "gateway is not stated"},
		},
		{
			name: "stated on the command line",
			cluster: func(t *testing.T) *model.Cluster {
				s := snapshot(t, false, examplesPlain)
				s.Network.CIDR, s.Network.Gateway = "10.20.0.0/16", "10.20.0.1"
				return build(t, s)
			},
			cidr: "10.20.0.0/16", gw: "10.20.0.1", lnx01: "10.20.0.21/16",
		},
		{
			name: "the command line's gateway alone still leaves the network inferred",
			cluster: func(t *testing.T) *model.Cluster {
				s := snapshot(t, false, examplesPlain)
				s.Network.Gateway = "10.20.0.1"
				return build(t, s)
			},
			cidr: "10.20.0.0/24", gw: "10.20.0.1", lnx01: "10.20.0.21/24",
			assumptions: []string{"node network 10.20.0.0/24 is inferred"},
		},
		{
			name: "nodes that share no /24 get the narrowest network holding them",
			cluster: func(t *testing.T) *model.Cluster {
				s := snapshot(t, false, examplesPlain)
				for _, o := range s.Objects {
					if n, ok := o.Typed.(*corev1.Node); ok && n.Name == "win-01" {
						n.Status.Addresses[0].Address = "10.20.3.31"
					}
				}
				return build(t, s)
			},
			cidr: "10.20.0.0/22", lnx01: "10.20.0.21/22",
			assumptions: []string{"node network 10.20.0.0/22 is inferred", "gateway is not stated"},
		},
		{
			name: "every Node's recorded subnet is the network, no assumption",
			cluster: func(t *testing.T) *model.Cluster {
				return plainWith(t, "", map[string]map[string]string{
					"cp-01": {annoIPv4: "10.20.0.11/16"}, "lnx-01": {annoIPv4: "10.20.0.21/16"},
					"lnx-02": {annoIPv4: "10.20.0.22/16"}, "win-01": {annoIPv4: "10.20.0.31/16"},
				})
			},
			cidr: "10.20.0.0/16", lnx01: "10.20.0.21/16",
			assumptions: []string{"gateway is not stated"},
		},
		{
			name: "a Cluster kind with only spec.network states it for plain Nodes",
			cluster: func(t *testing.T) *model.Cluster {
				return plainWith(t, networkOnlyCluster, nil)
			},
			cidr: "10.20.0.0/23", gw: "10.20.0.1", lnx01: "10.20.0.21/23",
		},
		{
			name:    "the lab's Cluster kind states it",
			cluster: func(t *testing.T) *model.Cluster { return buildLab(t) },
			cidr:    "192.168.10.0/24", gw: "192.168.10.1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cluster(t)
			if c.Network.CIDR != tt.cidr || c.Network.Gateway != tt.gw {
				t.Errorf("network %q via %q, want %q via %q", c.Network.CIDR, c.Network.Gateway, tt.cidr, tt.gw)
			}
			got := assumptions(c)
			if len(got) != len(tt.assumptions) {
				t.Fatalf("assumptions %q, want %d", got, len(tt.assumptions))
			}
			for i, want := range tt.assumptions {
				if !strings.Contains(got[i], want) {
					t.Errorf("assumption %q lacks %q", got[i], want)
				}
			}
			if tt.lnx01 == "" {
				return
			}
			if got := findNode(t, c, "lnx-01").Annotations[annoIPv4]; got != tt.lnx01 {
				t.Errorf("lnx-01 %s = %q, want %q", annoIPv4, got, tt.lnx01)
			}
		})
	}
}

const networkOnlyCluster = `apiVersion: hybrid.kubectl-hybrid.io/v1alpha1
kind: Cluster
metadata:
  name: plain
spec:
  network:
    cidr: 10.20.0.0/23
    gateway: 10.20.0.1
`

func TestAClusterKindWithoutHostsKeepsThePlainNodesAsTheHosts(t *testing.T) {
	plain := buildFiles(t, examplesPlain)
	withNet := plainWith(t, networkOnlyCluster, nil)
	if got, want := blocksByNode(withNet), blocksByNode(plain); !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %v, want the plain Nodes' %v", got, want)
	}
	if got, want := names(withNet.Nodes), names(plain.Nodes); !reflect.DeepEqual(got, want) {
		t.Errorf("nodes %v, want %v", got, want)
	}
	var hosts []string
	for _, h := range withNet.Hosts {
		hosts = append(hosts, h.Name+"/"+h.Address)
	}
	if want := []string{"cp-01/10.20.0.11", "lnx-01/10.20.0.21", "lnx-02/10.20.0.22", "win-01/10.20.0.31"}; !reflect.DeepEqual(hosts, want) {
		t.Errorf("hosts %v, want %v", hosts, want)
	}
}

// observedTunnelBlock is lnx-01's block as `kubectl get ipamblocks -o yaml`
// shows it when calico-node took ordinal 5 for the tunnel (the first
// ordinals were held when it started).
func observedTunnelBlock() (*calico.IPAMBlock, *calico.BlockAffinity) {
	const cidr = "10.244.185.0/24"
	aff := "host:lnx-01"
	handle := "vxlan-tunnel-addr-lnx-01"
	zero := 0
	b := &calico.IPAMBlock{
		TypeMeta:   metav1.TypeMeta{APIVersion: "crd.projectcalico.org/v1", Kind: "IPAMBlock"},
		ObjectMeta: metav1.ObjectMeta{Name: "10-244-185-0-24"},
		Spec: calico.IPAMBlockSpec{
			CIDR: cidr, Affinity: &aff, StrictAffinity: true,
			Allocations: make([]*int, 256),
			Attributes: []calico.AllocationAttribute{{HandleID: &handle,
				ActiveOwnerAttrs: map[string]string{"node": "lnx-01", "type": "vxlanTunnelAddress"}}},
		},
	}
	b.Spec.Allocations[5] = &zero
	for i := 0; i < 256; i++ {
		if i != 5 {
			b.Spec.Unallocated = append(b.Spec.Unallocated, i)
		}
	}
	a := &calico.BlockAffinity{
		TypeMeta:   metav1.TypeMeta{APIVersion: "crd.projectcalico.org/v1", Kind: "BlockAffinity"},
		ObjectMeta: metav1.ObjectMeta{Name: "lnx-01-10-244-185-0-24"},
		Spec:       calico.BlockAffinitySpec{State: "confirmed", Node: "lnx-01", CIDR: cidr},
	}
	return b, a
}

func TestATunnelAddressHeldInAnObservedIPAMBlockIsTheNodes(t *testing.T) {
	s := snapshot(t, false, examplesPlain)
	b, a := observedTunnelBlock()
	s.Objects = append(s.Objects,
		&model.Object{Key: model.Key{Group: calico.Group, Kind: "IPAMBlock", Name: b.Name}, Typed: b, Origin: model.Origin{File: "ipamblocks.yaml"}},
		&model.Object{Key: model.Key{Group: calico.Group, Kind: "BlockAffinity", Name: a.Name}, Typed: a, Origin: model.Origin{File: "blockaffinities.yaml"}})
	c := build(t, s)
	n := findNode(t, c, "lnx-01")
	if got := n.Annotations[annoTunnel]; got != "10.244.185.5" {
		t.Errorf("%s = %q, want the block's tunnel allocation 10.244.185.5", annoTunnel, got)
	}
	for _, p := range podsOn(c, "lnx-01") {
		if p.Status.PodIP == "10.244.185.5" {
			t.Errorf("pod %s/%s holds the tunnel address", p.Namespace, p.Name)
		}
	}
	if got := blocksByNode(c)["lnx-01"]; !reflect.DeepEqual(got, []string{"10.244.185.0/24"}) {
		t.Errorf("lnx-01 holds %v, want only its observed block", got)
	}
}
