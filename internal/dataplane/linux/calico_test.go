package linux

import (
	"strings"
	"testing"

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
