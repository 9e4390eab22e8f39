package reach

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// The HNS ACLs of a Windows pod endpoint, parsed once
// (windows.ACLMatcher, the matcher trace's ACL_ENDPOINT_LAYER hop uses),
// with the texts a matrix cell names them by. Tests compare it with
// trace.Engine.EndpointACL.

// endpointACLs are one endpoint's Switch ACLs per direction, in match
// order, and what Felix skipped.
type endpointACLs struct {
	ip              netip.Addr
	m               *windows.ACLMatcher
	in, out         []*windows.ACL
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

func compileEndpoint(ep *windows.Endpoint, sets *windows.ACLListCache) *endpointACLs {
	x := &endpointACLs{m: windows.CompileACLs(ep, sets)}
	x.ip, _ = netip.ParseAddr(ep.IPAddress)
	for _, dir := range []string{"In", "Out"} {
		rules := x.m.Rules(dir)
		var texts []string
		var host []bool
		for _, a := range rules {
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
		none := fmt.Sprintf("no ACL of the %d matches", len(rules))
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
	if egress {
		_, i := x.m.Match("Out", x.ip, peerIP, proto.Number(), 0, port)
		return i
	}
	_, i := x.m.Match("In", x.ip, peerIP, proto.Number(), port, 0)
	return i
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
