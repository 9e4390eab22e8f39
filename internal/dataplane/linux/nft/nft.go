// Package nft holds nftables tables as the twin renders them — sets, maps,
// chains and rules — prints them byte for byte as `nft list` does, and
// evaluates a rendered table for one packet by reading the printed rules
// (the kernel's walk of base chains, jumps, gotos, returns and marks), so
// that a verdict can be held to the ruleset shown. The Linux dataplane
// (internal/dataplane/linux) renders kube-proxy's and Felix's tables into it.
package nft

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Table is a table as nft list prints it. The printer follows nftables
// src/rule.c table_print / set_print_declaration / chain_print_declaration
// and src/expression.c set_expr_print.
type Table struct {
	Family, Name, Comment string
	Sets                  []*Set
	Chains                []*Chain
}

// Set is a named set or map.
type Set struct {
	IsMap   bool
	Name    string
	KeyType string // as nft prints it: "ipv4_addr . inet_proto . inet_service"
	ValType string // maps only: "verdict"
	Size    int
	Flags   []string
	Timeout string
	Comment string
	Elems   []Elem
	seen    map[string]bool
}

// Elem is one element; sortKey is the key's value in network byte order,
// field by field, which is what nft sorts listed elements by
// (src/mergesort.c expr_msort_value, concat_expr_msort_value).
type Elem struct {
	Key     string
	SortKey []byte
	Comment string
	Value   string
}

// Chain is a chain; base chains carry type, hook and printed priority.
type Chain struct {
	Name     string
	Type     string
	Hook     string
	Priority string
	Comment  string
	Rules    []string
}

// Set is the table's set or map of the name, or nil.
func (t *Table) Set(name string) *Set {
	for _, s := range t.Sets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Chain is the table's chain of the name, or nil.
func (t *Table) Chain(name string) *Chain {
	for _, c := range t.Chains {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Add appends an element unless one with the same key is present (sets
// and maps hold each key once).
func (s *Set) Add(e Elem) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[e.Key] {
		return
	}
	s.seen[e.Key] = true
	s.Elems = append(s.Elems, e)
}

// String is the table as nft list prints it.
func (t *Table) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s %s {\n", t.Family, t.Name)
	if t.Comment != "" {
		fmt.Fprintf(&b, "\tcomment %q\n", t.Comment)
	}
	delim := ""
	for _, s := range t.Sets {
		b.WriteString(delim)
		s.print(&b)
		delim = "\n"
	}
	for _, c := range t.Chains {
		b.WriteString(delim)
		c.print(&b)
		delim = "\n"
	}
	b.WriteString("}\n")
	return b.String()
}

func (s *Set) print(b *strings.Builder) {
	kind := "set"
	typ := s.KeyType
	if s.IsMap {
		kind = "map"
		typ += " : " + s.ValType
	}
	fmt.Fprintf(b, "\t%s %s {\n\t\ttype %s\n", kind, s.Name, typ)
	if s.Size > 0 {
		fmt.Fprintf(b, "\t\tsize %d\n", s.Size)
	}
	if len(s.Flags) > 0 {
		fmt.Fprintf(b, "\t\tflags %s\n", strings.Join(s.Flags, ","))
	}
	if s.Timeout != "" {
		fmt.Fprintf(b, "\t\ttimeout %s\n", s.Timeout)
	}
	if s.Comment != "" {
		fmt.Fprintf(b, "\t\tcomment %q\n", s.Comment)
	}
	if len(s.Elems) > 0 {
		es := append([]Elem(nil), s.Elems...)
		sort.SliceStable(es, func(i, j int) bool { return bytes.Compare(es[i].SortKey, es[j].SortKey) < 0 })
		b.WriteString("\t\telements = { ")
		perLine := elemsPerLine(s.KeyType)
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
			b.WriteString(e.Key)
			if e.Comment != "" {
				fmt.Fprintf(b, " comment %q", e.Comment)
			}
			if s.IsMap {
				b.WriteString(" : " + e.Value)
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

func (c *Chain) print(b *strings.Builder) {
	fmt.Fprintf(b, "\tchain %s {", c.Name)
	if c.Comment != "" {
		fmt.Fprintf(b, "\n\t\tcomment %q", c.Comment)
	}
	b.WriteString("\n")
	if c.Type != "" {
		fmt.Fprintf(b, "\t\ttype %s hook %s priority %s; policy accept;\n", c.Type, c.Hook, c.Priority)
	}
	for _, r := range c.Rules {
		fmt.Fprintf(b, "\t\t%s\n", r)
	}
	b.WriteString("\t}\n")
}

// nftPriority prints a base chain priority as nft >= 1.0.9 does (src/rule.c
// prio2str): the first standard priority within 10 of the value names it,
// with the offset, if that name is valid for the hook (dstnat on prerouting
// and output, srcnat on input and postrouting, the others everywhere);
// otherwise the number.
func Priority(hook string, prio int) string {
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

// KeyAddr is an address field.
func KeyAddr(a netip.Addr) []byte { return a.AsSlice() }

// KeyU8 is a one-byte field (inet_proto).
func KeyU8(v int) []byte { return []byte{byte(v)} }

// KeyU16 is a two-byte field (inet_service).
func KeyU16(v int) []byte {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], uint16(v))
	return b[:]
}

// Key joins the fields of a concatenated key.
func Key(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// ProtoNum is the IANA number nft sorts inet_proto values by.
func ProtoNum(p string) int {
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

// PrefixList prints an anonymous set of prefixes or addresses as nft lists
// it: a single element bare, several sorted inside braces.
func PrefixList(ps []netip.Prefix) string {
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
