// Package policysets renders the twin's Felix calculation into the HNS ACL
// rules Felix programs on a Windows workload endpoint: policies and
// profiles per tier, IP set members as address lists, and the rules Felix
// on Windows skips (felix/dataplane/windows/policysets). The Windows
// dataplane (internal/dataplane/windows) attaches them to endpoints.
package policysets

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	fc "github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// Felix's Windows policy constants (felix/dataplane/windows/policysets/policyset_defs.go).
const (
	hostToEndpointPriority = 900
	policyBasePriority     = 1000
	policyMaxPriority      = 65000
	ipPortsPerRule         = 4000 // policysets.go protoRulesToHnsRules
	actionPass             = "pass"
)

// Felix compiles the twin's Felix calculation (internal/felix: the
// endpoints, the policies per endpoint and tier, the IP set members) into
// the HNS ACLs Felix programs on each local workload endpoint
// (felix/dataplane/windows/endpoint_mgr.go CompleteDeferredWork and
// policysets/policysets.go).
type Felix struct {
	calc *fc.Calc

	mu sync.Mutex
	// built holds each policy's ACLs, converted once.
	built map[*fc.Policy]*builtPolicy
	// members holds each IP set as HNS addresses ("ip/32"), by what
	// decides it: the rules of many policies share them.
	members map[fc.MemberKey][]string
	// joined holds the address lists ruleACLs has written, by the list.
	joined map[joinKey]string
	// dirs holds each direction's rules by what decides them (dirKey):
	// endpoints selected by the same policies share them.
	dirs map[string]*dirRules
}

// builtPolicy is a policy set as Felix's Windows dataplane holds it
// (policysets.go AddOrReplacePolicySet): its rules per direction as ACLs,
// and the rules it skipped.
type builtPolicy struct {
	inACL, outACL  []ACL
	inSkip, outSkp []string
}

// dirRules are one direction's ACLs of an endpoint, after flattening and
// priorities, with their report; shared, never changed.
type dirRules struct {
	acls   []ACL
	report []ACLSource
}

// New returns the renderer of the calculation's policies; it is safe for
// concurrent use.
func New(calc *fc.Calc) *Felix {
	return &Felix{calc: calc, built: map[*fc.Policy]*builtPolicy{}, members: map[fc.MemberKey][]string{}}
}

// EndpointACLs is the ACL list Felix applies to a local pod's HNS endpoint
// (endpoint_mgr.go): allow-host-to-endpoint, the ingress rules (tiers of
// policies, or the profiles when no default-tier policy applies), the egress
// rules likewise, then one host-scope allow per direction.
func (f *Felix) EndpointACLs(p *corev1.Pod, hostAddr string) ([]ACL, []ACLSource, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ep := f.calc.EndpointOf(p)
	var report []ACLSource
	var warns []string
	var acls []ACL
	if hostAddr != "" {
		acls = append(acls, ACL{ID: "allow-host-to-endpoint", Action: "Allow", Direction: "In", Protocol: ProtocolAny,
			RemoteAddresses: hostAddr + "/32", RuleType: "Switch", Priority: hostToEndpointPriority})
		report = append(report, ACLSource{Source: "allow-host-to-endpoint", Direction: "In", Rules: 1})
	}
	profiles := fc.Profiles(ep)
	cands := f.calc.Candidates(ep.Namespace)
	in := f.dirRules(ep, cands, profiles, true)
	out := f.dirRules(ep, cands, profiles, false)
	acls = slices.Grow(acls, len(in.acls)+len(out.acls)+2)
	acls = append(append(acls, in.acls...), out.acls...)
	report = append(append(report, in.report...), out.report...)
	// Host-scope allows (endpoint_mgr.go NewHostRule): priority 0 on HNS
	// builds with AclNoHostRulePriority (1803 and later).
	for _, d := range []string{"In", "Out"} {
		acls = append(acls, ACL{Action: "Allow", Direction: d, Protocol: ProtocolAny, RuleType: "Host"})
		report = append(report, ACLSource{Source: "host", Direction: d, Rules: 1})
	}
	for _, r := range report {
		if r.Skipped > 0 {
			warns = append(warns, fmt.Sprintf("%s (%s): %d rule(s) not programmed on Windows: %s", r.Source, strings.ToLower(r.Direction)+"bound", r.Skipped, strings.Join(r.Reasons, "; ")))
		}
	}
	return acls, report, warns
}

