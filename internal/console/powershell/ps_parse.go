package powershell

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A small PowerShell: statements separated by ';' or new lines (a line
// ending in '|', ',' or '`' continues), optional "$var = " assignment,
// pipelines of cmdlets whose head may be an expression ($var.A.B or a
// parenthesized pipeline with member access). Cmdlet arguments are
// parameters (-Name), barewords, quoted strings, numbers, @{…} hashtables,
// {…} script blocks, variables and comma lists. Script blocks hold one
// expression: $_/$var member chains, literals, comparison operators
// (-eq -ne -like -notlike -match -notmatch -gt -ge -lt -le -contains
// -notcontains -in -notin, with i/c variants), -and, -or, -not and !.

type stmt struct {
	assign string // variable name, "" when the statement is not an assignment
	pipe   *pipeline
}

type pipeline struct {
	head exprNode // an expression head, or nil when cmds[0] produces the input
	cmds []*cmdNode
}

type cmdNode struct {
	name string
	args []argNode
}

type argNode struct {
	param string   // "-Depth" for a parameter token
	val   *valNode // a value otherwise
}

type valKind int

const (
	vBare valKind = iota
	vStr
	vHash
	vBlock
	vExpr
	vArray
)

type valNode struct {
	kind  valKind
	s     string
	hash  []hashEntry
	expr  exprNode
	items []*valNode
}

type hashEntry struct {
	key string
	val *valNode
}

// parseScript splits text into statements and parses each.
func parseScript(text string) ([]stmt, error) {
	var out []stmt
	for _, st := range splitStatements(text) {
		s, err := parseStatement(st)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// promptRE strips a pasted "PS C:\> " prompt.
var promptRE = regexp.MustCompile(`^\s*PS [A-Za-z]:\\[^>]*>\s*`)

// splitStatements joins continued lines and splits on ';' and new lines
// outside quotes and brackets.
func splitStatements(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "`\n", " ")
	var lines []string
	var cur string
	for _, l := range strings.Split(text, "\n") {
		l = promptRE.ReplaceAllString(l, "")
		if strings.TrimSpace(l) == "" && cur == "" {
			continue
		}
		cur += " " + l
		t := strings.TrimSpace(cur)
		if strings.HasSuffix(t, "|") || strings.HasSuffix(t, ",") || depthOpen(t) {
			continue
		}
		lines = append(lines, t)
		cur = ""
	}
	if strings.TrimSpace(cur) != "" {
		lines = append(lines, strings.TrimSpace(cur))
	}
	var out []string
	for _, l := range lines {
		for _, s := range splitTop(l, ';') {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// depthOpen reports an unclosed bracket (a statement spanning lines).
func depthOpen(s string) bool {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"':
			i = skipQuoted(s, i) - 1
		case '(', '{', '[':
			d++
		case ')', '}', ']':
			d--
		}
	}
	return d > 0
}

// splitTop splits on sep outside quotes and brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	d, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			i = skipQuoted(s, i) - 1
		case '(', '{', '[':
			d++
		case ')', '}', ']':
			d--
		default:
			if c == sep && d == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// skipQuoted returns the index after the string starting at s[i]: ” doubles
// a single quote, ` escapes in double quotes.
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case q == '"' && s[j] == '`':
			j++
		case s[j] == q:
			if q == '\'' && j+1 < len(s) && s[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// unquote returns a quoted string's content.
func unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	body := s[1 : len(s)-1]
	if s[0] == '\'' {
		return strings.ReplaceAll(body, "''", "'")
	}
	var sb strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '`' && i+1 < len(body) {
			i++
			switch body[i] {
			case 'n':
				sb.WriteByte('\n')
			case 't':
				sb.WriteByte('\t')
			default:
				sb.WriteByte(body[i])
			}
			continue
		}
		sb.WriteByte(body[i])
	}
	return sb.String()
}

// matching returns the index after the bracket closing the one at s[i].
func matching(s string, i int) (int, error) {
	d := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\'', '"':
			j = skipQuoted(s, j) - 1
		case '(', '{', '[':
			d++
		case ')', '}', ']':
			d--
			if d == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("missing closing bracket for %q", s[i:])
}

var assignRE = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)\s*=([^=].*)$`)

func parseStatement(s string) (stmt, error) {
	var st stmt
	if m := assignRE.FindStringSubmatch(s); m != nil {
		st.assign, s = m[1], strings.TrimSpace(m[2])
	}
	p, err := parsePipeline(s)
	st.pipe = p
	return st, err
}

func parsePipeline(s string) (*pipeline, error) {
	p := &pipeline{}
	for i, seg := range splitTop(s, '|') {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			return nil, fmt.Errorf("An empty pipe element is not allowed.")
		}
		if i == 0 && (seg[0] == '$' || seg[0] == '(' || seg[0] == '\'' || seg[0] == '"') {
			e, err := parseExpr(seg)
			if err != nil {
				return nil, err
			}
			p.head = e
			continue
		}
		c, err := parseCommand(seg)
		if err != nil {
			return nil, err
		}
		p.cmds = append(p.cmds, c)
	}
	return p, nil
}

// parseCommand reads a command name and its arguments in argument mode.
func parseCommand(s string) (*cmdNode, error) {
	name, rest, _ := strings.Cut(s, " ")
	c := &cmdNode{name: name}
	rest = strings.TrimSpace(rest)
	i := 0
	for {
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
		if i >= len(rest) {
			return c, nil
		}
		if rest[i] == '-' && i+1 < len(rest) && isLetter(rest[i+1]) {
			j := i + 1
			for j < len(rest) && rest[j] != ' ' && rest[j] != ':' {
				j++
			}
			c.args = append(c.args, argNode{param: rest[i:j]})
			if j < len(rest) && rest[j] == ':' {
				j++ // -Param:value
			}
			i = j
			continue
		}
		v, j, err := parseArgValue(rest, i)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, argNode{val: v})
		i = j
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseArgValue reads one value, or a comma list of values, at s[i].
func parseArgValue(s string, i int) (*valNode, int, error) {
	var items []*valNode
	for {
		v, j, err := parseOneArg(s, i)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, v)
		k := j
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && s[k] == ',' {
			k++
			for k < len(s) && s[k] == ' ' {
				k++
			}
			i = k
			continue
		}
		if len(items) == 1 {
			return items[0], j, nil
		}
		return &valNode{kind: vArray, items: items}, j, nil
	}
}

func parseOneArg(s string, i int) (*valNode, int, error) {
	switch {
	case strings.HasPrefix(s[i:], "@{"):
		end, err := matching(s, i+1)
		if err != nil {
			return nil, 0, err
		}
		h, err := parseHash(s[i+2 : end-1])
		return h, end, err
	case s[i] == '{':
		end, err := matching(s, i)
		if err != nil {
			return nil, 0, err
		}
		e, err := parseExpr(strings.TrimSpace(s[i+1 : end-1]))
		return &valNode{kind: vBlock, expr: e}, end, err
	case s[i] == '(' || s[i] == '$':
		end := i
		if s[i] == '(' {
			var err error
			if end, err = matching(s, i); err != nil {
				return nil, 0, err
			}
		}
		for end < len(s) && s[end] != ' ' && s[end] != ',' {
			if s[end] == '(' {
				e, err := matching(s, end)
				if err != nil {
					return nil, 0, err
				}
				end = e
				continue
			}
			end++
		}
		e, err := parseExpr(s[i:end])
		return &valNode{kind: vExpr, expr: e}, end, err
	case s[i] == '\'' || s[i] == '"':
		end := skipQuoted(s, i)
		return &valNode{kind: vStr, s: unquote(s[i:end])}, end, nil
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != ',' {
		j++
	}
	return &valNode{kind: vBare, s: s[i:j]}, j, nil
}

// parseHash reads "key = value; key = value" (a calculated property).
func parseHash(body string) (*valNode, error) {
	h := &valNode{kind: vHash}
	for _, part := range splitTop(body, ';') {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("Missing '=' operator after key in hash literal: %q", part)
		}
		v = strings.TrimSpace(v)
		val, _, err := parseArgValue(v, 0)
		if err != nil {
			return nil, err
		}
		h.hash = append(h.hash, hashEntry{key: strings.ToLower(strings.Trim(strings.TrimSpace(k), `'"`)), val: val})
	}
	return h, nil
}

