package picture

import (
	"bytes"
	"fmt"
	"html/template"
)

// page is what the HTML template reads.
type page struct {
	*Report
	Input                            string
	TopologySVG, ReachSVG, TracesSVG template.HTML
	Errors, Warnings, Infos          int
	LinuxNodes, WindowsNodes         int
	PodCount                         int
}

// pageStyle is the page's own look; the pictures' (style) follows it.
const pageStyle = `
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; margin: 0 auto; max-width: 1400px; padding: 0 24px 48px; color: #1b1f24; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 16px; }
h1 { font-size: 24px; margin: 20px 0 4px; }
h2 { font-size: 19px; margin-top: 32px; border-bottom: 1px solid #eaeef2; padding-bottom: 4px; }
p.sim { color: #57606a; font-size: 13px; }
nav a { margin-right: 16px; }
.scroll { overflow: auto; border: 1px solid #eaeef2; max-height: 1200px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
td.wide { overflow-wrap: anywhere; }
th { background: #f6f8fa; }
td.mono, span.mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
tr.error td.sev { color: #cf222e; font-weight: bold; }
tr.warning td.sev { color: #9a6700; font-weight: bold; }
tr.info td.sev { color: #0969da; }
td.fix { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; max-width: 520px; }
.counts span { margin-right: 12px; }
ul.notes { font-size: 13px; color: #57606a; }
`

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="kubectl-hybrid report">
<title>kubectl-hybrid report: {{.Input}}</title>
<style>{{template "pagestyle"}}{{template "style"}}</style>
</head>
<body>
<header>
<h1>Hybrid cluster report</h1>
<p class="sim">Input: <span class="mono">{{.Input}}</span>. Everything below is what kubectl-hybrid's twin derives from that input:
addresses and objects the input did not give are derived, and the reachability matrix and the traces are
<strong>simulated</strong> walks through the modelled dataplanes, not measurements on the network.</p>
<nav><a href="#topology">Topology</a><a href="#findings">Findings</a><a href="#reach">Reachability</a><a href="#traces">Traces</a><a href="#notes">Model notes</a></nav>
</header>

