package plancmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan/migrate"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// PlanMigrateOptions is `kubectl-hybrid plan migrate`.
type PlanMigrateOptions struct {
	Input     Input
	To        string
	Output    string
	OutputDir string
	NoReach   bool

	request migrate.Request
	streams genericiooptions.IOStreams
}

// NewCmdPlanMigrate builds the migrate command.
func NewCmdPlanMigrate(streams genericiooptions.IOStreams, in Input) *cobra.Command {
	o := &PlanMigrateOptions{streams: streams, Input: in}
	cmd := &cobra.Command{
		Use:   "migrate [-f FILE|DIR|-] [--lab] [--to FILE] [flags]",
		Short: "Plan the ordered steps that make a running cluster ready for Windows nodes, each proven on the twin",
		Long: `Plan the migration of the cluster the input describes to what Windows nodes
need: by default what check --expect-windows demands (IPAM strictAffinity,
IP pools on VXLAN without CrossSubnet, BGP off, the kubernetes-services-endpoint
ConfigMap, windowsDataplane HNS and serviceCIDRs in the Installation), or the
Installation and IPAMConfiguration given with --to.

Every change goes through the Installation or the IPAMConfiguration, never an
IPPool edit: the Tigera operator owns its pools and writes the Installation's
version back (https://docs.tigera.io/calico/latest/networking/ipam/migrate-pools).
Each step is a what-if file; the twin is built after each one and compared with
the one before (the changes: routes, neighbours, FDB, nftables, HNS, workload
rollouts, TigeraStatus, reachability), and answers the step's verification
commands (ip route | grep vxlan, kubectl get ippools, calico-node's backend
and readiness probe, kubectl get tigerastatus, calicoctl node status,
calicoctl ipam show --show-configuration). All expected output is simulated.
The text and Markdown print the changes most of ten or more nodes share once,
as diff's text does; JSON lists every node's.

The preflight reads the cluster for what the steps run into: UDP 4789 between
all nodes, TCP 179 no longer needed, ipBlock rules naming node addresses,
BGP peers and advertised services, borrowed addresses, the MTU and direct pool
edits. The rollback is the same patches in reverse order, possible only until
the first Windows node joins.

Exit codes: 0 when the migrated twin passes check --expect-windows and no
preflight finding blocks, 1 otherwise (or no Installation to change), 2 for
bad input or usage.`,
		Example: `  # The main cluster of the examples, step by step
  kubectl-hybrid plan migrate -f examples/main-cluster

  # The steps as what-if files and RUNBOOK.md; the cluster after step 2:
  kubectl-hybrid plan migrate -f examples/main-cluster --output-dir migrate/
  kubectl-hybrid get ippools -f examples/main-cluster -f migrate/01-strict-affinity.yaml -f migrate/02-encapsulation.yaml

  # To a given Installation, as JSON
  kubectl-hybrid plan migrate -f examples/main-cluster --to examples/what-if/main-cluster-migrated.yaml -o json`,
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
	f.StringVar(&o.To, "to", "", "A file with the target Installation and/or IPAMConfiguration (default: what check --expect-windows demands)")
	f.StringVarP(&o.Output, "output", "o", "text", "Output format: text, markdown or json")
	f.StringVar(&o.OutputDir, "output-dir", "", "Write RUNBOOK.md and one what-if file per step (NN-<step>.yaml) into this directory")
	f.BoolVar(&o.NoReach, "no-reach", false, "Leave the reachability difference out of each step's changes (faster on large clusters)")
	return cmd
}

// Complete reads --to.
func (o *PlanMigrateOptions) Complete(args []string) error {
	if len(args) > 0 {
		return cmdutil.UsageError("plan migrate takes no arguments, got %q", args[0])
	}
	o.request.Diff = diff.Options{NoReach: o.NoReach}
	if o.To == "" {
		return nil
	}
	t, err := readTarget(o.To)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
	}
	o.request.To = t
	return nil
}

// readTarget loads --to: an Installation and/or an IPAMConfiguration, and
// nothing else.
func readTarget(name string) (*migrate.Target, error) {
	snap, err := load.Load(load.Options{Filenames: []string{name}})
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	t := &migrate.Target{Source: name}
	for _, o := range snap.Objects {
		switch v := o.Typed.(type) {
		case *operator.Installation:
			t.Installation = v
		case *calico.IPAMConfiguration:
			t.IPAM = v
		default:
			return nil, fmt.Errorf("--to %s: %s: a %s; the target is an operator.tigera.io Installation and/or a projectcalico.org IPAMConfiguration", name, o.Origin, o.GVK.Kind)
		}
	}
	if t.Installation == nil && t.IPAM == nil {
		return nil, fmt.Errorf("--to %s: no Installation and no IPAMConfiguration in the file", name)
	}
	return t, nil
}

// Validate checks the flags.
func (o *PlanMigrateOptions) Validate() error {
	switch o.Output {
	case "text", "markdown", "json":
	default:
		return cmdutil.UsageError("unable to match a printer suitable for the output format %q, allowed formats are: json,markdown,text", o.Output)
	}
	return o.Input.Validate()
}

// Run loads the input, plans and prints.
func (o *PlanMigrateOptions) Run() error {
	in, apiServer, err := o.Input.PlanInput(o.streams)
	if err != nil {
		return err
	}
	if apiServer != "" {
		o.request.APIServer = apiServer
	}
	m, err := migrate.Compute(in, o.request)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: err}
	}
	if o.OutputDir != "" {
		if err := writeDir(o.OutputDir, migrate.Files(m)); err != nil {
			return err
		}
	}
	out := o.streams.Out
	switch o.Output {
	case "json":
		err = migrate.WriteJSON(textsafe.Raw(out), m)
	case "markdown":
		err = migrate.WriteMarkdown(out, m)
	default:
		err = migrate.WriteText(out, m)
	}
	if err != nil {
		return err
	}
	blocking := 0
	for _, f := range m.Preflight {
		if f.Blocking {
			blocking++
		}
	}
	if blocking > 0 || len(m.After) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("%d blocking preflight finding(s); the migrated cluster has %d check error(s)", blocking, len(m.After))}
	}
	return nil
}
