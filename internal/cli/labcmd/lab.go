// Package labcmd is the `lab` command: the built-in lab cluster built and
// walked through, with its verification commands.
package labcmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// LabOptions is `kubectl-hybrid lab`: build the built-in lab (plus any
// what-if files) and walk through the result.
type LabOptions struct {
	Filenames []string
	// Verify makes a failed verification command exit 1.
	Verify  bool
	now     func() time.Time
	input   func(filenames []string) cmdutil.Input
	streams genericiooptions.IOStreams
}

// NewCmdLab builds the lab command.
// now is the clock of the walkthrough's ages; input is the lab's input
// with the what-if files.
func NewCmdLab(streams genericiooptions.IOStreams, now func() time.Time, input func(filenames []string) cmdutil.Input) *cobra.Command {
	o := &LabOptions{streams: streams, now: now, input: input}
	cmd := &cobra.Command{
		Use:   "lab [-f WHAT-IF.yaml]",
		Short: "Build the built-in lab cluster and walk through it",
		Long: `Build the built-in lab cluster — a kubeadm cluster with a Linux control plane,
two Linux workers and a Windows Server 2025 worker, Calico VXLAN through the
Tigera operator — and print what the twin derived: nodes, IPAM blocks,
every pod with its node and address (observed or derived), the operator's
status, anything the API server would refuse, and a verification across the
operating systems (busybox in a pod check on a Linux node, curl.exe and ping
in aspnetapp, the Windows host to a Service), each command answered by
walking the twin, with where each TTL comes from. The transcripts are
simulated: no command runs, and measured values such as ping's round-trip
times are illustrative.

The verification ends with a verdict; with --verify a failed command (one
that exits non-zero, or a connection the twin does not deliver) makes the
command exit 1, so a what-if that breaks connectivity fails a CI job.`,
		Example: `  # The lab and its verification
  kubectl-hybrid lab

  # A pod the API server refuses; the rest still builds
  kubectl-hybrid lab -f examples/bad-pod.yaml

  # Exit 1 when a what-if breaks the verification
  kubectl-hybrid lab --verify -f examples/what-if/deny-win-demo-ingress.yaml`,
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
	cmd.Flags().StringArrayVarP(&o.Filenames, "filename", "f", nil, "What-if files layered on the lab (add or replace objects)")
	cmd.Flags().BoolVar(&o.Verify, "verify", false, "Exit 1 when a verification command fails")
	return cmd
}

// Complete has nothing to fill in.
func (o *LabOptions) Complete() error { return nil }

// Validate has nothing to check.
func (o *LabOptions) Validate() error { return nil }

// Run builds the lab and prints the walkthrough.
func (o *LabOptions) Run() error {
	c, err := o.input(o.Filenames).Build(o.streams)
	if err != nil {
		return err
	}
	if err := writeWalkthrough(o.streams.Out, c, o.now()); err != nil {
		return err
	}
	failed, err := writeVerification(o.streams.Out, c, o.Filenames, o.streams)
	if err != nil {
		return err
	}
	if o.Verify && len(failed) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative}
	}
	return nil
}

