package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A node filled with running pods: its DaemonSet pods no longer fit, so
// none of them may be taken from the previous build, while those of the
// other nodes are. (The filled node turns NotReady and the derivation
// then gives way to a full build; the pods it kept are read before.)
func TestADaemonSetPodIsNotKeptOnANodeWhoseRunningPodsChanged(t *testing.T) {
	base := genSnapshot(t)
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	full := prev.Nodes[len(prev.Nodes)-1]
	var fillers []*model.Object
	for i := range full.Status.Allocatable.Pods().Value() {
		name := fmt.Sprintf("filler-%d", i)
		p := &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       corev1.PodSpec{NodeName: full.Name, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
		fillers = append(fillers, &model.Object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Key: model.Key{Kind: "Pod", Namespace: "default", Name: name}, Typed: p})
	}
	next := layer(base, fillers...)
	d := settle(prev, base, next)
	if d == nil {
		t.Fatal("no pod qualifies for reuse: the case does not test the guard")
	}
	d.prev = recall(prev)
	_, _ = build(next, false, d)
	on := map[string]int{}
	for p := range d.kept {
		on[p.Spec.NodeName]++
	}
	if on[full.Name] > 0 {
		t.Errorf("%d DaemonSet pods kept on %s, whose running pods changed", on[full.Name], full.Name)
	}
	if len(on) == 0 {
		t.Error("no DaemonSet pod kept on any node: the case does not test the guard")
	}
}

// keptOnPodNetworkBy runs a derivation of next from prev's twin and
// gives the DaemonSet pods on the pod network it kept, by node, and the
// error its build ended with (errUnsettled when a stage stopped it).
func keptOnPodNetworkBy(t *testing.T, prev *model.Cluster, base, next *model.Snapshot) (map[string]*corev1.Pod, error) {
	t.Helper()
	d := settle(prev, base, next)
	if d == nil {
		t.Fatal("no pod qualifies for reuse: the case does not test the keep")
	}
	d.prev = recall(prev)
	d.net = d.prev.net
	_, err := build(next, false, d)
	kept := map[string]*corev1.Pod{}
	for p := range d.kept {
		if !p.Spec.HostNetwork {
			kept[p.Spec.NodeName] = p
		}
	}
	return kept, err
}

// A derivation keeps the DaemonSet pods on the pod network (csi-node-driver)
// only where IPAM reads the pools and configuration it read before.
func TestADerivationKeepsPodNetworkDaemonSetPodsOnlyWhenIPAMReadsTheSame(t *testing.T) {
	tests := []struct {
		name string
		next func(t *testing.T, s *model.Snapshot) *model.Snapshot
		kept bool
	}{
		{name: "strictAffinity turned off keeps them", next: withStrictAffinity(false), kept: true},
		{
			name: "the pool's CIDR changed does not",
			next: withPool(func(p *operator.IPPool) {
				pfx := netip.MustParsePrefix(p.CIDR)
				p.CIDR = netip.PrefixFrom(pfx.Addr(), pfx.Bits()+1).String()
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, prev := builtGen(t)
			next := tt.next(t, base)
			kept, err := keptOnPodNetworkBy(t, prev, base, next)
			if err != nil {
				t.Fatal(err)
			}
			if (len(kept) > 0) != tt.kept {
				t.Errorf("DaemonSet pods on the pod network kept on %d nodes, want kept: %v", len(kept), tt.kept)
			}
			derivedAsBuilt(t, prev, base, next)
		})
	}
}

// An observed pod on another node now holds the address a kept
// csi-node-driver pod had: IPAM gives that pod another one in its turn,
// so the derivation must not keep it as it was, and the derived twin
// equals the full build.
func TestAKeptPodNetworkDaemonSetPodWhoseAddressChangesStopsTheDerivation(t *testing.T) {
	base := withStrictAffinity(false)(t, genSnapshot(t))
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	var first *corev1.Pod
	for _, o := range base.Objects {
		if p, ok := o.Typed.(*corev1.Pod); ok {
			first = p
			break
		}
	}
	var victim *corev1.Pod
	for _, p := range prev.Pods {
		if ownedByDaemonSet(p) && !p.Spec.HostNetwork && p.Status.PodIP != "" && p.Spec.NodeName != first.Spec.NodeName && !prev.Observed(keyOf(p)) {
			victim = p
			break
		}
	}
	if victim == nil {
		t.Fatal("no DaemonSet pod on the pod network in the previous twin")
	}
	next := editFirst(t, base, "Pod", func(p *corev1.Pod) {
		p.Status.PodIP = victim.Status.PodIP
		p.Status.PodIPs = []corev1.PodIP{{IP: victim.Status.PodIP}}
	})
	want, err := Build(next)
	if err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, p := range want.Pods {
		if p.Namespace == victim.Namespace && p.Name == victim.Name {
			moved = p.Status.PodIP != victim.Status.PodIP
		}
	}
	if !moved {
		t.Fatal("the full build gives the DaemonSet pod its address again: the case does not test the check")
	}
	kept, err := keptOnPodNetworkBy(t, prev, base, next)
	if kept[victim.Spec.NodeName] != victim {
		t.Fatal("the pod was not kept before its address was asked for: the case does not test the check")
	}
	if !errors.Is(err, errUnsettled) {
		t.Errorf("the derivation's build ended with %v, want it stopped (a kept pod's address changed)", err)
	}
	got, err := Derive(prev, base, next)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("Derive differs from Build in %s", differingField(want, got))
	}
}

