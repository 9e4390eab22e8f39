package powershell

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// HostCmdlet is a source cmdlet answered from outside the node's HNS state
// (internal/console/hosttools answers Get-Service, Get-Process, … from the
// host model). The pipeline cmdlets (Where-Object, Format-Table, …) work
// on its objects as on the HNS module's.
type HostCmdlet struct {
	Name string
	// Params are the parameters that take values, lower-case; positional
	// values go to the first.
	Params []string
	// Switches are the parameters that take none.
	Switches []string
	// Run gets each given parameter's values (a switch: present, empty)
	// and returns the objects, and a note for stderr ("" for none).
	Run func(args map[string][]string) ([]*Object, string, error)
}

// Object is a property bag a HostCmdlet returns.
type Object struct{ o *psObj }

// Enum is a .NET enum value (formats as its name, aligns right).
type Enum string

// NewObject makes an object of a .NET type. view, when given, is the
// columns its default table view shows (Get-Service: Status, Name,
// DisplayName); without one the 4-property rule applies.
func NewObject(typeName string, view ...string) *Object {
	o := newObj(typeName)
	o.view = view
	return &Object{o}
}

// Set adds a property: a string, an int, a bool, an Enum, an *Object or a
// slice of strings.
func (o *Object) Set(name string, v any) *Object {
	switch x := v.(type) {
	case Enum:
		v = psEnum(x)
	case *Object:
		v = x.o
	case []string:
		arr := make([]any, len(x))
		for i, s := range x {
			arr[i] = s
		}
		v = arr
	}
	o.o.set(name, v)
	return o
}

// ExecWith is Exec with more source cmdlets.
func ExecWith(wn *windows.Node, extra []HostCmdlet, argv []string) (stdout, stderr string, exit int) {
	hosts := map[string]HostCmdlet{}
	for _, h := range extra {
		hosts[strings.ToLower(h.Name)] = h
	}
	return exec(wn, hosts, argv)
}

// hostNames are the host cmdlets' names, sorted.
func (sc *scope) hostNames() []string {
	var out []string
	for _, h := range sc.hosts {
		out = append(out, h.Name)
	}
	sort.Strings(out)
	return out
}

// runHost runs a host cmdlet at the head of a pipeline.
func (sc *scope) runHost(h HostCmdlet, args []argNode) ([]any, error) {
	named, pos, err := params(args, h.Params, h.Switches...)
	if err != nil {
		return nil, err
	}
	in := map[string][]string{}
	for k, v := range named {
		in[k] = nil
		if v != nil {
			vals, err := sc.strings(v)
			if err != nil {
				return nil, err
			}
			in[k] = vals
		}
	}
	for _, p := range pos {
		if len(h.Params) == 0 {
			return nil, fmt.Errorf("A positional parameter cannot be found that accepts argument '%s'.", p.s)
		}
		vals, err := sc.strings(p)
		if err != nil {
			return nil, err
		}
		in[h.Params[0]] = append(in[h.Params[0]], vals...)
	}
	objs, note, err := h.Run(in)
	if err != nil {
		return nil, err
	}
	if note != "" {
		sc.notes = append(sc.notes, note)
	}
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o.o
	}
	return out, nil
}

// strings evaluates an argument to its items as strings.
func (sc *scope) strings(v *valNode) ([]string, error) {
	val, err := sc.value(v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range enumerate(val) {
		out = append(out, scalarStr(e))
	}
	return out, nil
}
