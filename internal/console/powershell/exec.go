// Package powershell answers what people type on a Windows node: the HNS
// module's cmdlets with the pipeline cmdlets of Windows PowerShell 5.1, and
// hnsdiag and vfpctrl, read from a node's compiled HNS and VFP state
// (internal/dataplane/windows). Every answer is simulated.
package powershell

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// node is a Windows node's compiled HNS state as the PowerShell emulation
// reads it.
type node struct{ *windows.Node }

// Exec runs a command on the node's emulated PowerShell and returns what
// the console shows: stdout, stderr and the exit code. argv is joined with
// spaces and read as one PowerShell command line (so both
// ["Get-HnsEndpoint", "|", "Format-Table", "IPAddress"] and a single
// string work); several statements may be separated by ';' or new lines,
// and variables live until the call returns.
//
// Emulated: the HNS module's Get-HnsNetwork, Get-HnsEndpoint,
// Get-HnsNamespace and Get-HnsPolicyList, Get-NetAdapter, Get-NetFirewallRule,
// the pipeline cmdlets Where-Object, Select-Object, Sort-Object,
// Group-Object, Format-Table, Format-List and ConvertTo-Json, and the native
// hnsdiag list … and vfpctrl /list-vmswitch-port, /list-layer, /list-group,
// /list-rule. Anything else prints a "not emulated" error listing these and
// exits 1; PowerShell errors (bad parameters, parse errors) exit 1 as well.
func Exec(wn *windows.Node, argv []string) (stdout, stderr string, exit int) {
	return exec(wn, nil, argv)
}

func exec(wn *windows.Node, hosts map[string]HostCmdlet, argv []string) (stdout, stderr string, exit int) {
	n := node{wn}
	text := strings.TrimSpace(strings.Join(argv, " "))
	if text == "" {
		return "", "", 0
	}
	if name, args, ok := nativeCommand(text); ok {
		return n.native(name, args)
	}
	stmts, err := parseScript(text)
	if err != nil {
		return "", psError(err), 1
	}
	sc := &scope{node: n, vars: map[string]any{}, hosts: hosts}
	var out strings.Builder
	for _, st := range stmts {
		if c := firstNative(st); c != "" {
			return out.String(), fmt.Sprintf("%s is emulated only on its own, not in a pipeline or with other statements\n", c), 1
		}
		objs, err := sc.run(st.pipe)
		if err != nil {
			return out.String(), psError(err), 1
		}
		if st.assign != "" {
			sc.vars[strings.ToLower(st.assign)] = unwrap(objs)
			continue
		}
		out.WriteString(outDefault(objs))
	}
	return out.String(), strings.Join(sc.notes, ""), 0
}

func psError(err error) string {
	return err.Error() + "\n"
}

// firstNative reports a native command used inside a pipeline.
func firstNative(st stmt) string {
	for _, c := range st.pipe.cmds {
		if isNative(c.name) != "" {
			return c.name
		}
	}
	return ""
}

func isNative(name string) string {
	switch strings.TrimSuffix(strings.ToLower(name), ".exe") {
	case "hnsdiag":
		return "hnsdiag"
	case "vfpctrl":
		return "vfpctrl"
	}
	return ""
}

// nativeCommand recognizes a lone hnsdiag or vfpctrl invocation.
func nativeCommand(text string) (string, []string, bool) {
	text = promptRE.ReplaceAllString(text, "")
	if strings.ContainsAny(text, "|;\n") {
		return "", nil, false
	}
	f := strings.Fields(text)
	if len(f) == 0 {
		return "", nil, false
	}
	if n := isNative(f[0]); n != "" {
		return n, f[1:], true
	}
	return "", nil, false
}

type cmdFunc func(sc *scope, in []any, args []argNode) ([]any, error)

// cmdlets by lower-case name and alias.
var cmdlets map[string]cmdFunc

// sourceCmdlets produce objects and take no pipeline input.
var sourceCmdlets = map[string]bool{
	"get-hnsnetwork": true, "get-hnsendpoint": true, "get-hnsnamespace": true,
	"get-hnspolicylist": true, "get-netadapter": true, "get-netfirewallrule": true,
}

var canonical = map[string]string{}