// A step that changes calico-node's template (its MTU) builds its pods
// again; the DaemonSet pods placed after them on a node (csi-node-driver)
// are kept where the rebuilt pod weighs in the scheduler's state as the
// previous one did, and built again where it does not: here the previous
// build's record of calico-node's pod on one node is made heavier. (The
// control plane's node keeps none: its static pods are made anew.)
func TestADaemonSetPodAfterARebuiltOneIsKeptOnlyWhereThatOneWeighsTheSame(t *testing.T) {
	tests := []struct {
		name string
		// heavier: the previous calico-node pod on one node is
		// recorded with a larger cpu request.
		heavier bool
	}{
		{name: "calico-node weighing the same keeps csi-node-driver"},
		{name: "calico-node weighing more on a node builds csi-node-driver there again", heavier: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := withStrictAffinity(false)(t, genSnapshot(t))
			prev, err := Build(base)
			if err != nil {
				t.Fatal(err)
			}
			next := editFirst(t, base, "Installation", func(in *operator.Installation) {
				mtu := int32(1400)
				in.Spec.CalicoNetwork.MTU = &mtu
			})
			// on are the previous build's DaemonSet pods by node:
			// kube-proxy's, calico-node's, csi-node-driver's.
			on := recall(prev).daemonsOn
			heavy := ""
			if tt.heavier {
				for node, ps := range on {
					if len(ps) == 3 && ps[1].OwnerReferences[0].Name == "calico-node" && !strings.HasPrefix(node, "gen-cp") {
						p := ps[1].DeepCopy()
						p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
						ps[1], heavy = p, node
						break
					}
				}
				if heavy == "" {
					t.Fatal("no worker holds kube-proxy's, calico-node's and csi-node-driver's pods")
				}
			}
			d := settle(prev, base, next)
			if d == nil {
				t.Fatal("no pod qualifies for reuse: the case does not test the keep")
			}
			d.prev = recall(prev)
			d.net = d.prev.net
			if _, err := build(next, false, d); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for node, ps := range on {
				if len(ps) != 3 || ps[2].OwnerReferences[0].Name != "csi-node-driver" || !d.kept[ps[0]] {
					continue // the node's running pods changed: nothing is kept there
				}
				checked++
				if d.kept[ps[1]] {
					t.Errorf("calico-node's pod on %s kept, though its template changed", node)
				}
				if want := node != heavy; d.kept[ps[2]] != want {
					t.Errorf("csi-node-driver's pod on %s kept: %v, want %v", node, d.kept[ps[2]], want)
				}
			}
			if checked == 0 {
				t.Fatal("no node kept kube-proxy's pod: the case tests nothing")
			}
			if !tt.heavier {
				derivedAsBuilt(t, prev, base, next)
			}
		})
	}
}
