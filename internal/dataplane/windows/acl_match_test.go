package windows

import (
	"net/netip"
	"testing"
)

func TestTheACLMatcherFindsTheRuleHNSWouldApply(t *testing.T) {
	const tcp, udp, icmp = 6, 17, 1
	in := func(id, action string, prio, proto int, remote, localPorts string) *ACL {
		return &ACL{ID: id, Action: action, Direction: "In", Protocol: proto, RemoteAddresses: remote,
			LocalPorts: localPorts, RuleType: "Switch", Priority: prio}
	}
	local := netip.MustParseAddr("10.244.1.5")
	tests := []struct {
		name       string
		acls       []*ACL
		dir        string
		remote     string
		proto      int
		localPort  int
		remotePort int
		wantID     string // "" when no rule matches
		wantIndex  int
	}{
		{"an endpoint without ACLs matches nothing", nil, "In", "10.0.0.1", tcp, 80, 0, "", -1},
		{"an empty address list matches any address",
			[]*ACL{in("a", "Allow", 1000, 256, "", "")}, "In", "192.0.2.7", tcp, 80, 0, "a", 0},
		{"a single address without /32 matches only itself",
			[]*ACL{in("a", "Allow", 1000, 256, "10.0.0.1", ""), in("b", "Block", 2000, 256, "", "")}, "In", "10.0.0.2", tcp, 80, 0, "b", 1},
		{"a prefix in an address list matches the addresses it holds",
			[]*ACL{in("a", "Allow", 1000, 256, "10.9.9.9, 10.244.0.0/16", "")}, "In", "10.244.3.4", tcp, 80, 0, "a", 0},
		{"an address outside every prefix and host of the list does not match",
			[]*ACL{in("a", "Allow", 1000, 256, "10.9.9.9,10.244.0.0/16", "")}, "In", "10.245.0.1", tcp, 80, 0, "", -1},
		{"an unreadable address entry matches nothing but the others still count",
			[]*ACL{in("a", "Allow", 1000, 256, "any,10.0.0.1", "")}, "In", "10.0.0.1", tcp, 80, 0, "a", 0},
		{"a local address list is checked against the endpoint's address",
			[]*ACL{{ID: "a", Action: "Allow", Direction: "In", Protocol: 256, LocalAddresses: "10.244.2.0/24", RuleType: "Switch", Priority: 1000},
				in("b", "Block", 2000, 256, "", "")}, "In", "10.0.0.1", tcp, 80, 0, "b", 1},
		{"a port inside a range matches",
			[]*ACL{in("a", "Allow", 1000, tcp, "", "443,8000-8080")}, "In", "10.0.0.1", tcp, 8080, 0, "a", 0},
		{"a port outside every range does not match",
			[]*ACL{in("a", "Allow", 1000, tcp, "", "443,8000-8080")}, "In", "10.0.0.1", tcp, 8081, 0, "", -1},
		{"an unknown port (the client's) matches any port list",
			[]*ACL{{ID: "a", Action: "Allow", Direction: "In", Protocol: tcp, RemotePorts: "5000", RuleType: "Switch", Priority: 1000}}, "In", "10.0.0.1", tcp, 80, 0, "a", 0},
		{"ICMP matches no port list",
			[]*ACL{in("a", "Allow", 1000, 256, "", "80"), in("b", "Block", 2000, 256, "", "")}, "In", "10.0.0.1", icmp, 0, 0, "b", 1},
		{"ICMP matches a rule without ports",
			[]*ACL{in("a", "Allow", 1000, icmp, "", "")}, "In", "10.0.0.1", icmp, 0, 0, "a", 0},
		{"a rule for another protocol does not match",
			[]*ACL{in("a", "Allow", 1000, udp, "", ""), in("b", "Block", 2000, 256, "", "")}, "In", "10.0.0.1", tcp, 53, 0, "b", 1},
		{"protocol 256 matches every protocol",
			[]*ACL{in("a", "Block", 1000, 256, "", "")}, "In", "10.0.0.1", udp, 53, 0, "a", 0},
		{"the lowest priority number decides whatever the order written",
			[]*ACL{in("allow", "Allow", 2000, 256, "", ""), in("block", "Block", 1000, 256, "", "")}, "In", "10.0.0.1", tcp, 80, 0, "block", 0},
		{"a matching Allow before a Block of a higher number wins",
			[]*ACL{in("allow", "Allow", 1000, tcp, "", "80"), in("block", "Block", 1001, 256, "", "")}, "In", "10.0.0.1", tcp, 80, 0, "allow", 0},
		{"the Block after a non-matching Allow decides",
			[]*ACL{in("allow", "Allow", 1000, tcp, "", "80"), in("block", "Block", 1001, 256, "", "")}, "In", "10.0.0.1", tcp, 81, 0, "block", 1},
		{"rules of equal priority keep the order they were written in",
			[]*ACL{in("first", "Block", 1000, 256, "", ""), in("second", "Allow", 1000, 256, "", "")}, "In", "10.0.0.1", tcp, 80, 0, "first", 0},
		{"rules of the other direction are not consulted",
			[]*ACL{in("a", "Block", 1000, 256, "", "")}, "Out", "10.0.0.1", tcp, 0, 80, "", -1},
		{"host rules (WFP) are not Switch ACLs",
			[]*ACL{{ID: "h", Action: "Block", Direction: "In", Protocol: 256, RuleType: "Host", Priority: 1}}, "In", "10.0.0.1", tcp, 80, 0, "", -1},
		{"an outbound rule reads the remote port",
			[]*ACL{{ID: "dns", Action: "Allow", Direction: "Out", Protocol: udp, RemotePorts: "53", RuleType: "Switch", Priority: 1000},
				{ID: "deny", Action: "Block", Direction: "Out", Protocol: 256, RuleType: "Switch", Priority: 2000}}, "Out", "10.96.0.10", udp, 0, 53, "dns", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ep := &Endpoint{IPAddress: local.String()}
			for _, a := range tc.acls {
				ep.Policies = append(ep.Policies, EndpointPolicy{Type: PolicyACL, ACL: a})
			}
			// The same answer with and without a shared list cache.
			for _, cache := range []*ACLListCache{nil, NewACLListCache()} {
				m := CompileACLs(ep, cache)
				acl, i := m.Match(tc.dir, local, netip.MustParseAddr(tc.remote), tc.proto, tc.localPort, tc.remotePort)
				id := ""
				if acl != nil {
					id = acl.ID
				}
				if id != tc.wantID || i != tc.wantIndex {
					t.Fatalf("Match = %q at %d; want %q at %d", id, i, tc.wantID, tc.wantIndex)
				}
				if i >= 0 && m.Rules(tc.dir)[i] != acl {
					t.Fatalf("Rules(%s)[%d] is not the matched rule", tc.dir, i)
				}
			}
		})
	}
}

