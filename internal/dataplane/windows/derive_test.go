package windows

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"
	fc "github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

func TestCalicoNodeCreatesTheExternalNetworkThenCalicoWithItsHostEndpoint(t *testing.T) {
	n := newFixture(1).compile(t)
	if len(n.Networks()) != 2 || n.Networks()[0].Name != "External" || n.Networks()[1].Name != "Calico" {
		t.Fatalf("networks %+v", n.Networks())
	}
	ext, cal := n.Networks()[0], n.Networks()[1]
	if ext.Subnets[0] != (Subnet{"192.168.255.0/30", "192.168.255.1", 9999}) || ext.ManagementIP != "192.168.1.10" {
		t.Errorf("External %+v", ext)
	}
	if cal.Subnets[0] != (Subnet{"10.0.1.0/26", "10.0.1.1", 4096}) || cal.DrMacAddress != "00-15-5D-AA-BB-CC" || cal.Policies[0].Type != PolicyHostRoute {
		t.Errorf("Calico %+v", cal)
	}
	ep := endpointByIP(n, "10.0.1.2")
	if ep == nil || ep.Name != "Calico_ep" || !ep.IsRemoteEndpoint || ep.MacAddress != "00:15:5d:01:02:03" || ep.Policies[0].PA != "192.168.1.10" {
		t.Errorf("Calico_ep %+v", ep)
	}
}

func TestAWindowsNodeWithoutABlockHasOnlyTheExternalNetwork(t *testing.T) {
	f := newFixture(1)
	f.c.IPAMBlocks = f.c.IPAMBlocks[1:]
	n := f.compile(t)
	if len(n.Networks()) != 1 || len(n.Endpoints()) != 0 || len(n.Warnings) == 0 {
		t.Errorf("networks %d endpoints %d warnings %v", len(n.Networks()), len(n.Endpoints()), n.Warnings)
	}
}

func TestAVNIBelow4096LeavesTheCalicoNetworkUncreated(t *testing.T) {
	f := newFixture(1)
	f.c.FelixConfigs = []*calicoapi.FelixConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calicoapi.FelixConfigurationSpec{VXLANVNI: ptr.To(4095)}}}
	n := f.compile(t)
	if len(n.Networks()) != 1 || !strings.Contains(strings.Join(n.Warnings, ";"), "VXLANVNI < 4096") {
		t.Errorf("networks %d warnings %v", len(n.Networks()), n.Warnings)
	}
}

func TestRemoteSubnetRoutesCarryTheVTEPAndSortByVTEPMACDescending(t *testing.T) {
	f := newFixture(3)
	n := f.compile(t)
	var got []string
	for _, p := range n.Networks()[1].Policies[1:] {
		got = append(got, p.DestinationPrefix+" "+p.ProviderAddress+" "+p.DistributedRouterMacAddress)
		if p.IsolationID != 4096 {
			t.Errorf("IsolationId %d", p.IsolationID)
		}
	}
	var want []string
	for i := 1; i <= 3; i++ {
		want = append(want, fmt.Sprintf("10.0.%d.0/26 192.168.1.%d %s", 10+i, 20+i, strings.ReplaceAll(fc.VTEPMACForHost(fmt.Sprintf("lin-%d", i)), ":", "-")))
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(strings.Fields(b)[2], strings.Fields(a)[2]) })
	if !slices.Equal(got, want) {
		t.Errorf("routes\n%v\nwant\n%v", got, want)
	}
}

func TestRemoteSubnetRouteOrderReproducesTheLabsObservedOrder(t *testing.T) {
	rs := []NetworkPolicy{
		{DestinationPrefix: "172.21.70.192/26", DistributedRouterMacAddress: strings.ReplaceAll(fc.VTEPMACForHost("k8s-lab-master-1"), ":", "-")},
		{DestinationPrefix: "172.21.211.0/26", DistributedRouterMacAddress: strings.ReplaceAll(fc.VTEPMACForHost("k8s-lab-node-1"), ":", "-")},
		{DestinationPrefix: "172.21.172.0/26", DistributedRouterMacAddress: strings.ReplaceAll(fc.VTEPMACForHost("k8s-lab-node-2"), ":", "-")},
	}
	sortRemoteSubnetRoutes(rs)
	var got []string
	for _, r := range rs {
		got = append(got, r.DestinationPrefix)
	}
	if strings.Join(got, " ") != "172.21.211.0/26 172.21.70.192/26 172.21.172.0/26" {
		t.Errorf("order %v", got)
	}
}

