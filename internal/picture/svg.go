package picture

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"unicode/utf8"
)

// View names one picture.
type View string

// The pictures.
const (
	ViewTopology View = "topology"
	ViewReach    View = "reach"
	ViewTrace    View = "trace"
)

// Views are the pictures SVG and DOT draw, in the order of the page.
var Views = []View{ViewTopology, ViewReach, ViewTrace}

// canvas is one SVG picture laid out: groups of shapes in user units
// (pixels at zoom 1). Nothing in it is markup: the template escapes every
// string.
type canvas struct {
	W, H  int
	Title string
	// ID names the picture in the page (data-picture).
	ID         string
	Standalone bool
	Groups     []*group
}

// group is a <g>: Kind and Name become data-kind and data-name, so that a
// reader (or a test) finds a node, a finding or a cell by name; Title is
// its tooltip.
type group struct {
	Class, Kind, Name, Title string
	Shapes                   []shape
}

// shape is a rect, line, text or polygon.
type shape struct {
	Kind                string
	X, Y, W, H, X2, Y2  int
	Class, Text, Anchor string
	// Rotate turns text about its anchor point (degrees).
	Rotate int
	Points string
}

func (c *canvas) add(g *group) *group {
	c.Groups = append(c.Groups, g)
	return g
}

func (g *group) rect(x, y, w, h int, class string) {
	g.Shapes = append(g.Shapes, shape{Kind: "rect", X: x, Y: y, W: w, H: h, Class: class})
}

func (g *group) line(x, y, x2, y2 int, class string) {
	g.Shapes = append(g.Shapes, shape{Kind: "line", X: x, Y: y, X2: x2, Y2: y2, Class: class})
}

// text writes s at (x, y), cut to fit width pixels (0: no limit).
func (g *group) text(x, y int, s, class string, width int) {
	g.Shapes = append(g.Shapes, shape{Kind: "text", X: x, Y: y, Text: fit(s, width, class), Class: class, Anchor: "start"})
}

func (g *group) textAnchor(x, y int, s, class, anchor string, width int) {
	g.Shapes = append(g.Shapes, shape{Kind: "text", X: x, Y: y, Text: fit(s, width, class), Class: class, Anchor: anchor})
}

func (g *group) rotated(x, y int, s, class string, deg, width int) {
	g.Shapes = append(g.Shapes, shape{Kind: "text", X: x, Y: y, Text: fit(s, width, class), Class: class, Anchor: "start", Rotate: deg})
}

// arrow is a line from (x, y) to (x2, y2) with a head at its end.
func (g *group) arrow(x, y, x2, y2 int, class string) {
	g.line(x, y, x2, y2, class)
	dx, dy := float64(x2-x), float64(y2-y)
	l := sqrt(dx*dx + dy*dy)
	if l == 0 {
		return
	}
	ux, uy := dx/l, dy/l
	const size = 7.0
	bx, by := float64(x2)-ux*size, float64(y2)-uy*size
	p1x, p1y := bx-uy*size/2, by+ux*size/2
	p2x, p2y := bx+uy*size/2, by-ux*size/2
	g.Shapes = append(g.Shapes, shape{Kind: "polygon", Class: class + " head",
		Points: fmt.Sprintf("%d,%d %.0f,%.0f %.0f,%.0f", x2, y2, p1x, p1y, p2x, p2y)})
}

func sqrt(v float64) float64 {
	// Newton's method is enough for arrow lengths and keeps output
	// identical on every platform.
	if v <= 0 {
		return 0
	}
	x := v
	for range 30 {
		x = (x + v/x) / 2
	}
	return x
}

// charWidth is the advance of one character of the pictures' monospace
// font at the size a class gives, in pixels.
func charWidth(class string) float64 {
	switch {
	case strings.Contains(class, "big"):
		return 8.4
	case strings.Contains(class, "small"):
		return 6
	}
	return 6.6
}

