package windows

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"
)

// ACLMatcher is an endpoint's Switch ACLs (the VFP ACL_ENDPOINT_LAYER)
// with their address and port lists parsed once, for every reader that
// asks which rule decides a connection (trace per packet, reach per
// cell). HNS takes the first rule of the direction by ascending priority
// whose protocol, addresses and ports match; rules of equal priority keep
// the order Felix wrote them in (Felix raises the priority whenever the
// action changes, felix/dataplane/windows/policysets/policysets.go, so
// equal priorities share an action).
type ACLMatcher struct {
	in, out           []compiledACL
	inRules, outRules []*ACL
}

type compiledACL struct {
	acl *ACL
	// local and remote are the parsed address lists of more than
	// smallList entries (IP set members) when compiled with a cache;
	// other lists are read in place, which allocates nothing.
	local, remote *aclAddrSet
}

// smallList is the longest address list read in place rather than parsed
// into a set.
const smallList = 8

// ACLListCache shares parsed address lists between endpoints: Felix writes
// the same IP set members into the ACLs of every endpoint a policy selects.
// The zero value is not usable; use NewACLListCache. Not safe for
// concurrent use.
type ACLListCache struct {
	addrs map[string]*aclAddrSet
}

// NewACLListCache returns an empty cache.
func NewACLListCache() *ACLListCache {
	return &ACLListCache{addrs: map[string]*aclAddrSet{}}
}

// addrSet is the parsed list, or nil for a list read in place: a short
// one, or any without a cache.
func (c *ACLListCache) addrSet(list string) *aclAddrSet {
	if c == nil || strings.Count(list, ",") < smallList {
		return nil
	}
	if s, ok := c.addrs[list]; ok {
		return s
	}
	s := parseACLAddrSet(list)
	c.addrs[list] = &s
	return &s
}

// CompileACLs orders the endpoint's Switch ACLs for matching. With a cache,
// long address lists (IP set members) are parsed into shared sets, for a
// reader that matches many connections; without one (nil) every list is
// read in place, which allocates nothing but is linear in the list.
func CompileACLs(ep *Endpoint, cache *ACLListCache) *ACLMatcher {
	n := 0
	for _, p := range ep.Policies {
		if p.ACL != nil && p.ACL.RuleType == "Switch" {
			n++
		}
	}
	// One backing array each for both directions' rules.
	acls := make([]*ACL, 0, n)
	rules := make([]compiledACL, 0, n)
	m := &ACLMatcher{}
	for _, dir := range [...]string{"In", "Out"} {
		start := len(acls)
		for _, p := range ep.Policies {
			if p.ACL != nil && p.ACL.RuleType == "Switch" && p.ACL.Direction == dir {
				acls = append(acls, p.ACL)
			}
		}
		d := acls[start:len(acls):len(acls)]
		slices.SortStableFunc(d, func(a, b *ACL) int { return cmp.Compare(a.Priority, b.Priority) })
		for _, a := range d {
			rules = append(rules, compiledACL{acl: a, local: cache.addrSet(a.LocalAddresses), remote: cache.addrSet(a.RemoteAddresses)})
		}
		r := rules[start:len(rules):len(rules)]
		if dir == "In" {
			m.in, m.inRules = r, d
		} else {
			m.out, m.outRules = r, d
		}
	}
	return m
}

// ACLs is the endpoint's Switch ACLs ordered for matching (CompileACLs
// without a cache: a trace matches a few packets, so parsing IP set lists
// would cost more than reading them), compiled on first use and kept with
// the node. It is safe for concurrent readers. ep is one of the node's
// endpoints.
func (n *Node) ACLs(ep *Endpoint) *ACLMatcher {
	n.aclMu.Lock()
	defer n.aclMu.Unlock()
	if m, ok := n.acls[ep]; ok {
		return m
	}
	if n.acls == nil {
		n.acls = map[*Endpoint]*ACLMatcher{}
	}
	m := CompileACLs(ep, nil)
	n.acls[ep] = m
	return m
}

// Rules are the Switch ACLs of the direction ("In" or "Out") in match
// order; Match's index points into them.
func (m *ACLMatcher) Rules(dir string) []*ACL {
	if dir == "Out" {
		return m.outRules
	}
	return m.inRules
}

// Match returns the first rule of the direction ("In" or "Out") matching
// a connection and its index in Rules(dir), or nil and -1 (VFP then lets
// the packet through). proto is the IP protocol number; an empty list
// matches anything, an unknown port (0: the client's ephemeral port)
// any port list, and ICMP (1) no port list.
func (m *ACLMatcher) Match(dir string, local, remote netip.Addr, proto, localPort, remotePort int) (*ACL, int) {
	rules := m.in
	if dir == "Out" {
		rules = m.out
	}
	for i := range rules {
		r := &rules[i]
		if r.acl.Protocol != 256 && r.acl.Protocol != proto {
			continue
		}
		if !addrListHas(r.local, r.acl.LocalAddresses, local) || !addrListHas(r.remote, r.acl.RemoteAddresses, remote) {
			continue
		}
		if !portListHas(r.acl.LocalPorts, localPort, proto) || !portListHas(r.acl.RemotePorts, remotePort, proto) {
			continue
		}
		return r.acl, i
	}
	return nil, -1
}

// aclAddrSet is a parsed address list; single addresses go in a map (IP
// set members are mostly hosts), the rest are prefixes. Entries that do
// not parse match nothing.
type aclAddrSet struct {
	any      bool
	addrs    map[netip.Addr]struct{}
	prefixes []netip.Prefix
}

func parseACLAddrSet(list string) aclAddrSet {
	if list == "" {
		return aclAddrSet{any: true}
	}
	s := aclAddrSet{addrs: map[netip.Addr]struct{}{}}
	for _, x := range strings.Split(list, ",") {
		p, ok := policysets.ACLAddress(x)
		switch {
		case !ok:
		case p.IsSingleIP():
			s.addrs[p.Addr()] = struct{}{}
		default:
			s.prefixes = append(s.prefixes, p)
		}
	}
	return s
}

// addrListHas reads the parsed set when there is one, else the list in
// place: an empty list matches any address.
func addrListHas(set *aclAddrSet, list string, a netip.Addr) bool {
	if set != nil {
		return set.has(a)
	}
	if list == "" {
		return true
	}
	for rest := list; rest != ""; {
		var x string
		x, rest, _ = strings.Cut(rest, ",")
		if p, ok := policysets.ACLAddress(x); ok && p.Contains(a) {
			return true
		}
	}
	return false
}

func (s *aclAddrSet) has(a netip.Addr) bool {
	if s.any {
		return true
	}
	if _, ok := s.addrs[a]; ok {
		return true
	}
	for _, p := range s.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// protoICMP is ICMP's IP protocol number: ICMP has no ports.
const protoICMP = 1

// portListHas reads a port list in place: an empty list matches, an
// unknown port (0) any list, ICMP no list; entries that do not parse
// match nothing.
func portListHas(list string, port, proto int) bool {
	if list == "" {
		return true
	}
	if proto == protoICMP {
		return false
	}
	if port == 0 {
		return true
	}
	for rest := list; rest != ""; {
		var x string
		x, rest, _ = strings.Cut(rest, ",")
		if l, h, ok := policysets.ACLPortRange(x); ok && port >= l && port <= h {
			return true
		}
	}
	return false
}