func TestANodeWithoutAVXLANTunnelAddressHasNoVTEPAndNoRoute(t *testing.T) {
	f := newFixture(2)
	delete(f.c.Nodes[2].Annotations, calico.AnnotationIPv4VXLANTunnelAddr)
	n := f.compile(t)
	if len(n.Networks()[1].Policies) != 2 || !strings.Contains(strings.Join(n.Warnings, ";"), "no VTEP for node lin-2") {
		t.Errorf("policies %+v warnings %v", n.Networks()[1].Policies, n.Warnings)
	}
}

func TestPodEndpointsGetTheCNIPrefixAndTheAddressInLowerCaseHex(t *testing.T) {
	f := newFixture(0)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	if ep.MacAddress != "0E-2A-0a-00-01-0a" || !strings.HasSuffix(ep.Name, "_Calico") || ep.GatewayAddress != "10.0.1.1" || ep.PrefixLength != 26 {
		t.Errorf("%+v", ep)
	}
}

func TestTheObservedSandboxIDNamesTheEndpointAndItsAdapter(t *testing.T) {
	f := newFixture(0)
	p := f.pod("demo", "web", "win", "10.0.1.10", nil)
	p.Annotations = map[string]string{SandboxIDAnnotation: "abc123"}
	n := f.compile(t)
	if ep := endpointByIP(n, "10.0.1.10"); ep.Name != "abc123_Calico" {
		t.Errorf("endpoint %s", ep.Name)
	}
	if a := n.Adapters[len(n.Adapters)-1]; a.Name != "vEthernet (abc123_Calico)" || a.InterfaceDescription != "Hyper-V Virtual Ethernet Container Adapter #2" || a.MacAddress != "0E-2A-0A-00-01-0A" {
		t.Errorf("adapter %+v", a)
	}
}

func TestTheOutBoundNATExceptionsAreTheServiceCIDRsThenEveryPool(t *testing.T) {
	f := newFixture(0)
	f.c.IPPools = append(f.c.IPPools, &calicoapi.IPPool{Spec: calicoapi.IPPoolSpec{CIDR: "10.200.0.1/16", VXLANMode: "Always"}})
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	var types []string
	for _, p := range ep.Policies[:4] {
		types = append(types, p.Type)
	}
	if strings.Join(types, " ") != "OutBoundNAT ROUTE PA OutBoundNAT" {
		t.Errorf("policy order %v", types)
	}
	if strings.Join(ep.Policies[0].ExceptionList, " ") != "10.96.0.0/12 10.0.0.0/16 10.200.0.0/16" {
		t.Errorf("exceptions %v", ep.Policies[0].ExceptionList)
	}
	if ep.Policies[1].DestinationPrefix != "10.96.0.0/12" || !ep.Policies[1].NeedEncap || ep.Policies[3].Destinations[0] != "10.0.1.10" {
		t.Errorf("route %+v loopback %+v", ep.Policies[1], ep.Policies[3])
	}
}

func TestNATOutgoingOffDropsTheExceptionOutBoundNATButKeepsLoopbackDSR(t *testing.T) {
	f := newFixture(0)
	f.c.IPPools[0].Spec.NATOutgoing = false
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	if ep.Policies[0].Type != PolicyRoute || ep.Policies[2].Type != PolicyOutBoundNAT || len(ep.Policies[2].Destinations) != 1 {
		t.Errorf("%+v", ep.Policies[:3])
	}
}

func TestLoopbackDSRNeedsBuild17763Revision1432Or18317(t *testing.T) {
	for kv, want := range map[string]bool{"10.0.17763.1431": false, "10.0.17763.1432": true, "10.0.18316.1": false, "10.0.20348.169": true} {
		f := newFixture(0)
		f.c.Hosts[0].KernelVersion = kv
		f.pod("demo", "web", "win", "10.0.1.10", nil)
		ep := endpointByIP(f.compile(t), "10.0.1.10")
		got := ep.Policies[len(ep.Policies)-ep.ACLCount-1].Type == PolicyOutBoundNAT
		if got != want {
			t.Errorf("%s: loopback DSR %v, want %v", kv, got, want)
		}
	}
}

