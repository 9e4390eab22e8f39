package cli

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// InputOptions are the flags every command that reads a cluster shares.
type InputOptions struct {
	Filenames []string
	Lab       bool
}

// AddFlags registers -f/--filename and --lab.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster of the seed articles; with -f, the files add to or replace its objects")
}

// Validate checks that some input was named.
func (o *InputOptions) Validate() error {
	if len(o.Filenames) == 0 && !o.Lab {
		return usageError("no cluster given: use -f FILE|DIR|- or --lab (reading a live cluster through the kubeconfig is not implemented yet)")
	}
	return nil
}

// Build loads the input and builds the twin. Loader warnings and objects the
// API server would reject are reported on stderr; building goes on without
// them.
func (o *InputOptions) Build(streams genericiooptions.IOStreams) (*model.Cluster, error) {
	snap, err := load.Load(load.Options{Filenames: o.Filenames, Lab: o.Lab, Stdin: streams.In})
	if err != nil {
		return nil, err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	c, err := engine.Build(snap)
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
