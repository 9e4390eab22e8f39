package nft

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// Verdict is where a packet's walk through a table's chains ended.
type Verdict struct {
	Allowed bool
	// Chain and Rule are where the verdict was reached (the rule as nft
	// prints it).
	Chain, Rule string
}

// MarkAccept is Felix's accept mark bit (the linux package's nftAllow
// sets it).
const MarkAccept = 0x10000

// Packet is the first packet of a connection as a chain sees it, with the
// mark the rules set on it.
type Packet struct {
	Src, Dst     netip.Addr
	Proto        string // tcp, udp, sctp, icmp
	DPort, SPort int32
	IIF, OIF     string
	Mark         uint32
}

// Eval walks a table's chains (Chains by name, Order as listed) for one
// Packet; MarkChain and MarkRule are where the packet's mark was last set.
type Eval struct {
	Chains              map[string]*Chain
	Order               []*Chain
	Packet              Packet
	MarkChain, MarkRule string
}

// Run evaluates a chain from jump depth depth; done is false when the chain returned (ran
// out or hit a return).
func (ev *Eval) Run(name string, depth int) (Verdict, bool, error) {
	c := ev.Chains[name]
	if c == nil {
		return Verdict{}, false, fmt.Errorf("no chain %s", name)
	}
	if depth > 8 {
		return Verdict{}, false, fmt.Errorf("chain %s: jumps too deep", name)
	}
	for _, rule := range c.Rules {
		toks := nftTokens(rule)
		ok, verdict, err := matchRule(toks, ev.Packet)
		if err != nil {
			return Verdict{}, false, fmt.Errorf("chain %s rule %q: %w", name, rule, err)
		}
		if !ok {
			continue
		}
		// A statement before the verdict: meta mark set meta mark | V
		// (or & V).
		if len(verdict) >= 7 && verdict[0] == "meta" && verdict[1] == "mark" && verdict[2] == "set" {
			v, err := strconv.ParseUint(verdict[6], 0, 32)
			if err != nil || verdict[3] != "meta" || verdict[4] != "mark" || (verdict[5] != "|" && verdict[5] != "&") {
				return Verdict{}, false, fmt.Errorf("chain %s rule %q: a mark set the evaluator does not read", name, rule)
			}
			if verdict[5] == "|" {
				ev.Packet.Mark |= uint32(v)
			} else {
				ev.Packet.Mark &= uint32(v)
			}
			ev.MarkChain, ev.MarkRule = name, rule
			verdict = verdict[7:]
		}
		if len(verdict) == 0 {
			continue
		}
		if (verdict[0] == "iifname" || verdict[0] == "oifname") && len(verdict) > 2 && verdict[1] == "vmap" {
			// A verdict map on the interface name: the element's verdict,
			// or on to the next rule.
			ifname := ev.Packet.IIF
			if verdict[0] == "oifname" {
				ifname = ev.Packet.OIF
			}
			verdict = nil
			for _, x := range setItems(verdict2set(rule)) {
				k, val, _ := strings.Cut(x, " : ")
				if ifMatch(strings.Trim(k, `"`), ifname) {
					verdict = strings.Fields(val)
					break
				}
			}
			if verdict == nil {
				continue
			}
		}
		switch {
		case verdict[0] == "accept":
			return Verdict{Allowed: true, Chain: name, Rule: rule}, true, nil
		case verdict[0] == "drop":
			return Verdict{Chain: name, Rule: rule}, true, nil
		case verdict[0] == "return":
			return Verdict{}, false, nil
		case (verdict[0] == "jump" || verdict[0] == "goto") && len(verdict) > 1:
			v, done, err := ev.Run(verdict[1], depth+1)
			if err != nil || done {
				return v, done, err
			}
			if verdict[0] == "goto" {
				// A goto's chain returns to this chain's caller.
				return v, false, nil
			}
		case verdict[0] == "log":
			// Logs and goes on.
		default:
			return Verdict{}, false, fmt.Errorf("chain %s rule %q: unknown verdict %q", name, rule, verdict[0])
		}
	}
	return Verdict{}, false, nil
}

// verdict2set is the "{ … }" of a verdict map rule.
func verdict2set(rule string) string {
	i := strings.IndexByte(rule, '{')
	j := strings.LastIndexByte(rule, '}')
	if i < 0 || j < i {
		return ""
	}
	return rule[i : j+1]
}

// ifMatch matches an interface name as nft does: a trailing * is a prefix.
func ifMatch(pattern, name string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return pattern == name
}

// nftTokens splits a rule into words, keeping "{ … }" sets and quoted
// strings whole and leaving out the comment.
func nftTokens(rule string) []string {
	var out []string
	for i := 0; i < len(rule); {
		switch {
		case rule[i] == ' ':
			i++
		case rule[i] == '{':
			end := len(rule)
			if j := strings.IndexByte(rule[i:], '}'); j >= 0 {
				end = i + j + 1
			}
			out = append(out, rule[i:end])
			i = end
		case rule[i] == '"':
			end := len(rule)
			if j := strings.IndexByte(rule[i+1:], '"'); j >= 0 {
				end = i + j + 2
			}
			out = append(out, rule[i:end])
			i = end
		default:
			j := strings.IndexByte(rule[i:], ' ')
			if j < 0 {
				j = len(rule) - i
			}
			out = append(out, rule[i:i+j])
			i += j
		}
	}
	for i, t := range out {
		if t == "comment" {
			return out[:i]
		}
	}
	return out
}