func TestWithoutNetworkPoliciesFelixProgramsSevenACLs(t *testing.T) {
	f := newFixture(0)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	var got []string
	for _, a := range acls(ep) {
		got = append(got, fmt.Sprintf("%s %s %s %s %d %s", a.Direction, a.Action, a.RuleType, a.ID, a.Priority, a.RemoteAddresses))
	}
	want := []string{
		"In Allow Switch allow-host-to-endpoint 900 192.168.1.10/32",
		"In Allow Switch profile-kns.demo-" + policysets.ProfileRuleID("prof-in-kns.demo") + "-0 1000 ",
		"In Block Switch  1001 ",
		"Out Allow Switch profile-kns.demo-" + policysets.ProfileRuleID("prof-out-kns.demo") + "-0 1000 ",
		"Out Block Switch  1001 ",
		"In Allow Host  0 ",
		"Out Allow Host  0 ",
	}
	if !slices.Equal(got, want) || ep.ACLCount != 7 {
		t.Errorf("ACLs\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestProfileRuleIDsAreFelixsChainedSHA224(t *testing.T) {
	// An RKE2 Windows node's vfpctrl listing shows the kns profile's inbound
	// rule as "profile-kns.rke2-tcp-reset-test--atbkwj8tPVFG3P1-0".
	if id := policysets.ProfileRuleID("prof-in-kns.rke2-tcp-reset-test"); id != "-atbkwj8tPVFG3P1" {
		t.Errorf("rule ID %s", id)
	}
}

func npIngress(ns, name string, sel map[string]string, from []networkingv1.NetworkPolicyPeer, ports ...networkingv1.NetworkPolicyPort) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: sel},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: from, Ports: ports}},
		},
	}
}

func TestANetworkPolicyReplacesTheProfileInItsDirectionOnly(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"app": "web"})
	f.pod("demo", "client", "lin-1", "10.0.11.5", map[string]string{"app": "client"})
	f.pod("other", "client", "lin-1", "10.0.11.6", map[string]string{"app": "client"})
	f.c.NetworkPolicies = append(f.c.NetworkPolicies, npIngress("demo", "allow-client", map[string]string{"app": "web"},
		[]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}}}},
		networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(8080))}))
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	a := acls(ep)
	if len(a) != 7 {
		t.Fatalf("%d ACLs: %+v", len(a), a)
	}
	in := a[1]
	if in.Action != "Allow" || in.Direction != "In" || in.Protocol != 6 || in.LocalPorts != "8080" || in.RemoteAddresses != "10.0.11.5/32" ||
		!strings.HasPrefix(in.ID, "policy-KubernetesNetworkPolicy/demo/allow-client-") || in.Priority != 1000 {
		t.Errorf("ingress rule %+v", in)
	}
	if a[2].Action != "Block" || a[2].Priority != 1001 || !strings.HasPrefix(a[3].ID, "profile-kns.demo-") {
		t.Errorf("end of tier %+v, egress %+v", a[2], a[3])
	}
}

func TestAPolicyRuleGetsTheSameIDInEveryCompileAndAnotherForAnotherRule(t *testing.T) {
	ids := func(port int32) string {
		f := newFixture(1)
		f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"app": "web"})
		f.pod("demo", "client", "lin-1", "10.0.11.5", map[string]string{"app": "client"})
		f.c.NetworkPolicies = append(f.c.NetworkPolicies, npIngress("demo", "allow-client", map[string]string{"app": "web"},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}}}},
			networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(port))}))
		return acls(endpointByIP(f.compile(t), "10.0.1.10"))[1].ID
	}
	a, b, other := ids(8080), ids(8080), ids(8081)
	if a != b {
		t.Errorf("two compiles of the same rule: %s and %s", a, b)
	}
	if a == other {
		t.Errorf("rules on ports 8080 and 8081 share the ID %s", a)
	}
}

