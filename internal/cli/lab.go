package cli

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// LabOptions is `kubectl-hybrid lab`: build the built-in lab (plus any
// what-if files) and walk through the result.
type LabOptions struct {
	Filenames []string
	// Verify makes a failed verification command exit 1.
	Verify  bool
	now     func() time.Time
	streams genericiooptions.IOStreams
}

// NewCmdLab builds the lab command.
func NewCmdLab(streams genericiooptions.IOStreams) *cobra.Command {
	o := &LabOptions{streams: streams, now: clock}
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
	in := InputOptions{Lab: true, Filenames: o.Filenames}
	c, err := in.Build(o.streams)
	if err != nil {
		return err
	}
	if err := writeWalkthrough(o.streams.Out, c, o.now()); err != nil {
		return err
	}
	failed, err := writeVerification(o.streams.Out, o.Filenames, o.streams)
	if err != nil {
		return err
	}
	if o.Verify && len(failed) > 0 {
		return &exitError{code: ExitNegative}
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

// checkPod is what `kubectl run -i --rm check --image=busybox:1.37
// --restart=Never -- sh -c '…'` creates (kubectl's generator: label
// run=check, one container named after the pod, the command as args; %q
// writes the script as a YAML double-quoted string).
var checkPod = fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: check
  namespace: default
  labels:
    run: check
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox:1.37
      stdin: true
      stdinOnce: true
      args: [sh, -c, %q]
`, seedCheckScript)

// seedCheckScript is the script the verification runs in the check pod.
const seedCheckScript = `
    nslookup aspnetapp.win-demo.svc.cluster.local | tail -3
    wget -qO- http://aspnetapp.win-demo.svc.cluster.local | grep -o "<title>[^<]*</title>"
    ping -c 2 172.21.41.6`

// verificationCluster is the lab with the what-if files and the check pod
// kubectl run would create.
func verificationCluster(filenames []string, streams genericiooptions.IOStreams) (*model.Cluster, error) {
	snap, err := load.Load(load.Options{Lab: true, Filenames: filenames, Stdin: streams.In, DropRaw: true})
	if err != nil {
		return nil, err
	}
	objs, err := load.DecodeDocuments(strings.NewReader(checkPod), "kubectl run check")
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
	return engine.BuildOwned(snap)
}

// writeVerification runs the lab's cross-OS verification against the
// twin: each command as a user types it, its output, and for the pings
// where the TTL comes from. It ends with a verdict and returns the
// commands that failed.
func writeVerification(w io.Writer, filenames []string, streams genericiooptions.IOStreams) ([]string, error) {
	fmt.Fprintf(w, "\n== Verification (simulated: the twin answers each command; ping times and other measurements are illustrative)\n")
	c, err := verificationCluster(filenames, streams)
	if err != nil {
		return nil, err
	}
	e, err := trace.New(c)
	if err != nil {
		return nil, err
	}
	var failed []string
	checks := 0
	fail := func(what string, err error) {
		fmt.Fprintf(w, "(%s: %v)\n", what, err)
		failed = append(failed, what)
	}
	// wantFail: the command is there to show a failure (a short name
	// across namespaces that a Windows pod cannot resolve).
	run := func(src trace.Source, argv []string, wantFail bool, filters ...string) {
		checks++
		out, handled, err := e.Exec(src, argv)
		if err != nil || !handled {
			fail("not answered: "+strings.Join(argv, " "), err)
			return
		}
		if (out.Code != 0) != wantFail {
			want := "succeed"
			if wantFail {
				want = "fail"
			}
			failed = append(failed, fmt.Sprintf("%s (exit %d; expected to %s)", strings.Join(strings.Fields(strings.Join(argv, " ")), " "), out.Code, want))
		}
		stdout := out.Stdout
		for _, f := range filters {
			// The seed pipes kubectl's output through its own shell.
			stdout = localFilter(f, stdout)
		}
		fmt.Fprint(w, stdout)
		fmt.Fprint(w, out.Stderr)
		if out.Code != 0 && !out.NotStarted {
			fmt.Fprintf(w, "command terminated with exit code %d\n", out.Code)
		}
	}
	ttl := func(src trace.Source, dst string) {
		a, err := netip.ParseAddr(dst)
		if err != nil {
			return
		}
		r := e.Trace(src, trace.Target{Kind: trace.KindIP, Addr: a, Given: dst}, trace.ICMP, 0)
		if s := r.TTLSteps(); s != "" && !r.Assumed {
			fmt.Fprintf(w, "  ttl: %s\n", s)
		}
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "  note: %s\n", x)
		}
	}

	fmt.Fprintf(w, "\nLinux → Windows: the busybox pod check in default\n")
	check, err := e.ParseSource("pod/default/check", "default")
	if err != nil {
		fail("kubectl run check", err)
	} else {
		fmt.Fprintf(w, "$ kubectl run -i --rm check --image=busybox:1.37 --restart=Never -- sh -c '%s'\n", seedCheckScript)
		run(check, []string{"sh", "-c", seedCheckScript}, false)
		fmt.Fprintf(w, "pod \"check\" deleted from default namespace\n")
		fmt.Fprintf(w, "  (check ran on %s, %s)\n", check.Node, check.Addr)
		ttl(check, "172.21.41.6")
	}
	fmt.Fprintf(w, "$ kubectl-hybrid exec node/k8s-lab-node-1 -- ping -c 1 172.21.41.6\n")
	if n1, err := e.ParseSource("node/k8s-lab-node-1", ""); err != nil {
		fail("node k8s-lab-node-1", err)
	} else {
		run(n1, []string{"ping", "-c", "1", "172.21.41.6"}, false)
		ttl(n1, "172.21.41.6")
	}

	fmt.Fprintf(w, "\nWindows → Linux: deploy/aspnetapp in win-demo\n")
	asp, err := e.ParseSource("deploy/aspnetapp", "win-demo")
	if err != nil {
		fail("deploy/aspnetapp", err)
		return failed, writeVerdict(w, checks, failed)
	}
	curl := func(extra ...string) []string {
		return append([]string{"curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`}, extra...)
	}
	for _, cmd := range []struct {
		shown    string
		argv     []string
		wantFail bool
		filters  []string
		ttlTo    string
	}{
		{`curl.exe -s -o NUL -w "%{remote_ip} %{http_code}\n" http://hello.demo.svc.cluster.local/healthz`, curl("http://hello.demo.svc.cluster.local/healthz"), false, nil, ""},
		{`ping -n 2 172.21.172.4`, []string{"ping", "-n", "2", "172.21.172.4"}, false, nil, "172.21.172.4"},
		// Windows resolves a dotted name without the search list
		// (https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#dns-windows).
		{`curl.exe -s -o NUL -w "%{remote_ip} %{http_code}\n" --max-time 5 http://hello.demo/healthz`, curl("--max-time", "5", "http://hello.demo/healthz"), true, nil, ""},
		{`curl.exe -s -o NUL -w "%{remote_ip} %{http_code}\n" http://aspnetapp/`, curl("http://aspnetapp/"), false, nil, ""},
		{`ping -n 2 1.1.1.1 | tail -3`, []string{"ping", "-n", "2", "1.1.1.1"}, false, []string{"tail -3"}, "1.1.1.1"},
	} {
		fmt.Fprintf(w, "$ kubectl -n win-demo exec deploy/aspnetapp -- %s\n", cmd.shown)
		run(asp, cmd.argv, cmd.wantFail, cmd.filters...)
		if cmd.ttlTo != "" {
			ttl(asp, cmd.ttlTo)
		}
	}

	fmt.Fprintf(w, "\nThe Windows host: PS C:\\> curl.exe http://10.102.98.171 on k8s-lab-win-1\n")
	if win, err := e.ParseSource("node/k8s-lab-win-1", ""); err != nil {
		fail("node k8s-lab-win-1", err)
	} else {
		// Expected to fail: a Windows host does not reach ClusterIPs
		// (https://kubernetes.io/docs/concepts/services-networking/windows-networking/#limitations).
		checks++
		r := e.Trace(win, trace.Target{Kind: trace.KindIP, Addr: netip.MustParseAddr("10.102.98.171"), Given: "10.102.98.171"}, trace.TCP, 80)
		if r.Delivered {
			fmt.Fprintf(w, "  delivered: %s\n", r.Reason)
			failed = append(failed, "curl.exe http://10.102.98.171 on k8s-lab-win-1 (delivered; expected to fail)")
		} else {
			fmt.Fprintf(w, "  not delivered (%s): %s\n", r.Outcome, r.Reason)
		}
	}
	return failed, writeVerdict(w, checks, failed)
}

// writeVerdict ends the verification: how many commands succeeded.
func writeVerdict(w io.Writer, checks int, failed []string) error {
	if len(failed) == 0 {
		_, err := fmt.Fprintf(w, "\nVerdict: all %d commands answered as expected\n", checks)
		return err
	}
	fmt.Fprintf(w, "\nVerdict: %d of %d commands did not answer as expected:\n", len(failed), checks)
	for _, f := range failed {
		fmt.Fprintf(w, "  %s\n", f)
	}
	return nil
}

// localFilter applies a filter the user's own shell runs on kubectl's
// output (`| tail -3`).
func localFilter(f, in string) string {
	words := strings.Fields(f)
	if len(words) == 2 && words[0] == "tail" && strings.HasPrefix(words[1], "-") {
		n := 0
		fmt.Sscanf(words[1], "-%d", &n)
		lines := strings.SplitAfter(in, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, "")
	}
	return in
}
