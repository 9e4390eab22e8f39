package linux

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// With projectcalico.org policies the Calico table shows them as Felix's
// chains do: one chain per tier, Deny as drop, Pass as a return to the
// next tier, the end of each tier, then the profile; it says that host
// endpoints are not modeled.
func TestGoldenCalicoPoliciesInTheCalicoTable(t *testing.T) {
	c0, _ := lab(t)
	c := *c0
	order := 10.0
	tcp := intstr.FromString("TCP")
	c.GlobalNetworkPolicies = append(c.GlobalNetworkPolicies[:len(c.GlobalNetworkPolicies):len(c.GlobalNetworkPolicies)],
		&calicoapi.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "security.pass-pods"}, Spec: calicoapi.PolicySpec{
			Tier: "security", Order: &order, Selector: "app.kubernetes.io/name == 'hello'", Types: []string{"Ingress"},
			Ingress: []calicoapi.Rule{{Action: "Pass", Source: calicoapi.EntityRule{Nets: []string{"172.21.0.0/16"}}}}}},
		&calicoapi.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "deny-win-demo-to-hello"}, Spec: calicoapi.PolicySpec{
			Selector: "app.kubernetes.io/name == 'hello'", Types: []string{"Ingress"},
			Ingress: []calicoapi.Rule{
				{Action: "Deny", Source: calicoapi.EntityRule{NamespaceSelector: "projectcalico.org/name == 'win-demo'"}},
				{Action: "Log", Protocol: &tcp, Destination: calicoapi.EntityRule{NotPorts: []intstr.IntOrString{intstr.FromInt32(22)}}},
				{Action: "Allow", Source: calicoapi.EntityRule{NotNets: []string{"172.21.41.0/26"}}}}}})
	nodes, err := Compile(&c)
	if err != nil {
		t.Fatal(err)
	}
	var node string
	for _, p := range c.Pods {
		if p.Labels["app.kubernetes.io/name"] == "hello" {
			node = p.Spec.NodeName
		}
	}
	out := run(t, nodes[node], "nft list table ip calico")
	if !strings.Contains(out, "tier-security") || !strings.Contains(out, "HostEndpoints are not modeled") {
		t.Errorf("no tier chain or host endpoint note:\n%s", out)
	}
	checkGolden(t, "calico-policies/"+node+"/nft-list-table-ip-calico", out)
}

// Kubernetes NetworkPolicies are rendered in the chain of every workload
// they select, each peer as a match on its IP set's members today: the
// three calico-system pods on the control-plane node share one policy, so
// each of its peers is listed alike in three chains (and built once).
func TestGoldenKubernetesNetworkPoliciesInTheCalicoTable(t *testing.T) {
	c0, _ := lab(t)
	c := *c0
	udp := corev1.ProtocolUDP
	dns := intstr.FromInt32(53)
	c.NetworkPolicies = append(c.NetworkPolicies[:len(c.NetworkPolicies):len(c.NetworkPolicies)],
		&networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "calico-system", Name: "controllers"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{"calico-webhooks", "calico-kube-controllers"}}}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{}},
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "absent"}}},
				}}},
				Egress: []networkingv1.NetworkPolicyEgressRule{{
					To: []networkingv1.NetworkPolicyPeer{{
						NamespaceSelector: &metav1.LabelSelector{},
						PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}}}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}}}},
			}})
	nodes, err := Compile(&c)
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, nodes["k8s-lab-master-1"], "nft list table ip calico")
	peers := "ip saddr { 172.21.70.194, 172.21.70.195, 172.21.70.196, 172.21.70.197, 172.21.172.2, 172.21.211.1 }"
	if n := strings.Count(out, peers); n != 3 {
		t.Errorf("the pod selector's members appear in %d chains, want 3:\n%s", n, out)
	}
	checkGolden(t, "kubernetes-policies/k8s-lab-master-1/nft-list-table-ip-calico", out)
}