func TestRulesWithSourceAndDestinationSelectorsMultiplyChunksOf4000(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"role": "x"})
	// 4001 sources and 4002 destinations: two chunks each, four ACLs.
	for i := 0; i < 4001; i++ {
		f.pod("demo", fmt.Sprintf("src-%d", i), "lin-1", fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), map[string]string{"src": "y"})
	}
	for i := 0; i < 4002; i++ {
		f.pod("demo", fmt.Sprintf("dst-%d", i), "lin-1", fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), map[string]string{"dst": "z"})
	}
	order := 100.0
	f.c.CalicoPolicies = append(f.c.CalicoPolicies, &calicoapi.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "both"},
		Spec: calicoapi.PolicySpec{Order: &order, Selector: "role == 'x'", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{{
			Action: "Allow", Source: calicoapi.EntityRule{Selector: "src == 'y'"}, Destination: calicoapi.EntityRule{Selector: "dst == 'z'"},
		}}},
	})
	ep := endpointByIP(f.compile(t), "10.0.1.10")
	var both []ACL
	for _, a := range acls(ep) {
		if strings.HasPrefix(a.ID, "policy-NetworkPolicy/demo/both-") {
			both = append(both, a)
		}
	}
	if len(both) != 4 {
		t.Fatalf("%d ACLs from the rule, want 2×2 chunks", len(both))
	}
	for i, a := range both {
		l, r := strings.Count(a.LocalAddresses, ",")+1, strings.Count(a.RemoteAddresses, ",")+1
		if l > 4000 || r > 4000 || !strings.HasSuffix(a.ID, fmt.Sprintf("-%d", i)) {
			t.Errorf("ACL %d: %d local, %d remote addresses, id %s", i, l, r, a.ID)
		}
	}
	if ep.ACLCount != 1+4+1+2+2 { // host-to-endpoint, the rule, end of tier; egress profile and end; two host rules
		t.Errorf("ACLCount %d", ep.ACLCount)
	}
}

func TestRulesWindowsCannotProgramAreSkippedAndReported(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"app": "web"})
	f.c.CalicoPolicies = append(f.c.CalicoPolicies, &calicoapi.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "odd"},
		Spec: calicoapi.PolicySpec{Selector: "app == 'web'", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{
			{Action: "Allow", Source: calicoapi.EntityRule{NotNets: []string{"10.9.0.0/16"}}},
			{Action: "Allow", ICMP: &calicoapi.ICMPFields{Type: ptr.To(8)}},
			{Action: "Allow", Destination: calicoapi.EntityRule{Ports: []intstr.IntOrString{intstr.FromString("http")}}},
			{Action: "Allow", Source: calicoapi.EntityRule{Selector: "app == 'nobody'"}},
			{Action: "Log"},
			{Action: "Deny", Source: calicoapi.EntityRule{Nets: []string{"10.8.0.0/16"}}},
		}},
	})
	n := f.compile(t)
	ep := endpointByIP(n, "10.0.1.10")
	var rep ACLSource
	for _, r := range ep.ACLReport {
		if r.Source == "policy-NetworkPolicy/demo/odd" {
			rep = r
		}
	}
	if rep.Rules != 1 || rep.Skipped != 5 {
		t.Errorf("report %+v", rep)
	}
	for _, why := range []string{"negative match", "ICMP", "named port", "empty IP set", "log action"} {
		if !strings.Contains(strings.Join(rep.Reasons, ";"), why) {
			t.Errorf("no reason %q in %v", why, rep.Reasons)
		}
	}
	if !strings.Contains(strings.Join(n.Warnings, ";"), "demo/web: policy-NetworkPolicy/demo/odd (inbound): 5 rule(s) not programmed") {
		t.Errorf("warnings %v", n.Warnings)
	}
}

