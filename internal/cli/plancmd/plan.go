// Package plancmd is the `plan` commands: join-windows (the files that
// join Windows machines, proven on the predicted twin) and migrate (a
// runbook of steps, each proven on its twin).
package plancmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// Input is the input flags of a plan command, which also read the twin's
// snapshot for the plan to layer its files on.
type Input interface {
	cmdutil.Input
	// PlanInput reads the input and builds its twin, keeping the
	// snapshot; apiServer is the live cluster's address, if any.
	PlanInput(streams genericiooptions.IOStreams) (in plan.Input, apiServer string, err error)
}

// NewCmdPlan groups the plan commands; newInput makes each one's input
// flags.
func NewCmdPlan(streams genericiooptions.IOStreams, newInput func() Input) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Plan a change to the cluster and prove it on the twin",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(NewCmdPlanJoinWindows(streams, newInput()))
	cmd.AddCommand(NewCmdPlanMigrate(streams, newInput()))
	return cmd
}

// PlanJoinWindowsOptions is `kubectl-hybrid plan join-windows`.
type PlanJoinWindowsOptions struct {
	Input        Input
	IPs          []string
	WindowsBuild string
	CPU          string
	Memory       string
	NodesFile    string
	Output       string
	OutputDir    string

	names   []string
	request plan.Request
	streams genericiooptions.IOStreams
}

// NewCmdPlanJoinWindows builds the join-windows command.
func NewCmdPlanJoinWindows(streams genericiooptions.IOStreams, in Input) *cobra.Command {
	o := &PlanJoinWindowsOptions{streams: streams, Input: in}
	cmd := &cobra.Command{
		Use:   "join-windows NODE --ip ADDRESS [NODE --ip ADDRESS …] [-f FILE|DIR|-] [--lab] [flags]",
		Short: "Render every file and step that joins Windows nodes, and prove the result on the twin",
		Long: `Plan the join of Windows Server nodes to the cluster the input describes.
Every value comes from the cluster: the API endpoint, the Kubernetes
version, the service and pod networks, the IP pool's block size, VNI and
port, the CA hash (from kube-public/cluster-info), the Windows build's
RuntimeClass and the Linux DaemonSets without an OS selector. A value the
input does not hold is a named placeholder with the command that fills it.

The plan is the cluster-side manifests the cluster lacks, each host's files
(C:\k\join.yaml, C:\k\patches\kubeletconfiguration.yaml and one PowerShell
script per host step, each safe to run again), and an ordered runbook. The
plan is then applied to the twin as a what-if: the nodes' blocks, tunnel
addresses, allocatable pods, readiness and agents, check on the result and
traces between Linux and Windows pods (simulated).

A cluster that cannot take Windows nodes (BGP, CrossSubnet or IP-in-IP,
strictAffinity off, no IPv4 pool for Windows, a full pool, an unsupported
Kubernetes or Windows version) gets its blocking findings and no bundle.

Exit codes: 0 when the predicted cluster is clean, 1 for blocking findings
or a predicted cluster with errors, 2 for bad input or usage.`,
		Example: `  # A Windows node for the main cluster once it is migrated to VXLAN
  kubectl-hybrid plan join-windows win-1 --ip 192.168.10.31 --cpu 4 --memory 8Gi -f examples/main-cluster -f examples/what-if/main-cluster-migrated.yaml

  # Two nodes, the files laid out per machine with RUNBOOK.md
  kubectl-hybrid plan join-windows win-1 --ip 192.168.10.31 win-2 --ip 192.168.10.32 -f examples/main-cluster -f examples/what-if/main-cluster-migrated.yaml --output-dir join/

  # Every object of the plan as one YAML stream
  kubectl-hybrid plan join-windows win-1 --ip 192.168.10.31 -f examples/main-cluster -f examples/what-if/main-cluster-migrated.yaml -o yaml`,
		RunE: func(_ *cobra.Command, args []string) error {
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
	f.StringArrayVar(&o.IPs, "ip", nil, "The node's address on the node network, one per NODE in order")
	f.StringVar(&o.WindowsBuild, "windows-build", "", "Windows build of the hosts: 10.0.26100 (2025) or 10.0.20348 (2022); default: the cluster's Windows nodes' build, else 10.0.26100")
	f.StringVar(&o.CPU, "cpu", "", "The hosts' CPU count, for the twin's scheduler (e.g. 4)")
	f.StringVar(&o.Memory, "memory", "", "The hosts' memory, for the twin's scheduler (e.g. 8Gi)")
	f.StringVar(&o.NodesFile, "nodes", "", "A file listing nodes, one \"NAME ADDRESS [BUILD]\" per line (# starts a comment)")
	f.StringVarP(&o.Output, "output", "o", "text", "Output format: text, markdown, yaml or json")
	f.StringVar(&o.OutputDir, "output-dir", "", "Write the files as they go onto machines (cluster/, NODE/C/k/…) and RUNBOOK.md into this directory")
	return cmd
}

// Complete pairs the NODE arguments with --ip and reads --nodes.
func (o *PlanJoinWindowsOptions) Complete(args []string) error {
	if len(args) != len(o.IPs) {
		return cmdutil.UsageError("give one --ip per NODE: %d node(s), %d --ip", len(args), len(o.IPs))
	}
	for i, name := range args {
		o.request.Nodes = append(o.request.Nodes, plan.NodeRequest{Name: name, Address: o.IPs[i]})
	}
	if o.NodesFile != "" {
		nodes, err := readNodesFile(o.NodesFile)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
		}
		o.request.Nodes = append(o.request.Nodes, nodes...)
	}
	for i := range o.request.Nodes {
		n := &o.request.Nodes[i]
		if n.WindowsBuild == "" {
			n.WindowsBuild = o.WindowsBuild
		}
		n.CPU, n.Memory = o.CPU, o.Memory
	}
	return nil
}

func readNodesFile(name string) ([]plan.NodeRequest, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--nodes: %w", err)
	}
	defer f.Close()
	return parseNodes(f, name)
}