<section id="topology">
<h2>Topology</h2>
<p class="counts"><span>{{len .Topology.Nodes}} nodes ({{.LinuxNodes}} Linux, {{.WindowsNodes}} Windows)</span><span>{{.PodCount}} pods</span><span>{{len .Topology.Services}} Services</span><span>VXLAN VNI {{.Topology.Mesh.VNI}}, UDP {{.Topology.Mesh.Port}}, {{len .Topology.Mesh.Members}} VTEPs</span></p>
<div class="scroll">{{.TopologySVG}}</div>
<h3>Nodes</h3>
<table id="nodes">
<tr><th>Node</th><th>OS</th><th>Role</th><th>InternalIP</th><th>Calico blocks</th><th>VTEP</th><th>Pods</th><th>Findings</th></tr>
{{- range .Topology.Nodes}}
<tr data-node="{{.Name}}"><td class="mono">{{.Name}}</td><td>{{.OS}}</td><td>{{.Role}}</td><td class="mono">{{.IP}}</td><td class="mono">{{range $i, $b := .Blocks}}{{if $i}}, {{end}}{{$b}}{{end}}</td><td class="mono">{{with .VTEP}}{{.Addr}} {{.MAC}}{{if .Placeholder}} (placeholder){{else if .Derived}} (Felix's, derived){{end}}{{else}}none{{end}}</td><td>{{len .Pods}}</td><td>{{.Findings}}</td></tr>
{{- end}}
</table>
<h3>Services</h3>
<table id="services">
<tr><th>Service</th><th>Type</th><th>ClusterIP</th><th>Ports</th><th>Endpoints</th></tr>
{{- range .Topology.Services}}
<tr data-service="{{.Namespace}}/{{.Name}}"><td class="mono">{{.Namespace}}/{{.Name}}</td><td>{{.Type}}</td><td class="mono">{{.ClusterIP}}</td><td class="mono">{{range $i, $p := .Ports}}{{if $i}}, {{end}}{{$p}}{{end}}</td><td class="mono wide">{{range $i, $b := .Backends}}{{if $i}}, {{end}}{{$b.IP}}{{if $b.Pod}} {{$b.Pod}}{{end}}{{if $b.Node}} on {{$b.Node}}{{end}}{{if not $b.Ready}} (not ready){{end}}{{else}}none{{end}}</td></tr>
{{- end}}
</table>
</section>

<section id="findings">
<h2>Check findings</h2>
{{- if not .Checked}}
<p>No check was run.</p>
{{- else}}
<p class="counts"><span>{{.Errors}} errors</span><span>{{.Warnings}} warnings</span><span>{{.Infos}} infos</span></p>
{{- if .Findings}}
<table id="finding-table">
<tr><th>Severity</th><th>Rule</th><th>Object</th><th>What is wrong</th><th>Fix</th><th>Where</th></tr>
{{- range .Findings}}
<tr class="finding {{.Severity}}" data-rule="{{.RuleID}}" data-object="{{.Object}}"><td class="sev">{{.Severity}}</td><td><span class="mono">{{.RuleID}}</span><br>{{.Title}}</td><td class="mono">{{.Object}}{{if .Field}}<br>{{.Field}}{{end}}</td><td>{{.Message}}</td><td class="fix">{{.Fix}}</td><td class="mono wide">{{if .Location}}{{.Location}}{{else}}derived{{end}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No findings.</p>
{{- end}}
{{- if .NotRun}}
<p>Rules that did not run:</p>
<ul class="notes">{{range .NotRun}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
{{- end}}
</section>

<section id="reach">
<h2>Reachability</h2>
{{- if .Reach}}
{{- if .Reach.Aggregated}}
<p>The matrix has too many sources or destinations to draw cell by cell: each square is a source namespace and a destination namespace, coloured by the share of its cells that are allowed.</p>
{{- end}}
<div class="scroll">{{.ReachSVG}}</div>
{{- else}}
<p>No reachability matrix was computed.</p>
{{- end}}
</section>

<section id="traces">
<h2>Traces</h2>
{{- if .Traces}}
<ol>{{range .Traces}}<li class="trace" data-outcome="{{.Outcome}}">{{.Title}}: <strong>{{.Outcome}}</strong>{{if .AtNode}} at {{.AtNode}}{{end}} — {{.Reason}}{{if .Fix}}<br>fix: {{.Fix}}{{end}}</li>{{end}}</ol>
<div class="scroll">{{.TracesSVG}}</div>
{{- else}}
<p>No trace was asked for (--trace "SRC DST [--port N] [--proto P] [-n NS]").</p>
{{- end}}
</section>

<section id="notes">
<h2>Model notes</h2>
{{- if .Notes}}
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>
{{- else}}
<p>None.</p>
{{- end}}
</section>
</body>
</html>
`))

func init() {
	template.Must(pageTemplate.New("pagestyle").Parse(pageStyle))
	template.Must(pageTemplate.New("style").Parse(style))
}

// HTML writes the whole report as one page. input says what the twin was
// built from ("--lab", the files given).
func HTML(r *Report, input string) ([]byte, error) {
	p := page{Report: r, Input: input}
	for _, n := range r.Topology.Nodes {
		switch n.OS {
		case "linux":
			p.LinuxNodes++
		case "windows":
			p.WindowsNodes++
		}
		p.PodCount += len(n.Pods)
	}
	for _, f := range r.Findings {
		switch f.Severity {
		case "error":
			p.Errors++
		case "warning":
			p.Warnings++
		default:
			p.Infos++
		}
	}
	var err error
	if p.TopologySVG, err = inline(r, ViewTopology); err != nil {
		return nil, err
	}
	if r.Reach != nil {
		if p.ReachSVG, err = inline(r, ViewReach); err != nil {
			return nil, err
		}
	}
	if len(r.Traces) > 0 {
		if p.TracesSVG, err = inline(r, ViewTrace); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("writing the report: %w", err)
	}
	return b.Bytes(), nil
}

// inline draws a view for the page. The SVG is the svg template's output,
// whose every string is already escaped, so it goes in as it is.
func inline(r *Report, v View) (template.HTML, error) {
	c, err := draw(r, v)
	if err != nil {
		return "", err
	}
	out, err := c.render()
	if err != nil {
		return "", err
	}
	return template.HTML(out), nil // #nosec: escaped by svgTemplate
}