func TestAPassInAnEarlierTierNarrowsTheNextTiersRules(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", map[string]string{"app": "web"})
	f.c.GlobalNetworkPolicies = append(f.c.GlobalNetworkPolicies, &calicoapi.GlobalNetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "security.pass-tcp"},
		Spec: calicoapi.PolicySpec{Tier: "security", Selector: "all()", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{
			{Action: "Pass", Protocol: ptr.To(intstr.FromString("TCP"))},
		}},
	})
	f.c.CalicoPolicies = append(f.c.CalicoPolicies, &calicoapi.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "allow-80"},
		Spec: calicoapi.PolicySpec{Selector: "app == 'web'", Types: []string{"Ingress"}, Ingress: []calicoapi.Rule{
			{Action: "Allow", Destination: calicoapi.EntityRule{Ports: []intstr.IntOrString{intstr.FromInt32(80)}}},
		}},
	})
	a := acls(endpointByIP(f.compile(t), "10.0.1.10"))
	// security: [pass tcp → (allow tcp 80, block tcp)], end-of-tier block.
	got := fmt.Sprintf("%s/%d/%s %s/%d %s/%d", a[1].Action, a[1].Protocol, a[1].LocalPorts, a[2].Action, a[2].Protocol, a[3].Action, a[3].Protocol)
	if got != "Allow/6/80 Block/6 Block/256" || a[1].Priority != 1000 || a[3].Priority != 1002 {
		t.Errorf("flattened %s; %+v", got, a[:4])
	}
}

func TestKubeProxyCreatesARemoteEndpointPerClusterIPAndPerRemoteBackend(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	f.service("demo", "hello", "10.96.0.50", tcpPort("http", 80, intstr.FromString("http")), 8080,
		bk{ip: "10.0.11.5", node: "lin-1"}, bk{ip: "10.0.1.10", node: "win"})
	n := f.compile(t)
	cip, remote := endpointByIP(n, "10.96.0.50"), endpointByIP(n, "10.0.11.5")
	if cip.MacAddress != "00:15:5d:01:02:03" || !cip.IsRemoteEndpoint || cip.Policies[0].PA != "192.168.1.10" {
		t.Errorf("ClusterIP endpoint %+v", cip)
	}
	if remote.MacAddress != "02-11-0a-00-0b-05" || remote.Policies[0].PA != "192.168.1.21" || remote.Kind != KindRemote {
		t.Errorf("remote endpoint %+v", remote)
	}
	lbs := lbsOf(n, "demo/hello")
	if len(lbs) != 1 || lbs[0].InternalPort != 8080 || lbs[0].ExternalPort != 80 || lbs[0].SourceVIP != "10.0.1.2" ||
		lbs[0].Flags != LBFlagDSR || strings.Join(lbs[0].Backends, ",") != "10.0.1.10,10.0.11.5" {
		t.Errorf("load balancers %+v", lbs)
	}
}

func TestABackendThatIsANodeIPMakesTheNodeIPTheSourceVIP(t *testing.T) {
	f := newFixture(1)
	f.service("default", "kubernetes", "10.96.0.1", tcpPort("https", 443, intstr.FromInt32(6443)), 6443, bk{ip: "192.168.1.21", node: "lin-1"})
	n := f.compile(t)
	lb := lbsOf(n, "default/kubernetes")[0]
	if lb.SourceVIP != "192.168.1.10" || endpointByIP(n, "192.168.1.21").Policies[0].PA != "192.168.1.21" {
		t.Errorf("%+v", lb)
	}
}

func TestABackendOutsideEveryRouteIsAPublicIPWithTheNodeAsPA(t *testing.T) {
	f := newFixture(1)
	f.service("demo", "ext", "10.96.0.60", tcpPort("http", 80, intstr.FromInt32(80)), 80, bk{ip: "203.0.113.7", node: "elsewhere"})
	n := f.compile(t)
	if endpointByIP(n, "203.0.113.7").Policies[0].PA != "192.168.1.10" || lbsOf(n, "demo/ext")[0].SourceVIP != "192.168.1.10" {
		t.Errorf("%+v", lbsOf(n, "demo/ext")[0])
	}
}