// Expressions.

type exprNode interface {
	eval(sc *scope) (any, error)
}

type litExpr struct{ v any }
type varExpr struct{ name string }
type memberExpr struct {
	target exprNode
	name   string
}
type pipeExpr struct{ p *pipeline }
type notExpr struct{ e exprNode }
type binExpr struct {
	op   string
	l, r exprNode
}

// exprLexer tokenizes expression mode.
type exprLexer struct {
	s   string
	i   int
	tok string
}

func parseExpr(s string) (exprNode, error) {
	lx := &exprLexer{s: s}
	lx.next()
	e, err := lx.or()
	if err != nil {
		return nil, err
	}
	if lx.tok != "" {
		return nil, fmt.Errorf("Unexpected token '%s' in expression or statement.", lx.tok)
	}
	return e, nil
}

// next reads the next token: a variable, a quoted string, a number, an
// operator, '!', a parenthesized group, '.member', or a bareword.
func (lx *exprLexer) next() {
	for lx.i < len(lx.s) && (lx.s[lx.i] == ' ' || lx.s[lx.i] == '\t') {
		lx.i++
	}
	if lx.i >= len(lx.s) {
		lx.tok = ""
		return
	}
	s, i := lx.s, lx.i
	switch c := s[i]; {
	case c == '\'' || c == '"':
		lx.i = skipQuoted(s, i)
	case c == '(':
		end, err := matching(s, i)
		if err != nil {
			end = len(s)
		}
		lx.i = end
	case c == '!':
		lx.i = i + 1
	case c == '.' || c == '$' || c == '-' || isLetter(c) || c >= '0' && c <= '9' || c == '_':
		j := i + 1
		for j < len(s) && (isLetter(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '_' || s[j] == ':' && c == '$') {
			j++
		}
		if c >= '0' && c <= '9' {
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
		}
		lx.i = j
	default:
		lx.i = i + 1
	}
	lx.tok = s[i:lx.i]
}

func (lx *exprLexer) or() (exprNode, error) {
	l, err := lx.and()
	for err == nil && strings.EqualFold(lx.tok, "-or") {
		lx.next()
		var r exprNode
		if r, err = lx.and(); err == nil {
			l = &binExpr{op: "-or", l: l, r: r}
		}
	}
	return l, err
}

func (lx *exprLexer) and() (exprNode, error) {
	l, err := lx.unary()
	for err == nil && strings.EqualFold(lx.tok, "-and") {
		lx.next()
		var r exprNode
		if r, err = lx.unary(); err == nil {
			l = &binExpr{op: "-and", l: l, r: r}
		}
	}
	return l, err
}

func (lx *exprLexer) unary() (exprNode, error) {
	if lx.tok == "!" || strings.EqualFold(lx.tok, "-not") {
		lx.next()
		e, err := lx.unary()
		return &notExpr{e: e}, err
	}
	return lx.cmp()
}

var cmpOps = map[string]bool{
	"eq": true, "ne": true, "like": true, "notlike": true, "match": true, "notmatch": true,
	"gt": true, "ge": true, "lt": true, "le": true, "contains": true, "notcontains": true, "in": true, "notin": true,
}

// cmpOp normalizes -ieq/-ceq to eq (comparisons here ignore case).
func cmpOp(tok string) (string, bool) {
	if !strings.HasPrefix(tok, "-") {
		return "", false
	}
	op := strings.ToLower(tok[1:])
	if cmpOps[op] {
		return op, true
	}
	if len(op) > 1 && (op[0] == 'i' || op[0] == 'c') && cmpOps[op[1:]] {
		return op[1:], true
	}
	return "", false
}

func (lx *exprLexer) cmp() (exprNode, error) {
	l, err := lx.postfix()
	if err != nil {
		return nil, err
	}
	if op, ok := cmpOp(lx.tok); ok {
		opTok := lx.tok
		lx.next()
		if lx.tok == "" {
			return nil, fmt.Errorf("You must provide a value expression following the '%s' operator.", opTok)
		}
		r, err := lx.postfix()
		if err != nil {
			return nil, err
		}
		return &binExpr{op: op, l: l, r: r}, nil
	}
	return l, nil
}

func (lx *exprLexer) postfix() (exprNode, error) {
	e, err := lx.atom()
	for err == nil && strings.HasPrefix(lx.tok, ".") && len(lx.tok) > 1 {
		e = &memberExpr{target: e, name: lx.tok[1:]}
		lx.next()
	}
	return e, err
}

func (lx *exprLexer) atom() (exprNode, error) {
	t := lx.tok
	if t == "" {
		return nil, fmt.Errorf("You must provide a value expression following the operator.")
	}
	lx.next()
	switch {
	case t[0] == '\'' || t[0] == '"':
		return &litExpr{v: unquote(t)}, nil
	case t[0] == '(':
		inner := strings.TrimSpace(t[1 : len(t)-1])
		p, err := parsePipeline(inner)
		return &pipeExpr{p: p}, err
	case t[0] == '$':
		switch strings.ToLower(t) {
		case "$true":
			return &litExpr{v: true}, nil
		case "$false":
			return &litExpr{v: false}, nil
		case "$null":
			return &litExpr{v: nil}, nil
		case "$_", "$psitem":
			return &varExpr{name: "_"}, nil
		}
		return &varExpr{name: strings.ToLower(t[1:])}, nil
	case t[0] >= '0' && t[0] <= '9':
		if n, err := strconv.Atoi(t); err == nil {
			return &litExpr{v: n}, nil
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return &litExpr{v: f}, nil
		}
		return &litExpr{v: t}, nil
	}
	return nil, fmt.Errorf("Unexpected token '%s' in expression or statement.", t)
}
