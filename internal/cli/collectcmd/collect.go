// Package collectcmd is the `collect` command: the outputs of the node
// commands verify compares, read from real nodes through short-lived pods.
package collectcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/collect"
)

// CollectOptions is `kubectl-hybrid collect`: gather the node outputs
// verify reads from a live cluster.
type CollectOptions struct {
	Kube         *genericclioptions.ConfigFlags
	OutputDir    string
	Nodes        []string
	Namespace    string
	Timeout      time.Duration
	Yes          bool
	LinuxImage   string
	WindowsImage string

	streams genericiooptions.IOStreams
	// newExec builds the pods/exec runner; tests put a fake in.
	newExec func(kubernetes.Interface) (collect.Executor, error)
	client  kubernetes.Interface
}

// NewCmdCollect builds the collect command.
func NewCmdCollect(streams genericiooptions.IOStreams) *cobra.Command {
	o := &CollectOptions{streams: streams, Kube: cmdutil.NewKubeFlags()}
	cmd := &cobra.Command{
		Use:   "collect --output-dir DIR [--node NAME]... [--yes] [--timeout DURATION]",
		Short: "Gather the node outputs verify reads from a live cluster, through short-lived pods",
		Long: `Run the commands verify reads on each node of the live cluster and write
them as verify --actual reads them: DIR/NODE/FILE, first line "# COMMAND".

On a Linux node a short-lived pod is created the way kubectl debug
node/NAME --profile=sysadmin creates one: bound to the node, privileged,
in the host's network, PID and IPC namespaces, tolerating every taint; the
commands run in the host's namespaces through nsenter, with the host's own
ip, bridge and nft. On a Windows node the pod is a HostProcess pod and the
commands run under the host's PowerShell. Each pod is deleted when its
node is done, and every pod still there when collect ends (also on
interrupt) is deleted then. Every pod carries the label
app.kubernetes.io/managed-by=kubectl-hybrid-collect; a run first deletes
what an earlier, killed run left.

collect asks before it creates anything; --yes skips the question, and
without a terminal to ask on it refuses. It checks its rights first
(SelfSubjectAccessReview) and creates nothing without them: the read-only
role is not enough, deploy/collect-rbac.yaml holds what it needs (nodes:
list; pods: create, get, list, delete; pods/exec: create). It never reads
Secrets, and what it collects is written only to DIR.

--timeout bounds each node (the pod's start and its commands); a node that
does not answer in time is reported and skipped.

Exit codes: 0 every node collected, 1 a node did not answer in time, failed
or does not exist (the others are written), 2 bad usage or not confirmed, 3
the cluster cannot be reached or refuses the rights collect needs.`,
		Example: `  kubectl-hybrid collect --output-dir actual/ --yes
  kubectl-hybrid collect --output-dir actual/ --node k8s-lab-win-1 --timeout 2m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.OutputDir, "output-dir", "", "Folder to write DIR/NODE/FILE into (created if missing)")
	f.StringArrayVar(&o.Nodes, "node", nil, "Node to collect from; repeatable (default: every node)")
	f.StringVarP(&o.Namespace, "namespace", "n", "kubectl-hybrid-collect", "Namespace the collect pods are created in (deploy/collect-rbac.yaml creates it; Pod Security must admit privileged and HostProcess pods there)")
	f.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "Time each node gets: the pod's start and all its commands")
	f.BoolVarP(&o.Yes, "yes", "y", false, "Create the pods without asking")
	f.StringVar(&o.LinuxImage, "linux-image", collect.DefaultLinuxImage, "Image of the Linux collect pod (needs nsenter)")
	f.StringVar(&o.WindowsImage, "windows-image", "", "Image of the Windows HostProcess collect pod (default: windows-host-process-containers-base-image:v1.0.0 of mcr.microsoft.com/oss/kubernetes, the HostProcess base image)")
	o.Kube.AddFlags(f)
	return cmd
}

// Complete refuses positional arguments.
func (o *CollectOptions) Complete(args []string) error {
	if len(args) > 0 {
		return cmdutil.UsageError("collect takes no arguments; name nodes with --node NAME")
	}
	return nil
}

// Validate checks the flags.
func (o *CollectOptions) Validate() error {
	if o.OutputDir == "" {
		return cmdutil.UsageError("--output-dir DIR is required")
	}
	if o.WindowsImage == "" {
		o.WindowsImage = collect.DefaultWindowsImage
	}
	if o.Timeout <= 0 {
		return cmdutil.UsageError("--timeout %s: give a positive duration such as 2m", o.Timeout)
	}
	return nil
}

// Run connects, confirms, collects and cleans up.
func (o *CollectOptions) Run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := o.client
	var ex collect.Executor
	if client == nil {
		if cmdutil.NoCluster(o.Kube) {
			return cmdutil.UsageError("no cluster given: collect needs a kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config)")
		}
		cfg, err := o.Kube.ToRESTConfig()
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("kubeconfig: %w", err)}
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("kubeconfig: %w", err)}
		}
		client, ex = cs, &collect.RemoteExec{Config: cfg, Client: cs}
	}
	if o.newExec != nil {
		var err error
		if ex, err = o.newExec(client); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("--output-dir: %w", err)}
	}
	results, err := collect.Run(ctx, collect.Options{
		Client: client, Exec: ex, Namespace: o.Namespace, OutputDir: o.OutputDir, Nodes: o.Nodes,
		Timeout: o.Timeout, LinuxImage: o.LinuxImage, WindowsImage: o.WindowsImage,
		Confirm: o.confirm, Log: o.streams.ErrOut,
	})
	var perm *collect.PermissionError
	var nf *collect.NodeNotFoundError
	switch {
	case errors.Is(err, collect.ErrDeclined):
		return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
	case errors.As(err, &perm):
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: err}
	case errors.As(err, &nf):
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("Error from server (NotFound): nodes %q not found; nothing was created", nf.Name)}
	case err != nil:
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) {
			return err
		}
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: err}
	}
	failed := 0
	for _, r := range results {
		if r.Err != nil {
			failed++
		}
	}
	fmt.Fprintf(o.streams.Out, "collected %d of %d nodes into %s\n", len(results)-failed, len(results), o.OutputDir)
	if ctx.Err() != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: errors.New("interrupted; the pods created were deleted")}
	}
	if failed > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: fmt.Errorf("%d of %d nodes were not collected (see above)", failed, len(results))}
	}
	return nil
}

// confirm asks on the terminal, or refuses without one unless --yes.
func (o *CollectOptions) confirm(plan string) (bool, error) {
	if o.Yes {
		fmt.Fprint(o.streams.ErrOut, plan)
		return true, nil
	}
	f, ok := o.streams.In.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(o.streams.ErrOut, plan)
		return false, cmdutil.UsageError("collect asks before it creates pods and stdin is not a terminal: nothing was created; pass --yes to create them")
	}
	fmt.Fprint(o.streams.ErrOut, plan+"Create them? [y/N] ")
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes", nil
}
