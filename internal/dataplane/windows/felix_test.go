package windows

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// The Windows ACLs read the Felix calculation (internal/felix), so they
// take its fidelity: Calico's labels over a pod's own, a NetworkPolicy
// without policyTypes applying to egress when it has egress rules, and
// service account selectors resolved to IP sets.
func TestTheWindowsACLsFollowFelixsCalculation(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(f *fixture)
		dir  string
		// source is an ACLReport source the web pod's endpoint must (or
		// must not) list for dir.
		source string
		want   bool
		// remote, when set, is an address an Allow ACL of dir must name.
		remote string
	}{
		{name: "a pod labelled projectcalico.org/namespace is still in its own namespace",
			add: func(f *fixture) {
				f.c.GlobalNetworkPolicies = append(f.c.GlobalNetworkPolicies, &calicoapi.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "prod-only"},
					Spec: calicoapi.PolicySpec{Selector: "projectcalico.org/namespace == 'prod'", Types: []string{"Ingress"}}})
			},
			dir: "In", source: "policy-GlobalNetworkPolicy/prod-only", want: false},
		{name: "a NetworkPolicy without policyTypes applies to egress when it has egress rules",
			add: func(f *fixture) {
				f.c.NetworkPolicies = append(f.c.NetworkPolicies, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "egress"},
					Spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{}}}})
			},
			dir: "Out", source: "policy-KubernetesNetworkPolicy/dev/egress", want: true},
		{name: "a serviceAccounts.selector rule is programmed with its members",
			add: func(f *fixture) {
				f.c.GlobalNetworkPolicies = append(f.c.GlobalNetworkPolicies, &calicoapi.GlobalNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "from-ci"},
					Spec: calicoapi.PolicySpec{Selector: "app == 'web'", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{{Action: "Allow",
						Source: calicoapi.EntityRule{ServiceAccounts: &struct {
							Names    []string `json:"names,omitempty"`
							Selector string   `json:"selector,omitempty"`
						}{Selector: "role == 'ci'"}}}}}})
			},
			dir: "In", source: "policy-GlobalNetworkPolicy/from-ci", want: true, remote: "10.0.11.5/32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(1)
			f.c.Namespaces = []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: "dev"}}, {ObjectMeta: metav1.ObjectMeta{Name: "prod"}}}
			f.c.ServiceAccounts = []*corev1.ServiceAccount{{ObjectMeta: metav1.ObjectMeta{Namespace: "dev", Name: "robot", Labels: map[string]string{"role": "ci"}}}}
			f.pod("dev", "web", "win", "10.0.1.5", map[string]string{"app": "web", "projectcalico.org/namespace": "prod"})
			f.pod("dev", "ci", "lin-1", "10.0.11.5", map[string]string{"app": "ci"}).Spec.ServiceAccountName = "robot"
			tc.add(f)
			ep := endpointByIP(f.compile(t), "10.0.1.5")
			if ep == nil {
				t.Fatal("no endpoint for the web pod")
			}
			listed := slices.ContainsFunc(ep.ACLReport, func(s ACLSource) bool {
				return s.Direction == tc.dir && s.Source == tc.source && s.Skipped == 0
			})
			if listed != tc.want {
				t.Errorf("%s programmed for %s: %t, want %t (%+v)", tc.source, tc.dir, listed, tc.want, ep.ACLReport)
			}
			if tc.remote != "" && !slices.ContainsFunc(acls(ep), func(a ACL) bool {
				return a.Direction == tc.dir && a.Action == "Allow" && a.RemoteAddresses == tc.remote
			}) {
				t.Errorf("no Allow %s ACL from %s: %+v", tc.dir, tc.remote, acls(ep))
			}
		})
	}
}
