package trace

import (
	"strings"
	"testing"
)

// NetworkPolicies layered on the lab (what -f does), as YAML.
const (
	denyAllIngressWinDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: win-demo}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`
	allowFromDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-from-demo, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - from:
        - namespaceSelector:
            matchLabels: {kubernetes.io/metadata.name: demo}
`
	allowFromDemoAndKubeSystem = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-from-two, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - from:
        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: demo}}
        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
`
	helloFromPodNetworkExceptNode2 = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-pods-except-node-2, namespace: demo}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: hello}}
  ingress:
    - from:
        - ipBlock: {cidr: 172.21.0.0/16, except: [172.21.172.0/24]}
`
	aspnetappFromPodNetworkExceptNode1 = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-pods-except-node-1, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - from:
        - ipBlock: {cidr: 172.21.0.0/16, except: [172.21.211.0/24]}
`
	denyEgressDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-egress, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
`
	allowDNSDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-dns, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to:
        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
          podSelector: {matchLabels: {k8s-app: kube-dns}}
      ports:
        - {protocol: UDP, port: 53}
        - {protocol: TCP, port: 53}
`
	allowWebEgressDemo = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-web, namespace: demo}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - ports: [{port: 8080}]
`
	helloNamedPort = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: http-only, namespace: demo}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/name: hello}}
  ingress:
    - ports: [{port: http}]
`
	aspnetappNamedPort = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: http-only, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - ports: [{port: http}]
`
	helloPortRange = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: range, namespace: demo}
spec:
  podSelector: {}
  ingress:
    - ports: [{port: 8000, endPort: 8080}]
`
	helloPortRangeShort = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: range, namespace: demo}
spec:
  podSelector: {}
  ingress:
    - ports: [{port: 8000, endPort: 8079}]
`
	aspnetappPortRange = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: range, namespace: win-demo}
spec:
  podSelector: {}
  ingress:
    - ports: [{port: 8000, endPort: 8090}]