// dirRules is one direction of an endpoint's ACLs: the tiers of the
// policies that apply to it, or its profiles when no default-tier policy
// does, flattened (flattener.go) with their priorities rewritten. What
// decides them (the policies per tier, the profiles) is the key: they are
// made once per key.
func (f *Felix) dirRules(ep *fc.Endpoint, cands []*fc.Policy, profiles []string, inbound bool) *dirRules {
	dir := "Out"
	if inbound {
		dir = "In"
	}
	var key strings.Builder
	key.WriteString(dir)
	chosen := f.calc.ActiveAmong(ep, cands, inbound)
	defaultApplies := false
	for _, t := range chosen {
		if t.Name == fc.DefaultTier {
			defaultApplies = true
		}
		key.WriteByte(0)
		key.WriteString(t.Name)
		for _, ps := range t.Policies {
			key.WriteByte(1)
			key.WriteString(ps.ID)
		}
	}
	useProfiles := len(chosen) == 0 || !defaultApplies
	if useProfiles {
		key.WriteByte(2)
		key.WriteString(ep.Namespace)
		for _, pr := range profiles {
			key.WriteByte(0)
			key.WriteString(pr)
		}
	}
	if d, ok := f.dirs[key.String()]; ok {
		return d
	}
	var tiers [][]ACL
	var tierReports [][]ACLSource
	for _, t := range chosen {
		rules, rep := f.policySetRules(t.Policies, inbound, true)
		tiers = append(tiers, rules)
		tierReports = append(tierReports, rep)
	}
	if useProfiles {
		rules, rep := f.profileRules(profiles, inbound)
		tiers = append(tiers, rules)
		tierReports = append(tierReports, rep)
	}
	d := &dirRules{acls: flattenTiers(tiers)}
	rewritePriorities(d.acls)
	for _, rep := range tierReports {
		d.report = append(d.report, rep...)
	}
	if len(tiers) > 1 {
		d.report = append(d.report, ACLSource{Source: "flattened tiers", Direction: dir, Rules: len(d.acls)})
	}
	if f.dirs == nil {
		f.dirs = map[string]*dirRules{}
	}
	f.dirs[key.String()] = d
	return d
}

// policySetRules is policysets.go GetPolicySetRules for policies: members in
// set order, the priority stepping up whenever the action changes, then an
// end-of-tier Block (or Pass).
func (f *Felix) policySetRules(sets []*fc.Policy, inbound, endOfTierDrop bool) ([]ACL, []ACLSource) {
	prio := policyBasePriority
	var out []ACL
	var rep []ACLSource
	var last string
	dir := "Out"
	if inbound {
		dir = "In"
	}
	for _, ps := range sets {
		b := f.build(ps)
		members, skipped := b.outACL, b.outSkp
		if inbound {
			members, skipped = b.inACL, b.inSkip
		}
		for _, m := range members {
			if last != "" && last != m.Action {
				prio++
			}
			m.Priority = prio
			out = append(out, m)
			last = m.Action
		}
		rep = append(rep, ACLSource{Source: ps.ID, Direction: dir, Rules: len(members), Skipped: len(skipped), Reasons: skipped})
	}
	prio++
	end := ACL{Action: "Block", Direction: dir, Protocol: ProtocolAny, RuleType: "Switch", Priority: prio}
	if !endOfTierDrop {
		end.Action = actionPass
	}
	out = append(out, end)
	rep = append(rep, ACLSource{Source: "end-of-tier", Direction: dir, Rules: 1})
	return out, rep
}

