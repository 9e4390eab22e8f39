package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/podlogs"
)

// ExecOptions is `kubectl-hybrid exec`: run an emulated command on a node
// or in a pod of the twin.
type ExecOptions struct {
	Input     InputOptions
	Namespace string

	target  string
	parsed  console.Target
	command []string
	streams genericiooptions.IOStreams
}

// NewCmdExec builds the exec command.
func NewCmdExec(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ExecOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "exec (node/NAME | pod/NAME | deploy/NAME) [-n NS] -- COMMAND [ARGS...]",
		Short: "Print what a command would print on a node or in a pod of the twin",
		Long: `Answer node and pod commands from the compiled (simulated)
dataplane: on Linux nodes ip route, ip addr, ip -d link show vxlan.calico,
ip neigh, bridge fdb and nft; on Windows nodes the HNS cmdlets, hnsdiag,
vfpctrl, Get-NetAdapter and Get-NetFirewallRule; on Linux nodes also
calicoctl node status and calicoctl ipam show --show-configuration (with or
without sudo). Commands outside that list
are refused with the list of what is emulated.

The host under the node answers from the host model (services, containerd's
configuration, the kubelet's flags, a what-if's HostState): on Windows nodes
Get-Service, Get-Process, Get-NetIPAddress, Get-ItemProperty of
HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion, ipconfig, crictl version,
pods, ps and images, containerd.exe config dump, w32tm /query /status
(the time server the node preparation configures, the node's clock) and
Get-Content of the kubelet's log with -Tail N (each may be piped into
Select-String); on Linux nodes systemctl status kubelet|containerd, crictl and
containerd config dump. In Windows pods cmd /c runs echo (with %USERNAME%),
ver and, where the image has it, whoami. IDs the runtime makes at random are
the observed ones where the input gives them, else stand-ins, and stderr says
which.

In pods and on nodes the client tools walk the twin: ping, curl, wget,
busybox nslookup (-type=a, aaaa, cname, txt, srv, ptr), nslookup.exe
(-type=a, ptr, srv; -debug with TTLs for answers of the cluster DNS), and
Resolve-DnsName (with TTLs) and Test-NetConnection HOST [-Port N] on Windows nodes or under powershell.exe in images
that have PowerShell. A program a Windows image lacks fails in the container
runtime ("The system cannot find the file specified", exit 1) unless cmd /c
runs it.

Like kubectl exec, a command that fails prints "command terminated with exit
code N" on stderr and kubectl-hybrid exits with N.`,
		Example: `  kubectl-hybrid exec node/k8s-lab-node-2 --lab -- ip route
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- hnsdiag list loadbalancers
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- "Get-HnsNetwork | ConvertTo-Json -Depth 10"
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- "Get-Service kubelet, containerd, vmcompute, hns | Format-Table -AutoSize Status, Name, StartType"
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- crictl pods
  kubectl-hybrid exec node/k8s-lab-win-1 --lab -- "Test-NetConnection k8s-lab-api.example.com -Port 6443"`,
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
	t, err := console.ParseTarget(o.target, o.Namespace)
	if err != nil {
		return usageError("%v", err)
	}
	o.parsed = t
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
	if o.parsed.Kind == console.KindPod {
		for _, p := range c.Pods {
			if p.Namespace == o.parsed.Namespace && p.Name == o.parsed.Name {
				if err := podlogs.ExecServingCertError(c, p); err != nil {
					return &exitError{code: ExitNegative, err: err}
				}
			}
		}
	}
	out, err := console.Exec(console.FromCluster(c), o.parsed, o.command)
	if err != nil {
		return consoleError(err)
	}
	if out.NotStarted {
		// The runtime refused to start it: kubectl's own error, no remote
		// exit code.
		return &exitError{code: out.Code, err: errors.New(strings.TrimSuffix(out.Stderr, "\n"))}
	}
	fmt.Fprint(o.streams.Out, out.Stdout)
	fmt.Fprint(o.streams.ErrOut, out.Stderr)
	if out.Code != 0 {
		// kubectl exec reports a remote failure this way and exits with it.
		return &exitError{code: out.Code, err: fmt.Errorf("command terminated with exit code %d", out.Code)}
	}
	return nil
}

// consoleError maps the console's errors to exit codes: a target that does
// not exist is kubectl's exit 1.
func consoleError(err error) error {
	var nf *console.NotFoundError
	if errors.As(err, &nf) {
		return &exitError{code: ExitNegative, err: err}
	}
	var nm *console.NotModeledError
	if errors.As(err, &nm) {
		return fmt.Errorf("not modeled: %s", nm.Msg)
	}
	return err
}
