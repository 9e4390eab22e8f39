package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// InputOptions are the flags every command that reads a cluster shares.
type InputOptions struct {
	Filenames []string
	Lab       bool
	// Kube are kubectl's connection flags (--kubeconfig, --context, …),
	// used when neither -f nor --lab is given.
	Kube *genericclioptions.ConfigFlags
}

// AddFlags registers -f/--filename and --lab.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster of the seed articles; with -f, the files add to or replace its objects")
	o.Kube = newKubeFlags()
	o.Kube.AddFlags(fs)
}

// Live reports whether the input is the cluster of the kubeconfig.
func (o *InputOptions) Live() bool { return len(o.Filenames) == 0 && !o.Lab }

// Validate has nothing to check: without -f and --lab the input is the
// kubeconfig's cluster (readLive says so when there is none).
func (o *InputOptions) Validate() error { return nil }

// Build loads the input and builds the twin. Loader warnings and objects the
// API server would reject are reported on stderr; building goes on without
// them.
func (o *InputOptions) Build(streams genericiooptions.IOStreams) (*model.Cluster, error) {
	c, _, err := o.BuildUnread(streams)
	return c, err
}

// BuildUnread is Build that also returns the kinds a live read could not
// list (model.Snapshot.Unread), for commands that must not judge a cluster
// they only partly saw.
func (o *InputOptions) BuildUnread(streams genericiooptions.IOStreams) (*model.Cluster, []model.UnreadKind, error) {
	var snap *model.Snapshot
	var err error
	if o.Live() {
		snap, err = readLive(o.Kube, streams)
	} else {
		// DropRaw: the twin is built from the typed objects; the generic
		// copies would double the snapshot's memory.
		snap, err = load.Load(load.Options{Filenames: o.Filenames, Lab: o.Lab, Stdin: streams.In, DropRaw: true})
	}
	if err != nil {
		return nil, nil, err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	unread := snap.Unread
	// The snapshot is not read again: the twin takes its objects.
	c, err := engine.BuildOwned(snap)
	if err != nil {
		return nil, nil, err
	}
	reportRejections(streams.ErrOut, c)
	return c, unread, nil
}

func reportRejections(w io.Writer, c *model.Cluster) {
	for _, r := range c.Rejected {
		fmt.Fprintf(w, "%s\n", r.Message)
	}
}
