package linux

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// CalicoVerdict is the verdict of the rendered table ip calico.
type CalicoVerdict struct {
	Allowed bool
	// Chain and Rule are where the verdict was reached (the rule as nft
	// prints it).
	Chain, Rule string
}

// EvalCalico evaluates the node's rendered table ip calico (what `nft list
// table ip calico` prints) for a new connection of a local pod: the pod's
// cali-tw chain for ingress from f.Peer, its cali-fw chain for egress to
// it. It reads the printed rules, not the calculation they were rendered
// from, so that a test can hold trace's decisions to the ruleset shown.
func (n *Node) EvalCalico(pod *corev1.Pod, dir Direction, f felix.Flow) (CalicoVerdict, error) {
	if n.cal == nil {
		return CalicoVerdict{}, fmt.Errorf("node %s has no table ip calico (Felix programs iptables)", n.Name)
	}
	t, _ := n.cal.table(n.calc)
	chains := map[string]*nftChain{}
	for _, c := range t.chains {
		chains[c.name] = c
	}
	local, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil {
		return CalicoVerdict{}, fmt.Errorf("pod %s/%s has no address", pod.Namespace, pod.Name)
	}
	pk := nftPacket{saddr: f.Peer, daddr: local, proto: strings.ToLower(f.Proto), dport: f.DstPort, sport: f.SrcPort}
	name := "filter-cali-tw-" + VethName(pod.Namespace, pod.Name)
	if dir == Egress {
		pk.saddr, pk.daddr = local, f.Peer
		name = "filter-cali-fw-" + VethName(pod.Namespace, pod.Name)
	}
	v, done, err := evalChain(chains, name, pk, 0)
	if err != nil {
		return v, err
	}
	if !done {
		// A base chain's policy accepts what no rule decided.
		return CalicoVerdict{Allowed: true, Chain: name, Rule: "end of chain"}, nil
	}
	return v, nil
}

type nftPacket struct {
	saddr, daddr netip.Addr
	proto        string // tcp, udp, sctp, icmp
	dport, sport int32
}

func evalChain(chains map[string]*nftChain, name string, pk nftPacket, depth int) (CalicoVerdict, bool, error) {
	c := chains[name]
	if c == nil {
		return CalicoVerdict{}, false, fmt.Errorf("no chain %s", name)
	}
	if depth > 8 {
		return CalicoVerdict{}, false, fmt.Errorf("chain %s: jumps too deep", name)
	}
	for _, rule := range c.rules {
		toks := nftTokens(rule)
		ok, verdict, err := matchRule(toks, pk)
		if err != nil {
			return CalicoVerdict{}, false, fmt.Errorf("chain %s rule %q: %w", name, rule, err)
		}
		if !ok {
			continue
		}
		switch {
		case verdict[0] == "accept":
			return CalicoVerdict{Allowed: true, Chain: name, Rule: rule}, true, nil
		case verdict[0] == "drop":
			return CalicoVerdict{Chain: name, Rule: rule}, true, nil
		case verdict[0] == "return":
			return CalicoVerdict{}, false, nil
		case (verdict[0] == "jump" || verdict[0] == "goto") && len(verdict) > 1:
			v, done, err := evalChain(chains, verdict[1], pk, depth+1)
			if err != nil || done {
				return v, done, err
			}
			if verdict[0] == "goto" {
				return v, false, nil
			}
		case verdict[0] == "log":
			// Logs and goes on.
		}
	}
	return CalicoVerdict{}, false, nil
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
func matchRule(toks []string, pk nftPacket) (bool, []string, error) {
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
			a := pk.saddr
			if field == "daddr" {
				a = pk.daddr
			}
			if i+5 < len(toks) && toks[i+2] == "." {
				// ip daddr . tcp dport { a . p, … }: a named-port set.
				l4, pfield, set := toks[i+3], toks[i+4], toks[i+5]
				i += 6
				port := pk.dport
				if pfield == "sport" {
					port = pk.sport
				}
				in := false
				for _, x := range setItems(set) {
					ax, px, _ := strings.Cut(x, " . ")
					if ax == a.String() && px == strconv.Itoa(int(port)) {
						in = true
					}
				}
				if l4 != pk.proto || !in {
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
			i += 2 // meta l4proto
			n := neg()
			if i >= len(toks) {
				return false, nil, short
			}
			same := felix.ProtocolNumber(intstr.FromString(toks[i])) == felix.ProtocolNumber(intstr.FromString(pk.proto))
			if same == n {
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
			if pk.proto != "icmp" || (int32(v) == want) == n {
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
			port := pk.dport
			if field == "sport" {
				port = pk.sport
			}
			in, err := inPortSet(toks[i], port)
			if err != nil {
				return false, nil, err
			}
			i++
			l4 := t == "th" && (pk.proto == "tcp" || pk.proto == "udp" || pk.proto == "sctp") || t == pk.proto
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
