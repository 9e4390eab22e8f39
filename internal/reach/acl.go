package reach

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// The HNS ACLs of a Windows pod endpoint, parsed once: what a trace's
// ACL_ENDPOINT_LAYER hop does (first Switch ACL of the direction by
// ascending priority whose protocol, addresses and ports match; an empty
// list matches anything, an unknown port — the client's — any port list,
// ICMP no port list) without parsing the address lists per connection.
// Tests compare it with trace.Engine.EndpointACL.

type addrSet struct {
	any      bool
	addrs    map[netip.Addr]struct{}
	prefixes []netip.Prefix
}

func parseAddrSet(list string) addrSet {
	if list == "" {
		return addrSet{any: true}
	}
	s := addrSet{addrs: map[netip.Addr]struct{}{}}
	for _, x := range strings.Split(list, ",") {
		p, ok := windows.ACLAddress(x)
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

func (s *addrSet) has(a netip.Addr) bool {
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

type portSet struct {
	any    bool
	ranges [][2]int
}

func parsePortSet(list string) portSet {
	if list == "" {
		return portSet{any: true}
	}
	var s portSet
	for _, x := range strings.Split(list, ",") {
		if l, h, ok := windows.ACLPortRange(x); ok {
			s.ranges = append(s.ranges, [2]int{l, h})
		}
	}
	return s
}

func (s *portSet) has(port int, proto trace.Proto) bool {
	if s.any {
		return true
	}
	if proto == trace.ICMP {
		return false
	}
	if port == 0 {
		return true
	}
	for _, r := range s.ranges {
		if port >= r[0] && port <= r[1] {
			return true
		}
	}
	return false
}

type aclRule struct {
	acl                     *windows.ACL
	local, remote           *addrSet
	localPorts, remotePorts portSet
}

// endpointACLs are one endpoint's Switch ACLs per direction, in match
// order, and what Felix skipped.
type endpointACLs struct {
	ip              netip.Addr
	in, out         []aclRule
	skipIn, skipOut []string
	// inText, outText name each rule as a trace does; inNone, outNone
	// say that none matched.
	inText, outText []string
	inNone, outNone string
	hostIn, hostOut []bool
}

// stableID drops the rule hash from a policy ACL's ID
// ("policy-…/ns/name-<16 characters>-0" → "policy-…/ns/name, ACL 0"): the
// hash is the twin's stand-in for Felix's rule ID (dataplane/windows
// standInRuleID) and tells a reader nothing the policy name and the ACL's
// index do not.
func stableID(id string) string {
	if !strings.HasPrefix(id, "policy-") {
		return id
	}
	i := strings.LastIndexByte(id, '-')
	if i < 17 || id[i-17] != '-' {
		return id
	}
	if _, err := strconv.Atoi(id[i+1:]); err != nil {
		return id
	}
	return id[:i-17] + ", ACL " + id[i+1:]
}

func compileEndpoint(ep *windows.Endpoint, sets map[string]*addrSet) *endpointACLs {
	set := func(list string) *addrSet {
		if s, ok := sets[list]; ok {
			return s
		}
		s := parseAddrSet(list)
		sets[list] = &s
		return &s
	}
	x := &endpointACLs{}
	x.ip, _ = netip.ParseAddr(ep.IPAddress)
	for _, dir := range []string{"In", "Out"} {
		var acls []*windows.ACL
		for _, p := range ep.Policies {
			if p.ACL != nil && p.ACL.RuleType == "Switch" && p.ACL.Direction == dir {
				acls = append(acls, p.ACL)
			}
		}
		sort.SliceStable(acls, func(i, j int) bool { return acls[i].Priority < acls[j].Priority })
		var rules []aclRule
		var texts []string
		var host []bool
		for _, a := range acls {
			rules = append(rules, aclRule{acl: a, local: set(a.LocalAddresses), remote: set(a.RemoteAddresses),
				localPorts: parsePortSet(a.LocalPorts), remotePorts: parsePortSet(a.RemotePorts)})
			id := a.ID
			if id == "" {
				id = "end-of-tier"
				if a.Action == "Allow" {
					id = "allow"
				}
			}
			texts = append(texts, fmt.Sprintf("%s %s priority %d (%s)", a.Action, strings.ToLower(a.Direction), a.Priority, stableID(id)))
			host = append(host, a.ID == "allow-host-to-endpoint")
		}
		var skipped []string
		for _, s := range ep.ACLReport {
			if s.Direction == dir && s.Skipped > 0 {
				skipped = append(skipped, fmt.Sprintf("%s: %s", s.Source, strings.Join(s.Reasons, "; ")))
			}
		}
		none := fmt.Sprintf("no ACL of the %d matches", len(acls))
		if dir == "In" {
			x.in, x.inText, x.hostIn, x.skipIn, x.inNone = rules, texts, host, skipped, none
		} else {
			x.out, x.outText, x.hostOut, x.skipOut, x.outNone = rules, texts, host, skipped, none
		}
	}
	return x
}

// match is the index of the first matching ACL of the direction, or -1;
// egress is the endpoint's outbound direction.
func (x *endpointACLs) match(egress bool, peerIP netip.Addr, proto trace.Proto, port int) int {
	rules := x.in
	localPort, remotePort := port, 0
	if egress {
		rules, localPort, remotePort = x.out, 0, port
	}
	n := proto.Number()
	for i := range rules {
		r := &rules[i]
		if r.acl.Protocol != 256 && r.acl.Protocol != n {
			continue
		}
		if !r.local.has(x.ip) || !r.remote.has(peerIP) {
			continue
		}
		if !r.localPorts.has(localPort, proto) || !r.remotePorts.has(remotePort, proto) {
			continue
		}
		return i
	}
	return -1
}

// endpointACLs returns the compiled ACLs of the Windows pod endpoint with
// the address, or nil.
func (an *analyzer) endpointACLs(ip netip.Addr) *endpointACLs {
	an.aclMu.Lock()
	x, ok := an.acls[ip]
	an.aclMu.Unlock()
	if ok {
		return x
	}
	an.loadACLs([]netip.Addr{ip})
	an.aclMu.Lock()
	defer an.aclMu.Unlock()
	return an.acls[ip]
}

// startACLCompiler points loadACLs at the plane's one Windows compiler
// (through the trace engine): the endpoints' ACLs are the ones trace
// walks, compiled from the same Felix calculation (windows.Compiler.Endpoints leaves out
// kube-proxy's objects, so Services cost nothing here).
func (an *analyzer) startACLCompiler() {
	an.aclCompiler = an.e.WindowsCompiler
}

// loadACLs compiles the HNS ACLs of the Windows pod endpoints with the
// addresses, node by node. What Felix programs on an endpoint does not
// depend on Services, so the nodes are compiled without them, and only
// their pod endpoints (windows.Compiler.Endpoints): memory holds the ACLs
// asked for, not every Windows node. The tests compare them with the
// trace engine's.
func (an *analyzer) loadACLs(ips []netip.Addr) {
	an.aclMu.Lock()
	defer an.aclMu.Unlock()
	aclc := an.aclCompiler()
	byNode := map[int][]netip.Addr{}
	var order []int
	for _, ip := range ips {
		if _, done := an.acls[ip]; done {
			continue
		}
		an.acls[ip] = nil
		c := an.podClass[ip]
		if c == nil {
			continue
		}
		for _, m := range c.members {
			if m.ip == ip && an.nodes[m.node].windows {
				if byNode[m.node] == nil {
					order = append(order, m.node)
				}
				byNode[m.node] = append(byNode[m.node], ip)
			}
		}
	}
	if aclc == nil {
		return
	}
	for _, ni := range order {
		eps, err := aclc.Endpoints(an.e.Plane().Node(an.nodes[ni].name))
		if err != nil {
			continue
		}
		want := map[string]netip.Addr{}
		for _, ip := range byNode[ni] {
			want[ip.String()] = ip
		}
		for _, ep := range eps {
			if ip, ok := want[ep.IPAddress]; ok && !ep.IsRemoteEndpoint && ep.Kind == windows.KindPod {
				an.acls[ip] = compileEndpoint(ep, an.addrSets)
			}
		}
	}
}