func TestNodePortExternalIPAndIngressLoadBalancersFollowTheTrafficPolicies(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	svc := f.service("demo", "web", "10.96.0.70", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080, Protocol: corev1.ProtocolTCP}, 8080,
		bk{ip: "10.0.1.10", node: "win"}, bk{ip: "10.0.11.5", node: "lin-1"})
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.ExternalIPs = []string{"198.51.100.1"}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.2"}, {Hostname: "lb.example"}}
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	n := f.compile(t)
	got := map[string]string{}
	for _, lb := range lbsOf(n, "demo/web") {
		got[lb.Kind] = fmt.Sprintf("vip=%v ext=%d backends=%v flags=%d pm=%d dist=%d", lb.FrontendVIPs, lb.ExternalPort, lb.Backends, lb.Flags, lb.PortMappingFlags, lb.DistributionType)
	}
	want := map[string]string{
		LBClusterIP:  "vip=[10.96.0.70] ext=80 backends=[10.0.1.10 10.0.11.5] flags=1 pm=0 dist=2",
		LBNodePort:   "vip=[] ext=30080 backends=[10.0.1.10] flags=1 pm=18 dist=2",
		LBExternalIP: "vip=[198.51.100.1] ext=80 backends=[10.0.1.10] flags=1 pm=16 dist=2",
		LBIngressIP:  "vip=[198.51.100.2] ext=80 backends=[10.0.1.10] flags=1 pm=16 dist=2",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %s\n want %s", k, got[k], w)
		}
	}
	if len(got) != 4 {
		t.Errorf("load balancers %v (a hostname ingress gets none)", got)
	}
}

func TestPreserveDestinationAddsUseMuxAndPreserveDIPToIngressLoadBalancers(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	svc := f.service("demo", "web", "10.96.0.70", corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30080, Protocol: corev1.ProtocolTCP}, 8080,
		bk{ip: "10.0.1.10", node: "win"}, bk{ip: "10.0.11.5", node: "lin-1"})
	svc.Annotations = map[string]string{"preserve-destination": "true"}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.2"}}
	for _, lb := range lbsOf(f.compile(t), "demo/web") {
		switch lb.Kind {
		case LBIngressIP:
			if lb.PortMappingFlags != PortMappingVipExternalIP|PortMappingUseMux|PortMappingPreserveDIP || lb.Flags != LBFlagDSR || len(lb.Backends) != 1 {
				t.Errorf("ingress %+v", lb)
			}
		case LBNodePort:
			if len(lb.Backends) != 1 || lb.Flags != 0 {
				t.Errorf("node port %+v", lb)
			}
		}
	}
}

func TestInternalTrafficPolicyLocalKeepsOnlyLocalBackendsOnTheClusterIP(t *testing.T) {
	f := newFixture(1)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	svc := f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(8080)), 8080,
		bk{ip: "10.0.1.10", node: "win"}, bk{ip: "10.0.11.5", node: "lin-1"})
	svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	lbs := lbsOf(f.compile(t), "demo/web")
	if len(lbs) != 1 || strings.Join(lbs[0].Backends, ",") != "10.0.1.10" {
		t.Errorf("%+v", lbs)
	}
}

func TestNotReadyBackendsAreLeftOutAndTerminatingOnesServeOnlyWhenAllTerminate(t *testing.T) {
	f := newFixture(1)
	svc := f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(80)), 80,
		bk{ip: "10.0.11.5", node: "lin-1", notReady: true}, bk{ip: "10.0.11.6", node: "lin-1"})
	_ = svc
	if lb := lbsOf(f.compile(t), "demo/web"); len(lb) != 1 || strings.Join(lb[0].Backends, ",") != "10.0.11.6" {
		t.Errorf("%+v", lb)
	}
	f = newFixture(1)
	svc = f.service("demo", "web", "10.96.0.70", tcpPort("http", 80, intstr.FromInt32(80)), 80,
		bk{ip: "10.0.11.5", node: "lin-1", termin: true}, bk{ip: "10.0.11.6", node: "lin-1", termin: true})
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.2"}}
	// Both serve, but no endpoint is available for the ingress load
	// balancer (manageLoadbalancer's endpointsAvailableForLB): only the
	// ClusterIP one is made.
	lbs := lbsOf(f.compile(t), "demo/web")
	if len(lbs) != 1 || lbs[0].Kind != LBClusterIP || len(lbs[0].Backends) != 2 {
		t.Errorf("all terminating (with an ingress IP): %+v", lbs)
	}
}

func TestMoreThan64BackendsIsReportedNotApplied(t *testing.T) {
	f := newFixture(1)
	var bes []bk
	for i := 1; i <= 65; i++ {
		bes = append(bes, bk{ip: fmt.Sprintf("10.0.11.%d", i), node: "lin-1"})
	}
	f.service("demo", "big", "10.96.0.80", tcpPort("http", 80, intstr.FromInt32(80)), 80, bes...)
	lb := lbsOf(f.compile(t), "demo/big")[0]
	if len(lb.EndpointIDs) != 65 || len(lb.Warnings) != 1 || !strings.Contains(lb.Warnings[0], "at most 64 destinations") {
		t.Errorf("%d endpoints, warnings %v", len(lb.EndpointIDs), lb.Warnings)
	}
}