func TestTheACLMatcherListsEachDirectionsSwitchRulesInMatchOrder(t *testing.T) {
	ep := &Endpoint{Policies: []EndpointPolicy{
		{Type: PolicyOutBoundNAT},
		{Type: PolicyACL, ACL: &ACL{ID: "in-late", Direction: "In", RuleType: "Switch", Priority: 2000}},
		{Type: PolicyACL, ACL: &ACL{ID: "out", Direction: "Out", RuleType: "Switch", Priority: 1}},
		{Type: PolicyACL, ACL: &ACL{ID: "in-host", Direction: "In", RuleType: "Host", Priority: 1}},
		{Type: PolicyACL, ACL: &ACL{ID: "in-early", Direction: "In", RuleType: "Switch", Priority: 100}},
	}}
	m := CompileACLs(ep, nil)
	var got []string
	for _, a := range m.Rules("In") {
		got = append(got, a.ID)
	}
	if len(got) != 2 || got[0] != "in-early" || got[1] != "in-late" {
		t.Errorf("Rules(In) = %v; want [in-early in-late]", got)
	}
	if out := m.Rules("Out"); len(out) != 1 || out[0].ID != "out" {
		t.Errorf("Rules(Out) = %v; want the one outbound Switch rule", out)
	}
}

func TestANodeCompilesEachEndpointsACLsOnceForConcurrentReaders(t *testing.T) {
	acl := func(remote string) *ACL {
		return &ACL{ID: "a", Action: "Allow", Direction: "In", Protocol: 256, RemoteAddresses: remote, RuleType: "Switch", Priority: 1000}
	}
	a := &Endpoint{IPAddress: "10.244.1.5", Policies: []EndpointPolicy{{Type: PolicyACL, ACL: acl("10.0.0.1")}}}
	b := &Endpoint{IPAddress: "10.244.1.6", Policies: []EndpointPolicy{{Type: PolicyACL, ACL: acl("10.0.0.2")}}}
	n := &Node{}
	got := make(chan *ACLMatcher, 8)
	for i := 0; i < cap(got); i++ {
		go func() { got <- n.ACLs(a) }()
	}
	first := <-got
	for i := 1; i < cap(got); i++ {
		if m := <-got; m != first {
			t.Fatal("two readers of one endpoint got different compiled ACLs")
		}
	}
	if n.ACLs(b) == first {
		t.Fatal("two endpoints share one compiled ACL set")
	}
	if r, _ := n.ACLs(b).Match("In", netip.MustParseAddr("10.244.1.6"), netip.MustParseAddr("10.0.0.1"), 6, 80, 0); r != nil {
		t.Fatalf("endpoint b matched endpoint a's rule: %+v", r)
	}
	if r, _ := first.Match("In", netip.MustParseAddr("10.244.1.5"), netip.MustParseAddr("10.0.0.1"), 6, 80, 0); r == nil {
		t.Fatal("endpoint a's own rule does not match")
	}
}
