package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// GetOptions is `kubectl-hybrid get`.
type GetOptions struct {
	Input         InputOptions
	Output        string
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	ShowLabels    bool
	LabelColumns  []string
	NoHeaders     bool
	Node          string

	args    []string
	now     func() time.Time
	streams genericiooptions.IOStreams
}

// NewCmdGet builds the get command.
func NewCmdGet(streams genericiooptions.IOStreams) *cobra.Command {
	o := &GetOptions{streams: streams, now: clock}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME... [flags]",
		Short: "Show the twin's objects with the columns kubectl prints",
		Long: `Show the objects of the built twin — observed and derived alike — the way
kubectl get prints them. Besides the Kubernetes kinds it shows Calico's
ippools, ipamblocks (CIDR, node, allocated/free/reserved addresses) and
blockaffinities, and the operator's tigerastatus; and, from the compiled node
dataplanes, hnsnetworks, hnsendpoints, loadbalancers (Windows nodes) and
routes (every node), optionally for one --node.

-o json|yaml prints real Kubernetes objects in a v1 List that -f reads back.`,
		Example: `  # The IPAM blocks each lab node claimed
  kubectl-hybrid get ipamblocks --lab

  # Where every pod runs, with its address
  kubectl-hybrid get pods -A -o wide --lab

  # The Windows node's HNS load balancers, one per Service port
  kubectl-hybrid get loadbalancers --node k8s-lab-win-1 --lab

  # What-if: the lab without strictAffinity
  kubectl-hybrid get tigerastatus --lab -f no-strict-affinity.yaml`,
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
	f.StringVarP(&o.Output, "output", "o", "", "Output format: wide, json, yaml or name")
	f.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace (default: the kubeconfig context's when live, else \"default\")")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List objects across all namespaces")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector, as kubectl's -l")
	f.StringVar(&o.FieldSelector, "field-selector", "", "Field selector, as kubectl's --field-selector")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "Show all labels as the last column")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "Labels to show as columns")
	f.BoolVar(&o.NoHeaders, "no-headers", false, "Don't print headers")
	f.StringVar(&o.Node, "node", "", "For hnsnetworks, hnsendpoints, loadbalancers and routes: the node whose dataplane to show")
	return cmd
}

// Complete records the arguments.
func (o *GetOptions) Complete(args []string) error {
	o.args = args
	return nil
}

// Validate checks the flags.
func (o *GetOptions) Validate() error {
	if _, ok := dataplaneKinds[o.firstArg()]; ok {
		return o.Input.Validate()
	}
	switch o.Output {
	case report.OutputTable, report.OutputWide, report.OutputJSON, report.OutputYAML, report.OutputName:
	default:
		return usageError("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", o.Output)
	}
	if len(o.args) == 0 {
		return usageError("you must specify the type of resource to get; known types: %s", joinKnown())
	}
	return o.Input.Validate()
}

// Run builds the twin and prints the objects.
func (o *GetOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	if kind, ok := dataplaneKinds[o.firstArg()]; ok {
		return getDataplane(o.streams.Out, c, kind, o.Node, o.Output)
	}
	if o.Namespace == "" && o.Input.Live() {
		// Like kubectl: the current context's namespace.
		o.Namespace = kubeNamespace(o.Input.Kube)
	}
	notice, err := report.Get(o.streams.Out, c, report.Request{
		Args:          o.args,
		Namespace:     o.Namespace,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Options: report.Options{
			Output:        o.Output,
			NoHeaders:     o.NoHeaders,
			AllNamespaces: o.AllNamespaces,
			ShowLabels:    o.ShowLabels,
			LabelColumns:  o.LabelColumns,
			Now:           o.now(),
		},
	})
	if notice != "" {
		fmt.Fprintln(o.streams.ErrOut, notice)
	}
	if err != nil {
		var nf *report.NotFoundError
		var ur *report.UnknownResourceError
		if errors.As(err, &nf) {
			return &exitError{code: ExitNegative, err: err}
		}
		if errors.As(err, &ur) {
			return &exitError{code: ExitBadInput, err: err}
		}
		return &exitError{code: ExitBadInput, err: err}
	}
	return nil
}

func (o *GetOptions) firstArg() string {
	if len(o.args) == 0 {
		return ""
	}
	return o.args[0]
}

func joinKnown() string {
	s := ""
	for i, r := range report.KnownResources() {
		if i > 0 {
			s += ", "
		}
		s += r
	}
	return s
}