func TestLoadBalancersWithTheSameIdentifierAreCreatedOnce(t *testing.T) {
	f := newFixture(1)
	f.service("demo", "a", "10.96.0.90", tcpPort("http", 80, intstr.FromInt32(80)), 80, bk{ip: "10.0.11.5", node: "lin-1"})
	f.c.Services[0].Spec.Ports = append(f.c.Services[0].Spec.Ports, tcpPort("http", 80, intstr.FromInt32(80)))
	if lbs := lbsOf(f.compile(t), "demo/a"); len(lbs) != 1 {
		t.Errorf("%d load balancers", len(lbs))
	}
}

func TestWithoutKubeProxyThereAreNoLoadBalancers(t *testing.T) {
	f := newFixture(1)
	f.c.Pods = nil
	f.service("demo", "a", "10.96.0.90", tcpPort("http", 80, intstr.FromInt32(80)), 80, bk{ip: "10.0.11.5", node: "lin-1"})
	n := f.compile(t)
	if n.KubeProxy || len(n.LoadBalancers()) != 0 || len(n.Endpoints()) != 1 {
		t.Errorf("kube-proxy %v, %d LBs, %d endpoints", n.KubeProxy, len(n.LoadBalancers()), len(n.Endpoints()))
	}
}

func TestExplicitKubeProxyFlagsOverrideStartPS1(t *testing.T) {
	f := newFixture(1)
	f.c.Pods[0].Spec.Containers[0].Args = append(f.c.Pods[0].Spec.Containers[0].Args, "--enable-dsr=false")
	f.service("demo", "a", "10.96.0.90", tcpPort("http", 80, intstr.FromInt32(80)), 80, bk{ip: "10.0.11.5", node: "lin-1"})
	n := f.compile(t)
	if n.DSR || lbsOf(n, "demo/a")[0].DSR() {
		t.Errorf("DSR should be off")
	}
}

var uuidV5 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestIDsAreStableVersion5UUIDs(t *testing.T) {
	a, b := newFixture(1).compile(t), newFixture(1).compile(t)
	for i := range a.Endpoints() {
		if a.Endpoints()[i].ID != b.Endpoints()[i].ID || !uuidV5.MatchString(a.Endpoints()[i].ID) {
			t.Errorf("endpoint ID %s / %s", a.Endpoints()[i].ID, b.Endpoints()[i].ID)
		}
	}
	// RFC 9562 appendix A: uuid5(DNS, "www.example.com").
	u := uuid5(dnsNamespace, "www.example.com")
	if got := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:]); got != "2ed6657d-e927-568b-95e1-2665a8aea6a2" {
		t.Errorf("uuid5 %s", got)
	}
}

func TestTheNodeHasTheOverlayFirewallRuleAndItsClusterRules(t *testing.T) {
	f := newFixture(0)
	n := f.compile(t)
	if r := n.FirewallRules[0]; r.Name != "OverlayTraffic4789UDP" || r.LocalPorts[0] != 4789 {
		t.Errorf("%+v", r)
	}
}

func TestVFPPodPortsAreNamedAfterTheirEndpointAndMirrorTheSwitchACLs(t *testing.T) {
	f := newFixture(0)
	f.pod("demo", "web", "win", "10.0.1.10", nil)
	n := f.compile(t)
	ep := endpointByIP(n, "10.0.1.10")
	var p *VFPPort
	for _, x := range n.Ports() {
		if x.Name == ep.ID {
			p = x
		}
	}
	if p == nil || p.Layers[0].Name != "ACL_ENDPOINT_LAYER" {
		t.Fatalf("port %+v", p)
	}
	rules := len(p.Layers[0].Groups[0].Rules) + len(p.Layers[0].Groups[1].Rules)
	if rules != 5 { // seven ACLs, two of them Host (WFP) rules
		t.Errorf("%d VFP ACL rules", rules)
	}
}
