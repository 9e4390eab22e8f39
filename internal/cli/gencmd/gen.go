// Package gencmd is the `gen` command: synthetic clusters of a given size
// written as manifests, for benchmarks and tests.
package gencmd

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// GenOptions is `kubectl-hybrid gen`.
type GenOptions struct {
	Gen         gen.Options
	Output      string
	OutputDir   string
	ClusterKind bool
	PlainNodes  bool

	streams genericiooptions.IOStreams
}

// NewCmdGen builds the gen command.
func NewCmdGen(streams genericiooptions.IOStreams) *cobra.Command {
	o := &GenOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "gen [flags]",
		Short: "Generate a large hybrid cluster for scale tests",
		Long: `Generate a valid hybrid Linux/Windows cluster of any size up to and beyond
Kubernetes' limits (5,000 nodes, 150,000 pods, 10,000 Services): a Linux
control plane, Linux and Windows Server 2025 workers, kubeadm configuration
(Windows joins with the os=windows taint and a kubelet patch of maxPods 60),
Calico through the Tigera operator (VXLAN, BGP off, HNS, strictAffinity),
Deployments and a DaemonSet, Services, and NetworkPolicies mixing pod,
namespace and ipBlock selectors, named ports and egress rules.

--nodes counts every node, the control plane included; --windows-nodes of them
are Windows workers. --pods counts workload pods; Windows gets the Windows
workers' share, at most 58 per Windows worker (maxPods 60 less two system
pods), Linux at most 100 per worker. The pod network grows with the node count
(one /24 per node, /26 Calico blocks).

Without --observed-ips only the controllers are written and the twin derives
the pods, schedules them and gives them addresses. With it, every workload pod
is written as an observed stub — name, node, and an address from Calico's
block choice — with the EndpointSlices of its Services.

The nodes are the Cluster kind's hosts (--cluster-kind, the default with
--output-dir) or Node objects as kubectl prints them (--plain-nodes, the
default on stdout). The Cluster kind's Windows hosts need the kubelet patch
file, kubeletconfiguration.yaml, which kubeadm knows by its file name, so
with Windows nodes it is written to a directory only.

The output is deterministic for a seed and streamed as it is generated.`,
		Example: `  # A directory the other commands read with -f (Kubernetes' scale limits
  # are --nodes 5000 --windows-nodes 500 --pods 150000 --services 10000)
  kubectl-hybrid gen --nodes 100 --windows-nodes 10 --namespaces 10 \
    --pods 2000 --services 100 --policies 20 --observed-ips --output-dir big/
  kubectl-hybrid get nodes -f big/

  # A small cluster as one stream of Node objects
  kubectl-hybrid gen --nodes 10 --windows-nodes 2 --pods 200 | kubectl-hybrid get pods -A -f -

  # A Linux cluster before its migration to what Windows needs, and its plan
  kubectl-hybrid gen --nodes 50 --windows-nodes 0 --pods 1000 --observed-ips \
    --before-migration --output-dir before/
  kubectl-hybrid plan migrate -f before/`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Gen.Nodes, "nodes", 10, "Nodes, the Linux control plane included")
	f.IntVar(&o.Gen.WindowsNodes, "windows-nodes", 2, "Windows Server 2025 workers among --nodes")
	f.IntVar(&o.Gen.Namespaces, "namespaces", 3, "Workload namespaces")
	f.IntVar(&o.Gen.Pods, "pods", 100, "Workload pods (Deployments and the node agent DaemonSet)")
	f.IntVar(&o.Gen.Services, "services", 20, "Services with selectors")
	f.IntVar(&o.Gen.Policies, "policies", 10, "NetworkPolicies")
	f.Uint64Var(&o.Gen.Seed, "seed", 1, "Seed: the same flags and seed give the same bytes")
	f.StringVarP(&o.Output, "output", "o", "yaml", "Output format: yaml or json (a v1 List)")
	f.StringVar(&o.OutputDir, "output-dir", "", "Write cluster.yaml and kubeletconfiguration.yaml into this directory instead of stdout")
	f.BoolVar(&o.Gen.ObservedIPs, "observed-ips", false, "Write workload pods as observed stubs with node and address, and their EndpointSlices")
	f.BoolVar(&o.Gen.BeforeMigration, "before-migration", false, "Give the Linux-only cluster the Calico settings plan migrate starts from: VXLANCrossSubnet, BGP on, strictAffinity off, no Windows dataplane")
	f.BoolVar(&o.ClusterKind, "cluster-kind", false, "Describe the nodes as the Cluster kind's hosts (the default with --output-dir)")
	f.BoolVar(&o.PlainNodes, "plain-nodes", false, "Describe the nodes as Node objects, as kubectl get nodes -o yaml prints them (the default on stdout)")
	return cmd
}

// Complete fills in the generator options from the flags.
func (o *GenOptions) Complete() error {
	o.Gen.Format = gen.Format(o.Output)
	// Without either flag: the Cluster kind in a directory, Node objects in
	// a stream (the Cluster kind's Windows hosts need a file of their own).
	o.Gen.PlainNodes = o.PlainNodes || (!o.ClusterKind && o.OutputDir == "")
	return nil
}

// Validate checks the flags and that the cluster asked for can exist.
func (o *GenOptions) Validate() error {
	if o.ClusterKind && o.PlainNodes {
		return cmdutil.UsageError("--cluster-kind and --plain-nodes are mutually exclusive")
	}
	if o.Output != string(gen.FormatYAML) && o.Output != string(gen.FormatJSON) {
		return cmdutil.UsageError("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", o.Output)
	}
	if err := o.Gen.Validate(); err != nil {
		return cmdutil.UsageError("%v", err)
	}
	if o.OutputDir == "" && !o.Gen.PlainNodes && o.Gen.WindowsNodes > 0 {
		return cmdutil.UsageError("%v", gen.ErrPatchNeedsFile)
	}
	return nil
}

// Run generates the cluster to stdout or into the directory; a summary
// goes to stderr.
func (o *GenOptions) Run() error {
	var (
		sum gen.Summary
		err error
	)
	if o.OutputDir != "" {
		sum, err = gen.WriteDir(o.OutputDir, o.Gen)
	} else {
		// Manifests are data (and many): not through the text escaper.
		w := bufio.NewWriterSize(textsafe.Raw(o.streams.Out), 256<<10)
		sum, err = gen.Generate(o.Gen, gen.Outputs{Main: w})
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
	}
	if errors.Is(err, gen.ErrPatchNeedsFile) {
		return cmdutil.UsageError("%v", err)
	}
	if err != nil {
		return err
	}
	where := "stdout"
	if len(sum.Files) > 0 {
		where = fmt.Sprint(sum.Files)
	}
	fmt.Fprintf(o.streams.ErrOut, "Generated %d nodes (%d Windows), %d namespaces, %d Deployments, %d DaemonSets, %d pods (%d Windows), %d Services, %d EndpointSlices, %d NetworkPolicies: %d documents to %s\n",
		sum.Nodes, sum.WindowsNodes, sum.Namespaces, sum.Deployments, sum.DaemonSets, sum.Pods, sum.WindowsPods,
		sum.Services, sum.EndpointSlices, sum.NetworkPolicies, sum.Documents, where)
	return nil
}
