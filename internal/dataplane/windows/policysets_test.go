package windows

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// compilerSkippedRules are one rule per reason Felix on Windows gives
// (policysets' own tests hold the same cases for UnsupportedCalicoRules).
var compilerSkippedRules = []struct {
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

// TestTheCompilerSkipsWhatUnsupportedRulesReports: the compiler and the
// policy check give the same reason for each rule.
func TestTheCompilerSkipsWhatUnsupportedRulesReports(t *testing.T) {
	for _, tc := range compilerSkippedRules {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(1)
			f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"app": "web"})
			spec := calicoapi.PolicySpec{Selector: "app == 'web'", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{tc.rule}}
			f.c.CalicoPolicies = append(f.c.CalicoPolicies, &calicoapi.NetworkPolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "odd"}, Spec: spec})
			ep := endpointByIP(f.compile(t), "10.0.1.10")
			var reasons []string
			for _, r := range ep.ACLReport {
				if r.Source == "policy-NetworkPolicy/demo/odd" {
					reasons = r.Reasons
				}
			}
			if want := []string{"rule 0: " + tc.want}; !reflect.DeepEqual(reasons, want) {
				t.Errorf("compiler reasons %q, want %q", reasons, want)
			}
			if got := UnsupportedCalicoRules(spec); len(got) != 1 || !reflect.DeepEqual(got[0].Reasons, []string{tc.want}) {
				t.Errorf("UnsupportedCalicoRules %+v", got)
			}
		})
	}
}