func init() {
	src := func(get func(node) []any) cmdFunc {
		return func(sc *scope, _ []any, args []argNode) ([]any, error) {
			if len(args) > 0 {
				return nil, unknownParam(args[0])
			}
			return get(sc.node), nil
		}
	}
	type entry struct {
		name    string
		aliases []string
		fn      cmdFunc
	}
	entries := []entry{
		{"Get-HnsNetwork", nil, src(node.networkObjs)},
		{"Get-HnsEndpoint", nil, src(node.endpointObjs)},
		{"Get-HnsNamespace", nil, src(node.namespaceObjs)},
		{"Get-HnsPolicyList", nil, src(node.policyListObjs)},
		{"Get-NetAdapter", nil, getNetAdapter},
		{"Get-NetFirewallRule", nil, getNetFirewallRule},
		{"Where-Object", []string{"where", "?"}, whereObject},
		{"Select-Object", []string{"select"}, selectObject},
		{"Sort-Object", []string{"sort"}, sortObject},
		{"Group-Object", []string{"group"}, groupObject},
		{"Format-Table", []string{"ft"}, formatTableCmd},
		{"Format-List", []string{"fl"}, formatListCmd},
		{"ConvertTo-Json", nil, convertToJSONCmd},
	}
	cmdlets = map[string]cmdFunc{}
	for _, e := range entries {
		for _, n := range append([]string{e.name}, e.aliases...) {
			cmdlets[strings.ToLower(n)] = e.fn
			canonical[strings.ToLower(n)] = e.name
		}
	}
}

// emulatedList names what Exec emulates, for the "not emulated" error.
func emulatedList() []string {
	return []string{
		"Get-HnsNetwork", "Get-HnsEndpoint", "Get-HnsNamespace", "Get-HnsPolicyList",
		"Get-NetAdapter [-Name]", "Get-NetFirewallRule [-Name|-DisplayName]",
		"Where-Object (?, where)", "Select-Object (select)", "Sort-Object (sort)", "Group-Object (group)",
		"Format-Table (ft)", "Format-List (fl)", "ConvertTo-Json [-Depth N] [-Compress]",
		"hnsdiag list all|networks|endpoints|namespaces|loadbalancers",
		"vfpctrl /list-vmswitch-port | /port P /list-layer | /port P /layer L /list-group | /port P /layer L [/group G] /list-rule",
	}
}

func unknownParam(a argNode) error {
	if a.param != "" {
		return fmt.Errorf("A parameter cannot be found that matches parameter name '%s'.", strings.TrimPrefix(a.param, "-"))
	}
	return fmt.Errorf("A positional parameter cannot be found that accepts argument '%s'.", describeVal(a.val))
}

func describeVal(v *valNode) string {
	if v == nil {
		return ""
	}
	return v.s
}

// params splits arguments into named parameters (lower-case, without the
// dash; a switch maps to nil) and positional values. valued names take a
// value, switches do not; PowerShell lets any unambiguous prefix stand for
// a parameter name.
func params(args []argNode, valued []string, switches ...string) (map[string]*valNode, []*valNode, error) {
	named := map[string]*valNode{}
	var pos []*valNode
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.param == "" {
			pos = append(pos, a.val)
			continue
		}
		given := strings.TrimPrefix(a.param, "-")
		name, isSwitch, err := resolveParam(given, valued, switches)
		if err != nil {
			return nil, nil, err
		}
		if isSwitch {
			named[name] = nil
			continue
		}
		if i+1 >= len(args) || args[i+1].param != "" {
			return nil, nil, fmt.Errorf("Missing an argument for parameter '%s'. Specify a parameter of type 'System.Object' and try again.", given)
		}
		named[name] = args[i+1].val
		i++
	}
	return named, pos, nil
}

func resolveParam(given string, valued, switches []string) (string, bool, error) {
	g := strings.ToLower(given)
	var hits []string
	isSwitch := map[string]bool{}
	for _, s := range switches {
		isSwitch[s] = true
	}
	for _, n := range append(append([]string{}, valued...), switches...) {
		if n == g {
			return n, isSwitch[n], nil
		}
		if strings.HasPrefix(n, g) {
			hits = append(hits, n)
		}
	}
	if len(hits) == 1 {
		return hits[0], isSwitch[hits[0]], nil
	}
	if len(hits) > 1 {
		return "", false, fmt.Errorf("Parameter cannot be processed because the parameter name '%s' is ambiguous. Possible matches include: -%s.", given, strings.Join(hits, " -"))
	}
	return "", false, fmt.Errorf("A parameter cannot be found that matches parameter name '%s'.", given)
}