// matchRule evaluates a rule's matches; verdict is what follows them.
func matchRule(toks []string, pk Packet) (bool, []string, error) {
	match := true
	i := 0
	neg := func() bool {
		if i < len(toks) && toks[i] == "!=" {
			i++
			return true
		}
		return false
	}
	short := fmt.Errorf("a match is cut short")
	for i < len(toks) {
		switch t := toks[i]; t {
		case "accept", "drop", "return", "jump", "goto", "log":
			return match, toks[i:], nil
		case "ct":
			// ct state established,related / invalid: never a new connection.
			if i+2 >= len(toks) {
				return false, nil, short
			}
			i += 3
			match = false
		case "ip":
			if i+2 >= len(toks) {
				return false, nil, fmt.Errorf("short ip match")
			}
			field := toks[i+1]
			a := pk.Src
			if field == "daddr" {
				a = pk.Dst
			}
			if i+5 < len(toks) && toks[i+2] == "." {
				// ip daddr . tcp dport { a . p, … }: a named-port set.
				l4, pfield, set := toks[i+3], toks[i+4], toks[i+5]
				i += 6
				port := pk.DPort
				if pfield == "sport" {
					port = pk.SPort
				}
				in := false
				for _, x := range setItems(set) {
					ax, px, _ := strings.Cut(x, " . ")
					if ax == a.String() && px == strconv.Itoa(int(port)) {
						in = true
					}
				}
				if l4 != pk.Proto || !in {
					match = false
				}
				continue
			}
			i += 2
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			in, err := inPrefixSet(toks[i], a)
			if err != nil {
				return false, nil, err
			}
			i++
			if in == n {
				match = false
			}
		case "meta":
			if i+1 < len(toks) && toks[i+1] == "mark" {
				if i+2 < len(toks) && toks[i+2] == "set" {
					// A statement: the chain walk applies it.
					return match, toks[i:], nil
				}
				// meta mark & M == V (or != V).
				if i+5 >= len(toks) || toks[i+2] != "&" || (toks[i+4] != "==" && toks[i+4] != "!=") {
					return false, nil, short
				}
				m, err1 := strconv.ParseUint(toks[i+3], 0, 32)
				v, err2 := strconv.ParseUint(toks[i+5], 0, 32)
				if err1 != nil || err2 != nil {
					return false, nil, fmt.Errorf("bad mark match")
				}
				if (uint64(pk.Mark)&m == v) != (toks[i+4] == "==") {
					match = false
				}
				i += 6
				continue
			}
			i += 2 // meta l4proto
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			same := felix.ProtocolNumber(intstr.FromString(toks[i])) == felix.ProtocolNumber(intstr.FromString(pk.Proto))
			if same == n {
				match = false
			}
			i++
		case "iifname", "oifname":
			if i+1 < len(toks) && toks[i+1] == "vmap" {
				// A verdict map: the chain walk looks the name up.
				return match, toks[i:], nil
			}
			name := pk.IIF
			if t == "oifname" {
				name = pk.OIF
			}
			i++
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			if ifMatch(strings.Trim(toks[i], `"`), name) == n {
				match = false
			}
			i++
		case "icmp":
			if i+2 >= len(toks) {
				return false, nil, short
			}
			what := toks[i+1]
			i += 2
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			want := int32(8) // an echo request
			if what == "code" {
				want = 0
			}
			v, _ := strconv.Atoi(toks[i])
			i++
			if pk.Proto != "icmp" || (int32(v) == want) == n {
				match = false
			}
		case "tcp", "udp", "sctp", "th":
			if i+2 >= len(toks) {
				return false, nil, short
			}
			field := toks[i+1]
			i += 2
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			port := pk.DPort
			if field == "sport" {
				port = pk.SPort
			}
			in, err := inPortSet(toks[i], port)
			if err != nil {
				return false, nil, err
			}
			i++
			l4 := t == "th" && (pk.Proto == "tcp" || pk.Proto == "udp" || pk.Proto == "sctp") || t == pk.Proto
			if !l4 || in == n {
				match = false
			}
		default:
			return false, nil, fmt.Errorf("unknown match %q", t)
		}
	}
	return false, nil, fmt.Errorf("no verdict")
}

func setItems(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func inPrefixSet(s string, a netip.Addr) (bool, error) {
	for _, x := range setItems(s) {
		if p, err := netip.ParsePrefix(x); err == nil {
			if p.Contains(a) {
				return true, nil
			}
			continue
		}
		b, err := netip.ParseAddr(x)
		if err != nil {
			return false, fmt.Errorf("bad address %q", x)
		}
		if b == a {
			return true, nil
		}
	}
	return false, nil
}

func inPortSet(s string, port int32) (bool, error) {
	for _, x := range setItems(s) {
		lo, hi, isRange := strings.Cut(x, "-")
		l, err := strconv.Atoi(lo)
		if err != nil {
			return false, fmt.Errorf("bad port %q", x)
		}
		h := l
		if isRange {
			if h, err = strconv.Atoi(hi); err != nil {
				return false, fmt.Errorf("bad port %q", x)
			}
		}
		if int(port) >= l && int(port) <= h {
			return true, nil
		}
	}
	return false, nil
}
