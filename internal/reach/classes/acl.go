package classes

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

// EndpointACLs are one endpoint's Switch ACLs per direction, in match
// order, and what Felix skipped.
type EndpointACLs struct {
	IP              netip.Addr
	M               *windows.ACLMatcher
	In, Out         []*windows.ACL
	SkipIn, SkipOut []string
	// InText, outText name each rule as a trace does; inNone, outNone
	// say that none matched.
	InText, OutText []string
	InNone, OutNone string
	HostIn, HostOut []bool
}

// StableID drops the rule hash from a policy ACL's ID
// ("policy-…/ns/name-<16 characters>-0" → "policy-…/ns/name, ACL 0"): the
// hash is the twin's stand-in for Felix's rule ID (dataplane/windows
// standInRuleID) and tells a reader nothing the policy name and the ACL's
// index do not.
func StableID(id string) string {
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

func CompileEndpoint(ep *windows.Endpoint, sets *windows.ACLListCache) *EndpointACLs {
	x := &EndpointACLs{M: windows.CompileACLs(ep, sets)}
	x.IP, _ = netip.ParseAddr(ep.IPAddress)
	for _, dir := range []string{"In", "Out"} {
		rules := x.M.Rules(dir)
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
			texts = append(texts, fmt.Sprintf("%s %s priority %d (%s)", a.Action, strings.ToLower(a.Direction), a.Priority, StableID(id)))
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
			x.In, x.InText, x.HostIn, x.SkipIn, x.InNone = rules, texts, host, skipped, none
		} else {
			x.Out, x.OutText, x.HostOut, x.SkipOut, x.OutNone = rules, texts, host, skipped, none
		}
	}
	return x
}

// Match is the index of the first matching ACL of the direction, or -1;
// egress is the endpoint's outbound direction.
func (x *EndpointACLs) Match(egress bool, peerIP netip.Addr, proto trace.Proto, port int) int {
	if egress {
		_, i := x.M.Match("Out", x.IP, peerIP, proto.Number(), 0, port)
		return i
	}
	_, i := x.M.Match("In", x.IP, peerIP, proto.Number(), port, 0)
	return i
}

// EndpointACLs returns the compiled ACLs of the Windows pod endpoint with
// the address, or nil.
func (an *Prep) EndpointACLs(ip netip.Addr) *EndpointACLs {
	an.AclMu.Lock()
	x, ok := an.Acls[ip]
	an.AclMu.Unlock()
	if ok {
		return x
	}
	an.LoadACLs([]netip.Addr{ip})
	an.AclMu.Lock()
	defer an.AclMu.Unlock()
	return an.Acls[ip]
}

// StartACLCompiler points loadACLs at the plane's one Windows compiler
// (through the trace engine): the endpoints' ACLs are the ones trace
// walks, compiled from the same Felix calculation (windows.Compiler.Endpoints leaves out
// kube-proxy's objects, so Services cost nothing here).
func (an *Prep) StartACLCompiler() {
	an.AclCompiler = an.E.WindowsCompiler
}

// LoadACLs compiles the HNS ACLs of the Windows pod endpoints with the
// addresses, node by node. What Felix programs on an endpoint does not
// depend on Services, so the nodes are compiled without them, and only
// their pod endpoints (windows.Compiler.Endpoints): memory holds the ACLs
// asked for, not every Windows node. The tests compare them with the
// trace engine's.
func (an *Prep) LoadACLs(ips []netip.Addr) {
	an.AclMu.Lock()
	defer an.AclMu.Unlock()
	byNode := map[int][]netip.Addr{}
	var order []int
	for _, ip := range ips {
		if _, done := an.Acls[ip]; done {
			continue
		}
		an.Acls[ip] = nil
		c := an.PodClass[ip]
		if c == nil {
			continue
		}
		for _, m := range c.Members {
			if m.IP == ip && an.Nodes[m.Node].Windows {
				if byNode[m.Node] == nil {
					order = append(order, m.Node)
				}
				byNode[m.Node] = append(byNode[m.Node], ip)
			}
		}
	}
	if len(order) == 0 {
		return // no Windows endpoint: the compiler is not made
	}
	aclc := an.AclCompiler()
	if aclc == nil {
		return
	}
	for _, ni := range order {
		eps, err := aclc.Endpoints(an.E.Plane().Node(an.Nodes[ni].Name))
		if err != nil {
			continue
		}
		want := map[string]netip.Addr{}
		for _, ip := range byNode[ni] {
			want[ip.String()] = ip
		}
		for _, ep := range eps {
			if ip, ok := want[ep.IPAddress]; ok && !ep.IsRemoteEndpoint && ep.Kind == windows.KindPod {
				an.Acls[ip] = CompileEndpoint(ep, an.AddrSets)
			}
		}
	}
}
