package powershell

import (
	"strings"
	"unicode/utf8"
)

// column is one Format-Table / Format-List column: a label and how to get
// the value from an object.
type column struct {
	label string
	value func(any) any
}

// propColumn is a column for a property name.
func propColumn(name string) column {
	return column{label: name, value: func(v any) any {
		r, _ := member(v, name)
		return r
	}}
}

// resolveLabels gives property columns the first object's spelling of the
// property name, as PSPropertyExpression.ResolveNames does.
func resolveLabels(cols []column, first any, plain []bool) {
	o, ok := first.(*psObj)
	if !ok {
		return
	}
	for i := range cols {
		if plain[i] {
			cols[i].label, _ = o.propName(cols[i].label)
		}
	}
}

// formatTable renders objects as Format-Table does in Windows PowerShell
// 5.1 when all rows fit the first batch it buffers: every column as wide as
// its widest cell or header, one space between columns, the header and its
// dashes as long as the label, numbers/booleans/enums right-aligned (by the
// first row's value), trailing spaces trimmed. The console is taken as wide
// enough (no truncation with "..."); a blank line comes before the table
// and after it, as the seed's transcripts show.
func formatTable(objs []any, cols []column) string {
	if len(objs) == 0 {
		return ""
	}
	cells := make([][]string, len(objs))
	widths := make([]int, len(cols))
	right := make([]bool, len(cols))
	for j, c := range cols {
		widths[j] = width(c.label)
		right[j] = rightAligned(c.value(objs[0]))
	}
	for i, o := range objs {
		cells[i] = make([]string, len(cols))
		for j, c := range cols {
			cells[i][j] = toStr(c.value(o))
			widths[j] = max(widths[j], width(cells[i][j]))
		}
	}
	var sb strings.Builder
	sb.WriteString("\n")
	row := func(vals []string) {
		var line strings.Builder
		for j, v := range vals {
			if j > 0 {
				line.WriteString(" ")
			}
			pad := strings.Repeat(" ", widths[j]-width(v))
			if right[j] {
				line.WriteString(pad + v)
			} else {
				line.WriteString(v + pad)
			}
		}
		sb.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	labels := make([]string, len(cols))
	dashes := make([]string, len(cols))
	for j, c := range cols {
		labels[j] = c.label
		dashes[j] = strings.Repeat("-", width(c.label))
	}
	row(labels)
	row(dashes)
	for _, r := range cells {
		row(r)
	}
	sb.WriteString("\n")
	return sb.String()
}

// formatList renders objects as Format-List: "Name : value" with names
// padded to the longest, a blank line before each object and one at the end.
func formatList(objs []any, cols func(any) []column) string {
	var sb strings.Builder
	for _, o := range objs {
		cs := cols(o)
		w := 0
		for _, c := range cs {
			w = max(w, width(c.label))
		}
		sb.WriteString("\n")
		for _, c := range cs {
			v := toStr(c.value(o))
			line := c.label + strings.Repeat(" ", w-width(c.label)) + " : " + v
			sb.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	if len(objs) > 0 {
		sb.WriteString("\n")
	}
	return sb.String()
}

// allColumns is every property of an object, in order.
func allColumns(v any) []column {
	o, ok := v.(*psObj)
	if !ok {
		return nil
	}
	cs := make([]column, len(o.props))
	for i, p := range o.props {
		cs[i] = propColumn(p.name)
	}
	return cs
}

// outDefault is what the console prints for objects left at the end of a
// pipeline: strings and numbers one per line; PSCustomObjects as a table
// when the first has at most 4 properties (PowerShell's rule for objects
// without a view) or GroupInfo's table view, as a list otherwise.
func outDefault(objs []any) string {
	var sb strings.Builder
	var batch []any
	flush := func() {
		if len(batch) == 0 {
			return
		}
		first := batch[0].(*psObj)
		switch {
		case first.typeName == typeGroupInfo:
			sb.WriteString(formatTable(batch, []column{propColumn("Count"), propColumn("Name"), propColumn("Group")}))
		case len(first.view) > 0:
			cols := make([]column, len(first.view))
			for i, v := range first.view {
				cols[i] = propColumn(v)
			}
			sb.WriteString(formatTable(batch, cols))
		case len(first.props) <= 4:
			sb.WriteString(formatTable(batch, allColumns(first)))
		default:
			sb.WriteString(formatList(batch, allColumns))
		}
		batch = nil
	}
	for _, o := range objs {
		if _, ok := o.(*psObj); ok {
			batch = append(batch, o)
			continue
		}
		flush()
		if f, ok := o.(formatted); ok {
			sb.WriteString(string(f))
			continue
		}
		sb.WriteString(scalarStr(o) + "\n")
	}
	flush()
	return sb.String()
}

// formatted is Format-* output: text the console prints as is.
type formatted string

func width(s string) int { return utf8.RuneCountInString(s) }
