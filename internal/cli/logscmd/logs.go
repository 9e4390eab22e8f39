// Package logscmd is `kubectl-hybrid logs`.
package logscmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/podlogs"
)

// LogsOptions is `kubectl-hybrid logs`: what kubectl logs would print for
// the network agents' pods, simulated from the twin.
type LogsOptions struct {
	Input         cmdutil.Input
	Namespace     string
	Container     string
	LabelSelector string
	Tail          int

	pod     string
	streams genericiooptions.IOStreams
}

// NewCmdLogs builds the logs command.
func NewCmdLogs(streams genericiooptions.IOStreams, in cmdutil.Input) *cobra.Command {
	o := &LogsOptions{Input: in, streams: streams}
	cmd := &cobra.Command{
		Use:   "logs (POD | pod/POD | -l SELECTOR) [-c CONTAINER] [-n NS] [flags]",
		Short: "Print the log lines the twin derives for a Calico or kube-proxy pod (simulated)",
		Long: `Print what kubectl logs would print for the pods of calico-node,
calico-node-windows, kube-proxy and kube-proxy-windows, as far as the twin
derives it (simulated): kube-proxy-windows's start script waiting for the
Calico HNS network (and finding it when the node's HNS holds it), and
calico-node's startup through its datastore check (on a Windows host
without the API server's address it cannot reach the kubernetes Service
and says so). Stderr says what each answer leaves out.

As with kubectl, a container that has not started has no logs (exit 1),
and a node whose kubelet has no serving certificate (its kubelet-serving
CSR not approved) answers with the TLS error the API server returns.
With -l, each matching pod's last 10 lines are printed, as kubectl does.`,
		Example: `  # kube-proxy-windows waiting for the Calico network, then finding it
  kubectl-hybrid logs -n kube-system -l k8s-app=kube-proxy-windows --lab

  # calico-node-windows's node container
  kubectl-hybrid logs -n calico-system -l k8s-app=calico-node-windows -c node --lab`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.Input.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace (default: the kubeconfig context's when live, else \"default\")")
	f.StringVarP(&o.Container, "container", "c", "", "The container whose logs to print (default: the only one, else the default-container annotation's, else the first)")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector: the logs of every matching pod")
	f.IntVar(&o.Tail, "tail", -1, "Lines of the end of each log to print (default: all, 10 with -l)")
	return cmd
}

// Complete records the pod and the default tail.
func (o *LogsOptions) Complete(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return cmdutil.UsageError("expected at most one pod name, got %d arguments", len(args))
	}
	if len(args) == 1 {
		o.pod = strings.TrimPrefix(strings.TrimPrefix(args[0], "pods/"), "pod/")
	}
	if !cmd.Flags().Changed("tail") && o.LabelSelector != "" {
		o.Tail = 10 // kubectl's default with a selector
	}
	return nil
}

// Validate checks the arguments.
func (o *LogsOptions) Validate() error {
	switch {
	case o.pod == "" && o.LabelSelector == "":
		return cmdutil.UsageError("expected POD or -l SELECTOR")
	case o.pod != "" && o.LabelSelector != "":
		return cmdutil.UsageError("only one of POD or -l SELECTOR can be given")
	}
	if o.LabelSelector != "" {
		if _, err := labels.Parse(o.LabelSelector); err != nil {
			return cmdutil.UsageError("%v", err)
		}
	}
	return o.Input.Validate()
}

// Run builds the twin and prints the logs.
func (o *LogsOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	if o.Namespace == "" {
		o.Namespace = o.Input.DefaultNamespace()
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	pods, err := o.pods(c)
	if err != nil {
		return err
	}
	pl, err := plane.New(c)
	if err != nil {
		return err
	}
	h := hnsHost{pl}
	for _, p := range pods {
		container, err := podlogs.Container(p, o.Container)
		if err != nil {
			return logsError(err)
		}
		if o.Container == "" && len(p.Spec.Containers) > 1 && p.Annotations["kubectl.kubernetes.io/default-container"] == "" {
			fmt.Fprintf(o.streams.ErrOut, "Defaulted container %q out of: %s\n", container, containerNames(p))
		}
		if err := podlogs.ServingCertError(c, p, container); err != nil {
			return logsError(err)
		}
		r, err := podlogs.Logs(c, h, p, container)
		if err != nil {
			return logsError(err)
		}
		lines := r.Lines
		if o.Tail >= 0 && len(lines) > o.Tail {
			lines = lines[len(lines)-o.Tail:]
		}
		for _, l := range lines {
			fmt.Fprintln(o.streams.Out, l)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(o.streams.ErrOut, "# %s/%s: %s\n", p.Namespace, p.Name, n)
		}
	}
	return nil
}

func (o *LogsOptions) pods(c *model.Cluster) ([]*corev1.Pod, error) {
	if o.pod != "" {
		for _, p := range c.Pods {
			if p.Namespace == o.Namespace && p.Name == o.pod {
				return []*corev1.Pod{p}, nil
			}
		}
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("Error from server (NotFound): pods %q not found", o.pod)}
	}
	sel, _ := labels.Parse(o.LabelSelector)
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Namespace == o.Namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		fmt.Fprintf(o.streams.ErrOut, "No resources found in %s namespace.\n", o.Namespace)
	}
	return out, nil
}

func logsError(err error) error {
	var le *podlogs.Error
	if errors.As(err, &le) {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: err}
	}
	return err
}

func containerNames(p *corev1.Pod) string {
	var names []string
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	if len(p.Spec.InitContainers) > 0 {
		var inits []string
		for _, c := range p.Spec.InitContainers {
			inits = append(inits, c.Name)
		}
		return strings.Join(names, ", ") + ", init-container(s): " + strings.Join(inits, ", ")
	}
	return strings.Join(names, ", ")
}

// hnsHost reads the Windows nodes' HNS networks from the plane.
type hnsHost struct{ pl *plane.Plane }

func (h hnsHost) Networks(node string) ([]string, error) {
	n, err := h.pl.Windows(node)
	if err != nil || n == nil {
		return nil, err
	}
	var out []string
	for _, nw := range n.NetworkRows() {
		out = append(out, nw.Name)
	}
	return out, nil
}
