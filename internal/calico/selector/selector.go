// Package selector evaluates Calico label selectors, the expression language
// of IPPool.spec.nodeSelector and of policy selectors.
//
// Grammar (libcalico-go lib/selector/tokenizer/tokenizer.go and
// lib/selector/parser/parser.go):
//
//	or      := and { "||" and }
//	and     := op { "&&" op }
//	op      := { "!" } ( "all()" | "global()" | "has(" label ")" | "(" or ")"
//	           | label ( "==" | "!=" | "contains" | "starts with" | "ends with" ) string
//	           | label ( "in" | "not in" ) "{" [ string { "," string } [ "," ] ] "}" )
//	string  := "'" chars "'" | '"' chars '"'      (no escapes)
//	label   := [A-Za-z0-9_./-]{1,512}
//
// Only space and tab count as whitespace. An empty selector selects
// everything (all()). A label that is absent fails ==, in, contains, starts
// with and ends with, and passes != and not in.
package selector

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Selector is a parsed selector.
type Selector interface {
	// Evaluate reports whether a set of labels is selected.
	Evaluate(labels map[string]string) bool
	// String renders the selector in a canonical form that parses back to
	// an equivalent selector.
	String() string
}

// maxLabelLength is the tokenizer's limit on a label name (tokenizer.go).
const maxLabelLength = 512

