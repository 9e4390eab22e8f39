// Package verifycmd is the `verify` command: what real nodes printed,
// compared line by line with what the twin answers to the same commands.
package verifycmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

// VerifyOptions is `kubectl-hybrid verify`: compare real node outputs
// with the twin's answers to the same commands.
type VerifyOptions struct {
	Input  cmdutil.Input
	Actual string
	Output string

	streams genericiooptions.IOStreams
}

// NewCmdVerify builds the verify command.
func NewCmdVerify(streams genericiooptions.IOStreams, in cmdutil.Input) *cobra.Command {
	o := &VerifyOptions{streams: streams, Input: in}
	cmd := &cobra.Command{
		Use:   "verify --actual DIR (-f FILE... | --lab) [-o text|json]",
		Short: "Compare real nodes' command outputs with what the twin says they should hold",
		Long: `Read what real nodes print and name every place it differs from the twin.

DIR holds one folder per node, named like the node, with one file per
command whose first line is "# COMMAND" (the command as typed) followed by
its output; kubectl-hybrid collect writes that layout. Each output is parsed
into items (routes, neighbours, FDB entries, nft tables, sets, elements,
chains and rules, HNS networks and their policies, HNS endpoints and their
policies, namespaces, load balancers, adapters) and compared, as sets, with
the items of the twin's answer to the same command on the same node.

Not differences: the order the kernel or HNS lists things in, GUIDs and IDs
no algorithm derives (HNS object IDs, sandbox IDs in names, the router
port's GUID), timers and counters (neighbour states other than PERMANENT,
route expiry, nft counters and handles, endpoint counts) and column widths.

Each discrepancy names the node, the command, the expected and the actual
item, the component that writes it (Felix, kube-proxy, HNS via
calico-node-windows or kube-proxy-windows, the CNI plugin) and the likely
causes, each with the command that confirms it.

Commands read (Linux nodes):
  ip route
  ip -d link show vxlan.calico
  ip neigh show dev vxlan.calico
  bridge fdb show dev vxlan.calico
  nft list ruleset, nft list table ip kube-proxy  (kube-proxy's tables are
      compared; Felix's are listed as not compared, the twin's view of them
      is simplified)
Commands read (Windows nodes):
  Get-HnsNetwork | ConvertTo-Json -Depth 10
  Get-HnsEndpoint | ConvertTo-Json -Depth 10
  hnsdiag list all
  Get-HnsPolicyList
  Get-NetAdapter
  ipconfig /all  (parsed, not compared: the twin does not emulate it)

A command typed with a pipeline after one of these ("ip route | grep X",
"Get-NetAdapter | Format-Table Name, MacAddress") is compared with the
twin's answer to the same whole line: both are read with the command's
parser, and a line it cannot read is compared as text (blanks collapsed,
GUIDs and sandbox IDs left out). Any other command is compared line by
line when the twin emulates it, and listed as not compared otherwise. An
output cut short with "..." lines is compared for what it shows only.

Exit codes: 0 no discrepancy, 1 discrepancies, 2 bad input (the file and
line that cannot be read).`,
		Example: `  kubectl-hybrid verify --actual examples/verify-actual --lab
  kubectl-hybrid verify --actual examples/verify-actual --lab -o json`,
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
	cmd.Flags().StringVar(&o.Actual, "actual", "", "Folder of real command outputs: DIR/NODE/FILE, first line \"# COMMAND\"")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "text", "Output format: text or json")
	return cmd
}

// Complete refuses positional arguments.
func (o *VerifyOptions) Complete(args []string) error {
	if len(args) > 0 {
		return cmdutil.UsageError("verify takes no arguments; give the folder with --actual DIR")
	}
	return nil
}

// Validate checks the flags.
func (o *VerifyOptions) Validate() error {
	if o.Actual == "" {
		return cmdutil.UsageError("--actual DIR is required (kubectl-hybrid collect --output-dir DIR writes one)")
	}
	switch o.Output {
	case "text", "json":
	default:
		return cmdutil.UsageError("--output %q: use text or json", o.Output)
	}
	return o.Input.Validate()
}

// Run reads the outputs, builds the twin and compares.
func (o *VerifyOptions) Run() error {
	outs, err := verify.ReadDir(o.Actual)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
	}
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	res, err := verify.Verify(outs, NewTwinShell(c))
	if err != nil {
		var ie *verify.InputError
		if errors.As(err, &ie) {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
		}
		return err
	}
	if o.Output == "json" {
		enc := json.NewEncoder(textsafe.Raw(o.streams.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printVerify(o.streams.Out, res)
	}
	if len(res.Discrepancies) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative}
	}
	return nil
}

func printVerify(w io.Writer, res *verify.Result) {
	for _, d := range res.Discrepancies {
		fmt.Fprintf(w, "%s: %s: %s %s\n", d.Node, d.Command, d.Change, d.Kind)
		if d.Expected != nil {
			fmt.Fprintf(w, "  expected: %s\n", d.Expected)
		}
		if d.Actual != nil {
			fmt.Fprintf(w, "  actual:   %s\n", d.Actual)
		}
		if d.Children > 0 {
			fmt.Fprintf(w, "  with %d items of it (elements, rules or policies)\n", d.Children)
		}
		fmt.Fprintf(w, "  produced by: %s\n", d.Producer)
		fmt.Fprintf(w, "  likely causes:\n")
		for _, c := range d.Causes {
			fmt.Fprintf(w, "    - %s\n      confirm: %s\n", c.Cause, strings.ReplaceAll(c.Confirm, "NODE", d.Node))
		}
	}
	for _, n := range res.NotCompared {
		fmt.Fprintf(w, "not compared: %s: %s: %s\n", n.Node, n.Command, n.Reason)
	}
	fmt.Fprintf(w, "discrepancies: %d (%d outputs of %d nodes, %d items read)\n", len(res.Discrepancies), res.Outputs, res.Nodes, res.Items)
}

// TwinShell answers node commands from the twin through the console,
// which compiles each node on first use.
type TwinShell struct {
	tw    console.Twin
	nodes map[string]*corev1.Node
}

// NewTwinShell answers for the cluster's nodes.
func NewTwinShell(c *model.Cluster) *TwinShell {
	s := &TwinShell{tw: console.FromCluster(c), nodes: map[string]*corev1.Node{}}
	for _, n := range c.Nodes {
		s.nodes[n.Name] = n
	}
	return s
}

// Node says whether the twin has the node and whether it runs Windows.
func (s *TwinShell) Node(name string) (bool, bool) {
	n, ok := s.nodes[name]
	if !ok {
		return false, false
	}
	return true, n.Labels[corev1.LabelOSStable] == "windows"
}

// Answer is the one place verify asks the emulation for a command's
// output: a Windows command line goes whole (a PowerShell pipeline), a
// Linux one as its words.
func (s *TwinShell) Answer(node, command string) (string, error) {
	known, win := s.Node(node)
	if !known {
		return "", fmt.Errorf("no node %s", node)
	}
	argv := []string{command}
	// A Linux command line with a pipeline goes whole too: the console
	// runs its filters as the shell would.
	if !win && !strings.Contains(command, "|") {
		words, err := console.SplitCommand(command)
		if err != nil {
			return "", err
		}
		argv = words
	}
	out, err := console.Exec(s.tw, console.Target{Kind: console.KindNode, Name: node}, argv)
	if err != nil {
		return "", err
	}
	if out.Code != 0 {
		return "", fmt.Errorf("exit code %d: %s", out.Code, strings.TrimSpace(out.Stderr))
	}
	return out.Stdout, nil
}