// profileRules is GetPolicySetRules over the workload's profiles: kns.<ns>
// allows everything both ways (libcalico-go NamespaceToProfile), ksa.<ns>.<sa>
// has no rules.
func (f *Felix) profileRules(profiles []string, inbound bool) ([]ACL, []ACLSource) {
	dir := "Out"
	seedDir := "prof-out-"
	if inbound {
		dir, seedDir = "In", "prof-in-"
	}
	var out []ACL
	var rep []ACLSource
	prio := policyBasePriority
	for _, name := range profiles {
		setID := "profile-" + name
		n := 0
		if strings.HasPrefix(name, "kns.") {
			id := setID + "-" + ProfileRuleID(seedDir+name) + "-0"
			out = append(out, ACL{ID: id, Action: "Allow", Direction: dir, Protocol: ProtocolAny, RuleType: "Switch", Priority: prio})
			n = 1
		}
		rep = append(rep, ACLSource{Source: setID, Direction: dir, Rules: n})
	}
	prio++
	out = append(out, ACL{Action: "Block", Direction: dir, Protocol: ProtocolAny, RuleType: "Switch", Priority: prio})
	rep = append(rep, ACLSource{Source: "end-of-tier", Direction: dir, Rules: 1})
	return out, rep
}

// ProfileRuleID is Felix's rule ID for a profile's single allow rule
// (felix/calc/rule_convert.go fillInRuleIDs): SHA-224 of the seed
// ("prof-in-kns.<ns>"), then SHA-224 of that hash followed by the rule's
// protobuf encoding, base64url, 16 characters. The rule {action: "allow"}
// encodes as field 1, length 5, "allow".
func ProfileRuleID(seed string) string {
	h := sha256.Sum224([]byte(seed))
	data := append(h[:], 0x0a, 0x05)
	data = append(data, "allow"...)
	h2 := sha256.Sum224(data)
	return base64.RawURLEncoding.EncodeToString(h2[:])[:16]
}

// standInRuleID is the twin's rule ID for policy rules: the same chained
// SHA-224 as Felix, over a text form of the rule rather than its protobuf
// (whose IP set IDs the twin does not compute).
func standInRuleID(prev []byte, seed string, r *fc.Rule, i int) ([]byte, string) {
	if prev == nil {
		h := sha256.Sum224([]byte(seed))
		prev = h[:]
	}
	h := sha256.Sum224(append(append([]byte{}, prev...), fmt.Sprintf("%d %s", i, ruleText(r))...))
	return h[:], base64.RawURLEncoding.EncodeToString(h[:])[:16]
}

// ruleText is a rule's content without pointers, so the same rule gets the
// same ID in every compile.
func ruleText(r *fc.Rule) string {
	proto := "-"
	if r.Protocol != nil {
		proto = r.Protocol.String()
	}
	return fmt.Sprintf("%s proto=%s!%t ipv=%d icmp=%t!%t src={%s} dst={%s}", r.Action, proto, r.NotProtocol != nil, r.IPVersion,
		r.ICMP != nil, r.NotICMP != nil, entityText(r.Src), entityText(r.Dst))
}

func entityText(e fc.Entity) string {
	ports := make([]string, len(e.Ports))
	for i, p := range e.Ports {
		ports[i] = p.String()
	}
	return fmt.Sprintf("nets=%q !nets=%q sel=%q nssel=%q !sel=%q ports=%q!%t sa=%q sasel=%q",
		e.Nets, e.NotNets, e.Selector, e.NamespaceSelector, e.NotSelector, ports, len(e.NotPorts) > 0, e.SANames, e.SASelector)
}

