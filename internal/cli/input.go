package cli

import (
	"fmt"
	"io"
	"net/netip"
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
	// NodeNetwork and NodeGateway state the node network where no Cluster
	// kind does (plain Nodes, a live cluster); they win over the Cluster
	// kind's spec.network.
	NodeNetwork string
	NodeGateway string
	// Validation is --validate: warn (the default), strict (or true),
	// ignore (or false).
	Validation string
	validation load.Validation
	// Kube are kubectl's connection flags (--kubeconfig, --context, …),
	// used when neither -f nor --lab is given.
	Kube *genericclioptions.ConfigFlags
	// Limits bound what is read, from files and from a cluster.
	Limits ReadLimits
}

// AddFlags registers -f/--filename, --lab, the node network, --validate,
// kubectl's connection flags and the read limits.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively; regular files only) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster (a Linux control plane, two Linux workers, a Windows Server 2025 worker); with -f, the files add to or replace its objects")
	fs.StringVar(&o.NodeNetwork, "node-network", "",
		"CIDR of the network the nodes share (e.g. 10.20.0.0/24); without it and without a Cluster kind it is inferred from the Nodes' InternalIPs")
	fs.StringVar(&o.NodeGateway, "node-gateway", "",
		"The node network's gateway, the nodes' default route; without it and without a Cluster kind the nodes have no default route")
	fs.StringVar(&o.Validation, "validate", "warn",
		"What to do with objects the API server would refuse and with unknown fields: "+
			"warn (refuse such objects with exit 2, warn about unknown fields), "+
			"strict or true (unknown fields are refused too), "+
			"ignore or false (keep everything, with a warning for each)")
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

// Validate checks the node network flags and reads --validate; without
// -f and --lab the input is the kubeconfig's cluster (readLive says so
// when there is none).
func (o *InputOptions) Validate() error {
	if o.NodeNetwork != "" {
		p, err := netip.ParsePrefix(o.NodeNetwork)
		if err != nil || !p.Addr().Is4() {
			return usageError("--node-network %q: give an IPv4 CIDR such as 10.20.0.0/24", o.NodeNetwork)
		}
	}
	if o.NodeGateway != "" {
		a, err := netip.ParseAddr(o.NodeGateway)
		if err != nil || !a.Is4() {
			return usageError("--node-gateway %q: give an IPv4 address such as 10.20.0.1", o.NodeGateway)
		}
		// The kernel refuses a default route whose gateway is off-link
		// ("Nexthop has invalid gateway").
		if p, err := netip.ParsePrefix(o.NodeNetwork); err == nil && !p.Contains(a) {
			return usageError("--node-gateway %s is outside --node-network %s", o.NodeGateway, o.NodeNetwork)
		}
	}
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
	c, _, err := o.BuildUnread(streams)
	return c, err
}

// BuildUnread is Build that also returns the kinds a live read could not
// list (model.Snapshot.Unread), for commands that must not judge a cluster
// they only partly saw.
func (o *InputOptions) BuildUnread(streams genericiooptions.IOStreams) (*model.Cluster, []model.UnreadKind, error) {
	// DropRaw: the twin is built from the typed objects; the generic
	// copies would double the snapshot's memory.
	stop := startProgress(streams.ErrOut, "Reading the cluster")
	snap, err := o.Snapshot(streams, true)
	stop()
	if err != nil {
		return nil, nil, err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	unread := snap.Unread
	// The snapshot is not read again: the twin takes its objects.
	stop = startProgress(streams.ErrOut, "Building the twin")
	c, err := engine.BuildOwned(snap)
	stop()
	if err != nil {
		return nil, nil, err
	}
	reportRejections(streams.ErrOut, c)
	reportAssumptions(streams.ErrOut, c)
	return c, unread, nil
}

// Snapshot reads the input — the live cluster, or the files and the lab
// with --validate and the read limits — and adds the node network the
// flags state. dropRaw drops the generic copies of modeled objects (see
// load.Options.DropRaw).
func (o *InputOptions) Snapshot(streams genericiooptions.IOStreams, dropRaw bool) (*model.Snapshot, error) {
	var snap *model.Snapshot
	var err error
	if o.Live() {
		snap, err = readLive(o.Kube, o.Limits, streams)
	} else {
		snap, err = load.Load(load.Options{Filenames: o.Filenames, Lab: o.Lab, Stdin: streams.In, DropRaw: dropRaw,
			Validation: o.validation, Limits: o.Limits.load()})
	}
	if err != nil {
		return nil, err
	}
	snap.Network.CIDR, snap.Network.Gateway = o.NodeNetwork, o.NodeGateway
	return snap, nil
}

// reportAssumptions says which facts the answers rest on that no input
// stated (the node network inferred from the nodes' addresses).
func reportAssumptions(w io.Writer, c *model.Cluster) {
	for _, n := range c.Notes {
		if n.Severity == model.Assumption {
			fmt.Fprintf(w, "Note: %s\n", n.Message)
		}
	}
}

// reportRejections prints, as kubectl apply would, the API server's
// warnings on the objects applied and its refusals.
func reportRejections(w io.Writer, c *model.Cluster) {
	for _, r := range c.Warned {
		fmt.Fprintf(w, "Warning: %s\n", r.Message)
	}
	for _, r := range c.Rejected {
		fmt.Fprintf(w, "%s\n", r.Message)
	}
}