func getNetAdapter(sc *scope, _ []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"name"})
	if err != nil {
		return nil, err
	}
	pattern := ""
	if v, ok := named["name"]; ok {
		pattern = v.s
		delete(named, "name")
	} else if len(pos) > 0 {
		pattern, pos = pos[0].s, pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	objs := sc.node.adapterObjs()
	if pattern == "" {
		return objs, nil
	}
	return filterByName(objs, "Name", pattern, "No MSFT_NetAdapter objects found with property 'Name' equal to '%s'.  Verify the value of the property and retry.")
}

func getNetFirewallRule(sc *scope, _ []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"name", "displayname"})
	if err != nil {
		return nil, err
	}
	objs := sc.node.firewallObjs()
	prop, pattern := "", ""
	switch {
	case named["name"] != nil:
		prop, pattern = "Name", named["name"].s
		delete(named, "name")
	case named["displayname"] != nil:
		prop, pattern = "DisplayName", named["displayname"].s
		delete(named, "displayname")
	case len(pos) > 0:
		prop, pattern, pos = "Name", pos[0].s, pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	if prop == "" {
		sc.notes = append(sc.notes, "kubectl-hybrid: only the firewall rules the twin models are listed (Windows has hundreds more)\n")
		return objs, nil
	}
	return filterByName(objs, prop, pattern, "No MSFT_NetFirewallRule objects found with property '"+prop+"' equal to '%s'.  Verify the value of the property and retry.")
}

func rejectRest(named map[string]*valNode, pos []*valNode) error {
	for k := range named {
		return fmt.Errorf("A parameter cannot be found that matches parameter name '%s'.", k)
	}
	if len(pos) > 0 {
		return fmt.Errorf("A positional parameter cannot be found that accepts argument '%s'.", pos[0].s)
	}
	return nil
}

func filterByName(objs []any, prop, pattern, notFound string) ([]any, error) {
	re, err := wildcardRE(pattern)
	if err != nil {
		return nil, err
	}
	var out []any
	for _, o := range objs {
		v, _ := member(o, prop)
		if re.MatchString(scalarStr(v)) {
			out = append(out, o)
		}
	}
	if len(out) == 0 && !strings.ContainsAny(pattern, "*?[") {
		return nil, fmt.Errorf(notFound, pattern)
	}
	return out, nil
}