// build converts a policy's rules once (policysets.go AddOrReplacePolicySet).
func (f *Felix) build(ps *fc.Policy) *builtPolicy {
	if b, ok := f.built[ps]; ok {
		return b
	}
	b := &builtPolicy{}
	f.built[ps] = b
	var prev []byte
	var id string
	for i := range ps.In {
		r := &ps.In[i]
		prev, id = standInRuleID(prev, "pol-in-"+ps.Tier+"/"+ps.ID, r, i)
		acls, err := f.ruleACLs(ps, r, id, true)
		if err != "" {
			b.inSkip = append(b.inSkip, fmt.Sprintf("rule %d: %s", i, err))
		}
		b.inACL = append(b.inACL, acls...)
	}
	prev = nil
	for i := range ps.Out {
		r := &ps.Out[i]
		prev, id = standInRuleID(prev, "pol-out-"+ps.Tier+"/"+ps.ID, r, i)
		acls, err := f.ruleACLs(ps, r, id, false)
		if err != "" {
			b.outSkp = append(b.outSkp, fmt.Sprintf("rule %d: %s", i, err))
		}
		b.outACL = append(b.outACL, acls...)
	}
	return b
}

// ruleACLs is policysets.go protoRuleToHnsRules: unsupported matches skip
// the rule (windowsSkip); source and destination become Remote/Local
// addresses by direction; every address and port list is cut into chunks
// of 4000 and one ACL is emitted per combination of local-address,
// local-port, remote-address and remote-port chunk. The reason is "" when
// the rule converts (a rule that is a no-op yields no ACL and no reason).
func (f *Felix) ruleACLs(ps *fc.Policy, r *fc.Rule, ruleID string, inbound bool) ([]ACL, string) {
	if why := windowsSkip(r); why != "" {
		return nil, why
	}
	acl := ACL{Action: "Block", Direction: "Out", Protocol: ProtocolAny, RuleType: "Switch", Priority: policyBasePriority}
	if inbound {
		acl.Direction = "In"
	}
	switch r.Action {
	case "", fc.ActionAllow:
		acl.Action = "Allow"
	case fc.ActionDeny:
		acl.Action = "Block"
	case fc.ActionPass, "next-tier":
		acl.Action = actionPass
	default:
		return nil, skipUnknownAct + r.Action
	}
	if r.Protocol != nil {
		acl.Protocol = fc.ProtocolNumber(*r.Protocol)
	}
	src, ok, why := f.addresses(ps, r.Src)
	if !ok {
		return nil, why
	}
	dst, ok, why := f.addresses(ps, r.Dst)
	if !ok {
		return nil, why
	}
	local, remote := dst, src
	localPorts, remotePorts := portList(r.Dst.Ports), portList(r.Src.Ports)
	if !inbound {
		local, remote = src, dst
		localPorts, remotePorts = portList(r.Src.Ports), portList(r.Dst.Ports)
	}
	var out []ACL
	i := 0
	for _, la := range chunk(local) {
		for _, lp := range chunk(localPorts) {
			for _, ra := range chunk(remote) {
				for _, rp := range chunk(remotePorts) {
					a := acl
					a.ID = fmt.Sprintf("%s-%s-%d", ps.ID, ruleID, i)
					i++
					a.LocalAddresses = f.join(la)
					a.LocalPorts = strings.Join(lp, ",")
					a.RemoteAddresses = f.join(ra)
					a.RemotePorts = strings.Join(rp, ",")
					out = append(out, a)
				}
			}
		}
	}
	return out, ""
}

// addresses is one side of a rule as addresses: its CIDRs, the members of
// its selector's IP set, or their intersection when it has both. ok is false
// when the rule must be skipped: an IP set with no members is "missing" to
// the Windows dataplane (ipsets.go GetIPSetMembers returns nil for it), and
// policysets.go then skips the rule; an empty intersection is a no-op.
func (f *Felix) addresses(ps *fc.Policy, e fc.Entity) (addrs []string, ok bool, why string) {
	nets := filterV4(e.Nets)
	if len(e.Nets) > 0 && len(nets) == 0 {
		return nil, false, "" // only IPv6 nets: a no-op on IPv4
	}
	if !e.HasSelector() {
		return nets, true, ""
	}
	members, good := f.selectMembers(ps, e)
	if !good {
		return nil, false, badSelector(e)
	}
	if len(members) == 0 {
		return nil, false, "selector matches no endpoint (empty IP set)"
	}
	if len(nets) == 0 {
		return members, true, ""
	}
	in := intersectCIDRs(nets, members)
	if len(in) == 0 {
		return nil, false, ""
	}
	return in, true, ""
}

