package cli

import (
	"fmt"
	"io"
	"net/netip"

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
}

// AddFlags registers -f/--filename, --lab and --validate.
func (o *InputOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.Filenames, "filename", "f", nil,
		"File, directory (read recursively) or - for stdin with the cluster's manifests; repeatable")
	fs.BoolVar(&o.Lab, "lab", false,
		"Use the built-in lab cluster of the seed articles; with -f, the files add to or replace its objects")
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
}

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
		return nil, nil, err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	snap.Network.CIDR, snap.Network.Gateway = o.NodeNetwork, o.NodeGateway
	unread := snap.Unread
	// The snapshot is not read again: the twin takes its objects.
	c, err := engine.BuildOwned(snap)
	if err != nil {
		return nil, nil, err
	}
	reportRejections(streams.ErrOut, c)
	reportAssumptions(streams.ErrOut, c)
	return c, unread, nil
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

func reportRejections(w io.Writer, c *model.Cluster) {
	for _, r := range c.Rejected {
		fmt.Fprintf(w, "%s\n", r.Message)
	}
}
