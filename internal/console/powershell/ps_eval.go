package powershell

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// scope holds a session's variables and $_.
type scope struct {
	node  node
	hosts map[string]HostCmdlet // ExecWith's source cmdlets
	vars  map[string]any
	item  any
	notes []string
}

func (e *litExpr) eval(*scope) (any, error) { return e.v, nil }

func (e *varExpr) eval(sc *scope) (any, error) {
	if e.name == "_" {
		return sc.item, nil
	}
	return sc.vars[e.name], nil
}

func (e *memberExpr) eval(sc *scope) (any, error) {
	v, err := e.target.eval(sc)
	if err != nil {
		return nil, err
	}
	r, _ := member(v, e.name)
	return r, nil
}

func (e *pipeExpr) eval(sc *scope) (any, error) {
	out, err := sc.run(e.p)
	if err != nil {
		return nil, err
	}
	return unwrap(out), nil
}

func (e *notExpr) eval(sc *scope) (any, error) {
	v, err := e.e.eval(sc)
	return !isTrue(v), err
}

func (e *binExpr) eval(sc *scope) (any, error) {
	l, err := e.l.eval(sc)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "-and":
		if !isTrue(l) {
			return false, nil
		}
		r, err := e.r.eval(sc)
		return isTrue(r), err
	case "-or":
		if isTrue(l) {
			return true, nil
		}
		r, err := e.r.eval(sc)
		return isTrue(r), err
	}
	r, err := e.r.eval(sc)
	if err != nil {
		return nil, err
	}
	return compareOp(e.op, l, r)
}

// compareOp applies a comparison operator as PowerShell does: with an array
// on the left, -eq and friends filter it; the right operand converts to the
// left one's type; strings compare ignoring case.
func compareOp(op string, l, r any) (any, error) {
	switch op {
	case "contains", "notcontains":
		found := false
		for _, e := range enumerate(l) {
			if equalValues(e, r) {
				found = true
				break
			}
		}
		return found == (op == "contains"), nil
	case "in", "notin":
		return compareOp(map[string]string{"in": "contains", "notin": "notcontains"}[op], r, l)
	}
	if arr, ok := l.([]any); ok {
		var out []any
		for _, e := range arr {
			m, err := compareOp(op, e, r)
			if err != nil {
				return nil, err
			}
			if isTrue(m) {
				out = append(out, e)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	switch op {
	case "eq":
		return equalValues(l, r), nil
	case "ne":
		return !equalValues(l, r), nil
	case "like", "notlike":
		re, err := wildcardRE(scalarStr(r))
		if err != nil {
			return nil, err
		}
		return re.MatchString(scalarStr(l)) == (op == "like"), nil
	case "match", "notmatch":
		re, err := regexp.Compile("(?i)" + scalarStr(r))
		if err != nil {
			return nil, fmt.Errorf("Invalid regular expression pattern: %s.", scalarStr(r))
		}
		return re.MatchString(scalarStr(l)) == (op == "match"), nil
	case "gt", "ge", "lt", "le":
		c := compareConverted(l, r)
		switch op {
		case "gt":
			return c > 0, nil
		case "ge":
			return c >= 0, nil
		case "lt":
			return c < 0, nil
		}
		return c <= 0, nil
	}
	return nil, fmt.Errorf("operator -%s is not emulated", op)
}

// equalValues is -eq with the right side converted to the left's type.
func equalValues(l, r any) bool {
	switch x := l.(type) {
	case nil:
		return r == nil
	case bool:
		return x == isTrue(r)
	case int, float64:
		fl, _ := number(l)
		switch y := r.(type) {
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(y), 64)
			return err == nil && f == fl
		default:
			fr, ok := number(r)
			return ok && fr == fl
		}
	}
	if r == nil {
		return false
	}
	return strings.EqualFold(scalarStr(l), scalarStr(r))
}

func compareConverted(l, r any) int {
	if fl, ok := number(l); ok {
		fr, ok := number(r)
		if !ok {
			fr, _ = strconv.ParseFloat(scalarStr(r), 64)
		}
		switch {
		case fl < fr:
			return -1
		case fl > fr:
			return 1
		}
		return 0
	}
	return strings.Compare(strings.ToLower(scalarStr(l)), strings.ToLower(scalarStr(r)))
}

// wildcardRE turns a -like pattern (* ? [set]) into a regexp.
func wildcardRE(p string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString("(?is)^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			sb.WriteString(".*")
		case '?':
			sb.WriteString(".")
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				sb.WriteString(`\[`)
				continue
			}
			sb.WriteString(p[i : i+j+1])
			i += j
		case '`':
			if i+1 < len(p) {
				i++
				sb.WriteString(regexp.QuoteMeta(string(p[i])))
			}
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	return regexp.Compile(sb.String())
}

// value evaluates an argument value.
func (sc *scope) value(v *valNode) (any, error) {
	switch v.kind {
	case vBare:
		if n, err := strconv.Atoi(v.s); err == nil {
			return n, nil
		}
		return v.s, nil
	case vStr:
		return v.s, nil
	case vExpr, vBlock:
		return v.expr.eval(sc)
	case vArray:
		out := make([]any, 0, len(v.items))
		for _, it := range v.items {
			x, err := sc.value(it)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a hashtable is not a value here")
}

// run runs a pipeline and returns its output objects.
func (sc *scope) run(p *pipeline) ([]any, error) {
	var in []any
	start := 0
	if p.head != nil {
		v, err := p.head.eval(sc)
		if err != nil {
			return nil, err
		}
		in = enumerate(v)
	}
	for i := start; i < len(p.cmds); i++ {
		c := p.cmds[i]
		if h, ok := sc.hosts[strings.ToLower(c.name)]; ok {
			if i > 0 || p.head != nil {
				return nil, fmt.Errorf("%s: taking pipeline input is not emulated", h.Name)
			}
			out, err := sc.runHost(h, c.args)
			if err != nil {
				return nil, fmt.Errorf("%s : %v", h.Name, err)
			}
			in = out
			continue
		}
		fn, ok := cmdlets[strings.ToLower(c.name)]
		if !ok {
			return nil, notEmulatedError{name: c.name, extra: sc.hostNames()}
		}
		if i > 0 || p.head != nil {
			if sourceCmdlets[strings.ToLower(c.name)] {
				return nil, fmt.Errorf("%s: taking pipeline input is not emulated", c.name)
			}
		}
		out, err := fn(sc, in, c.args)
		if err != nil {
			return nil, fmt.Errorf("%s : %v", canonicalName(c.name), err)
		}
		in = out
	}
	return in, nil
}

// notEmulatedError is a command the emulation does not know.
type notEmulatedError struct {
	name  string
	extra []string // ExecWith's host cmdlets
}

func (e notEmulatedError) Error() string {
	return fmt.Sprintf("%s is not emulated. kubectl-hybrid emulates: %s", e.name, strings.Join(append(e.extra, emulatedList()...), ", "))
}

func notEmulated(name string) error { return notEmulatedError{name: name} }