func badSelector(e fc.Entity) string {
	if _, err := selector.Parse(e.Selector); err != nil {
		return fmt.Sprintf("bad selector %q", e.Selector)
	}
	if _, err := selector.Parse(e.NamespaceSelector); e.NamespaceSelector != "" && err != nil {
		return fmt.Sprintf("bad namespace selector %q", e.NamespaceSelector)
	}
	return fmt.Sprintf("bad service account selector %q", e.SASelector)
}

// selectMembers is the rule side's IP set (fc.Calc.Members) as HNS
// addresses, "ip/32" for each IPv4 address of each member, shared between
// rules with the same set.
func (f *Felix) selectMembers(ps *fc.Policy, e fc.Entity) ([]string, bool) {
	k := fc.KeyOf(ps, e)
	if m, ok := f.members[k]; ok {
		return m, true
	}
	idx, ok := f.calc.Members(ps, e)
	if !ok {
		return nil, false
	}
	var members []string
	for _, i := range idx {
		for _, a := range f.calc.Endpoints[i].Addrs {
			if a.Is4() {
				members = append(members, a.String()+"/32")
			}
		}
	}
	f.members[k] = members
	return members, true
}

type joinKey struct {
	first *string
	n     int
}

// join is strings.Join(s, ","), written once per list: the rules of many
// policies share a selector's members (selectMembers), and those lists grow
// with the cluster. The key holds the list, so its address is not reused.
func (f *Felix) join(s []string) string {
	if len(s) < 16 {
		return strings.Join(s, ",")
	}
	k := joinKey{&s[0], len(s)}
	if j, ok := f.joined[k]; ok {
		return j
	}
	j := strings.Join(s, ",")
	if f.joined == nil {
		f.joined = map[joinKey]string{}
	}
	f.joined[k] = j
	return j
}

func chunk(s []string) [][]string {
	if len(s) == 0 {
		return [][]string{nil}
	}
	var out [][]string
	for i := 0; i < len(s); i += ipPortsPerRule {
		out = append(out, s[i:min(i+ipPortsPerRule, len(s))])
	}
	return out
}

func portList(ports []intstr.IntOrString) []string {
	var out []string
	for _, p := range ports {
		if p.Type == intstr.Int {
			out = append(out, strconv.Itoa(int(p.IntVal)))
			continue
		}
		// "min:max" ranges as HNS writes them, "min-max".
		out = append(out, strings.ReplaceAll(p.StrVal, ":", "-"))
	}
	return out
}

func namedPorts(ports []intstr.IntOrString) bool {
	for _, p := range ports {
		if p.Type != intstr.String {
			continue
		}
		s := strings.ReplaceAll(p.StrVal, ":", "-")
		lo, hi, isRange := strings.Cut(s, "-")
		if _, err := strconv.Atoi(lo); err != nil {
			return true
		}
		if isRange {
			if _, err := strconv.Atoi(hi); err != nil {
				return true
			}
		}
	}
	return false
}

func filterV4(nets []string) []string {
	var out []string
	for _, n := range nets {
		if !strings.Contains(n, ":") {
			out = append(out, n)
		}
	}
	return out
}

