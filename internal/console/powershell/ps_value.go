package powershell

import (
	"fmt"
	"strconv"
	"strings"
)

// The PowerShell emulation works on the objects PowerShell would hold: the
// HNS module's cmdlets return PSCustomObjects made by ConvertFrom-Json from
// HNS's JSON, so a value is nil, a string, an int, a bool, an enum (a .NET
// enum such as the firewall rule's Direction), an ordered property bag
// (*psObj) or an array ([]any).

// psObj is a PSCustomObject: properties in order, looked up ignoring case.
type psObj struct {
	// typeName is the first type name PowerShell reports; it picks views
	// (GroupInfo has a default table view, others the 4-property rule).
	typeName string
	props    []psProp
	// view is the default table view's columns (nil: the 4-property rule).
	view []string
}

type psProp struct {
	name string
	val  any
}

// psEnum is a .NET enum value: formats as its name, aligns right like a
// number (its type code is numeric).
type psEnum string

func newObj(typeName string) *psObj { return &psObj{typeName: typeName} }

// set appends a property (or replaces one of the same name).
func (o *psObj) set(name string, v any) *psObj {
	for i := range o.props {
		if strings.EqualFold(o.props[i].name, name) {
			o.props[i].val = v
			return o
		}
	}
	o.props = append(o.props, psProp{name, v})
	return o
}

// get returns a property's value and whether the object has it.
func (o *psObj) get(name string) (any, bool) {
	for _, p := range o.props {
		if strings.EqualFold(p.name, name) {
			return p.val, true
		}
	}
	return nil, false
}

// propName is the object's own spelling of a property name.
func (o *psObj) propName(name string) (string, bool) {
	for _, p := range o.props {
		if strings.EqualFold(p.name, name) {
			return p.name, true
		}
	}
	return name, false
}

// member is PowerShell member access: a property of an object, or, on an
// array, member enumeration (each element's value, arrays flattened one
// level, missing values dropped); one result is returned as itself.
func member(v any, name string) (any, bool) {
	switch x := v.(type) {
	case *psObj:
		return x.get(name)
	case []any:
		var out []any
		found := false
		for _, e := range x {
			r, ok := member(e, name)
			if !ok || r == nil {
				continue
			}
			found = true
			if arr, ok := r.([]any); ok {
				out = append(out, arr...)
			} else {
				out = append(out, r)
			}
		}
		return unwrap(out), found
	case string:
		if strings.EqualFold(name, "Length") {
			return len(x), true
		}
	}
	return nil, false
}

// unwrap is how a pipeline's output becomes a value: nothing is $null, one
// item is the item, more is an array.
func unwrap(items []any) any {
	switch len(items) {
	case 0:
		return nil
	case 1:
		return items[0]
	}
	return items
}

// enumerate is how a value enters a pipeline: arrays are unrolled.
func enumerate(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

// toStr is a value's string form inside a table or list cell: arrays as
// {a, b} up to the enumeration limit of 4, objects as @{k=v; …}.
func toStr(v any) string {
	if arr, ok := v.([]any); ok {
		parts := make([]string, 0, 4)
		for i, e := range arr {
			if i == 4 {
				return "{" + strings.Join(parts, ", ") + "...}"
			}
			parts = append(parts, scalarStr(e))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return scalarStr(v)
}

// scalarStr is .NET ToString: arrays are System.Object[]; a PSCustomObject
// is @{k=v; k2=v2} with nested values by the same rule ("" when empty).
func scalarStr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case psEnum:
		return string(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		return "System.Object[]"
	case *psObj:
		if len(x.props) == 0 {
			return ""
		}
		parts := make([]string, len(x.props))
		for i, p := range x.props {
			parts[i] = p.name + "=" + scalarStr(p.val)
		}
		return "@{" + strings.Join(parts, "; ") + "}"
	}
	return fmt.Sprint(v)
}

// isTrue is LanguagePrimitives.IsTrue.
func isTrue(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case float64:
		return x != 0
	case []any:
		switch len(x) {
		case 0:
			return false
		case 1:
			return isTrue(x[0])
		}
		return true
	}
	return true
}

// rightAligned is TableViewGenerator.ComputeDefaultAlignment: a column
// aligns right when the first row's value is a scalar non-string type
// (numbers, booleans, enums), left otherwise.
func rightAligned(v any) bool {
	switch v.(type) {
	case int, float64, bool, psEnum:
		return true
	}
	return false
}

// compareValues is Sort-Object's comparison of two present values:
// numbers as numbers, booleans False before True, anything else as strings
// ignoring case (the culture compare on the values' strings; for the
// addresses, names and MACs here ordinal order is the same).
func compareValues(a, b any) int {
	if a == nil && b == nil {
		return 0
	}
	if fa, ok := number(a); ok {
		if fb, ok := number(b); ok {
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return 0
		}
	}
	if ba, ok := a.(bool); ok {
		if bb, ok := b.(bool); ok {
			switch {
			case ba == bb:
				return 0
			case !ba:
				return -1
			}
			return 1
		}
	}
	return strings.Compare(strings.ToLower(scalarStr(a)), strings.ToLower(scalarStr(b)))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
