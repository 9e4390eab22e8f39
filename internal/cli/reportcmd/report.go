// Package reportcmd is the `report` command: one drawing of the cluster —
// topology, check findings, the reach matrix as a heat map and chosen
// traces as hop diagrams.
package reportcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/picture"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// ReportOptions is `kubectl-hybrid report`: the twin drawn as one HTML
// page, or one of its pictures as SVG or Graphviz DOT.
type ReportOptions struct {
	Input  cmdutil.Input
	Output string
	View   string
	Traces []string

	view    picture.View
	specs   []traceSpec
	streams genericiooptions.IOStreams
}

// traceSpec is one --trace: the trace command's SRC DST and flags.
type traceSpec struct {
	given, src, dst, ns string
	port                int
	proto               trace.Proto
}

// NewCmdReport builds the report command.
func NewCmdReport(streams genericiooptions.IOStreams, in cmdutil.Input) *cobra.Command {
	o := &ReportOptions{streams: streams, Input: in}
	cmd := &cobra.Command{
		Use:   "report [-f FILE|DIR|-] [--lab] [-o html|svg|dot] [--view topology|reach|trace] [--trace SPEC]...",
		Short: "Draw the cluster: topology, check findings, the reach matrix as a heat map, traces as hop diagrams",
		Long: `Build the twin and draw it as one self-contained HTML page (-o html, the
default): the topology — nodes by OS with their Calico blocks, VTEPs and the
VXLAN mesh between them, the pods on each node, Services and their endpoints
— the check findings with their fixes, the reachability matrix of every
namespace, with every node as a source too, as a heat map (per namespace
pair when it is too large to draw cell by cell), and each --trace as a hop diagram with a lane per node. The page
fetches nothing: the pictures are inline SVG, there is no script, and its
Content-Security-Policy forbids any request.

-o svg and -o dot write one picture alone, as SVG or as a Graphviz graph
(dot -Tpng): --view topology (the default), reach or trace.

--trace (repeatable) takes what the trace command takes, in one argument:
"SRC DST [--port N] [--proto tcp|udp|icmp] [-n NS]".

Reachability and traces are simulated walks through the twin's dataplanes.

Exit status: 0 the report is written (whatever it shows), 2 bad input or
usage (a --trace naming nothing), 3 the cluster cannot be read.`,
		Example: `  # The lab as a page, with a Linux pod's call to the Windows app traced
  kubectl-hybrid report --lab --trace "-n demo deploy/hello svc/win-demo/aspnetapp" > lab.html

  # A cluster's topology as SVG, and its reach matrix as a Graphviz graph (dot -Tsvg draws it)
  kubectl-hybrid report -f examples/main-cluster -o svg > topology.svg
  kubectl-hybrid report -f examples/main-cluster -o dot --view reach > reach.dot`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Complete(); err != nil {
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
	f.StringVarP(&o.Output, "output", "o", "html", "Output format: html, svg or dot")
	f.StringVar(&o.View, "view", "", "With -o svg or dot, the picture: topology (default), reach or trace")
	f.StringArrayVar(&o.Traces, "trace", nil, `A trace to draw: "SRC DST [--port N] [--proto tcp|udp|icmp] [-n NS]", as the trace command takes them; repeatable`)
	return cmd
}

// Complete reads --view and the --trace specs.
func (o *ReportOptions) Complete() error {
	o.view = picture.View(o.View)
	if o.View == "" {
		o.view = picture.ViewTopology
	}
	for _, s := range o.Traces {
		spec, err := parseTraceSpec(s)
		if err != nil {
			return cmdutil.UsageError("--trace %q: %v", s, err)
		}
		o.specs = append(o.specs, spec)
	}
	return nil
}

// parseTraceSpec reads one --trace with the trace command's flags.
func parseTraceSpec(s string) (traceSpec, error) {
	fs := pflag.NewFlagSet("trace", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	ns := fs.StringP("namespace", "n", "default", "")
	port := fs.Int("port", 0, "")
	proto := fs.String("proto", "tcp", "")
	if err := fs.Parse(strings.Fields(s)); err != nil {
		return traceSpec{}, err
	}
	if fs.NArg() != 2 {
		return traceSpec{}, errors.New(`give SRC and DST, e.g. "pod/default/check svc/win-demo/aspnetapp --port 80"`)
	}
	p, ok := trace.ParseProto(*proto)
	if !ok {
		return traceSpec{}, fmt.Errorf("--proto %q: use tcp, udp or icmp", *proto)
	}
	if *port < 0 || *port > 65535 {
		return traceSpec{}, fmt.Errorf("--port %d: out of range", *port)
	}
	return traceSpec{given: s, src: fs.Arg(0), dst: fs.Arg(1), ns: *ns, port: *port, proto: p}, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Validate checks the flags.
func (o *ReportOptions) Validate() error {
	switch o.Output {
	case "html":
		if o.View != "" {
			return cmdutil.UsageError("--view %q: the HTML report holds every picture; --view goes with -o svg or -o dot", o.View)
		}
	case "svg", "dot":
		switch o.view {
		case picture.ViewTopology, picture.ViewReach:
		case picture.ViewTrace:
			if len(o.specs) == 0 {
				return cmdutil.UsageError("--view trace: give the trace to draw with --trace \"SRC DST\"")
			}
		default:
			return cmdutil.UsageError("--view %q: use topology, reach or trace", o.View)
		}
	default:
		return cmdutil.UsageError("--output %q: use html, svg or dot", o.Output)
	}
	return o.Input.Validate()
}

// Run builds the twin, computes what the chosen pictures show and writes
// them.
func (o *ReportOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	all := o.Output == "html"
	reg, err := check.Default()
	if err != nil {
		return err
	}
	rep, err := check.Run(c, check.Options{Registry: reg})
	if err != nil {
		return err
	}
	e, err := trace.New(c)
	if err != nil {
		return err
	}
	var m *reach.Matrix
	if all || o.view == picture.ViewReach {
		m, err = reach.Compute(e, reach.Options{AllNamespaces: true, Nodes: true})
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
		}
	}
	var traces []*trace.Result
	for _, s := range o.specs {
		src, err := e.ParseSource(s.src, s.ns)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("--trace %q: %w", s.given, err)}
		}
		dst, err := e.ParseTarget(s.dst, s.ns)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("--trace %q: %w", s.given, err)}
		}
		port := s.port
		if port == 0 {
			port = e.DefaultPort(dst, s.proto)
		}
		traces = append(traces, e.Trace(src, dst, s.proto, port))
	}
	r := picture.FromTwin(c, rep, m, traces)
	var out []byte
	switch o.Output {
	case "svg":
		out, err = picture.SVG(r, o.view)
	case "dot":
		out, err = picture.DOT(r, o.view)
	default:
		out, err = picture.HTML(r, o.inputName())
	}
	if err != nil {
		return err
	}
	_, err = textsafe.Raw(o.streams.Out).Write(out)
	return err
}

// inputName says in the page what the twin was built from.
func (o *ReportOptions) inputName() string { return o.Input.Source() }
