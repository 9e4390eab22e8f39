package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// DiffOptions is `kubectl-hybrid diff`: the differential twin, what
// changes between two clusters.
type DiffOptions struct {
	// Input is the before twin (-f, --lab, or the live cluster).
	Input InputOptions
	// WhatIf files are layered on the before twin's input to make the
	// after twin; To files are the after twin by themselves.
	WhatIf []string
	To     []string
	Output string
	// NoReach leaves out the reachability difference; Nodes adds the
	// nodes as its sources.
	NoReach bool
	Nodes   bool

	streams genericiooptions.IOStreams
}

// NewCmdDiff builds the diff command.
func NewCmdDiff(streams genericiooptions.IOStreams) *cobra.Command {
	o := &DiffOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "diff (-f FILE... | --lab) (--what-if FILE... | --to FILE...) [--nodes] [--no-reach] [-o text|json]",
		Short: "The differential twin: what changes on every node, workload and path between two clusters",
		Long: `Build two twins and report every difference between them, compared as
sets, not as text:

  nodes         per node: routes (ip route), neighbours and FDB entries of
                vxlan.calico, the nftables rulesets of kube-proxy and Felix
                (sets, elements, chains and rules; a chain whose rules only
                moved is named), HNS networks with their RemoteSubnetRoutes,
                HNS endpoints with their policies and ACLs, HNS load
                balancers, and the VFP rules of every port
  workloads     DaemonSets, Deployments and StatefulSets whose pod template
                changes, field by field, with the rollout and the pods it
                restarts (none with the OnDelete strategy)
  tigerastatus  the operator's conditions that change
  reachability  the cells of the reach matrix (every namespace; with
                --nodes, the nodes as sources too) whose verdict changes:
                gained, lost or changed, with both verdicts and reasons
  objects       the API objects added, removed or changed, field by field

In the text output, when ten or more nodes of one OS change, the lines
most of them share are printed once ("shared by most of the N changed linux
nodes"), and each of those nodes lists only where it differs: "not -" and
"not +" for a shared line it lacks, "-" and "+" for a line of its own. A
change of the pools' encapsulation replaces on every node the routes to
every other node's blocks, which this prints once instead of once a node.
JSON lists every node's lines whole.

Only the parts whose inputs differ are compiled and compared (objects are
compared by the hash of their JSON first): a change that no route, rule or
HNS object is made from compiles no dataplane.

The before twin is the input (-f, --lab, or the cluster of the kubeconfig).
The after twin is either the same input with --what-if files layered on it
(as a later -f layers: an object replaces the one with its kind, namespace
and name) or the --to files alone.

A what-if file can also delete and act. An object annotated
hybrid.kubectl-hybrid.io/delete: "true" removes the object of its kind,
namespace and name. One annotated hybrid.kubectl-hybrid.io/action does an
imperative step on it instead of replacing it:

  approve, deny   CertificateSigningRequest (kubectl certificate approve|deny)
  cordon, uncordon Node (kubectl cordon|uncordon)
  taint           Node: adds the marker's spec.taints (kubectl taint)
  drain           Node: cordons it and evicts every pod but DaemonSet and
                  mirror pods (kubectl drain --ignore-daemonsets --force
                  --delete-emptydir-data); controllers re-create theirs
                  where the scheduler puts them (PodDisruptionBudgets are
                  not modelled)
  restart         Deployment, DaemonSet, StatefulSet: sets the template
                  annotation kubectl.kubernetes.io/restartedAt (kubectl
                  rollout restart; the value is simulated), which rolls
                  the pods

Only the marker's kind, name, annotations (and spec.taints for taint) are
read. The markers work wherever files are layered (-f after --lab or an
earlier -f), not only here.

Exit status: 0 no difference, 1 differences, 2 bad input.`,
		Example: `  # What a second Windows node changes in the lab
  kubectl-hybrid diff --lab --what-if examples/what-if/second-windows-node

  # Drain a node: which pods move, which paths change
  kubectl-hybrid diff --lab --what-if examples/actions/drain-k8s-lab-node-1.yaml -o json

  # Two clusters as files
  kubectl-hybrid diff -f examples/main-cluster --to examples/main-cluster --to examples/what-if/main-cluster-migrated.yaml`,
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
	f.StringArrayVar(&o.WhatIf, "what-if", nil, "File or directory layered on the input to make the after twin (objects replace, delete or act on the input's); repeatable")
	f.StringArrayVar(&o.To, "to", nil, "File or directory that is the after twin by itself; repeatable")
	f.StringVarP(&o.Output, "output", "o", "text", "Output format: text or json")
	f.BoolVar(&o.NoReach, "no-reach", false, "Leave out the reachability difference")
	f.BoolVar(&o.Nodes, "nodes", false, "Add every node (its host network) as a source of the reachability difference; a row per node")
	return cmd
}