// intersectCIDRs keeps, for every pair, the smaller prefix when one contains
// the other (felix/iputils IntersectCIDRs).
func intersectCIDRs(as, bs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range as {
		pa, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		for _, b := range bs {
			pb, err := netip.ParsePrefix(b)
			if err != nil {
				continue
			}
			var keep netip.Prefix
			switch {
			case pa.Bits() <= pb.Bits() && pa.Contains(pb.Addr()):
				keep = pb
			case pb.Bits() < pa.Bits() && pb.Contains(pa.Addr()):
				keep = pa
			default:
				continue
			}
			if s := keep.Masked().String(); !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// flattenTiers merges tiers as flattener.go does: a Pass rule in a tier is
// replaced by the next tier's rules narrowed to the Pass rule's match; pass
// rules of the last tier become Block.
func flattenTiers(tiers [][]ACL) []ACL {
	last := tiers[len(tiers)-1]
	for i := range last {
		if last[i].Action == actionPass {
			last[i].Action = "Block"
		}
	}
	for len(tiers) > 1 {
		var first []ACL
		found := false
		for _, r := range tiers[0] {
			if r.Action != actionPass {
				first = append(first, r)
				continue
			}
			found = true
			for _, n := range tiers[1] {
				if c, ok := combineRules(r, n); ok {
					first = append(first, c)
				}
			}
		}
		if !found {
			return tiers[0]
		}
		tiers = append([][]ACL{first}, tiers[2:]...)
	}
	return tiers[0]
}

// combineRules narrows r2 to r1's match (flattener.go combineRules); false
// when the combination cannot match.
func combineRules(r1, r2 ACL) (ACL, bool) {
	c := r2
	if r1.Protocol != ProtocolAny {
		if r2.Protocol == ProtocolAny {
			c.Protocol = r1.Protocol
		} else if r1.Protocol != r2.Protocol {
			return ACL{}, false
		}
	}
	var ok bool
	if c.LocalAddresses, ok = combineCIDRList(r1.LocalAddresses, r2.LocalAddresses); !ok {
		return ACL{}, false
	}
	if c.RemoteAddresses, ok = combineCIDRList(r1.RemoteAddresses, r2.RemoteAddresses); !ok {
		return ACL{}, false
	}
	if c.LocalPorts, ok = combinePortList(r1.LocalPorts, r2.LocalPorts); !ok {
		return ACL{}, false
	}
	if c.RemotePorts, ok = combinePortList(r1.RemotePorts, r2.RemotePorts); !ok {
		return ACL{}, false
	}
	return c, true
}

func combineCIDRList(a, b string) (string, bool) {
	if a == "" {
		return b, true
	}
	if b == "" {
		return a, true
	}
	in := intersectCIDRs(strings.Split(a, ","), strings.Split(b, ","))
	return strings.Join(in, ","), len(in) > 0
}

func combinePortList(a, b string) (string, bool) {
	if a == "" {
		return b, true
	}
	if b == "" {
		return a, true
	}
	ra, rb := parsePortRanges(a), parsePortRanges(b)
	var out []string
	for _, x := range ra {
		for _, y := range rb {
			lo, hi := max(x[0], y[0]), min(x[1], y[1])
			if lo > hi {
				continue
			}
			if lo == hi {
				out = append(out, strconv.Itoa(lo))
			} else {
				out = append(out, fmt.Sprintf("%d-%d", lo, hi))
			}
		}
	}
	return strings.Join(out, ","), len(out) > 0
}

func parsePortRanges(s string) [][2]int {
	var out [][2]int
	for _, p := range strings.Split(s, ",") {
		if lo, hi, ok := ACLPortRange(p); ok {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// rewritePriorities is flattener.go rewritePriorities: priorities from 1000
// up, one step per rule while they fit under 65000, else one step per
// change of action.
func rewritePriorities(acls []ACL) {
	if len(acls) <= 1 {
		return
	}
	prio := policyBasePriority
	acls[0].Priority = prio
	always := len(acls) < policyMaxPriority-policyBasePriority
	for i := 1; i < len(acls); i++ {
		if always || acls[i-1].Action != acls[i].Action {
			prio++
		}
		acls[i].Priority = prio
	}
}
