package trace

import (
	"strings"
	"testing"
)

// projectcalico.org policies layered on the lab, as YAML.
const (
	gnpDenyWinDemoToHello = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: deny-win-demo-to-hello}
spec:
  selector: app.kubernetes.io/name == 'hello'
  types: [Ingress]
  ingress:
    - action: Deny
      source:
        namespaceSelector: projectcalico.org/name == 'win-demo'
    - action: Allow
`
	npAllowWinDemoFirst = `apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: allow-win-demo, namespace: demo}
spec:
  order: 10
  selector: app.kubernetes.io/name == 'hello'
  types: [Ingress]
  ingress:
    - action: Allow
      source:
        namespaceSelector: projectcalico.org/name == 'win-demo'
`
	gnpPassWinDemoInSecurityTier = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: security.pass-win-demo}
spec:
  tier: security
  order: 1
  selector: app.kubernetes.io/name in {'hello', 'aspnetapp'}
  types: [Ingress]
  ingress:
    - action: Pass
      source:
        namespaceSelector: projectcalico.org/name in {'win-demo', 'demo'}
`
	gnpHelloFromOutsideWindowsBlock = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: hello-not-from-windows-block}
spec:
  selector: app.kubernetes.io/name in {'hello', 'aspnetapp'}
  types: [Ingress]
  ingress:
    - action: Allow
      source:
        notNets: [172.21.41.0/26]
`
	gnpDenyDefaultServiceAccount = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: deny-default-sa}
spec:
  selector: app.kubernetes.io/name in {'hello', 'aspnetapp'}
  types: [Ingress]
  ingress:
    - action: Deny
      source:
        serviceAccounts: {names: [default]}
        namespaceSelector: projectcalico.org/name in {'win-demo', 'demo'}
    - action: Allow
`
	gnpDenyDemoToAspnetapp = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: deny-demo-to-aspnetapp}
spec:
  order: 50
  selector: app.kubernetes.io/name == 'aspnetapp'
  types: [Ingress]
  ingress:
    - action: Deny
      source:
        namespaceSelector: projectcalico.org/name == 'demo'
    - action: Allow
`
)

// Calico's own policies decide on both OSes as Felix programs them: on
// Linux the chains of felix/rules, on Windows the HNS ACLs; trace asks the
// same Felix calculation on both and they agree where Windows programs
// every rule.
func TestCalicoPoliciesDecideAsFelixProgramsThem(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policies  []string
		src, ns   string
		dst       string
		port      int
		delivered bool
		at        string // component that decides a failure
		reason    string
	}{
		{name: "a GlobalNetworkPolicy denying ingress to hello from win-demo stops the Windows pod at hello's Linux chain",
			policies: []string{gnpDenyWinDemoToHello}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80,
			at: "filter-cali-tw-", reason: "denied by GlobalNetworkPolicy deny-win-demo-to-hello ingress rule 0"},
		{name: "the same policy's Allow after the Deny lets another namespace through",
			policies: []string{gnpDenyWinDemoToHello}, src: "pod/check", ns: "default", dst: "hello.demo.svc.cluster.local", port: 80, delivered: true},
		{name: "a policy of lower order decides first, so an Allow at order 10 wins over the Deny without order",
			policies: []string{gnpDenyWinDemoToHello, npAllowWinDemoFirst}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80, delivered: true},
		{name: "a Pass in an earlier tier goes to the next tier, whose Deny decides on Linux",
			policies: []string{gnpPassWinDemoInSecurityTier, gnpDenyWinDemoToHello}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80,
			at: "filter-cali-tw-", reason: "passed it to the next tier"},
		{name: "a tier whose policies neither allow nor pass drops at its end on Linux",
			policies: []string{gnpPassWinDemoInSecurityTier}, src: "pod/check", ns: "default", dst: "hello.demo.svc.cluster.local", port: 80,
			at: "filter-cali-tw-", reason: "denied at the end of tier security"},
		{name: "a Pass with no policy in the next tiers reaches the profile on Linux",
			policies: []string{gnpPassWinDemoInSecurityTier}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80, delivered: true},
		{name: "a Pass with no policy in the next tiers reaches the profile on Windows",
			policies: []string{gnpPassWinDemoInSecurityTier}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", port: 80, delivered: true},
		{name: "notNets keeps the Windows block out of hello on Linux",
			policies: []string{gnpHelloFromOutsideWindowsBlock}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80,
			at: "filter-cali-tw-", reason: "denied at the end of tier default"},
		{name: "notNets lets a Linux pod into hello",
			policies: []string{gnpHelloFromOutsideWindowsBlock}, src: "pod/check", ns: "default", dst: "hello.demo.svc.cluster.local", port: 80, delivered: true},
		{name: "notNets is not programmed on Windows, so its Allow is missing there",
			policies: []string{gnpHelloFromOutsideWindowsBlock}, src: "pod/check", ns: "default", dst: "aspnetapp.win-demo.svc.cluster.local", port: 80,
			at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "negative match"},
		{name: "a service account match denies the default service account's pods on Linux",
			policies: []string{gnpDenyDefaultServiceAccount}, src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo.svc.cluster.local", port: 80,
			at: "filter-cali-tw-", reason: "denied by GlobalNetworkPolicy deny-default-sa ingress rule 0"},
		{name: "a service account match denies the default service account's pods on Windows",
			policies: []string{gnpDenyDefaultServiceAccount}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", port: 80,
			at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "denied by GlobalNetworkPolicy deny-default-sa ingress rule 0"},
		{name: "Deny before Allow blocks demo at the Windows endpoint, and Felix's Linux semantics agree",
			policies: []string{gnpDenyDemoToAspnetapp}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", port: 80,
			at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "denied by GlobalNetworkPolicy deny-demo-to-aspnetapp ingress rule 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := buildWith(t, tc.policies...)
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, TCP, tc.port)
			if r.Delivered != tc.delivered {
				t.Fatalf("delivered=%v (%s at %s: %s), want %v\n%s", r.Delivered, r.Outcome, r.AtComp, r.Reason, tc.delivered, textOf(r))
			}
			if tc.delivered {
				return
			}
			if r.Outcome != Dropped {
				t.Errorf("outcome %s, want %s (%s)", r.Outcome, Dropped, r.Reason)
			}
			if !strings.Contains(r.AtComp, tc.at) {
				t.Errorf("decided at %q, want %q", r.AtComp, tc.at)
			}
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, tc.reason)
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, "disagree") && !strings.Contains(tc.reason, "negative match") {
					t.Errorf("the Windows ACLs and Felix's decision disagree: %s", w)
				}
			}
		})
	}
}