// whereObject filters with a script block or the simplified
// "Where-Object Property -op Value" syntax.
func whereObject(sc *scope, in []any, args []argNode) ([]any, error) {
	var test func(any) (bool, error)
	switch {
	case len(args) == 1 && args[0].val != nil && args[0].val.kind == vBlock:
		block := args[0].val.expr
		test = func(o any) (bool, error) {
			saved := sc.item
			sc.item = o
			v, err := block.eval(sc)
			sc.item = saved
			return isTrue(v), err
		}
	case len(args) >= 1 && args[0].val != nil:
		prop := args[0].val.s
		if len(args) == 1 {
			test = func(o any) (bool, error) {
				v, _ := member(o, prop)
				return isTrue(v), nil
			}
			break
		}
		if len(args) != 3 || args[1].param == "" || args[2].val == nil {
			return nil, fmt.Errorf("Where-Object: only 'Where-Object Property -op Value' and 'Where-Object { … }' are emulated")
		}
		op, ok := cmpOp(args[1].param)
		if !ok {
			return nil, fmt.Errorf("A parameter cannot be found that matches parameter name '%s'.", strings.TrimPrefix(args[1].param, "-"))
		}
		rhs, err := sc.value(args[2].val)
		if err != nil {
			return nil, err
		}
		test = func(o any) (bool, error) {
			v, _ := member(o, prop)
			r, err := compareOp(op, v, rhs)
			return isTrue(r), err
		}
	default:
		return nil, fmt.Errorf("Where-Object: a script block or 'Property -op Value' is required")
	}
	var out []any
	for _, o := range in {
		ok, err := test(o)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// property is one -Property item: a name or a calculated property.
type property struct {
	name  string
	expr  exprNode
	desc  *bool
	plain bool
}

func (sc *scope) properties(v *valNode) ([]property, error) {
	if v == nil {
		return nil, nil
	}
	items := []*valNode{v}
	if v.kind == vArray {
		items = v.items
	}
	var out []property
	for _, it := range items {
		switch it.kind {
		case vBare, vStr:
			out = append(out, property{name: it.s, plain: true})
		case vHash:
			var p property
			for _, e := range it.hash {
				switch e.key {
				case "n", "name", "l", "label":
					p.name = e.val.s
				case "e", "expression":
					if e.val.kind == vBlock {
						p.expr = e.val.expr
					} else {
						p.name, p.plain = e.val.s, true
					}
				case "descending", "ascending":
					b := strings.EqualFold(e.val.s, "$true") || e.val.s == "1"
					if e.key == "ascending" {
						b = !b
					}
					p.desc = &b
				default:
					return nil, fmt.Errorf("The %s key is not valid.", e.key)
				}
			}
			if p.name == "" && p.expr == nil {
				return nil, fmt.Errorf("The Expression key is missing.")
			}
			out = append(out, p)
		case vBlock:
			out = append(out, property{expr: it.expr})
		default:
			return nil, fmt.Errorf("Cannot convert the value to a property name")
		}
	}
	return out, nil
}

// valueOf evaluates a property for an object.
func (sc *scope) valueOf(p property, o any) (any, bool, error) {
	if p.expr == nil {
		v, ok := member(o, p.name)
		return v, ok, nil
	}
	saved := sc.item
	sc.item = o
	v, err := p.expr.eval(sc)
	sc.item = saved
	return v, true, err
}

func (p property) label() string {
	if p.name != "" {
		return p.name
	}
	return "$_"
}

func selectObject(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"property", "expandproperty", "first", "last"})
	if err != nil {
		return nil, err
	}
	var propVal *valNode
	if v, ok := named["property"]; ok {
		propVal = v
		delete(named, "property")
	} else if len(pos) > 0 {
		propVal, pos = pos[0], pos[1:]
	}
	expand := ""
	if v, ok := named["expandproperty"]; ok {
		expand = v.s
		delete(named, "expandproperty")
	}
	first, last := -1, -1
	for _, k := range []string{"first", "last"} {
		if v, ok := named[k]; ok {
			n, err := strconv.Atoi(v.s)
			if err != nil {
				return nil, fmt.Errorf("Cannot bind parameter '%s'. Cannot convert value \"%s\" to type \"System.Int32\".", k, v.s)
			}
			if k == "first" {
				first = n
			} else {
				last = n
			}
			delete(named, k)
		}
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	props, err := sc.properties(propVal)
	if err != nil {
		return nil, err
	}
	objs := in
	if first >= 0 && first < len(objs) {
		objs = objs[:first]
	}
	if last >= 0 && last < len(objs) {
		objs = objs[len(objs)-last:]
	}
	var out []any
	for _, o := range objs {
		if expand != "" {
			v, ok := member(o, expand)
			if !ok {
				return nil, fmt.Errorf("Property \"%s\" cannot be found.", expand)
			}
			out = append(out, enumerate(v)...)
			continue
		}
		if len(props) == 0 {
			out = append(out, o)
			continue
		}
		n := newObj("Selected." + typePSCustomObject)
		for _, p := range props {
			v, _, err := sc.valueOf(p, o)
			if err != nil {
				return nil, err
			}
			name := p.label()
			if p.plain {
				if src, ok := o.(*psObj); ok {
					name, _ = src.propName(p.name)
				}
			}
			n.set(name, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// sortObject is a stable sort by the given properties; an object without a
// property sorts after those with it whatever the direction
// (ObjectCommandComparer).
func sortObject(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"property"}, "descending", "casesensitive")
	if err != nil {
		return nil, err
	}
	_, desc := named["descending"]
	delete(named, "descending")
	delete(named, "casesensitive")
	var propVal *valNode
	if v, ok := named["property"]; ok {
		propVal = v
		delete(named, "property")
	} else if len(pos) > 0 {
		propVal, pos = pos[0], pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	props, err := sc.properties(propVal)
	if err != nil {
		return nil, err
	}
	type keyed struct {
		o       any
		vals    []any
		present []bool
	}
	rows := make([]keyed, len(in))
	for i, o := range in {
		rows[i].o = o
		if len(props) == 0 {
			rows[i].vals, rows[i].present = []any{o}, []bool{true}
			continue
		}
		for _, p := range props {
			v, ok, err := sc.valueOf(p, o)
			if err != nil {
				return nil, err
			}
			rows[i].vals = append(rows[i].vals, v)
			rows[i].present = append(rows[i].present, ok)
		}
	}
	sort.SliceStable(rows, func(a, b int) bool {
		ra, rb := rows[a], rows[b]
		for k := range ra.vals {
			pa, pb := ra.present[k], rb.present[k]
			switch {
			case pa && !pb:
				return true
			case !pa && pb:
				return false
			case !pa && !pb:
				continue
			}
			c := compareValues(ra.vals[k], rb.vals[k])
			d := desc
			if k < len(props) && props[k].desc != nil {
				d = *props[k].desc
			}
			if d {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.o
	}
	return out, nil
}

// groupObject groups by the string of a property, groups in order of first
// appearance, as GroupInfo objects (Count, Name, Group).
func groupObject(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"property"}, "noelement")
	if err != nil {
		return nil, err
	}
	_, noElement := named["noelement"]
	delete(named, "noelement")
	var propVal *valNode
	if v, ok := named["property"]; ok {
		propVal = v
		delete(named, "property")
	} else if len(pos) > 0 {
		propVal, pos = pos[0], pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	props, err := sc.properties(propVal)
	if err != nil {
		return nil, err
	}
	var order []string
	groups := map[string]*psObj{}
	for _, o := range in {
		var keys []string
		for _, p := range props {
			v, _, err := sc.valueOf(p, o)
			if err != nil {
				return nil, err
			}
			keys = append(keys, scalarStr(v))
		}
		name := strings.Join(keys, ", ")
		k := strings.ToLower(name)
		g, ok := groups[k]
		if !ok {
			g = newObj(typeGroupInfo).set("Count", 0).set("Name", name).set("Group", []any{})
			groups[k] = g
			order = append(order, k)
		}
		cnt, _ := g.get("Count")
		g.set("Count", cnt.(int)+1)
		grp, _ := g.get("Group")
		g.set("Group", append(grp.([]any), o))
	}
	out := make([]any, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if noElement {
			g.props = g.props[:2]
		}
		out = append(out, g)
	}
	return out, nil
}

func (sc *scope) columns(propVal *valNode, first any) ([]column, error) {
	props, err := sc.properties(propVal)
	if err != nil {
		return nil, err
	}
	var cols []column
	var plain []bool
	for _, p := range props {
		if p.plain && p.name == "*" {
			all := allColumns(first)
			cols = append(cols, all...)
			for range all {
				plain = append(plain, false)
			}
			continue
		}
		p := p
		cols = append(cols, column{label: p.label(), value: func(o any) any {
			v, _, _ := sc.valueOf(p, o)
			return v
		}})
		plain = append(plain, p.plain)
	}
	resolveLabels(cols, first, plain)
	return cols, nil
}

func formatTableCmd(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"property"}, "autosize", "wrap", "hidetableheaders")
	if err != nil {
		return nil, err
	}
	delete(named, "autosize")
	delete(named, "wrap")
	_, hide := named["hidetableheaders"]
	delete(named, "hidetableheaders")
	var propVal *valNode
	if v, ok := named["property"]; ok {
		propVal = v
		delete(named, "property")
	} else if len(pos) > 0 {
		propVal, pos = pos[0], pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, nil
	}
	var cols []column
	if propVal == nil {
		if o, ok := in[0].(*psObj); ok && o.typeName == typeGroupInfo {
			cols = []column{propColumn("Count"), propColumn("Name"), propColumn("Group")}
		} else {
			cols = allColumns(in[0])
			if len(cols) > 10 {
				cols = cols[:10]
			}
		}
	} else if cols, err = sc.columns(propVal, in[0]); err != nil {
		return nil, err
	}
	t := formatTable(in, cols)
	if hide {
		lines := strings.SplitN(t, "\n", 4)
		t = "\n" + lines[3]
	}
	return []any{formatted(t)}, nil
}

func formatListCmd(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"property"})
	if err != nil {
		return nil, err
	}
	var propVal *valNode
	if v, ok := named["property"]; ok {
		propVal = v
		delete(named, "property")
	} else if len(pos) > 0 {
		propVal, pos = pos[0], pos[1:]
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	var cerr error
	t := formatList(in, func(o any) []column {
		if propVal == nil {
			return allColumns(o)
		}
		cols, err := sc.columns(propVal, o)
		if err != nil {
			cerr = err
		}
		return cols
	})
	if cerr != nil {
		return nil, cerr
	}
	return []any{formatted(t)}, nil
}

func convertToJSONCmd(sc *scope, in []any, args []argNode) ([]any, error) {
	named, pos, err := params(args, []string{"depth"}, "compress")
	if err != nil {
		return nil, err
	}
	_, compress := named["compress"]
	delete(named, "compress")
	depth := 2
	if v, ok := named["depth"]; ok {
		n, err := strconv.Atoi(v.s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("Cannot validate argument on parameter 'Depth'. The argument %q is not valid.", v.s)
		}
		depth = n
		delete(named, "depth")
	}
	if err := rejectRest(named, pos); err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, nil
	}
	var v any = in
	if len(in) == 1 {
		v = in[0]
	}
	return []any{convertToJSON(v, depth, compress)}, nil
}
