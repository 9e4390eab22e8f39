package cli

import (
	"errors"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// TraceOptions is `kubectl-hybrid trace`: walk one connection through the
// twin and say whether it is delivered, and if not, where and why.
type TraceOptions struct {
	Input     InputOptions
	Namespace string
	Port      int
	Proto     string
	Output    string

	src, dst string
	proto    trace.Proto
	streams  genericiooptions.IOStreams
}

// NewCmdTrace builds the trace command.
func NewCmdTrace(streams genericiooptions.IOStreams) *cobra.Command {
	o := &TraceOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "trace SRC DST [--port N] [--proto tcp|udp|icmp] [-n NS] [-o text|json]",
		Short: "Walk a packet from a source to a destination through the twin's dataplanes",
		Long: `Walk one connection through the compiled per-node state of the twin: the
source's resolver and CoreDNS when DST is a name, kube-proxy's nftables
DNAT on Linux or the HNS load balancer in VFP on Windows, NetworkPolicy at
both ends (Calico's rules on Linux, the HNS ACLs in VFP's ACL layer on
Windows), routing, VXLAN encapsulation and the host firewalls, NAT, and the
reply back with every translation undone. Each hop names its node and
component, the headers before and after, and the TTL.

SRC is pod/NAME, deploy/NAME, node/NAME or an IP address; DST is pod/NAME,
deploy/NAME, node/NAME, svc/NAME, an IP address or a DNS name. -n is the
namespace of both; pod/NS/NAME (and svc/NS/NAME …) names another.

Exit status: 0 delivered, 1 not delivered, 2 bad input.`,
		Example: `  kubectl-hybrid trace -n demo deploy/hello aspnetapp.win-demo.svc.cluster.local --lab
  kubectl-hybrid trace -n win-demo deploy/aspnetapp 172.21.172.4 --proto icmp --lab
  kubectl-hybrid trace node/k8s-lab-win-1 svc/win-demo/aspnetapp --lab
  kubectl-hybrid trace -n win-demo deploy/aspnetapp hello.demo --port 80 --lab -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.Input.AddFlags(cmd.Flags())
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "default", "Namespace of pod/, deploy/ and svc/ arguments")
	cmd.Flags().IntVar(&o.Port, "port", 0, "Destination port (default: the Service's first port, the pod's first container port, else 80)")
	cmd.Flags().StringVar(&o.Proto, "proto", "tcp", "Protocol: tcp, udp or icmp")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "Output format: text or json")
	return cmd
}

// Complete takes SRC and DST.
func (o *TraceOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) != 2 {
		return usageError("trace takes SRC and DST, e.g. kubectl-hybrid trace pod/NAME svc/NAME --lab")
	}
	o.src, o.dst = args[0], args[1]
	p, ok := trace.ParseProto(o.Proto)
	if !ok {
		return usageError("--proto %q: use tcp, udp or icmp", o.Proto)
	}
	o.proto = p
	return nil
}

// Validate checks the flags.
func (o *TraceOptions) Validate() error {
	if o.Output != "text" && o.Output != "json" {
		return usageError("--output %q: use text or json", o.Output)
	}
	if o.Port < 0 || o.Port > 65535 {
		return usageError("--port %d: out of range", o.Port)
	}
	return o.Input.Validate()
}

// Run builds the twin and walks the connection.
func (o *TraceOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	e, err := trace.New(c)
	if err != nil {
		return err
	}
	res, err := query.RunTrace(e, query.Trace{Src: o.src, Dst: o.dst, Namespace: o.Namespace, Proto: o.proto, Port: o.Port})
	if err != nil {
		return traceInputError(err)
	}
	if o.Output == "json" {
		err = res.WriteJSON(textsafe.Raw(o.streams.Out))
	} else {
		err = res.WriteText(o.streams.Out)
	}
	if err != nil {
		return err
	}
	if !res.Delivered {
		return &exitError{code: ExitNegative}
	}
	return nil
}

// traceInputError is exit 1 for an object that does not exist, as get and
// exec answer it, and 2 for any other bad source or destination.
func traceInputError(err error) error {
	var nf *trace.NotFoundError
	if errors.As(err, &nf) {
		return &exitError{code: ExitNegative, err: err}
	}
	return &exitError{code: ExitBadInput, err: err}
}