// Parse parses a selector expression.
func Parse(s string) (Selector, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tEOF {
		return allNode{}, nil
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tEOF {
		return nil, fmt.Errorf("unexpected content at end of selector %v", p.rest())
	}
	return n, nil
}

// MustParse is Parse that panics; for selectors fixed in code.
func MustParse(s string) Selector {
	sel, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// Matches parses and evaluates in one step; an empty selector matches.
func Matches(selector string, labels map[string]string) (bool, error) {
	sel, err := Parse(selector)
	if err != nil {
		return false, err
	}
	return sel.Evaluate(labels), nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tLabel
	tString
	tLBrace
	tRBrace
	tComma
	tEq
	tNe
	tIn
	tNotIn
	tContains
	tStartsWith
	tEndsWith
	tNot
	tAll
	tGlobal
	tHas
	tLParen
	tRParen
	tAnd
	tOr
)

var tokNames = map[tokKind]string{
	tEOF: "end of selector", tLabel: "label", tString: "string", tLBrace: "{", tRBrace: "}",
	tComma: ",", tEq: "==", tNe: "!=", tIn: "in", tNotIn: "not in", tContains: "contains",
	tStartsWith: "starts with", tEndsWith: "ends with", tNot: "!", tAll: "all()",
	tGlobal: "global()", tHas: "has()", tLParen: "(", tRParen: ")", tAnd: "&&", tOr: "||",
}

type token struct {
	kind tokKind
	val  string
}

func (t token) String() string {
	if t.kind == tLabel || t.kind == tString || t.kind == tHas {
		return fmt.Sprintf("%s(%s)", tokNames[t.kind], t.val)
	}
	return tokNames[t.kind]
}

func isIdentChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == '/' || c == '-'
}

func skipSpace(s string) string {
	return strings.TrimLeft(s, " \t")
}

// cutIdent splits a leading label name off s.
func cutIdent(s string) (string, string, error) {
	i := 0
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	switch {
	case i == 0:
		return "", s, errors.New("expected identifier")
	case i > maxLabelLength:
		return "", s, fmt.Errorf("label too long: %s", s[:i])
	}
	return s[:i], s[i:], nil
}

// cutWords removes a keyword (or a sequence of words separated by spaces)
// that must end at a word boundary.
func cutWords(s string, words ...string) (string, bool) {
	rest := s
	for i, w := range words {
		var ok bool
		if rest, ok = strings.CutPrefix(rest, w); !ok {
			return s, false
		}
		if i < len(words)-1 {
			rest = skipSpace(rest)
		}
	}
	if rest != "" && isIdentChar(rest[0]) {
		return s, false
	}
	return rest, true
}

// cutCall matches "name(" optional blanks ")" and returns what follows.
func cutCall(s, name string) (string, bool, error) {
	rest, ok := strings.CutPrefix(s, name+"(")
	if !ok {
		return s, false, nil
	}
	rest, ok = strings.CutPrefix(skipSpace(rest), ")")
	if !ok {
		return s, true, fmt.Errorf("no closing ')' after %s(", name)
	}
	return rest, true, nil
}

func tokenize(s string) ([]token, error) {
	var toks []token
	for {
		s = skipSpace(s)
		if s == "" {
			return append(toks, token{kind: tEOF}), nil
		}
		afterLabel := len(toks) > 0 && toks[len(toks)-1].kind == tLabel
		switch c := s[0]; c {
		case '(':
			toks, s = append(toks, token{kind: tLParen}), s[1:]
		case ')':
			toks, s = append(toks, token{kind: tRParen}), s[1:]
		case '{':
			toks, s = append(toks, token{kind: tLBrace}), s[1:]
		case '}':
			toks, s = append(toks, token{kind: tRBrace}), s[1:]
		case ',':
			toks, s = append(toks, token{kind: tComma}), s[1:]
		case '"', '\'':
			end := strings.IndexByte(s[1:], c)
			if end < 0 {
				return nil, errors.New("unterminated string")
			}
			toks, s = append(toks, token{kind: tString, val: s[1 : 1+end]}), s[end+2:]
		case '=':
			if !strings.HasPrefix(s, "==") {
				return nil, errors.New("expected ==")
			}
			toks, s = append(toks, token{kind: tEq}), s[2:]
		case '!':
			if strings.HasPrefix(s, "!=") {
				toks, s = append(toks, token{kind: tNe}), s[2:]
			} else {
				toks, s = append(toks, token{kind: tNot}), s[1:]
			}
		case '&':
			if !strings.HasPrefix(s, "&&") {
				return nil, errors.New("expected &&")
			}
			toks, s = append(toks, token{kind: tAnd}), s[2:]
		case '|':
			if !strings.HasPrefix(s, "||") {
				return nil, errors.New("expected ||")
			}
			toks, s = append(toks, token{kind: tOr}), s[2:]
		default:
			if afterLabel {
				// A label must be followed by a word operator here (the
				// symbolic ones were handled above).
				var ok bool
				var k tokKind
				for _, op := range []struct {
					words []string
					kind  tokKind
				}{
					{[]string{"contains"}, tContains},
					{[]string{"starts", "with"}, tStartsWith},
					{[]string{"ends", "with"}, tEndsWith},
					{[]string{"not", "in"}, tNotIn},
					{[]string{"in"}, tIn},
				} {
					if s, ok = cutWords(s, op.words...); ok {
						k = op.kind
						break
					}
				}
				if !ok {
					return nil, fmt.Errorf("expected operator after label %q", toks[len(toks)-1].val)
				}
				toks = append(toks, token{kind: k})
				continue
			}
			if rest, found := strings.CutPrefix(s, "has("); found {
				id, rest, err := cutIdent(skipSpace(rest))
				if err != nil {
					return nil, err
				}
				rest, found = strings.CutPrefix(skipSpace(rest), ")")
				if !found {
					return nil, errors.New("no closing ')' after has(")
				}
				toks, s = append(toks, token{kind: tHas, val: id}), rest
				continue
			}
			if rest, found, err := cutCall(s, "all"); found {
				if err != nil {
					return nil, err
				}
				toks, s = append(toks, token{kind: tAll}), rest
				continue
			}
			if rest, found, err := cutCall(s, "global"); found {
				if err != nil {
					return nil, err
				}
				toks, s = append(toks, token{kind: tGlobal}), rest
				continue
			}
			id, rest, err := cutIdent(s)
			if err != nil {
				return nil, err
			}
			toks, s = append(toks, token{kind: tLabel, val: id}), rest
		}
	}
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) rest() []token { return p.toks[p.pos:] }

func (p *parser) or() (Selector, error) {
	var terms []Selector
	for {
		n, err := p.and()
		if err != nil {
			return nil, err
		}
		terms = append(terms, n)
		if p.peek().kind != tOr {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return orNode(terms), nil
}

func (p *parser) and() (Selector, error) {
	var ops []Selector
	for {
		n, err := p.op()
		if err != nil {
			return nil, err
		}
		ops = append(ops, n)
		if p.peek().kind != tAnd {
			break
		}
		p.next()
	}
	if len(ops) == 1 {
		return ops[0], nil
	}
	return andNode(ops), nil
}

func (p *parser) op() (Selector, error) {
	// Leading "!"s collapse to one negation or none (parser.go).
	neg := false
	for p.peek().kind == tNot {
		neg = !neg
		p.next()
	}
	var n Selector
	switch t := p.next(); t.kind {
	case tAll:
		n = allNode{}
	case tGlobal:
		n = globalNode{}
	case tHas:
		n = hasNode{t.val}
	case tLParen:
		inner, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next().kind != tRParen {
			return nil, errors.New("expected )")
		}
		n = parenNode{inner}
	case tLabel:
		opTok := p.next()
		switch opTok.kind {
		case tEq, tNe, tContains, tStartsWith, tEndsWith:
			v := p.next()
			if v.kind != tString {
				return nil, errors.New("expected string")
			}
			n = cmpNode{label: t.val, op: opTok.kind, value: v.val}
		case tIn, tNotIn:
			if p.next().kind != tLBrace {
				return nil, errors.New("expected set literal")
			}
			var vals []string
			for p.peek().kind == tString {
				vals = append(vals, p.next().val)
				if p.peek().kind != tComma {
					break
				}
				p.next()
			}
			if p.next().kind != tRBrace {
				return nil, errors.New("expected }")
			}
			slices.Sort(vals)
			n = setNode{label: t.val, not: opTok.kind == tNotIn, values: slices.Compact(vals)}
		case tEOF:
			return nil, errors.New("unexpected end of string looking for op")
		default:
			return nil, fmt.Errorf("expected == or != not: %v", opTok)
		}
	case tEOF:
		return nil, errors.New("unexpected end of string looking for op")
	default:
		return nil, fmt.Errorf("unexpected token: %v", t)
	}
	if neg {
		return notNode{n}, nil
	}
	return n, nil
}

type allNode struct{}

func (allNode) Evaluate(map[string]string) bool { return true }
func (allNode) String() string                  { return "all()" }

type globalNode struct{}

func (globalNode) Evaluate(map[string]string) bool { return true }
func (globalNode) String() string                  { return "global()" }

type hasNode struct{ label string }

func (n hasNode) Evaluate(l map[string]string) bool { _, ok := l[n.label]; return ok }
func (n hasNode) String() string                    { return "has(" + n.label + ")" }

type cmpNode struct {
	label string
	op    tokKind
	value string
}

func (n cmpNode) Evaluate(l map[string]string) bool {
	v, ok := l[n.label]
	switch n.op {
	case tEq:
		return ok && v == n.value
	case tNe:
		return !ok || v != n.value
	case tContains:
		return ok && strings.Contains(v, n.value)
	case tStartsWith:
		return ok && strings.HasPrefix(v, n.value)
	case tEndsWith:
		return ok && strings.HasSuffix(v, n.value)
	}
	return false
}

func (n cmpNode) String() string {
	return n.label + " " + tokNames[n.op] + " " + quote(n.value)
}

type setNode struct {
	label  string
	not    bool
	values []string // sorted, unique
}

func (n setNode) Evaluate(l map[string]string) bool {
	v, ok := l[n.label]
	if !ok {
		return n.not
	}
	_, in := slices.BinarySearch(n.values, v)
	return in != n.not
}

func (n setNode) String() string {
	q := make([]string, len(n.values))
	for i, v := range n.values {
		q[i] = quote(v)
	}
	op := " in {"
	if n.not {
		op = " not in {"
	}
	return n.label + op + strings.Join(q, ", ") + "}"
}

type notNode struct{ inner Selector }

func (n notNode) Evaluate(l map[string]string) bool { return !n.inner.Evaluate(l) }
func (n notNode) String() string                    { return "!" + n.inner.String() }

type parenNode struct{ inner Selector }

func (n parenNode) Evaluate(l map[string]string) bool { return n.inner.Evaluate(l) }
func (n parenNode) String() string                    { return "(" + n.inner.String() + ")" }

type andNode []Selector

func (n andNode) Evaluate(l map[string]string) bool {
	for _, s := range n {
		if !s.Evaluate(l) {
			return false
		}
	}
	return true
}

func (n andNode) String() string { return join(n, " && ") }

type orNode []Selector

func (n orNode) Evaluate(l map[string]string) bool {
	for _, s := range n {
		if s.Evaluate(l) {
			return true
		}
	}
	return false
}

func (n orNode) String() string { return join(n, " || ") }

func join(ns []Selector, sep string) string {
	parts := make([]string, len(ns))
	for i, s := range ns {
		parts[i] = s.String()
	}
	return strings.Join(parts, sep)
}

// quote picks the quote character the value does not contain; a value can
// never contain both, since the tokenizer ends a string at its first
// matching quote.
func quote(v string) string {
	if strings.Contains(v, `"`) {
		return "'" + v + "'"
	}
	return `"` + v + `"`
}
