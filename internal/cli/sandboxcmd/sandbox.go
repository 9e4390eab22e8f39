// Package sandboxcmd is the `sandbox` command (up, test, down, and the
// serve and probe helpers it runs): the twin's Linux dataplane run in
// network namespaces and probed with real packets, to hold trace's
// verdicts to the kernel's.
package sandboxcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/sandbox"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// SandboxOptions is `kubectl-hybrid sandbox up|test|down`: the twin's Linux
// dataplane in network namespaces of this machine.
type SandboxOptions struct {
	Input    cmdutil.Input
	Prefix   string
	Pods     []string
	StateDir string
	Verbose  bool
	// MaxProbes and AllSources choose the probes of test.
	MaxProbes  int
	AllSources bool

	action  string
	streams genericiooptions.IOStreams
}

// NewCmdSandbox builds the sandbox command and its subcommands.
func NewCmdSandbox(streams genericiooptions.IOStreams, newInput func() cmdutil.Input) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox up|test|down",
		Short: "Run the twin's Linux dataplane in network namespaces and probe it with real packets",
		Long: `Materialise the twin's Linux dataplane in network namespaces of this machine
(root, iproute2, nftables and iputils-ping needed; no network): one
namespace per Linux node (<prefix><node>) on a bridge that plays the node
network, one per pod joined to its node by a veth named as Calico names it,
and the twin's compiled state applied with ip, bridge, nft and sysctl —
addresses, routes, vxlan.calico, static neighbours and FDB entries, the
nftables tables of kube-proxy and of Felix's policy (as the twin renders
them), forwarding and proxy ARP. Pods serve their container ports (TCP
echo/HTTP, UDP echo; CoreDNS pods answer DNS from the twin's zone).

Windows nodes are played by a STAND-IN: a Linux namespace that terminates
VXLAN for the node's blocks and routes to its pods; HNS and VFP are not
played. Nothing is created in the host's own namespace.

  up    creates the sandbox and leaves it running (ip netns exec <prefix><node> …)
  test  runs up, probes (ping with TTLs, TCP and UDP to pods, ClusterIPs,
        NodePorts, DNS), compares each real outcome with trace, prints each
        disagreement, ends with "sandbox: N/M probes agree", runs down
  down  removes every namespace up created, also after an interrupted up

Exit status: 0 done (test: every probe agrees), 1 test: a probe disagrees,
2 bad input, 3 namespaces cannot be created or a command failed.`,
		Example: `  kubectl-hybrid sandbox test --lab
  kubectl-hybrid sandbox up --lab --prefix kh-
  kubectl-hybrid sandbox down --prefix kh-`,
	}
	for _, a := range []string{"up", "test", "down"} {
		cmd.AddCommand(newCmdSandboxAction(streams, newInput, a))
	}
	cmd.AddCommand(newCmdSandboxServe(streams), newCmdSandboxProbe(streams))
	return cmd
}

var sandboxShort = map[string]string{
	"up":   "Create the sandbox and leave it running",
	"test": "Create the sandbox, probe it, compare with trace and remove it",
	"down": "Remove everything sandbox up created",
}

func newCmdSandboxAction(streams genericiooptions.IOStreams, newInput func() cmdutil.Input, action string) *cobra.Command {
	o := &SandboxOptions{streams: streams, action: action, Input: newInput()}
	cmd := &cobra.Command{
		Use:   action,
		Short: sandboxShort[action],
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	if action != "down" {
		o.Input.AddFlags(cmd.Flags())
		cmd.Flags().StringSliceVar(&o.Pods, "pods", nil, "Pods to create, as namespace/name (comma-separated or repeated); default all on the pod network")
		if action == "test" {
			cmd.Flags().IntVar(&o.MaxProbes, "max-probes", sandbox.DefaultMaxProbes, "Most probes to send; beyond it an even sample of each kind (0: no bound)")
			cmd.Flags().BoolVar(&o.AllSources, "all-sources", false, "Probe from every pod, not one pod per Linux node")
		}
		cmd.Flags().BoolVar(&o.Verbose, "verbose", false, "Print every command as it runs (on stderr) and, for test, every probe that agrees too")
	}
	cmd.Flags().StringVar(&o.Prefix, "prefix", sandbox.DefaultPrefix, "Prefix of every namespace the sandbox creates, and the name of its state")
	cmd.Flags().StringVar(&o.StateDir, "state-dir", sandbox.DefaultStateDir, "Where the sandbox records what it created")
	_ = cmd.Flags().MarkHidden("state-dir")
	return cmd
}

// Validate checks the prefix and the input flags.
func (o *SandboxOptions) Validate() error {
	if err := sandbox.ValidPrefix(o.Prefix); err != nil {
		return cmdutil.UsageError("--%v", err)
	}
	if o.action == "down" {
		return nil
	}
	if o.MaxProbes < 0 {
		return cmdutil.UsageError("--max-probes %d: give 0 (no bound) or more", o.MaxProbes)
	}
	return o.Input.Validate()
}

func (o *SandboxOptions) executor() *sandbox.Executor {
	x := &sandbox.Executor{StateDir: o.StateDir}
	if o.Verbose {
		x.Log = o.streams.ErrOut
	}
	return x
}

// Run does the action.
func (o *SandboxOptions) Run() error {
	x := o.executor()
	if o.action == "down" {
		removed, err := x.Down(o.Prefix)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("sandbox down: %w", err)}
		}
		fmt.Fprintf(o.streams.Out, "sandbox down: removed %d namespaces with prefix %s\n", len(removed), o.Prefix)
		return nil
	}
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	nodes, err := linux.Compile(c)
	if err != nil {
		return err
	}
	plan, err := sandbox.Build(c, nodes, sandbox.Zone(c), sandbox.Options{Prefix: o.Prefix, Pods: o.Pods})
	if err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if err := sandbox.NamespacesAvailable(o.Prefix); err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("sandbox: %w", err)}
	}
	// An interrupt during up or test stops it; what was created is then
	// removed, once, on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := x.UpContext(ctx, plan); err != nil {
		if err != sandbox.ErrUp {
			_, _ = x.Down(o.Prefix)
		}
		if ctx.Err() != nil {
			err = errors.New("interrupted; what was created is removed")
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("sandbox up: %w", err)}
	}
	if o.action == "up" {
		o.printUp(plan)
		return nil
	}
	defer func() { _, _ = x.Down(o.Prefix) }()
	e, err := trace.New(c)
	if err != nil {
		return err
	}
	probes, total := sandbox.Probes(plan, c, sandbox.ProbeOptions{AllSources: o.AllSources, Max: o.MaxProbes})
	if len(probes) < total {
		fmt.Fprintf(o.streams.Out, "sandbox: %d of %d probes sent, an even sample of each kind (--max-probes)\n", len(probes), total)
	}
	res := sandbox.RunProbesContext(ctx, probes, e, &sandbox.Runner{}, plan.StandIns())
	if ctx.Err() != nil {
		_, _ = x.Down(o.Prefix)
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: errors.New("sandbox test: interrupted; what was created is removed")}
	}
	if err := sandbox.WriteResults(o.streams.Out, res, o.Verbose); err != nil {
		return err
	}
	if _, err := x.Down(o.Prefix); err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("sandbox down: %w", err)}
	}
	for _, r := range res {
		if !r.Agree {
			return &cmdutil.ExitError{Code: cmdutil.ExitNegative}
		}
	}
	return nil
}