// Complete takes no arguments.
func (o *DiffOptions) Complete(args []string) error {
	if len(args) > 0 {
		return usageError("diff takes no arguments; give the after twin with --what-if or --to")
	}
	return nil
}

// Validate checks the flags.
func (o *DiffOptions) Validate() error {
	switch o.Output {
	case "text", "json":
	default:
		return usageError("--output %q: use text or json", o.Output)
	}
	switch {
	case len(o.WhatIf) == 0 && len(o.To) == 0:
		return usageError("give the after twin: --what-if FILE (layered on the input) or --to FILE")
	case len(o.WhatIf) > 0 && len(o.To) > 0:
		return usageError("--what-if and --to: give one (--what-if layers on the input, --to replaces it)")
	}
	for _, f := range append(append([]string(nil), o.WhatIf...), o.To...) {
		if f == "-" {
			return usageError("--what-if and --to take files or directories, not - (stdin is the input's)")
		}
	}
	return o.Input.Validate()
}

// Run builds both twins, compares them and prints the difference; the
// exit code is 1 when they differ.
func (o *DiffOptions) Run() error {
	before, after, err := o.build()
	if err != nil {
		return err
	}
	r, err := diff.Compare(before, after, diff.Options{NoReach: o.NoReach,
		Reach: &reach.Options{AllNamespaces: true, Nodes: o.Nodes}})
	if err != nil {
		return err
	}
	if o.Output == "json" {
		err = r.WriteJSON(textsafe.Raw(o.streams.Out))
	} else {
		err = r.WriteText(o.streams.Out)
	}
	if err != nil {
		return err
	}
	if !r.Empty() {
		return &exitError{code: ExitNegative}
	}
	return nil
}

// build reads the before twin's input once and builds both twins: with
// --what-if the after twin's input is the same objects with the files
// layered on them.
func (o *DiffOptions) build() (before, after *model.Cluster, err error) {
	base, err := o.Input.Snapshot(o.streams, true)
	if err != nil {
		return nil, nil, err
	}
	var next *model.Snapshot
	if len(o.WhatIf) > 0 {
		next, err = load.Load(load.Options{Base: base, Filenames: o.WhatIf, DropRaw: true,
			Validation: o.Input.validation, Limits: o.Input.Limits.load()})
	} else {
		next, err = load.Load(load.Options{Filenames: o.To, DropRaw: true,
			Validation: o.Input.validation, Limits: o.Input.Limits.load()})
		if next != nil {
			next.Network.CIDR, next.Network.Gateway = o.Input.NodeNetwork, o.Input.NodeGateway
		}
	}
	if err != nil {
		return nil, nil, err
	}
	// The layered snapshot carries the base's warnings; --to has its own.
	warnings := next.Warnings
	if len(o.To) > 0 {
		warnings = append(append([]string(nil), base.Warnings...), warnings...)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", w)
	}
	// Build copies the snapshot's objects, which the after twin's
	// snapshot shares; BuildOwned may then take them.
	if before, err = engine.Build(base); err != nil {
		return nil, nil, err
	}
	if after, err = engine.BuildOwned(next); err != nil {
		return nil, nil, err
	}
	reportRejections(o.streams.ErrOut, after)
	reportAssumptions(o.streams.ErrOut, after)
	return before, after, nil
}