// fit cuts s to width pixels, ending it with "…" when cut.
func fit(s string, width int, class string) string {
	if width <= 0 {
		return s
	}
	n := int(float64(width) / charWidth(class))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 2 {
		return "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func textWidth(s, class string) int {
	return int(float64(utf8.RuneCountInString(s))*charWidth(class)) + 1
}

// style is the pictures' look, inline in the page and in a standalone SVG:
// system monospace fonts only, nothing fetched.
const style = `
svg.pic { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 11px; background: #fff; }
svg.pic text { fill: #1b1f24; white-space: pre; }
svg.pic text.big { font-size: 14px; font-weight: bold; }
svg.pic text.small { font-size: 10px; fill: #57606a; }
svg.pic text.head { font-weight: bold; }
svg.pic text.warnText { fill: #9a6700; }
svg.pic text.errText { fill: #cf222e; }
svg.pic rect.node { fill: #f6f8fa; stroke: #57606a; stroke-width: 1; }
svg.pic rect.node.linux { fill: #eef6ee; stroke: #2da44e; }
svg.pic rect.node.windows { fill: #eef4fc; stroke: #0969da; }
svg.pic rect.os { fill: none; stroke: #d0d7de; stroke-dasharray: 4 3; }
svg.pic rect.badge { fill: #cf222e; }
svg.pic text.badge { fill: #fff; font-weight: bold; }
svg.pic line.mesh, svg.pic polygon.mesh { stroke: #8250df; stroke-width: 2; fill: #8250df; }
svg.pic line.tap { stroke: #8250df; stroke-width: 1.5; }
svg.pic rect.vtep { fill: #8250df; }
svg.pic rect.svc { fill: #fff8c5; stroke: #9a6700; }
svg.pic rect.allowed { fill: #2da44e; }
svg.pic rect.denied { fill: #cf222e; }
svg.pic rect.partial { fill: #bf8700; }
svg.pic rect.na { fill: #eaeef2; }
svg.pic rect.mix0 { fill: #e5534b; }
svg.pic rect.mix1 { fill: #f0883e; }
svg.pic rect.mix2 { fill: #d4a72c; }
svg.pic rect.mix3 { fill: #8ddb8c; }
svg.pic rect.mix4 { fill: #57ab5a; }
svg.pic rect.lane { fill: #f6f8fa; stroke: #d0d7de; }
svg.pic rect.hop { fill: #fff; stroke: #57606a; }
svg.pic rect.hop.pass, svg.pic rect.hop.info { stroke: #57606a; }
svg.pic rect.hop.deliver { fill: #dafbe1; stroke: #2da44e; }
svg.pic rect.hop.drop, svg.pic rect.hop.reject { fill: #ffebe9; stroke: #cf222e; stroke-width: 2; }
svg.pic rect.hop.warn { fill: #fff8c5; stroke: #9a6700; }
svg.pic line.flow, svg.pic polygon.flow { stroke: #57606a; fill: #57606a; stroke-width: 1.2; }
svg.pic line.leg { stroke: #d0d7de; stroke-dasharray: 2 2; }
`

var svgTemplate = template.Must(template.New("svg").Parse(`{{define "svg"}}<svg xmlns="http://www.w3.org/2000/svg" class="pic" data-picture="{{.ID}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
<title>{{.Title}}</title>
{{- if .Standalone}}
<style>{{template "style"}}</style>
{{- end}}
{{- range .Groups}}
<g{{if .Class}} class="{{.Class}}"{{end}}{{if .Kind}} data-kind="{{.Kind}}"{{end}}{{if .Name}} data-name="{{.Name}}"{{end}}>
{{- if .Title}}<title>{{.Title}}</title>{{end}}
{{- range .Shapes}}
{{- if eq .Kind "rect"}}
<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" class="{{.Class}}"/>
{{- else if eq .Kind "line"}}
<line x1="{{.X}}" y1="{{.Y}}" x2="{{.X2}}" y2="{{.Y2}}" class="{{.Class}}"/>
{{- else if eq .Kind "polygon"}}
<polygon points="{{.Points}}" class="{{.Class}}"/>
{{- else if .Rotate}}
<text x="{{.X}}" y="{{.Y}}" class="{{.Class}}" transform="rotate({{.Rotate}} {{.X}} {{.Y}})">{{.Text}}</text>
{{- else}}
<text x="{{.X}}" y="{{.Y}}"{{if .Class}} class="{{.Class}}"{{end}}{{if ne .Anchor "start"}} text-anchor="{{.Anchor}}"{{end}}>{{.Text}}</text>
{{- end}}
{{- end}}
</g>
{{- end}}
</svg>
{{end}}`))

func init() {
	template.Must(svgTemplate.New("style").Parse(style))
}

// xmlText drops what XML 1.0 does not allow in a document (control
// characters but tab and line breaks, U+FFFE, U+FFFF) and replaces bytes
// that are not UTF-8: html/template escapes markup, not these, and a
// standalone SVG holding one would not parse.
func xmlText(s string) string {
	s = strings.ToValidUTF8(s, "\ufffd")
	bad := func(r rune) bool {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xfffe || r == 0xffff
	}
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if bad(r) {
			return -1
		}
		return r
	}, s)
}

// render writes the canvas as SVG.
func (c *canvas) render() ([]byte, error) {
	c.Title = xmlText(c.Title)
	for _, g := range c.Groups {
		g.Name, g.Title, g.Class = xmlText(g.Name), xmlText(g.Title), xmlText(g.Class)
		for i := range g.Shapes {
			sh := &g.Shapes[i]
			sh.Text, sh.Class = xmlText(sh.Text), xmlText(sh.Class)
		}
	}
	var b bytes.Buffer
	if err := svgTemplate.ExecuteTemplate(&b, "svg", c); err != nil {
		return nil, fmt.Errorf("drawing %s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// SVG draws one picture alone: the topology, the reach heat map, or the
// report's traces one under another.
func SVG(r *Report, v View) ([]byte, error) {
	c, err := draw(r, v)
	if err != nil {
		return nil, err
	}
	c.Standalone = true
	out, err := c.render()
	if err != nil {
		return nil, err
	}
	return append([]byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"), out...), nil
}

// draw lays out one view.
func draw(r *Report, v View) (*canvas, error) {
	switch v {
	case ViewTopology:
		return drawTopology(&r.Topology), nil
	case ViewReach:
		if r.Reach == nil {
			return nil, fmt.Errorf("no reachability matrix was computed")
		}
		return drawHeat(r.Reach), nil
	case ViewTrace:
		if len(r.Traces) == 0 {
			return nil, fmt.Errorf("no trace was given (--trace)")
		}
		return drawTraces(r.Traces), nil
	}
	return nil, fmt.Errorf("unknown view %q: use topology, reach or trace", v)
}
