package picture

import "fmt"

// Heat map layout, in pixels.
const (
	maxLabel = 300 // widest row or column label
	cellMin  = 14
)

// drawHeat lays the matrix out: sources as rows, destinations as columns
// (labels turned), a coloured square per cell with its reason as tooltip,
// and a legend.
func drawHeat(h *Heat) *canvas {
	title := "Reachability matrix: sources (rows) × destinations (columns)"
	if h.Aggregated {
		title = "Reachability matrix per namespace: source namespaces (rows) × destination namespaces (columns)"
	}
	c := &canvas{ID: "reach", Title: title}
	cell := cellMin
	if len(h.Rows) <= 12 && len(h.Cols) <= 16 {
		cell = 22
	}
	rowW := 0
	for _, r := range h.Rows {
		rowW = max(rowW, textWidth(r, ""))
	}
	colH := 0
	for _, col := range h.Cols {
		colH = max(colH, textWidth(col, ""))
	}
	rowW, colH = min(rowW, maxLabel)+8, min(colH, maxLabel)*87/100+8 // sin 60°
	x0, y0 := margin+rowW, margin+40+colH
	head := c.add(&group{Class: "legend"})
	head.text(margin, margin+14, fmt.Sprintf("%d allowed, %d denied, %d partial, %d n/a cells", h.Allowed, h.Denied, h.Partial, h.NA), "big", 0)
	for j, col := range h.Cols {
		x := x0 + j*cell + cell/2 + 4
		head.rotated(x, y0-6, col, "", -60, maxLabel)
	}
	for i, r := range h.Rows {
		g := c.add(&group{Class: "heat-row", Kind: "source", Name: r})
		y := y0 + i*cell
		g.textAnchor(x0-6, y+cell/2+4, r, "", "end", maxLabel)
		for j := range h.Cols {
			hc := &h.Cells[i][j]
			cg := c.add(&group{Class: "cell", Title: hc.Why})
			cg.rect(x0+j*cell, y, cell-1, cell-1, hc.Class)
		}
	}
	y := y0 + len(h.Rows)*cell + 16
	legend := c.add(&group{Class: "legend", Kind: "legend"})
	x := margin
	items := []struct{ class, label string }{{"allowed", "allowed"}, {"denied", "denied"}, {"partial", "partial"}, {"na", "n/a"}}
	if h.Aggregated {
		// heatClass rounds a mixed square's share allowed to quarters.
		for k, share := range []string{"0", "25", "50", "75", "100"} {
			items = append(items, struct{ class, label string }{fmt.Sprintf("mix%d", k), "mixed, ≈" + share + "% allowed"})
		}
	}
	for _, it := range items {
		legend.rect(x, y, 12, 12, it.class)
		legend.text(x+16, y+10, it.label, "small", 0)
		x += 16 + textWidth(it.label, "small") + 14
	}
	y += 20
	for _, n := range h.Notes {
		legend.text(margin, y+10, n, "small", 0)
		y += lineH
	}
	c.W = max(x0+len(h.Cols)*cell+colH/2+margin, x+margin, 480)
	c.H = y + margin
	return c
}
