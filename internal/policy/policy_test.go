package policy

import (
	"fmt"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func np(ns, name string, podSel *metav1.LabelSelector, types []networkingv1.PolicyType, in []networkingv1.NetworkPolicyIngressRule, eg []networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: *podSel, PolicyTypes: types, Ingress: in, Egress: eg}}
}

func TestPolicyTypesDefaultToIngressAndEgressWhenThereAreEgressRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *networkingv1.NetworkPolicy
		want string
	}{
		{"no types and no egress rules", np("a", "b", &metav1.LabelSelector{}, nil, nil, nil), "[Ingress]"},
		{"no types with egress rules", np("a", "b", &metav1.LabelSelector{}, nil, nil, []networkingv1.NetworkPolicyEgressRule{{}}), "[Ingress Egress]"},
		{"explicit Egress only", np("a", "b", &metav1.LabelSelector{}, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, []networkingv1.NetworkPolicyIngressRule{{}}, nil), "[Egress]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(PolicyTypes(tc.p)); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
