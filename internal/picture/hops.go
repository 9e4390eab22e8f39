package picture

import (
	"fmt"
	"strings"
)

// Hop diagram layout, in pixels.
const (
	laneW   = 330
	laneGap = 16
	hopH    = 34
	hopGap  = 12
	legW    = 70
)

// drawTraces draws each trace as lanes (one per node, in the order the
// packet meets them) with its hops top to bottom and an arrow from each
// hop to the next; traces follow one another.
func drawTraces(ts []Trace) *canvas {
	c := &canvas{ID: "trace", Title: "Traces: each hop in the lane of the node it happens on"}
	y := margin
	width := 900
	for ti := range ts {
		width = max(width, 2*margin+legW+len(ts[ti].Lanes)*(laneW+laneGap))
	}
	for ti := range ts {
		y = drawTrace(c, &ts[ti], ti, y, width-2*margin)
	}
	c.W, c.H = width, y
	return c
}

// wrap breaks s into lines of at most width pixels at spaces (a word
// longer than a line is cut by fit).
func wrap(s string, width int, class string) []string {
	n := max(int(float64(width)/charWidth(class)), 8)
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= n:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

func drawTrace(c *canvas, t *Trace, ti, y, width int) int {
	head := c.add(&group{Class: "trace-head", Kind: "trace", Name: fmt.Sprintf("trace-%d", ti+1), Title: t.Title})
	verdict := t.Outcome
	if t.AtNode != "" && !t.Delivered {
		verdict += " at " + t.AtNode
	}
	for _, l := range wrap(fmt.Sprintf("%d. %s", ti+1, t.Title), width, "big") {
		head.text(margin, y+14, l, "big", width)
		y += 18
	}
	class := ""
	if !t.Delivered {
		class = "errText"
	}
	for _, l := range wrap(verdict+": "+t.Reason, width, class) {
		head.text(margin, y+12, l, class, width)
		y += lineH
	}
	if t.Fix != "" {
		for _, l := range wrap("fix: "+t.Fix, width, "small") {
			head.text(margin, y+10, l, "small", width)
			y += lineH
		}
	}
	y += 4
	x0 := margin + legW
	top := y + 4
	bottom := top + 24 + len(t.Hops)*(hopH+hopGap)
	for i, l := range t.Lanes {
		g := c.add(&group{Class: "lane", Kind: "lane", Name: l})
		x := x0 + i*(laneW+laneGap)
		g.rect(x, top, laneW, bottom-top, "lane")
		g.textAnchor(x+laneW/2, top+16, l, "head", "middle", laneW-8)
	}
	y = top + 24
	prevX, prevY := -1, -1
	leg := ""
	legs := c.add(&group{Class: "legs"})
	for i, h := range t.Hops {
		if h.Leg != leg {
			leg = h.Leg
			legs.line(margin, y-hopGap/2, x0+len(t.Lanes)*(laneW+laneGap), y-hopGap/2, "leg")
			legs.text(margin, y+12, leg, "small", legW-4)
		}
		x := x0 + h.Lane*(laneW+laneGap) + 8 + 8*min(h.Depth, 3)
		w := laneW - 16 - 8*min(h.Depth, 3)
		g := c.add(&group{Class: "hop", Kind: "hop", Name: fmt.Sprintf("%d", i+1), Title: hopTitle(&h)})
		if prevX >= 0 {
			g.arrow(prevX, prevY, x+w/2, y, "flow")
		}
		g.rect(x, y, w, hopH, "hop "+h.Verdict)
		g.text(x+6, y+13, fmt.Sprintf("%s: %s", h.Component, h.Action), "", w-12)
		second := h.Verdict
		if h.Reason != "" {
			second += " · " + h.Reason
		} else if h.After != "" {
			second += " · " + h.After
		}
		g.text(x+6, y+27, second, "small", w-12)
		prevX, prevY = x+w/2, y+hopH
		y += hopH + hopGap
	}
	return bottom + 24
}

func hopTitle(h *Hop) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s: %s (%s)\nbefore: %s", h.Leg, h.Component, h.Action, h.Verdict, h.Before)
	if h.After != "" {
		fmt.Fprintf(&b, "\nafter: %s", h.After)
	}
	if h.Reason != "" {
		fmt.Fprintf(&b, "\n%s", h.Reason)
	}
	return b.String()
}