// parseNodes reads "NAME ADDRESS [BUILD]" lines; # starts a comment.
func parseNodes(r io.Reader, name string) ([]plan.NodeRequest, error) {
	var out []plan.NodeRequest
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		switch len(fields) {
		case 0:
			continue
		case 2, 3:
			n := plan.NodeRequest{Name: fields[0], Address: fields[1]}
			if len(fields) == 3 {
				n.WindowsBuild = fields[2]
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("%s:%d: want NAME ADDRESS [BUILD], got %q", name, line, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--nodes %s: %w", name, err)
	}
	return out, nil
}

// Validate checks the flags and the nodes.
func (o *PlanJoinWindowsOptions) Validate() error {
	switch o.Output {
	case "text", "markdown", "yaml", "json":
	default:
		return cmdutil.UsageError("unable to match a printer suitable for the output format %q, allowed formats are: json,markdown,text,yaml", o.Output)
	}
	if err := plan.ValidateRequest(o.request); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	return o.Input.Validate()
}

// Run loads the input, plans and prints; the snapshot is kept (Build, not
// BuildOwned) because the proof layers the plan on it.
func (o *PlanJoinWindowsOptions) Run() error {
	in, apiServer, err := o.Input.PlanInput(o.streams)
	if err != nil {
		return err
	}
	if apiServer != "" {
		o.request.APIServer = apiServer
	}
	b, err := plan.Compute(in, o.request)
	if err != nil {
		return err
	}
	if o.OutputDir != "" && !b.Refused {
		if err := writeDir(o.OutputDir, plan.Files(b)); err != nil {
			return err
		}
	}
	out := o.streams.Out
	switch o.Output {
	case "json":
		err = plan.WriteJSON(textsafe.Raw(out), b)
	case "yaml":
		err = plan.WriteYAML(textsafe.Raw(out), b)
	case "markdown":
		err = plan.WriteMarkdown(out, b)
	default:
		err = plan.WriteText(out, b)
	}
	if err != nil {
		return err
	}
	if b.Refused {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("the cluster cannot take the Windows node(s): %d blocking finding(s)", len(b.Findings))}
	}
	if b.Proof != nil && !b.Proof.Clean {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("the predicted cluster is not clean")}
	}
	return nil
}

// writeDir writes the bundle's files under dir.
func writeDir(dir string, files map[string]string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("--output-dir: %w", err)}
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("--output-dir: %w", err)}
		}
	}
	return nil
}
