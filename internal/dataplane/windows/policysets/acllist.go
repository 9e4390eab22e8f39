package policysets

import (
	"net/netip"
	"strconv"
	"strings"
)

// An ACL's LocalAddresses and RemoteAddresses, and its LocalPorts and
// RemotePorts, are comma-separated lists; an empty list matches
// everything. These read one entry each, for every reader of the lists.

// ACLAddress reads one entry of an address list: a prefix, or a single
// address (VFP prints hosts without /32).
func ACLAddress(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// ACLPortRange reads one entry of a port list: "443" or "8000-8080".
func ACLPortRange(s string) (lo, hi int, ok bool) {
	l, h, isRange := strings.Cut(strings.TrimSpace(s), "-")
	lo, err := strconv.Atoi(l)
	if err != nil {
		return 0, 0, false
	}
	if !isRange {
		return lo, lo, true
	}
	if hi, err = strconv.Atoi(h); err != nil {
		return 0, 0, false
	}
	return lo, hi, true
}