func (o *SandboxOptions) printUp(p *sandbox.Plan) {
	w := o.streams.Out
	fmt.Fprintf(w, "sandbox up: %d namespaces, %d servers (prefix %s)\n", len(p.Namespaces), len(p.Servers), p.Prefix)
	for _, n := range p.Namespaces {
		kind := string(n.Kind)
		if n.Kind == sandbox.KindStandIn || n.Kind == sandbox.KindStandInPod {
			kind = "STAND-IN " + kind
		}
		what := n.Node
		if n.Pod != "" {
			what = n.Pod
		}
		fmt.Fprintf(w, "  %s\t%s %s\n", n.Name, kind, what)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "Look inside with: ip netns exec %s<node> ip route; remove with: kubectl hybrid sandbox down --prefix %s\n", p.Prefix, p.Prefix)
}

// newCmdSandboxServe is the server a sandbox namespace runs (hidden).
func newCmdSandboxServe(streams genericiooptions.IOStreams) *cobra.Command {
	var name, tcp, udp, zone, ready string
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Serve a sandbox namespace's ports (run by sandbox up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := sandbox.ServeOptions{Name: name}
			var err error
			if o.TCP, err = ports(tcp); err != nil {
				return cmdutil.UsageError("--tcp: %v", err)
			}
			if o.UDP, err = ports(udp); err != nil {
				return cmdutil.UsageError("--udp: %v", err)
			}
			if zone != "" {
				if o.Zone, err = sandbox.ReadZone(zone); err != nil {
					return cmdutil.UsageError("--dns-zone: %v", err)
				}
				if o.Zone == nil {
					o.Zone = []sandbox.ZoneEntry{}
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return sandbox.Serve(ctx, o, func() {
				if ready != "" {
					_ = os.WriteFile(ready, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
				}
			})
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "Name the replies carry")
	cmd.Flags().StringVar(&tcp, "tcp", "", "TCP ports, comma-separated")
	cmd.Flags().StringVar(&udp, "udp", "", "UDP ports, comma-separated")
	cmd.Flags().StringVar(&zone, "dns-zone", "", "Zone file: answer DNS on port 53")
	cmd.Flags().StringVar(&ready, "ready", "", "File written once every port listens")
	return cmd
}

func ports(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("%q is not a port", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// newCmdSandboxProbe is the client a probe runs inside a namespace
// (hidden): tcp|udp ADDR:PORT or dns SERVER:PORT NAME; it prints the
// result as JSON.
func newCmdSandboxProbe(streams genericiooptions.IOStreams) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:    "probe tcp|udp ADDR:PORT | dns SERVER:PORT NAME",
		Short:  "One probe from inside a sandbox namespace (run by sandbox test)",
		Hidden: true,
		Args:   cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			var r sandbox.ProbeResult
			switch {
			case args[0] == "tcp" && len(args) == 2:
				r = sandbox.ProbeStream(args[1], timeout)
			case args[0] == "udp" && len(args) == 2:
				r = sandbox.ProbeDatagram(args[1], timeout)
			case args[0] == "dns" && len(args) == 3:
				r = sandbox.ProbeDNS(args[1], args[2], timeout)
			default:
				return cmdutil.UsageError("probe takes tcp|udp ADDR:PORT or dns SERVER:PORT NAME")
			}
			return json.NewEncoder(streams.Out).Encode(r)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Second, "How long to wait for an answer")
	return cmd
}