func writeWalkthrough(w io.Writer, c *model.Cluster, now time.Time) error {
	fmt.Fprintln(w, summaryLine(c))
	section := func(title string, args ...string) error {
		fmt.Fprintf(w, "\n== %s\n", title)
		_, err := report.Get(w, c, report.Request{Args: args, Options: report.Options{AllNamespaces: true, Now: now}})
		return err
	}
	fmt.Fprintf(w, "\n== Nodes\n")
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOS\tINTERNAL-IP\tSTATUS\tMAX PODS\tBLOCK\tVXLAN TUNNEL\tVTEP MAC")
	blocks := map[string]string{}
	for _, b := range c.IPAMBlocks {
		if b.Spec.Affinity != nil {
			blocks[strings.TrimPrefix(*b.Spec.Affinity, "host:")] = b.Spec.CIDR
		}
	}
	for _, n := range c.Nodes {
		status := "NotReady"
		for _, cond := range n.Status.Conditions {
			if cond.Type == "Ready" && cond.Status == "True" {
				status = "Ready"
			}
		}
		mac := n.Annotations[calico.AnnotationVXLANTunnelMACAddr]
		if mac == "" && n.Labels[corev1.LabelOSStable] == "linux" {
			mac = felix.VTEPMACForHost(n.Name)
		}
		if mac != "" && n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] != "" {
			mac += " (placeholder, not observed)"
		}
		pods := n.Status.Allocatable.Pods()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, n.Labels[corev1.LabelOSStable], internalIP(n.Status.Addresses),
			status, pods.String(), orNone(blocks[n.Name]), orNone(n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]), orNone(mac))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := section("IPAM blocks (Calico's host-seeded block choice)", "ipamblocks"); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Pods\n")
	tw = tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tSTATUS\tNODE\tIP\tSOURCE")
	for _, p := range c.Pods {
		k := model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		src := "derived"
		if c.Observed(k) {
			src = "observed"
			if c.Derived(k, "spec") {
				src = "observed name, spec from template"
			}
			if c.Derived(k, "status.podIP") {
				src += ", derived IP"
			}
		}
		status := string(p.Status.Phase)
		if p.Status.Reason != "" {
			status = p.Status.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, status, orNone(p.Spec.NodeName), orNone(p.Status.PodIP), src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := section("Operator status", "tigerastatus"); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n== Refused by the API server\n")
	if len(c.Rejected) == 0 {
		fmt.Fprintln(w, "(none)")
	}
	for _, r := range c.Rejected {
		fmt.Fprintln(w, strings.TrimRight(r.Message, "\n"))
	}
	if len(c.Notes) > 0 {
		fmt.Fprintf(w, "\n== Notes\n")
		for _, n := range c.Notes {
			obj := ""
			if n.Object.Name != "" {
				obj = n.Object.String() + ": "
			}
			fmt.Fprintf(w, "%s: %s%s\n", n.Severity, obj, n.Message)
		}
	}
	return nil
}

func summaryLine(c *model.Cluster) string {
	var parts []string
	linux, windows := 0, 0
	for _, n := range c.Nodes {
		if n.Labels[corev1.LabelOSStable] == "windows" {
			windows++
		} else {
			linux++
		}
	}
	parts = append(parts, fmt.Sprintf("%d Linux and %d Windows nodes", linux, windows))
	if c.Kubeadm.Cluster != nil && c.Kubeadm.Cluster.KubernetesVersion != "" {
		parts = append(parts, "kubeadm "+c.Kubeadm.Cluster.KubernetesVersion)
	}
	for _, p := range c.IPPools {
		mode := "no encapsulation"
		if p.Spec.VXLANMode != "" && p.Spec.VXLANMode != "Never" {
			mode = "VXLAN " + p.Spec.VXLANMode
		} else if p.Spec.IPIPMode != "" && p.Spec.IPIPMode != "Never" {
			mode = "IPIP " + p.Spec.IPIPMode
		}
		parts = append(parts, fmt.Sprintf("pool %s %s /%d", p.Spec.CIDR, mode, p.Spec.BlockSize))
	}
	if inst := c.Installation; inst != nil && inst.Spec.CalicoNetwork != nil && inst.Spec.CalicoNetwork.BGP != nil {
		parts = append(parts, "BGP "+*inst.Spec.CalicoNetwork.BGP)
	}
	strict := false
	if c.IPAMConfig != nil {
		strict = c.IPAMConfig.Spec.StrictAffinity
	}
	parts = append(parts, fmt.Sprintf("strictAffinity %t", strict))
	return "Cluster: " + strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func internalIP(addrs []corev1.NodeAddress) string {
	for _, a := range addrs {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// verificationCluster is the lab with the what-if files and the pods the
// verification's kubectl run steps create.
func verificationCluster(filenames []string, pods []string, streams genericiooptions.IOStreams) (*model.Cluster, error) {
	snap, err := load.Load(load.Options{Lab: true, Filenames: filenames, Stdin: streams.In, DropRaw: true})
	if err != nil {
		return nil, err
	}
	for _, doc := range pods {
		objs, err := load.DecodeDocuments(strings.NewReader(doc), "kubectl run")
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			replaced := false
			for i, x := range snap.Objects {
				if x.Key == o.Key {
					snap.Objects[i], replaced = o, true
				}
			}
			if !replaced {
				snap.Objects = append(snap.Objects, o)
			}
		}
	}
	return engine.BuildOwned(snap)
}

// writeVerification runs the lab's verification script against the twin
// of the lab, the what-if files and the script's own pods, and returns the
// commands that failed.
func writeVerification(w io.Writer, lab *model.Cluster, filenames []string, streams genericiooptions.IOStreams) ([]string, error) {
	script := console.LabVerification
	// kubectl run creates its pods in the lab as it is: their commands
	// read the twin before they exist.
	pods, err := script.RunPods(console.FromCluster(lab))
	if err != nil {
		return nil, err
	}
	c, err := verificationCluster(filenames, pods, streams)
	if err != nil {
		return nil, err
	}
	return script.Run(w, console.FromCluster(c))
}
