package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
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
	// Limits bound what is read, from files and from a cluster.
	Limits ReadLimits
}

// AddFlags registers -f/--filename, --lab, kubectl's connection flags and
// the read limits.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively; regular files only) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster of the seed articles; with -f, the files add to or replace its objects")
	o.Kube = newKubeFlags()
	o.Kube.AddFlags(fs)
	o.Limits.AddFlags(fs, true)
}

// ReadLimits are the flags that bound a read, so that an endless stream, a
// stalled server or one whose pages never end fails with a message instead
// of hanging or filling memory.
type ReadLimits struct {
	MaxInput    byteSize
	MaxDocument byteSize
	ReadTimeout time.Duration
}

// AddFlags registers --max-input-bytes and --read-timeout, and with
// documents --max-document-bytes; it goes after kubectl's connection flags,
// whose --request-timeout it describes anew.
func (l *ReadLimits) AddFlags(fs *pflag.FlagSet, documents bool) {
	l.MaxInput = load.DefaultMaxInputBytes
	fs.Var(&l.MaxInput, "max-input-bytes",
		"Most bytes read from one file, from stdin or in one response of a live cluster (a quantity: 512Mi, 2Gi)")
	if documents {
		l.MaxDocument = load.DefaultMaxDocumentBytes
		fs.Var(&l.MaxDocument, "max-document-bytes",
			"Most bytes of one object's text: a YAML document, a JSON value, or one item of a List (a quantity: 64Mi)")
	}
	// kubectl's flag (added before) says 0 waits for ever; here it does not.
	if f := fs.Lookup("request-timeout"); f != nil {
		f.Usage = "How long to wait for each request to the API server (1s, 2m, 3h); 0 means " + live.DefaultRequestTimeout.String()
	}
	fs.DurationVar(&l.ReadTimeout, "read-timeout", live.DefaultReadTimeout,
		"How long reading a live cluster may take in all; each request is held to --request-timeout, "+
			"or to "+live.DefaultRequestTimeout.String()+" when that is 0")
}

func (l ReadLimits) load() load.Limits {
	return load.Limits{Input: int64(l.MaxInput), Document: int64(l.MaxDocument)}
}

func (l ReadLimits) live() live.Options {
	return live.Options{ReadTimeout: l.ReadTimeout, MaxPageBytes: int64(l.MaxInput)}
}

// byteSize is a flag of a size in bytes, given as a Kubernetes quantity
// ("512Mi", "1G", "1048576").
type byteSize int64

func (b *byteSize) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *byteSize) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return fmt.Errorf("%q is not a size: %w", s, err)
	}
	n, ok := q.AsInt64()
	if !ok || n <= 0 {
		return fmt.Errorf("%q is not a positive whole number of bytes", s)
	}
	*b = byteSize(n)
	return nil
}

func (b *byteSize) Type() string { return "quantity" }

// Live reports whether the input is the cluster of the kubeconfig.
func (o *InputOptions) Live() bool { return len(o.Filenames) == 0 && !o.Lab }

// Validate has nothing to check: without -f and --lab the input is the
// kubeconfig's cluster (readLive says so when there is none).
func (o *InputOptions) Validate() error { return nil }

// Build loads the input and builds the twin. Loader warnings and objects the
// API server would reject are reported on stderr; building goes on without
// them.
func (o *InputOptions) Build(streams genericiooptions.IOStreams) (*model.Cluster, error) {
	var snap *model.Snapshot
	var err error
	if o.Live() {
		snap, err = readLive(o.Kube, o.Limits, streams)
	} else {
		// DropRaw: the twin is built from the typed objects; the generic
		// copies would double the snapshot's memory.
		snap, err = load.Load(load.Options{Filenames: o.Filenames, Lab: o.Lab, Stdin: streams.In, DropRaw: true, Limits: o.Limits.load()})
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
