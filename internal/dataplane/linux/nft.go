package linux

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// nftTable is a table as nft list prints it. The printer follows nftables
// src/rule.c table_print / set_print_declaration / chain_print_declaration
// and src/expression.c set_expr_print.
type nftTable struct {
	family, name, comment string
	sets                  []*nftSet
	chains                []*nftChain
}

// nftSet is a named set or map.
type nftSet struct {
	isMap   bool
	name    string
	keyType string // as nft prints it: "ipv4_addr . inet_proto . inet_service"
	valType string // maps only: "verdict"
	size    int
	flags   []string
	timeout string
	comment string
	elems   []nftElem
	seen    map[string]bool
}

// nftElem is one element; sortKey is the key's value in network byte order,
// field by field, which is what nft sorts listed elements by
// (src/mergesort.c expr_msort_value, concat_expr_msort_value).
type nftElem struct {
	key     string
	sortKey []byte
	comment string
	value   string
}

// nftChain is a chain; base chains carry type, hook and printed priority.
type nftChain struct {
	name     string
	typ      string
	hook     string
	priority string
	comment  string
	rules    []string
}

func (t *nftTable) set(name string) *nftSet {
	for _, s := range t.sets {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (t *nftTable) chain(name string) *nftChain {
	for _, c := range t.chains {
		if c.name == name {
			return c
		}
	}
	return nil
}

// add appends an element unless one with the same key is present (sets
// and maps hold each key once).
func (s *nftSet) add(e nftElem) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[e.key] {
		return
	}
	s.seen[e.key] = true
	s.elems = append(s.elems, e)
}

func (t *nftTable) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s %s {\n", t.family, t.name)
	if t.comment != "" {
		fmt.Fprintf(&b, "\tcomment %q\n", t.comment)
	}
	delim := ""
	for _, s := range t.sets {
		b.WriteString(delim)
		s.print(&b)
		delim = "\n"
	}
	for _, c := range t.chains {
		b.WriteString(delim)
		c.print(&b)
		delim = "\n"
	}
	b.WriteString("}\n")
	return b.String()
}

func (s *nftSet) print(b *strings.Builder) {
	kind := "set"
	typ := s.keyType
	if s.isMap {
		kind = "map"
		typ += " : " + s.valType
	}
	fmt.Fprintf(b, "\t%s %s {\n\t\ttype %s\n", kind, s.name, typ)
	if s.size > 0 {
		fmt.Fprintf(b, "\t\tsize %d\n", s.size)
	}
	if len(s.flags) > 0 {
		fmt.Fprintf(b, "\t\tflags %s\n", strings.Join(s.flags, ","))
	}
	if s.timeout != "" {
		fmt.Fprintf(b, "\t\ttimeout %s\n", s.timeout)
	}
	if s.comment != "" {
		fmt.Fprintf(b, "\t\tcomment %q\n", s.comment)
	}
	if len(s.elems) > 0 {
		es := append([]nftElem(nil), s.elems...)
		sort.SliceStable(es, func(i, j int) bool { return bytes.Compare(es[i].sortKey, es[j].sortKey) < 0 })
		b.WriteString("\t\telements = { ")
		perLine := elemsPerLine(s.keyType)
		count := 0
		for i, e := range es {
			if i > 0 {
				// calculate_delim: a new line after perLine elements
				// (1 for concatenations).
				if count < perLine {
					b.WriteString(", ")
				} else {
					count = 0
					b.WriteString(",\n\t\t\t     ")
				}
			}
			b.WriteString(e.key)
			if e.comment != "" {
				fmt.Fprintf(b, " comment %q", e.comment)
			}
			if s.isMap {
				b.WriteString(" : " + e.value)
			}
			count++
		}
		b.WriteString(" }\n")
	}
	b.WriteString("\t}\n")
}

// elemsPerLine is how many elements of a named set nft prints per line
// (src/expression.c calculate_delim): 2 addresses, 5 integer-like values,
// one of anything else (concatenations).
func elemsPerLine(keyType string) int {
	switch keyType {
	case "ipv4_addr", "ipv6_addr", "ct_state", "ct_status", "pkttype":
		return 2
	case "inet_proto", "inet_service", "integer", "mark", "ifindex", "nf_proto", "uid", "gid":
		return 5
	}
	return 1
}

func (c *nftChain) print(b *strings.Builder) {
	fmt.Fprintf(b, "\tchain %s {", c.name)
	if c.comment != "" {
		fmt.Fprintf(b, "\n\t\tcomment %q", c.comment)
	}
	b.WriteString("\n")
	if c.typ != "" {
		fmt.Fprintf(b, "\t\ttype %s hook %s priority %s; policy accept;\n", c.typ, c.hook, c.priority)
	}
	for _, r := range c.rules {
		fmt.Fprintf(b, "\t\t%s\n", r)
	}
	b.WriteString("\t}\n")
}

// nftPriority prints a base chain priority as nft >= 1.0.9 does (src/rule.c
// prio2str): the first standard priority within 10 of the value names it,
// with the offset, if that name is valid for the hook (dstnat on prerouting
// and output, srcnat on input and postrouting, the others everywhere);
// otherwise the number.
func nftPriority(hook string, prio int) string {
	stds := []struct {
		name  string
		value int
		hooks []string
	}{
		{"raw", -300, nil},
		{"mangle", -150, nil},
		{"dstnat", -100, []string{"prerouting", "output"}},
		{"filter", 0, nil},
		{"security", 50, nil},
		{"srcnat", 100, []string{"input", "postrouting"}},
	}
	for _, s := range stds {
		d := prio - s.value
		if d < -10 || d > 10 {
			continue
		}
		ok := s.hooks == nil
		for _, h := range s.hooks {
			ok = ok || h == hook
		}
		if !ok {
			break
		}
		switch {
		case d > 0:
			return fmt.Sprintf("%s + %d", s.name, d)
		case d < 0:
			return fmt.Sprintf("%s - %d", s.name, -d)
		}
		return s.name
	}
	return fmt.Sprintf("%d", prio)
}

// Sort-key helpers: each field in network byte order with nft's length.
func skAddr(a netip.Addr) []byte { return a.AsSlice() }
func skU8(v int) []byte          { return []byte{byte(v)} }
func skU16(v int) []byte {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], uint16(v))
	return b[:]
}
func sk(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// protoNum is the IANA number nft sorts inet_proto values by.
func protoNum(p string) int {
	switch p {
	case "tcp":
		return 6
	case "udp":
		return 17
	case "sctp":
		return 132
	}
	return 0
}

// prefixList prints an anonymous set of prefixes or addresses as nft lists
// it: a single element bare, several sorted inside braces.
func prefixList(ps []netip.Prefix) string {
	ps = append([]netip.Prefix(nil), ps...)
	sort.Slice(ps, func(i, j int) bool {
		if c := ps[i].Addr().Compare(ps[j].Addr()); c != 0 {
			return c < 0
		}
		return ps[i].Bits() < ps[j].Bits()
	})
	s := make([]string, len(ps))
	for i, p := range ps {
		if p.IsSingleIP() {
			s[i] = p.Addr().String()
		} else {
			s[i] = p.String()
		}
	}
	if len(s) == 1 {
		return s[0]
	}
	return "{ " + strings.Join(s, ", ") + " }"
}
