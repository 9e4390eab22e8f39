package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/calicoctl"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// ExecOptions is `kubectl-hybrid exec`: run an emulated command on a node
// or in a pod of the twin.
type ExecOptions struct {
	Input     InputOptions
	Namespace string

	target  string
	command []string
	streams genericiooptions.IOStreams
}

// NewCmdExec builds the exec command.
func NewCmdExec(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExecOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "exec (node/NAME | pod/NAME | deploy/NAME) [-n NS] -- COMMAND [ARGS...]",
		Short: "Print what a command would print on a node or in a pod of the twin",
		Long: `Answer the node and pod commands the seed articles run, from the compiled
dataplane: on Linux nodes ip route, ip addr, ip -d link show vxlan.calico,
ip neigh, bridge fdb and nft; on Windows nodes the HNS cmdlets, hnsdiag,
vfpctrl, Get-NetAdapter and Get-NetFirewallRule; on Linux nodes also
calicoctl node status and calicoctl ipam show --show-configuration (with or
without sudo). Commands outside that list
are refused with the list of what is emulated.

In pods and on nodes the client tools walk the twin: ping, curl, wget,
busybox nslookup (-type=a, aaaa, cname, txt, srv, ptr), nslookup.exe
(-type=a, ptr, srv; -debug with TTLs for answers of the cluster DNS), and
Resolve-DnsName (with TTLs) on Windows nodes or under powershell.exe in images
that have PowerShell. A program a Windows image lacks fails in the container
runtime ("The system cannot find the file specified", exit 1) unless cmd /c
runs it.

Like kubectl exec, a command that fails prints "command terminated with exit
code N" on stderr and kubectl-hybrid exits with N.`,
		Example: `  kubectl-hybrid exec node/k8s-lab-node-2 --lab -- ip route
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- hnsdiag list loadbalancers
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- "Get-HnsNetwork | ConvertTo-Json -Depth 10"`,
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
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "default", "Namespace of the pod")
	return cmd
}

// Complete splits the target from the command after "--".
func (o *ExecOptions) Complete(cmd *cobra.Command, args []string) error {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 {
		return usageError("give the command after --, e.g. kubectl-hybrid exec node/NAME --lab -- ip route")
	}
	if dash != 1 {
		return usageError("exec takes one target (node/NAME, pod/NAME or deploy/NAME) before --")
	}
	o.target = args[0]
	o.command = args[dash:]
	// A single quoted argument holding a PowerShell pipeline or a shell
	// line is what a user types through kubectl exec; keep it whole.
	return nil
}

// Validate checks the target's form.
func (o *ExecOptions) Validate() error {
	kind, name, ok := strings.Cut(o.target, "/")
	if !ok || name == "" {
		return usageError("target %q: use node/NAME, pod/NAME or deploy/NAME", o.target)
	}
	switch kind {
	case "node", "no", "nodes", "pod", "po", "pods", "deploy", "deployment", "deployments":
	default:
		return usageError("target %q: use node/NAME, pod/NAME or deploy/NAME", o.target)
	}
	if len(o.command) == 0 {
		return usageError("no command after --")
	}
	return o.Input.Validate()
}

// Run builds the twin and runs the emulated command.
func (o *ExecOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	kind, name, _ := strings.Cut(o.target, "/")
	var stdout, stderr string
	var code int
	switch kind {
	case "node", "no", "nodes":
		var pl *plane.Plane
		if pl, err = plane.New(c); err == nil {
			stdout, stderr, code, err = execNode(pl, name, o.command)
		}
	default:
		stdout, stderr, code, err = execInPod(c, kind, o.Namespace, name, o.command)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(o.streams.Out, stdout)
	fmt.Fprint(o.streams.ErrOut, stderr)
	if code != 0 {
		// kubectl exec reports a remote failure this way and exits with it.
		return &exitError{code: code, err: fmt.Errorf("command terminated with exit code %d", code)}
	}
	return nil
}

// execOnNode runs a node's own tools on the node's compiled dataplane,
// compiling that node only.
func execOnNode(pl *plane.Plane, name string, argv []string) (string, string, int, error) {
	c := pl.Cluster()
	node := pl.Node(name)
	if node == nil {
		return "", "", 0, &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): nodes %q not found", name)}
	}
	if node.Labels["kubernetes.io/os"] == "windows" {
		n, err := pl.Windows(name)
		if err != nil {
			return "", "", 0, fmt.Errorf("compiling the Windows dataplane: %w", err)
		}
		if n == nil {
			return "", "", 0, fmt.Errorf("node %s: no Windows dataplane compiled", name)
		}
		out, errOut, code := n.Exec(argv)
		return out, errOut, code, nil
	}
	words := argv
	if len(argv) == 1 {
		if w, err := trace.SplitCommand(argv[0]); err == nil {
			words = w
		}
	}
	if calicoctl.IsCalicoctl(words) {
		out, errOut, code := calicoctl.Exec(c, name, words)
		return out, errOut, code, nil
	}
	n := pl.Linux(name)
	if n == nil {
		return "", "", 0, fmt.Errorf("node %s: no Linux dataplane compiled", name)
	}
	out, errOut, code := n.Exec(argv)
	return out, errOut, code, nil
}
