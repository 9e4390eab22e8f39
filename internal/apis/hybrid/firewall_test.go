package hybrid

import (
	"net/netip"
	"testing"
)

func TestFirewallRulesMatchFirstWins(t *testing.T) {
	rules := []FirewallRule{
		{Name: "vxlan-from-nodes", Hosts: []string{"win-1"}, From: []string{"10.0.0.0/24"}, Protocol: "UDP", Ports: []int32{4789}, Action: "Allow"},
		{Name: "vxlan-elsewhere", Protocol: "udp", Ports: []int32{4789}, Action: "Block"},
		{Name: "one-address", From: []string{"192.168.1.7"}, Protocol: "TCP", Action: "block"},
		{Name: "ping", Protocol: "ICMP", Ports: []int32{1}, Action: "Block"},
		{Name: "ipip", Protocol: "IPIP", Ports: []int32{4}, Action: "Block"},
	}
	for _, c := range []struct {
		name  string
		host  string
		src   string
		proto string
		port  int32
		want  int
	}{
		{"a listed host and source take the first rule", "win-1", "10.0.0.5", "UDP", 4789, 0},
		{"a source outside From falls through to the next rule", "win-1", "10.9.0.5", "UDP", 4789, 1},
		{"a host the rule does not list falls through", "lin-1", "10.0.0.5", "UDP", 4789, 1},
		{"the protocol is matched without regard to case", "lin-1", "10.0.0.5", "udp", 4789, 1},
		{"another port matches no UDP rule", "lin-1", "10.0.0.5", "UDP", 53, -1},
		{"a single address in From matches only itself", "lin-1", "192.168.1.7", "TCP", 22, 2},
		{"a neighbouring address does not match it", "lin-1", "192.168.1.8", "TCP", 22, -1},
		{"ports are not read for ICMP", "lin-1", "10.0.0.5", "ICMP", 0, 3},
		{"nor for IP in IP", "lin-1", "10.0.0.5", "IPIP", 0, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FirstFirewallMatch(rules, c.host, netip.MustParseAddr(c.src), c.proto, c.port)
			if got != c.want {
				t.Fatalf("FirstFirewallMatch = %d, want %d", got, c.want)
			}
			if got >= 0 && rules[got].Blocks() != (rules[got].Action != "Allow") {
				t.Errorf("rule %d Blocks() = %t for action %q", got, rules[got].Blocks(), rules[got].Action)
			}
		})
	}
}
