package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/aggregate"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/expect"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/output"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// ReachOptions is `kubectl-hybrid reach`: the reachability matrix between
// classes of pods (and nodes) and pods and Services.
type ReachOptions struct {
	Input         InputOptions
	Namespace     string
	AllNamespaces bool
	From, To      []string
	Port          int
	Proto         string
	Nodes         bool
	Output        string
	Expect        string
	By            string
	Only          string

	expect []expect.Expectation

	opt     reach.Options
	by      aggregate.By
	streams genericiooptions.IOStreams
}

// NewCmdReach builds the reach command.
func NewCmdReach(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ReachOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "reach [-n NS | -A] [--from SEL]... [--to SEL]... [--port N] [--proto tcp|udp|icmp] [--nodes] [--by namespace|workload] [--only denied] [-o summary|matrix|json|csv] [--expect FILE]",
		Short: "Who can reach whom: the matrix between pods, Services and nodes, with a reason per cell",
		Long: `Compute the reachability matrix of the twin: rows are sources, columns are
destinations — pods at each port they serve, and Services' ClusterIPs at each
of their ports — and each cell says allowed, denied, partial or not
applicable, with the reason: the failing hop of a trace (node and component:
a firewall, VXLAN, kube-proxy, the Windows host's limits) or the deciding
NetworkPolicy (Calico's rules on Linux, the HNS ACLs on Windows).

Pods are grouped into classes first — the same namespace, the same answer
from every selector that can see them (policies' pod selectors and peers,
--from and --to), service account, OS, what answers and on which ports,
membership in address-based policy peers, and node group (nodes whose
dataplanes treat pod traffic alike; a node is a group of its own only when
its state differs) — and the matrix is computed class by class: Kubernetes
policy semantics at class level, and the path between two placements from a
few representative traces, one per stage that no trace has shown yet. A
cell's verdict is what a full trace between any two of its pods says. A
Service cell is partial when some of the backends kube-proxy may pick are
reached and some are not; a node row's cell is partial when the node
reaches its own pods (never policed) but not the others.

--from and --to (repeatable; they add up) take:
  ns/NAME                   a namespace
  pod/[NS/]NAME             the class of a pod
  deploy|ds|sts/[NS/]NAME   the classes of a workload's pods
  svc/[NS/]NAME             --to: the Service's ports; --from: the pods it selects
  node/NAME                 --from: that node as a source (as with --nodes)
  SELECTOR                  a label selector on pod labels, as kubectl's -l
                            (a Service matches by its labels or its selector)
-n (default "default") and -A scope what SELECTOR and unfiltered rows and
columns cover; ns/NAME and KIND/NS/NAME reach beyond it.

--nodes adds a row per node: its host network (the kubelet, host-network
pods). Host-network pods are not rows or columns of their own.

The default output counts the cells per namespace pair (allowed, denied,
partial, not applicable); -o matrix prints the matrix with a reason per
cell that is not allowed, -o json and -o csv every cell.

--by namespace|workload folds the matrix into groups: rows and columns are
namespaces (node rows are "(nodes)"), or workloads (a pod's controller as
deploy/NS/NAME, ds/…, sts/…, job/…; pod/NS/NAME for a pod no controller
owns; node/NAME rows and svc/NS/NAME columns). Each cell counts the
connections between two groups by verdict — a connection is a source pod
(or node) and a destination pod at one port it serves, or a source and one
Service port; a pod and itself are none — and is allowed, denied, partial
or n/a when all of them are (n/a ones aside), else mixed, with the reasons
of the denied ones and how many each denies. The folding weights each
class cell by its pods rather than listing pod pairs. The default output is
a line per cell, -o matrix a grid, -o csv a row per cell, and -o json one
object:
  {"by": "namespace"|"workload", "onlyDenied": true (with --only denied),
   "rows": [group…], "columns": [group…],
   "cells": [{"from", "to", "verdict": "allowed"|"denied"|"partial"|"n/a"|"mixed",
              "connections", "allowed", "denied", "partial", "na",
              "reasons": [{"reason", "hop", "connections"}]}…],
   "total": {"allowed", "denied", "partial", "na"}, "notes": [text…]}
Cells are sorted by from then to; a cell's reasons by connections, most
first. Over a whole large cluster the workload view has about as
many cells as the matrix has (most workloads reach most others): narrow it
with -n, --from or --to; the namespace view stays small.

--only denied keeps what is denied: with --by, the cells with denied
connections; otherwise the denied cells (-o json, -o csv), the rows and
columns holding one (-o matrix), or the namespace pairs with one (the
default summary).

--expect FILE asserts an expected matrix, as a connectivity test does: a
YAML or JSON list of cells {from, to, port, proto, verdict} (the shape
-o json prints, so a saved run is an expectation; port and proto may be left
out to match every port). Each listed cell must be in the matrix with that
verdict; the differences are printed and the command exits 1 if there is any.`,
		Example: `  # Everything in the lab, counted per namespace pair
  kubectl-hybrid reach -A --lab

  # Who reaches the Windows app, with the nodes as sources, as a matrix
  kubectl-hybrid reach -A --to ns/win-demo --nodes -o matrix --lab

  # Only port 80, as CSV
  kubectl-hybrid reach -A --port 80 -o csv --lab

  # Who reaches whom, by namespace, and only what is denied, by workload
  kubectl-hybrid reach -A --by namespace --lab
  kubectl-hybrid reach -A --by workload --only denied -o matrix --lab

  # Fail (exit 1) when the lab's matrix is not the expected one
  kubectl-hybrid reach -A --lab --expect examples/expect/lab-reach.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.Input.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace of the sources and destinations (default \"default\")")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Sources and destinations in every namespace")
	f.StringArrayVar(&o.From, "from", nil, "Sources: ns/NAME, pod/NAME, deploy/NAME, svc/NAME, node/NAME or a label selector; repeatable")
	f.StringArrayVar(&o.To, "to", nil, "Destinations: ns/NAME, pod/NAME, deploy/NAME, svc/NAME or a label selector; repeatable")
	f.IntVar(&o.Port, "port", 0, "Only this destination port (default: every port each destination serves)")
	f.StringVar(&o.Proto, "proto", "", "Only this protocol: tcp, udp or icmp (default: tcp and udp as declared)")
	f.BoolVar(&o.Nodes, "nodes", false, "Add every node as a source row")
	f.StringVarP(&o.Output, "output", "o", "summary", "Output format: summary, matrix (or text), json or csv")
	f.StringVar(&o.By, "by", "", "Fold the matrix by namespace or workload: a cell per pair of groups, counting connections by verdict")
	f.StringVar(&o.Only, "only", "", "Only what is denied: \"denied\" (the denied cells, or with --by the cells with denied connections)")
	f.StringVar(&o.Expect, "expect", "", "An expected matrix (YAML or JSON list of {from, to, port, proto, verdict}); exit 1 on any difference")
	return cmd
}

// Complete reads the filters.
func (o *ReachOptions) Complete(args []string) error {
	if len(args) > 0 {
		return usageError("reach takes no arguments; use --from and --to")
	}
	if o.Namespace == "" && o.Input.Live() {
		o.Namespace = kubeNamespace(o.Input.Kube)
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	opt, err := query.ReachOptions(query.Reach{Namespace: o.Namespace, AllNamespaces: o.AllNamespaces,
		From: o.From, To: o.To, Port: o.Port, Proto: o.Proto, Nodes: o.Nodes})
	if err != nil {
		return usageError("%v", err)
	}
	o.opt = opt
	return nil
}

// Validate checks the flags.
func (o *ReachOptions) Validate() error {
	switch o.Output {
	case "summary", "matrix", "text", "json", "csv":
	default:
		return usageError("--output %q: use summary, matrix, json or csv", o.Output)
	}
	if o.By != "" {
		by, err := aggregate.ParseBy(o.By)
		if err != nil {
			return usageError("%v", err)
		}
		o.by = by
	}
	if o.Only != "" && o.Only != "denied" {
		return usageError("--only %q: use denied", o.Only)
	}
	if o.Expect != "" && (o.By != "" || o.Only != "") {
		return usageError("--expect compares every cell: it takes neither --by nor --only")
	}
	if o.Expect != "" {
		data, err := os.ReadFile(o.Expect)
		if err != nil {
			return &exitError{code: ExitBadInput, err: fmt.Errorf("--expect: %w", err)}
		}
		if o.expect, err = expect.Parse(o.Expect, data); err != nil {
			return &exitError{code: ExitBadInput, err: err}
		}
	}
	return o.Input.Validate()
}

// Run builds the twin and computes the matrix.
func (o *ReachOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	e, err := trace.New(c)
	if err != nil {
		return err
	}
	m, err := reach.Compute(e, o.opt)
	if err != nil {
		return &exitError{code: ExitBadInput, err: err}
	}
	if o.Expect != "" {
		return o.compare(m)
	}
	if o.by != "" {
		return o.writeFolded(m)
	}
	view := output.View{OnlyDenied: o.Only == "denied"}
	switch o.Output {
	case "json":
		return view.JSON(textsafe.Raw(o.streams.Out), m)
	case "csv":
		return view.CSV(textsafe.Raw(o.streams.Out), m)
	case "matrix", "text":
		m.ASCII = !outStyle.Unicode
		return writeStyled(o.streams.Out, true, func(w io.Writer) error { return view.Text(w, m) }, nil)
	}
	return writeStyled(o.streams.Out, true, func(w io.Writer) error { return view.Summary(w, m) }, nil)
}

// writeFolded prints the matrix folded by namespace or workload.
func (o *ReachOptions) writeFolded(m *reach.Matrix) error {
	m.ASCII = !outStyle.Unicode
	v := aggregate.Fold(m, o.by, o.Only == "denied")
	switch o.Output {
	case "json":
		return aggregate.WriteJSON(textsafe.Raw(o.streams.Out), v)
	case "csv":
		return aggregate.WriteCSV(textsafe.Raw(o.streams.Out), v)
	case "matrix", "text":
		return writeStyled(o.streams.Out, true, func(w io.Writer) error { return aggregate.WriteGrid(w, v) }, nil)
	}
	return writeStyled(o.streams.Out, true, func(w io.Writer) error { return aggregate.WriteTable(w, v) }, nil)
}

// compare prints how the matrix differs from the expected one.
func (o *ReachOptions) compare(m *reach.Matrix) error {
	diffs := expect.Compare(m, o.expect)
	for _, d := range diffs {
		fmt.Fprintln(o.streams.Out, d.String())
	}
	fmt.Fprintf(o.streams.Out, "%d expected cell%s, %d differ%s (%s)\n", len(o.expect), pluralS(len(o.expect)), len(diffs), map[bool]string{true: "s", false: ""}[len(diffs) == 1], o.Expect)
	if len(diffs) > 0 {
		return &exitError{code: ExitNegative}
	}
	return nil
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