`
)

// Each case layers policies on the lab and walks one connection; the
// verdict is what Kubernetes semantics say, except where Calico on Windows
// programs less (then the reason says so).
func TestNetworkPoliciesChangeTheVerdictsAsKubernetesSays(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policies  []string
		src, ns   string
		dst       string
		proto     Proto
		port      int
		delivered bool
		outcome   Outcome
		at        string // component that decides a failure
		reason    string
	}{
		{name: "without policies check reaches aspnetapp through its Service",
			src: "pod/check", ns: "default", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80, delivered: true},
		{name: "deny-all ingress in win-demo blocks a Linux pod at the Windows endpoint's ACL layer",
			policies: []string{denyAllIngressWinDemo}, src: "pod/check", ns: "default", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			outcome: Dropped, at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "denied: win-demo/"},
		{name: "allowing namespace demo lets hello through again",
			policies: []string{denyAllIngressWinDemo, allowFromDemo}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			delivered: true},
		{name: "allowing namespace demo still blocks check from default",
			policies: []string{denyAllIngressWinDemo, allowFromDemo}, src: "pod/check", ns: "default", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			outcome: Dropped, at: "ACL_ENDPOINT_GROUP_IPV4_IN"},
		{name: "the Windows node still reaches its pods under deny-all (allow-host-to-endpoint)",
			policies: []string{denyAllIngressWinDemo}, src: "node/k8s-lab-win-1", dst: "172.21.41.6", proto: TCP, port: 8080, delivered: true},
		{name: "an ipBlock admits a pod address inside its CIDR",
			policies: []string{helloFromPodNetworkExceptNode2}, src: "deploy/aspnetapp", ns: "win-demo", dst: "172.21.211.25", proto: TCP, port: 8080, delivered: true},
		{name: "an ipBlock's except range keeps a pod address out",
			policies: []string{helloFromPodNetworkExceptNode2}, src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 8080,
			outcome: Dropped, at: "filter-cali-tw-", reason: "no rule allows from 172.21.172."},
		{name: "an ipBlock with except is not programmed on Windows, so an allowed address is blocked there",
			policies: []string{aspnetappFromPodNetworkExceptNode1}, src: "pod/check", ns: "default", dst: "172.21.41.6", proto: TCP, port: 8080,
			outcome: Dropped, at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "negative match"},
		{name: "egress default-deny in demo blocks DNS, so the name does not resolve",
			policies: []string{denyEgressDemo}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			outcome: Unresolved, at: "filter-cali-fw-", reason: "DNS query to 10.96.0.10:53/udp"},
		{name: "allowing port 53 to kube-dns resolves the name and the web egress is still denied",
			policies: []string{denyEgressDemo, allowDNSDemo}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			outcome: Dropped, at: "filter-cali-fw-", reason: "to 172.21.41."},
		{name: "allowing port 8080 egress too reaches aspnetapp (policy sees the backend port after DNAT)",
			policies: []string{denyEgressDemo, allowDNSDemo, allowWebEgressDemo}, src: "deploy/hello", ns: "demo", dst: "aspnetapp.win-demo.svc.cluster.local", proto: TCP, port: 80,
			delivered: true},
		{name: "a named port resolves on the Linux pod and admits its port",
			policies: []string{helloNamedPort}, src: "pod/check", ns: "default", dst: "hello.demo", proto: TCP, port: 80, delivered: true},
		{name: "a rule with ports never admits ICMP",
			policies: []string{helloNamedPort}, src: "pod/check", ns: "default", dst: "172.21.172.4", proto: ICMP,
			outcome: Dropped, at: "filter-cali-tw-"},
		{name: "a named port is not programmed on Windows, so Kubernetes allows what VFP blocks",
			policies: []string{aspnetappNamedPort}, src: "pod/check", ns: "default", dst: "172.21.41.6", proto: TCP, port: 8080,
			outcome: Dropped, at: "ACL_ENDPOINT_GROUP_IPV4_IN", reason: "named port"},
		{name: "endPort makes a range that includes its end",
			policies: []string{helloPortRange}, src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 8080, delivered: true},
		{name: "endPort below the port keeps it out",
			policies: []string{helloPortRangeShort}, src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 8080,
			outcome: Dropped, at: "filter-cali-tw-"},
		{name: "a port range is programmed on Windows too",
			policies: []string{aspnetappPortRange}, src: "pod/check", ns: "default", dst: "172.21.41.6", proto: TCP, port: 8080, delivered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := buildWith(t, tc.policies...)
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, tc.port)
			if r.Delivered != tc.delivered {
				t.Fatalf("delivered=%v (%s at %s: %s), want %v\n%s", r.Delivered, r.Outcome, r.AtComp, r.Reason, tc.delivered, textOf(r))
			}
			if tc.delivered {
				return
			}
			if r.Outcome != tc.outcome {
				t.Errorf("outcome %s, want %s (%s)", r.Outcome, tc.outcome, r.Reason)
			}
			if !strings.Contains(r.AtComp, tc.at) {
				t.Errorf("decided at %q, want %q", r.AtComp, tc.at)
			}
			if !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("reason %q lacks %q", r.Reason, tc.reason)
			}
			if r.Fix == "" {
				t.Errorf("no fix")
			}
		})
	}
}

// The ACL counts on the path are the endpoint's, including the rules a
// policy adds (one per peer: two namespace selectors make two ACLs where
// the profile had one).
func TestTheACLCountOfEveryWindowsEndpointOnThePathIsReported(t *testing.T) {
	plain := traceOf(t, lab(t), "pod/check", "172.21.41.6", "default", TCP, 8080)
	withPolicy := traceOf(t, buildWith(t, allowFromDemoAndKubeSystem), "deploy/hello", "172.21.41.6", "demo", TCP, 8080)
	if len(plain.ACLs) != 1 || plain.ACLs[0].Count != 7 {
		t.Fatalf("without policy: %+v, want one endpoint with the seed's 7 ACLs", plain.ACLs)
	}
	if len(withPolicy.ACLs) != 1 || withPolicy.ACLs[0].Count <= 7 {
		t.Errorf("with an ingress policy of two peers: %+v, want more than 7", withPolicy.ACLs)
	}
	ep := lab(t).nodes["k8s-lab-win-1"].winEPs[addr("172.21.41.6")]
	if plain.ACLs[0].Count != ep.ACLCount || plain.ACLs[0].Endpoint != ep.ID {
		t.Errorf("reported %+v, endpoint has %d", plain.ACLs[0], ep.ACLCount)
	}
}
