package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// DumpOptions is `kubectl-hybrid dump`: write what a live read gives, so that
// `-f dump.yaml` reproduces it offline.
type DumpOptions struct {
	Kube    *genericclioptions.ConfigFlags
	Limits  ReadLimits
	Output  string
	streams genericiooptions.IOStreams
}

// NewCmdDump builds the dump command.
func NewCmdDump(streams genericiooptions.IOStreams) *cobra.Command {
	o := &DumpOptions{streams: streams, Kube: newKubeFlags()}
	cmd := &cobra.Command{
		Use:   "dump [-o yaml|json]",
		Short: "Write what the tool reads from the cluster, for offline use with -f",
		Long: `Read the cluster of the current kubeconfig context the way every command does
without -f or --lab — only the kinds the twin models, never Secrets — and
write it as one v1 List: the objects in the order they were read, each as the
API server gave it without metadata.managedFields, followed where they occur by
the configuration documents kubeadm keeps in kube-system ConfigMaps
(ClusterConfiguration, KubeletConfiguration, KubeProxyConfiguration).

Any command run with -f on the dump gives what it gives on the live cluster.`,
		Example: `  # Save the cluster, then work offline
  kubectl-hybrid dump > cluster.yaml
  kubectl-hybrid get ipamblocks -f cluster.yaml

  # Another context, as JSON
  kubectl-hybrid dump --context prod -o json > prod.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "Output format: yaml or json")
	o.Kube.AddFlags(cmd.Flags())
	o.Limits.AddFlags(cmd.Flags(), false)
	return cmd
}

// Validate checks the output format.
func (o *DumpOptions) Validate() error {
	switch o.Output {
	case "yaml", "json":
		return nil
	}
	return usageError("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", o.Output)
}

// Run reads the cluster and writes the List.
func (o *DumpOptions) Run() error {
	snap, err := readLive(o.Kube, o.Limits, o.streams)
	if err != nil {
		return err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", w)
	}
	return writeList(o.streams.Out, snap, o.Output)
}

// writeList writes the snapshot's objects, as read, in one v1 List the way
// kubectl get -o yaml|json prints one.
func writeList(w interface{ Write([]byte) (int, error) }, snap *model.Snapshot, format string) error {
	items := make([]any, len(snap.Objects))
	for i, obj := range snap.Objects {
		items[i] = obj.Raw
	}
	list := map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": ""},
		"items":      items,
	}
	var (
		out []byte
		err error
	)
	if format == "json" {
		out, err = json.MarshalIndent(list, "", "    ")
		out = append(out, '\n')
	} else {
		out, err = yaml.Marshal(list)
	}
	if err != nil {
		return fmt.Errorf("writing the dump: %w", err)
	}
	_, err = textsafe.Raw(w).Write(out)
	return err
}

// newKubeFlags are kubectl's connection flags (cmdutil.NewKubeFlags).
func newKubeFlags() *genericclioptions.ConfigFlags { return cmdutil.NewKubeFlags() }

// kubeNamespace is the namespace of the kubeconfig's current context
// ("default" when it names none), for -n's default on a live cluster.
func kubeNamespace(kube *genericclioptions.ConfigFlags) string {
	ns, _, err := kube.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// readLive reads the cluster the kubeconfig flags point at. Progress goes to
// stderr only when it is a terminal.
func readLive(kube *genericclioptions.ConfigFlags, lim ReadLimits, streams genericiooptions.IOStreams) (*model.Snapshot, error) {
	if cmdutil.NoCluster(kube) {
		return nil, usageError("no cluster given: use -f FILE|DIR|- or --lab, or a kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config) for a live cluster")
	}
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return nil, &exitError{code: ExitBadInput, err: fmt.Errorf("kubeconfig: %w", err)}
	}
	opts := lim.live()
	opts.Progress = live.ProgressWriter(streams.ErrOut)
	snap, err := live.Read(context.Background(), cfg, opts)
	if err != nil {
		var unreachable *live.UnreachableError
		var server *live.ServerError
		var limit *live.LimitError
		if errors.As(err, &unreachable) || errors.As(err, &server) || errors.As(err, &limit) {
			return nil, &exitError{code: ExitInternal, err: err}
		}
		return nil, err // *load.Error: exit 2 with the object named, as for a file
	}
	return snap, nil
}
