// Package picture draws the built twin: the cluster's topology (nodes by
// OS with their Calico blocks, VTEPs and the VXLAN mesh, the pods on each
// node, Services and their backends), the check findings with their fixes,
// the reachability matrix as a heat map, and traces as hop diagrams across
// nodes. It writes one self-contained HTML page (every picture inline as
// SVG, no script, no font or style sheet fetched, a Content-Security-Policy
// that forbids any fetch), each picture alone as SVG, or as Graphviz DOT.
//
// FromTwin gathers what the pictures show from the twin's values
// (model.Cluster, check.Report, reach.Matrix, trace.Result); HTML, SVG and
// DOT are pure functions of that Report to bytes. Every string that comes
// from the cluster goes through html/template (HTML and SVG) or dotQuote
// (DOT), so a name holding markup is shown, never interpreted. Output is
// deterministic: everything is sorted, nothing reads the clock.
package picture
