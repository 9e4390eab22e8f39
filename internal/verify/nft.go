package verify

import (
	"regexp"
	"sort"
	"strings"
)

var (
	// Handles (-a) and counters are state, not configuration.
	nftHandle  = regexp.MustCompile(`\s*# handle \d+`)
	nftCounter = regexp.MustCompile(`counter packets \d+ bytes \d+`)
	nftExpires = regexp.MustCompile(`\s+expires [0-9a-z]+`)
)

// nftTableProducer names who owns a table: kube-proxy's nftables mode
// (pkg/proxy/nftables/proxier.go) or Felix's nftables dataplane.
func nftTableProducer(table string) string {
	_, name, _ := strings.Cut(table, " ")
	switch {
	case name == "kube-proxy":
		return prodKubeProxy
	case strings.HasPrefix(name, "calico"):
		return prodFelix
	}
	return prodHost
}

// ParseNft reads `nft list ruleset` or `nft list table …`: one item per
// table, set or map, element, chain and rule. Elements are a set, so the
// order the kernel lists them in does not matter, and neither do rule
// handles, counters or element timeouts. Rules are compared as a multiset
// per chain: a rule that only moved within its chain is not reported.
func ParseNft(out string) ([]Item, error) {
	p := nftParser{lines: lines(out)}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.items, nil
}

type nftParser struct {
	lines []string
	items []Item
	// The block being read: the table ("ip kube-proxy") and the object
	// inside it ("set cluster-ips", "chain services").
	table, objKind, obj string
	objDecl             []string
}

func (p *nftParser) add(kind, key, val string) {
	it := Item{Kind: kind, Key: key, Value: val, Producer: nftTableProducer(p.table)}
	switch kind {
	case "nft table":
	case "nft element", "nft rule":
		obj := p.table + " " + p.objKind + " " + p.obj
		it.Parent, it.Group = parentRef("nft "+p.objKind, obj), obj
	default:
		it.Parent = parentRef("nft table", p.table)
	}
	p.items = append(p.items, it)
}

func (p *nftParser) parse() error {
	for i := 0; i < len(p.lines); i++ {
		n := i + 1
		line := strings.TrimSpace(stripHandle(p.lines[i]))
		if line == "" {
			continue
		}
		switch {
		case p.table == "":
			f := strings.Fields(line)
			if len(f) != 4 || f[0] != "table" || f[3] != "{" {
				return parseErr(n, "expected \"table FAMILY NAME {\", got %q", line)
			}
			p.table = f[1] + " " + f[2]
			p.add("nft table", p.table, "")
		case p.obj == "":
			if line == "}" {
				p.table = ""
				continue
			}
			if strings.HasPrefix(line, "comment ") || strings.HasPrefix(line, "flags ") {
				continue
			}
			f := strings.Fields(line)
			if len(f) != 3 || f[2] != "{" {
				return parseErr(n, "expected \"set|map|chain NAME {\" in table %s, got %q", p.table, line)
			}
			switch f[0] {
			case "set", "map", "chain", "flowtable", "counter", "quota", "limit", "ct", "secmark", "synproxy":
			default:
				return parseErr(n, "unknown object %q in table %s", f[0], p.table)
			}
			p.objKind, p.obj, p.objDecl = f[0], f[1], nil
		case line == "}":
			p.closeObject()
		case strings.HasPrefix(line, "elements = {"):
			body := strings.TrimPrefix(line, "elements = {")
			for !strings.HasSuffix(strings.TrimSpace(body), "}") {
				i++
				if i >= len(p.lines) {
					return parseErr(n, "elements of %s %s never closed", p.objKind, p.obj)
				}
				body += " " + strings.TrimSpace(stripHandle(p.lines[i]))
			}
			body = strings.TrimSuffix(strings.TrimSpace(body), "}")
			for _, e := range splitTop(body) {
				if strings.Contains(e, "expires") {
					e = nftExpires.ReplaceAllString(e, "")
				}
				e = nftCanon(e)
				if e == "" {
					continue
				}
				key, val := e, ""
				if p.objKind == "map" {
					if k, v, ok := strings.Cut(e, " : "); ok {
						key, val = k, v
					}
				}
				p.add("nft element", p.table+" "+p.objKind+" "+p.obj+" "+key, val)
			}
		case p.objKind == "chain" && !strings.HasPrefix(line, "type ") && !strings.HasPrefix(line, "policy ") && !strings.HasPrefix(line, "comment "):
			p.add("nft rule", p.table+" chain "+p.obj+": "+nftRule(line), "")
		default:
			// A declaration line: type, flags, hook, policy, comment, size.
			p.objDecl = append(p.objDecl, nftCanon(line))
		}
	}
	if p.table != "" {
		return parseErr(len(p.lines), "table %s never closed", p.table)
	}
	return nil
}

func (p *nftParser) closeObject() {
	var decl []string
	for _, d := range p.objDecl {
		// A comment is documentation, not behaviour.
		if !strings.HasPrefix(d, "comment ") {
			decl = append(decl, d)
		}
	}
	p.add("nft "+p.objKind, p.table+" "+p.objKind+" "+p.obj, strings.Join(decl, "; "))
	p.objKind, p.obj, p.objDecl = "", "", nil
}

// nftRule canonicalises a rule: counters dropped, whitespace collapsed and
// the elements of every anonymous set or map sorted (the kernel lists
// them in its own order).
func nftRule(r string) string {
	if strings.Contains(r, "counter packets") {
		r = nftCounter.ReplaceAllString(r, "counter")
	}
	var b strings.Builder
	for {
		open := strings.Index(r, "{")
		if open < 0 {
			b.WriteString(r)
			break
		}
		end := matchBrace(r, open)
		if end < 0 {
			b.WriteString(r)
			break
		}
		els := splitTop(r[open+1 : end])
		for i := range els {
			els[i] = nftCanon(els[i])
		}
		sort.Strings(els)
		b.WriteString(r[:open] + "{ " + strings.Join(els, ", ") + " }")
		r = r[end+1:]
	}
	return nftCanon(b.String())
}

func nftCanon(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// stripHandle drops "# handle N" (nft -a); the regexp runs only on lines
// that have one, as most have not.
func stripHandle(s string) string {
	if !strings.Contains(s, "# handle") {
		return s
	}
	return nftHandle.ReplaceAllString(s, "")
}

func matchBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits at the commas outside braces and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 && !quoted {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}
