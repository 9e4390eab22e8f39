package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// GetOptions is `kubectl-hybrid get`.
type GetOptions struct {
	Input         InputOptions
	PrintFlags    *get.PrintFlags
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	FieldSelector string
	Node          string
	Now           cmdutil.NowFlag

	args    []string
	now     func() time.Time
	streams genericiooptions.IOStreams
}

// NewCmdGet builds the get command.
func NewCmdGet(streams genericiooptions.IOStreams) *cobra.Command {
	o := &GetOptions{streams: streams, now: clock, PrintFlags: get.NewGetPrintFlags()}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME... [flags]",
		Short: "Show the twin's objects with the columns kubectl prints",
		Long: `Show the objects of the built twin — observed and derived alike — the way
kubectl get prints them. Besides the Kubernetes kinds it shows Calico's
ippools, ipamblocks (CIDR, node, allocated/free/reserved addresses) and
blockaffinities, and the operator's tigerastatus; and, from the compiled node
dataplanes, hnsnetworks (hnsnet), hnsendpoints (hnsep), loadbalancers (lb)
(Windows nodes) and routes (every node), optionally for one --node; and
the events the twin's components would record for what it derives
(simulated: one occurrence each, at the twin's time). Kinds
are comma-joined as kubectl's (pods,svc); "all" is pods, services,
daemonsets, deployments, replicasets and statefulsets.

Every kind prints with kubectl's output formats: -o json|yaml (a v1 List
that -f reads back for the Kubernetes kinds), name, wide, jsonpath,
jsonpath-file, custom-columns, custom-columns-file, go-template and
go-template-file, with --sort-by, --no-headers, --show-labels and -L. The
dataplane kinds are printed under the API group dataplane.kubectl-hybrid.io
with their node as the kubernetes.io/hostname label (not Kubernetes
objects: HNS and the kernel hold them). AGE and LAST SEEN are measured
from --now (default: the current time).`,
		Example: `  # The IPAM blocks each lab node claimed
  kubectl-hybrid get ipamblocks --lab

  # Where every pod runs, with its address
  kubectl-hybrid get pods -A -o wide --lab

  # Pods by creation time, with custom columns
  kubectl-hybrid get pods -A --sort-by .metadata.creationTimestamp -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName --lab

  # The Windows node's HNS networks and endpoints
  kubectl-hybrid get hnsnetworks,hnsendpoints --node k8s-lab-win-1 --lab

  # The addresses of the Windows node's HNS endpoints
  kubectl-hybrid get hnsep --node k8s-lab-win-1 -o jsonpath='{.items[*].spec.ipAddress}' --lab

  # What-if: the events of the lab without the Windows dataplane, ages from a fixed moment
  kubectl-hybrid get events -A --lab -f examples/what-if/no-windows-dataplane.yaml --now 2026-11-06T21:20:40Z

  # What-if: the lab without strictAffinity
  kubectl-hybrid get tigerastatus --lab -f examples/what-if/no-strict-affinity.yaml`,
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
	cmd.ValidArgsFunction = completeResourceTypes
	o.Input.AddFlags(cmd.Flags())
	o.PrintFlags.AddFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace (default: the kubeconfig context's when live, else \"default\")")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List objects across all namespaces")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector, as kubectl's -l")
	f.StringVar(&o.FieldSelector, "field-selector", "", "Field selector, as kubectl's --field-selector")
	f.StringVar(&o.Node, "node", "", "For hnsnetworks, hnsendpoints, loadbalancers and routes: the node whose dataplane to show")
	cmdutil.AddNowFlag(f, &o.Now)
	return cmd
}

// Complete records the arguments.
func (o *GetOptions) Complete(args []string) error {
	o.args = args
	return nil
}

// Validate checks the flags.
func (o *GetOptions) Validate() error {
	if len(o.args) == 0 {
		return usageError("you must specify the type of resource to get; known types: %s", joinKnown())
	}
	if o.Node != "" && !isDataplaneKind(o.firstArg()) {
		return usageError("--node applies to hnsnetworks, hnsendpoints, loadbalancers and routes only")
	}
	if _, err := o.printer(); err != nil {
		return err
	}
	return o.Input.Validate()
}

// output is -o's value.
func (o *GetOptions) output() string { return *o.PrintFlags.OutputFormat }

// printer is kubectl's printer for every format but the tables.
func (o *GetOptions) printer() (report.Options, error) {
	var opts report.Options
	out := o.output()
	if (out == report.OutputTable || out == report.OutputWide) && *o.PrintFlags.TemplateFlags.TemplateArgument == "" {
		return opts, nil
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return opts, &exitError{code: ExitBadInput, err: err}
	}
	opts.Printer = p
	opts.Raw = out == report.OutputJSON || out == report.OutputYAML
	opts.Output = out
	if opts.Output == "" {
		opts.Output = "go-template" // --template without -o
	}
	return opts, nil
}

// Run builds the twin and prints the objects.
func (o *GetOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	if o.Namespace == "" && o.Input.Live() {
		// Like kubectl: the current context's namespace.
		o.Namespace = kubeNamespace(o.Input.Kube)
	}
	opts, err := o.printer()
	if err != nil {
		return err
	}
	human := o.PrintFlags.HumanReadableFlags
	if opts.Printer == nil {
		opts.Output = o.output()
	}
	opts.NoHeaders = *o.PrintFlags.NoHeaders
	opts.AllNamespaces = o.AllNamespaces
	opts.ShowLabels = *human.ShowLabels
	opts.ShowKind = *human.ShowKind
	opts.LabelColumns = *human.ColumnLabels
	opts.SortBy = *human.SortBy
	opts.Now = o.Now.Or(o.now)
	req := report.Request{
		Args:          o.args,
		Namespace:     o.Namespace,
		LabelSelector: o.LabelSelector,
		FieldSelector: o.FieldSelector,
		Extra:         extraKinds(func() *model.Cluster { return c }, o.Node, opts.Now),
		Options:       opts,
	}
	var notice string
	if opts.Printer == nil && opts.Output == report.OutputTable {
		// A table fits the terminal; -o wide prints every column whole.
		err = writeStyled(o.streams.Out, true, func(w io.Writer) error {
			var gerr error
			notice, gerr = report.Get(w, c, req)
			return gerr
		}, nil)
	} else {
		notice, err = report.Get(o.streams.Out, c, req)
	}
	if notice != "" {
		fmt.Fprintln(o.streams.ErrOut, notice)
	}
	if err != nil {
		var ee *exitError
		var nf *report.NotFoundError
		switch {
		case errors.As(err, &ee):
			return &exitError{code: ee.code, err: err}
		case errors.As(err, &nf):
			return &exitError{code: ExitNegative, err: err}
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
	for i, r := range report.KnownResources(extraKinds(nil, "", time.Time{})...) {
		if i > 0 {
			s += ", "
		}
		s += r
	}
	return s
}

// completeResourceTypes completes the first argument of get and describe
// with the kinds the twin prints; names would need the input built.
func completeResourceTypes(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, k := range append(report.Kinds(), extraKinds(nil, "", time.Time{})...) {
		if strings.HasPrefix(k.Resource, toComplete) {
			out = append(out, k.Resource)
		}
	}
	if strings.HasPrefix("all", toComplete) {
		out = append(out, "all")
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
