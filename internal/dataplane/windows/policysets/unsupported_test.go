package policysets

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

func TestNetworkPolicyRulesFelixOnWindowsSkips(t *testing.T) {
	tcp := corev1.ProtocolTCP
	named := intstr.FromString("http")
	num := intstr.FromInt32(8080)
	cases := []struct {
		name string
		spec networkingv1.NetworkPolicySpec
		want []Unsupported
	}{
		{"a numbered port is programmed", networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &num}}}},
		}, nil},
		{"a named port is skipped", networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{}, {Ports: []networkingv1.NetworkPolicyPort{{Port: &named}}}},
		}, []Unsupported{{Field: "spec.ingress[1]", Action: "allow", Reasons: []string{SkipNamedPort}}}},
		{"an ipBlock's except is a negative match", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}},
		}, []Unsupported{{Field: "spec.egress[0]", Action: "allow", Reasons: []string{SkipNegative}}}},
		{"one rule with both gives each reason once", networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.2.0.0/16", Except: []string{"10.2.1.0/24"}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: &named}}}},
		}, []Unsupported{{Field: "spec.ingress[0]", Action: "allow", Reasons: []string{SkipNegative}}}},
		{"egress rules of an ingress-only policy do not apply", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: &named}}}},
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "p"}, Spec: tc.spec}
			if got := UnsupportedNetworkPolicyRules(np); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// skippedCalicoRules are one rule per reason Felix on Windows gives.
var skippedCalicoRules = []struct {
	name string
	rule calicoapi.Rule
	want string
}{
	{"an IPv6 rule", calicoapi.Rule{Action: "Allow", IPVersion: ptr.To(6)}, SkipIPv6},
	{"notNets", calicoapi.Rule{Action: "Allow", Source: calicoapi.EntityRule{NotNets: []string{"10.9.0.0/16"}}}, SkipNegative},
	{"notSelector", calicoapi.Rule{Action: "Allow", Source: calicoapi.EntityRule{NotSelector: "app == 'x'"}}, SkipNegative},
	{"notPorts", calicoapi.Rule{Action: "Allow", Destination: calicoapi.EntityRule{NotPorts: []intstr.IntOrString{intstr.FromInt32(22)}}}, SkipNegative},
	{"an ICMP type", calicoapi.Rule{Action: "Allow", ICMP: &calicoapi.ICMPFields{Type: ptr.To(8)}}, SkipICMP},
	{"a named port", calicoapi.Rule{Action: "Allow", Destination: calicoapi.EntityRule{Ports: []intstr.IntOrString{intstr.FromString("http")}}}, SkipNamedPort},
	{"the log action", calicoapi.Rule{Action: "Log"}, SkipLogAction},
}

func TestCalicoRulesFelixOnWindowsSkips(t *testing.T) {
	for _, tc := range skippedCalicoRules {
		t.Run(tc.name, func(t *testing.T) {
			spec := calicoapi.PolicySpec{Selector: "all()", Ingress: []calicoapi.Rule{{Action: "Allow"}, tc.rule}}
			want := []Unsupported{{Field: "spec.ingress[1]", Action: strings.ToLower(tc.rule.Action), Reasons: []string{tc.want}}}
			if got := UnsupportedCalicoRules(spec); !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	ranges := calicoapi.PolicySpec{Selector: "all()", Ingress: []calicoapi.Rule{{Action: "Allow",
		Destination: calicoapi.EntityRule{Ports: []intstr.IntOrString{intstr.FromString("8000:8080"), intstr.FromInt32(443)}}}}}
	if got := UnsupportedCalicoRules(ranges); got != nil {
		t.Errorf("a port range is programmed, got %+v", got)
	}
}
