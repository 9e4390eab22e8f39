// Package verify compares what a real node prints with what the twin says
// it should print: each command's output is parsed into semantic items
// (a route, a neighbour, an nft element, an HNS network…) with an identity
// key, and the two sets are compared. Order the kernel or HNS chooses,
// identifiers no algorithm derives, timers, counters and column widths are
// dropped by the parsers, so they never count as a difference.
package verify

import (
	"fmt"
	"sort"
	"strings"
)

// Item is one semantic thing a command prints.
type Item struct {
	// Kind names what it is ("route", "neighbour", "nft element"…).
	Kind string `json:"kind"`
	// Key is its identity within the command's output.
	Key string `json:"key"`
	// Value is everything else that must match, canonically ordered.
	Value string `json:"value,omitempty"`
	// Producer is the component that writes it on a real node.
	Producer string `json:"-"`
	// Group pairs a missing and an extra item into one change when each
	// is alone in its group (a chain's one rule that changed).
	Group string `json:"-"`
	// Parent is the kind and key of the item this one belongs to (a set's
	// element, a network's policy): when the parent is missing or extra,
	// its children are counted in the parent's discrepancy, not listed.
	Parent string `json:"-"`
}

func parentRef(kind, key string) string { return kind + "\x00" + key }

func (i Item) String() string {
	if i.Value == "" {
		return i.Key
	}
	return i.Key + " " + i.Value
}

// ParseError is output a parser cannot read: the line (1-based, counted
// from the first line of the output) and what is wrong.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func parseErr(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// attrs renders key=value pairs in key order, so the order a tool prints
// them in never matters.
func attrs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// normMAC writes a MAC address the one way: lower case, colons (HNS prints
// dashes and either case).
func normMAC(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "-", ":"))
}

// lines splits output into lines without their line ends (CRLF from
// Windows included).
func lines(out string) []string {
	ls := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}
