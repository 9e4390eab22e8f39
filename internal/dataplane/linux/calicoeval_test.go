package linux

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// The rendered rules' own matches, read back.
// The rendered table, walked from its hooks as the kernel walks it,
// applies both ends' policy between two pods of one node and a pod's
// egress policy to its own node: an allow only marks the packet, the
// forward chain goes on to the destination's ingress policy and accepts
// at its end (felix/rules/static.go, endpoints.go).
func TestTheRenderedCalicoTableAppliesBothEndsOnOneNode(t *testing.T) {
	f := newFixture()
	f.node("n1", "10.0.0.11", 0, 0)
	a := f.pod("x", "a", "n1", "10.244.0.2", map[string]string{"app": "a"})
	b := f.pod("x", "b", "n1", "10.244.0.3", map[string]string{"app": "b"})
	c := f.pod("x", "c", "n1", "10.244.0.4", map[string]string{"app": "c"})
	d := f.pod("x", "d", "n1", "10.244.0.5", map[string]string{"app": "d"})
	f.c.NetworkPolicies = append(f.c.NetworkPolicies,
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "deny-b-ingress"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "deny-c-egress"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "c"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}})
	n := f.compile(t)["n1"]
	addr := func(p *corev1.Pod) netip.Addr { return netip.MustParseAddr(p.Status.PodIP) }
	veth := func(p *corev1.Pod) string { return VethName(p.Namespace, p.Name) }
	node := netip.MustParseAddr("10.0.0.11")
	for _, tc := range []struct {
		name    string
		pk      CalicoPacket
		allowed bool
		chain   string
	}{
		{"a pod to a pod of its node whose ingress is denied is dropped by the destination's chain",
			CalicoPacket{Hook: "forward", IIF: veth(a), OIF: veth(b), Src: addr(a), Dst: addr(b), Proto: "tcp", DstPort: 80}, false, "filter-cali-tw-" + veth(b)},
		{"a pod to a pod of its node with no policy is accepted at the end of cali-FORWARD",
			CalicoPacket{Hook: "forward", IIF: veth(a), OIF: veth(d), Src: addr(a), Dst: addr(d), Proto: "tcp", DstPort: 80}, true, "filter-cali-FORWARD"},
		{"a pod whose egress is denied cannot reach a pod of its node",
			CalicoPacket{Hook: "forward", IIF: veth(c), OIF: veth(d), Src: addr(c), Dst: addr(d), Proto: "udp", DstPort: 53}, false, "filter-cali-fw-" + veth(c)},
		{"a pod to a pod on another node passes its egress policy and is accepted",
			CalicoPacket{Hook: "forward", IIF: veth(a), OIF: "vxlan.calico", Src: addr(a), Dst: netip.MustParseAddr("10.244.0.70"), Proto: "tcp", DstPort: 80}, true, "filter-cali-FORWARD"},
		{"a pod whose egress is denied cannot reach its own node",
			CalicoPacket{Hook: "input", IIF: veth(c), Src: addr(c), Dst: node, Proto: "tcp", DstPort: 10250}, false, "filter-cali-fw-" + veth(c)},
		{"a pod with no egress policy reaches its own node by DefaultEndpointToHostAction",
			CalicoPacket{Hook: "input", IIF: veth(a), Src: addr(a), Dst: node, Proto: "tcp", DstPort: 10250}, true, "filter-cali-wl-to-host"},
		{"traffic from another node's pods is not a workload's to police",
			CalicoPacket{Hook: "forward", IIF: "vxlan.calico", OIF: veth(d), Src: netip.MustParseAddr("10.244.0.70"), Dst: addr(d), Proto: "tcp", DstPort: 80}, true, "filter-cali-FORWARD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := n.EvalCalicoHook(tc.pk)
			if err != nil {
				t.Fatal(err)
			}
			if v.Allowed != tc.allowed || v.Chain != tc.chain {
				t.Errorf("allowed %t in %s (%s), want %t in %s", v.Allowed, v.Chain, v.Rule, tc.allowed, tc.chain)
			}
		})
	}
	// One end at a time, as the differential test reads it.
	for _, tc := range []struct {
		pod     *corev1.Pod
		dir     Direction
		allowed bool
	}{{a, Egress, true}, {b, Ingress, false}, {c, Egress, false}, {d, Ingress, true}} {
		v, err := n.EvalCalico(tc.pod, tc.dir, felix.Flow{Peer: node, Proto: "TCP", DstPort: 80})
		if err != nil {
			t.Fatal(err)
		}
		if v.Allowed != tc.allowed {
			t.Errorf("%s %s: allowed %t (%s: %s), want %t", tc.pod.Name, tc.dir, v.Allowed, v.Chain, v.Rule, tc.allowed)
		}
	}
}
