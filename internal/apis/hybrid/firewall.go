package hybrid

import (
	"net/netip"
	"slices"
	"strings"
)

// AppliesTo reports whether the rule is about traffic into host with proto
// and port: its hosts (none means every host), its protocol (any case) and
// its ports (none means every port; ICMP and IPIP have no ports, so they
// are not read for them).
func (r FirewallRule) AppliesTo(host, proto string, port int32) bool {
	if !strings.EqualFold(r.Protocol, proto) {
		return false
	}
	if len(r.Hosts) > 0 && !slices.Contains(r.Hosts, host) {
		return false
	}
	if len(r.Ports) > 0 && !strings.EqualFold(proto, "ICMP") && !strings.EqualFold(proto, "IPIP") && !slices.Contains(r.Ports, port) {
		return false
	}
	return true
}

// AppliesToHost reports whether the rule lists host, or lists no host.
func (r FirewallRule) AppliesToHost(host string) bool {
	return len(r.Hosts) == 0 || slices.Contains(r.Hosts, host)
}

// MatchesSource reports whether src is among the rule's From CIDRs or
// addresses (none means any source).
func (r FirewallRule) MatchesSource(src netip.Addr) bool {
	if len(r.From) == 0 {
		return true
	}
	for _, f := range r.From {
		if p, err := netip.ParsePrefix(f); err == nil && p.Contains(src) {
			return true
		}
		if a, err := netip.ParseAddr(f); err == nil && a == src {
			return true
		}
	}
	return false
}

// Blocks reports whether the rule's action is Block (any case).
func (r FirewallRule) Blocks() bool { return strings.EqualFold(r.Action, "Block") }

// FirstFirewallMatch is the index of the first rule that decides traffic
// from src into host with proto and port, or -1: rules are read in order,
// the first match wins and unmatched traffic is allowed.
func FirstFirewallMatch(rules []FirewallRule, host string, src netip.Addr, proto string, port int32) int {
	for i, r := range rules {
		if r.AppliesTo(host, proto, port) && r.MatchesSource(src) {
			return i
		}
	}
	return -1
}
