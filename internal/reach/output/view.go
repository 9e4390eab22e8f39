package output

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"

// View says which cells the writers print: every one, or (OnlyDenied)
// the denied ones — in the text matrix, the rows and columns holding a
// denied cell, with their other cells for context.
type View struct {
	OnlyDenied bool
}

func (v View) keep(e reach.Entry) bool {
	return !v.OnlyDenied || e.Verdict == reach.Denied.String()
}

// selection is the rows and columns the text matrix prints.
type selection struct {
	rows, cols []int
	all        bool
}

func (v View) selection(m *reach.Matrix) *selection {
	sel := &selection{all: !v.OnlyDenied}
	if sel.all {
		sel.rows = make([]int, len(m.Sources))
		for i := range sel.rows {
			sel.rows[i] = i
		}
		sel.cols = make([]int, len(m.Destinations))
		for j := range sel.cols {
			sel.cols[j] = j
		}
		return sel
	}
	colHas := make([]bool, len(m.Destinations))
	m.EachRow(func(i int, cells []reach.Cell) {
		row := false
		for j, c := range cells {
			if c.Verdict == reach.Denied {
				row, colHas[j] = true, true
			}
		}
		if row {
			sel.rows = append(sel.rows, i)
		}
	})
	for j, ok := range colHas {
		if ok {
			sel.cols = append(sel.cols, j)
		}
	}
	return sel
}

// eachRow visits the selected rows' cells (reach.Matrix.EachRow).
func (sel *selection) eachRow(m *reach.Matrix, visit func(i int, cells []reach.Cell)) {
	k := 0
	m.EachRow(func(i int, cells []reach.Cell) {
		if sel.all {
			visit(i, cells)
			return
		}
		if k < len(sel.rows) && sel.rows[k] == i {
			k++
			visit(i, cells)
		}
	})
}
