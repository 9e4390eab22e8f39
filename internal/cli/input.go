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
	// Validation is --validate: warn (the default), strict (or true),
	// ignore (or false).
	Validation string
	validation load.Validation
	// Kube are kubectl's connection flags (--kubeconfig, --context, …),
	// used when neither -f nor --lab is given.
	Kube *genericclioptions.ConfigFlags
}

// AddFlags registers -f/--filename, --lab and --validate.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster of the seed articles; with -f, the files add to or replace its objects")
	fs.StringVar(&o.Validation, "validate", "warn",
		"What to do with objects the API server would refuse and with unknown fields: "+
			"warn (refuse such objects with exit 2, warn about unknown fields), "+
			"strict or true (unknown fields are refused too), "+
			"ignore or false (keep everything, with a warning for each)")
	o.Kube = newKubeFlags()
	o.Kube.AddFlags(fs)
}

// Live reports whether the input is the cluster of the kubeconfig.
func (o *InputOptions) Live() bool { return len(o.Filenames) == 0 && !o.Lab }

// Validate reads --validate. Without -f and --lab the input is the
// kubeconfig's cluster (readLive says so when there is none).
func (o *InputOptions) Validate() error {
	if o.Validation == "" {
		return nil // options built in code: the default
	}
	v, ok := load.ParseValidation(o.Validation)
	if !ok {
		return usageError("--validate %q: use warn, strict (or true) or ignore (or false)", o.Validation)
	}
	o.validation = v
	return nil
}

// Build loads the input and builds the twin. Loader warnings and objects the
// API server would reject are reported on stderr; building goes on without
// them.
func (o *InputOptions) Build(streams genericiooptions.IOStreams) (*model.Cluster, error) {
	var snap *model.Snapshot
	var err error
	if o.Live() {
		snap, err = readLive(o.Kube, streams)
	} else {
		// DropRaw: the twin is built from the typed objects; the generic
		// copies would double the snapshot's memory.
		snap, err = load.Load(load.Options{Filenames: o.Filenames, Lab: o.Lab, Stdin: streams.In, DropRaw: true, Validation: o.validation})
	}
	if err != nil {
		return nil, err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	// The snapshot is not read again: the twin takes its objects.
	c, err := engine.BuildOwned(snap)
	if err != nil {
		return nil, err
	}
	reportRejections(streams.ErrOut, c)
	return c, nil
}

func reportRejections(w io.Writer, c *model.Cluster) {
	for _, r := range c.Rejected {
		fmt.Fprintf(w, "%s\n", r.Message)
	}
}
