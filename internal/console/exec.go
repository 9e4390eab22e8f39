// Package console answers the commands a user types on a node or in a pod
// of the twin — iproute2 and nft on Linux nodes, the HNS cmdlets, hnsdiag
// and vfpctrl on Windows nodes, calicoctl, and the client tools (ping,
// curl, wget, nslookup, Resolve-DnsName) that walk the twin — through one
// entry, Exec. The dataplanes hold the compiled state; the console reads
// it through Twin. Every answer is simulated: no command runs.
//
// # Tools
//
// Exec emulates what people run in pods and on nodes: busybox ping,
// wget and nslookup; curl.exe, ping.exe and nslookup.exe on Windows;
// iputils ping and curl on the Ubuntu nodes; sh -c scripts of them with
// pipelines into tail, head and grep. Output formats and exit codes are the
// real tools' (curl 6 for a name that does not resolve, 7 refused, 28 for
// a timeout it was told to keep; wget 1 on any failure; ping's loss lines
// and exit 1). ping without -c (or -n) sends 4 echo requests, Windows'
// default; the real busybox and iputils ping would run until stopped.
// Not emulated: curl's progress meter (curl prints it on stderr without
// -s; the twin prints nothing there), wget's progress bar, CRLF line ends of Windows tools (the twin prints "\n"). A command the
// image lacks fails the way its shell does (internal/imagecatalog).
package console

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/calicoctl"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/hosttools"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Target is where a command runs: a node, a pod, or the first running pod
// of a Deployment (as kubectl exec deploy/NAME picks one).
type Target struct {
	Kind      string // KindNode, KindPod or KindDeploy
	Namespace string // pods and Deployments
	Name      string
}

// Target kinds.
const (
	KindNode   = "node"
	KindPod    = "pod"
	KindDeploy = "deploy"
)

// String is the target as kubectl names it.
func (t Target) String() string { return t.Kind + "/" + t.Name }

// ParseTarget reads node/NAME, pod/NAME or deploy/NAME (with kubectl's
// aliases); ns is the namespace of a pod or Deployment.
func ParseTarget(s, ns string) (Target, error) {
	kind, name, ok := strings.Cut(s, "/")
	if ok && name != "" {
		switch kind {
		case "node", "no", "nodes":
			return Target{Kind: KindNode, Name: name}, nil
		case "pod", "po", "pods":
			return Target{Kind: KindPod, Namespace: ns, Name: name}, nil
		case "deploy", "deployment", "deployments":
			return Target{Kind: KindDeploy, Namespace: ns, Name: name}, nil
		}
	}
	return Target{}, fmt.Errorf("target %q: use node/NAME, pod/NAME or deploy/NAME", s)
}

// Output is what a command prints and its exit status.
type Output struct {
	Stdout string
	Stderr string
	Code   int
	// NotStarted: the container runtime could not start the program, so
	// there is no remote exit code; Stderr is kubectl's error and Code its
	// exit code.
	NotStarted bool
}

// NotFoundError is a target that does not exist or cannot run commands,
// with kubectl's message; kubectl exits 1.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// NotModeledError is a command the twin cannot answer; the message says
// why.
type NotModeledError struct{ Msg string }

func (e *NotModeledError) Error() string { return e.Msg }

// emulatedInPods is what Exec answers in pods, for the refusal message.
const emulatedInPods = "ping, curl, curl.exe, wget, nslookup, powershell Resolve-DnsName, and sh -c scripts of them with | tail, head, grep"

// Exec runs argv on the target and returns what it prints. A single
// argument holding a whole command line (a shell line, a PowerShell
// pipeline) is read as the user typed it through kubectl exec.
func Exec(tw Twin, t Target, argv []string) (Output, error) {
	if len(argv) == 0 {
		return Output{}, errors.New("no command")
	}
	switch t.Kind {
	case KindNode:
		return execNode(tw, t.Name, argv)
	case KindPod, KindDeploy:
		return execInPod(tw, t, argv)
	}
	return Output{}, fmt.Errorf("target kind %q: use node, pod or deploy", t.Kind)
}

// findPod resolves pod/NAME or deploy/NAME in a namespace through the
// twin's one pod lookup, with kubectl's message when there is none.
func findPod(tw Twin, t Target) (*corev1.Pod, error) {
	e, err := tw.Engine()
	if err != nil {
		return nil, err
	}
	p, err := e.FindPod(t.Kind, t.Namespace, t.Name)
	if err != nil {
		var nf *trace.NotFoundError
		if errors.As(err, &nf) {
			return nil, &NotFoundError{Msg: nf.Error()}
		}
		return nil, err
	}
	return p, nil
}

// execInPod runs the pod commands the twin emulates: ping, curl, wget and
// nslookup walk the twin, and their output is what the real tools print.
func execInPod(tw Twin, t Target, argv []string) (Output, error) {
	p, err := findPod(tw, t)
	if err != nil {
		return Output{}, err
	}
	if p.Status.Phase != corev1.PodRunning {
		return Output{}, &NotFoundError{Msg: fmt.Sprintf("error: unable to upgrade connection: container not found (%q)", p.Name)}
	}
	e, err := tw.Engine()
	if err != nil {
		return Output{}, err
	}
	src, err := e.ParseSource("pod/"+p.Namespace+"/"+p.Name, p.Namespace)
	if err != nil {
		return Output{}, &NotFoundError{Msg: err.Error()}
	}
	out, handled, err := tracer{e}.exec(src, argv)
	if err != nil {
		return Output{}, err
	}
	if !handled {
		return Output{Stderr: fmt.Sprintf("kubectl-hybrid: %q is not emulated in pods; emulated: %s\n", firstWord(argv), emulatedInPods), Code: 127}, nil
	}
	return out, nil
}

// execNode runs a command on a node: the client tools (ping, curl,
// nslookup on Windows) walk the twin; calicoctl reads the datastore;
// everything else goes to the node's dataplane (ip, nft, the HNS cmdlets,
// …).
func execNode(tw Twin, name string, argv []string) (Output, error) {
	c := tw.Cluster()
	node := nodeNamed(c, name)
	if node == nil {
		return Output{}, &NotFoundError{Msg: fmt.Sprintf("Error from server (NotFound): nodes %q not found", name)}
	}
	if isClientTool(argv) {
		e, err := tw.Engine()
		if err != nil {
			return Output{}, err
		}
		if src, err := e.ParseSource("node/"+name, ""); err == nil {
			out, handled, err := tracer{e}.exec(src, argv)
			if err != nil {
				return Output{}, err
			}
			if handled {
				return out, nil
			}
		}
	}
	if node.Labels[corev1.LabelOSStable] == "windows" {
		n, err := tw.WindowsNode(name)
		if err != nil {
			return Output{}, fmt.Errorf("compiling the Windows dataplane: %w", err)
		}
		if n == nil {
			return Output{}, fmt.Errorf("node %s: no Windows dataplane compiled", name)
		}
		// The host's own commands (crictl, containerd.exe, ipconfig) and
		// cmdlets (Get-Service, …) read the host model.
		opts := hosttools.Options{Now: time.Now(), VSwitch: len(n.Networks()) > 0}
		if hosttools.IsTestNetConnection(argv) {
			return testNetConnection(tw, name, opts.VSwitch, argv)
		}
		if r, ok, err := hosttools.Node(c, name, argv, opts); ok || err != nil {
			return Output{Stdout: r.Stdout, Stderr: r.Stderr, Code: r.Code}, err
		}
		out, errOut, code := powershell.ExecWith(n, hosttools.Cmdlets(c, name, opts.VSwitch), argv)
		return Output{Stdout: out, Stderr: errOut, Code: code}, nil
	}
	var filters []string
	if len(argv) == 1 {
		// A whole command line: its later pipeline stages are text
		// filters applied to the first stage's output, as a shell would.
		if stages := splitTop(argv[0], "|"); len(stages) > 1 {
			words, err := SplitCommand(stages[0])
			if err != nil || len(words) == 0 {
				return Output{Stderr: fmt.Sprintf("kubectl-hybrid: bad pipeline stage %q\n", stages[0]), Code: 2}, nil
			}
			argv, filters = words, stages[1:]
		}
	}
	out, err := execNodeLinux(tw, name, argv)
	if err != nil || len(filters) == 0 {
		return out, err
	}
	for _, st := range filters {
		fw, err := SplitCommand(st)
		if err != nil || len(fw) == 0 {
			return Output{Stderr: fmt.Sprintf("kubectl-hybrid: bad pipeline stage %q\n", st), Code: 2}, nil
		}
		text, code, ok := filter(fw, out.Stdout)
		if !ok {
			return Output{Stderr: fmt.Sprintf("kubectl-hybrid: %q is not emulated in a pipeline on Linux nodes; emulated filters: tail, head, grep\n", fw[0]), Code: 127}, nil
		}
		out.Stdout, out.Code = text, code
	}
	return out, nil
}

// execNodeLinux runs one command (no pipeline) on a Linux node.
func execNodeLinux(tw Twin, name string, argv []string) (Output, error) {
	c := tw.Cluster()
	words := argv
	if len(argv) == 1 {
		if w, err := SplitCommand(argv[0]); err == nil {
			words = w
		}
	}
	if r, ok, err := hosttools.Node(c, name, words, hosttools.Options{Now: time.Now()}); ok || err != nil {
		return Output{Stdout: r.Stdout, Stderr: r.Stderr, Code: r.Code}, err
	}
	if calicoctl.IsCalicoctl(words) {
		out, errOut, code := calicoctl.Exec(c, name, words)
		return Output{Stdout: out, Stderr: errOut, Code: code}, nil
	}
	n, err := tw.LinuxNode(name)
	if err != nil {
		return Output{}, fmt.Errorf("compiling the Linux dataplane: %w", err)
	}
	if n == nil {
		return Output{}, fmt.Errorf("node %s: no Linux dataplane compiled", name)
	}
	out, errOut, code := execLinux(n, argv)
	return Output{Stdout: out, Stderr: errOut, Code: code}, nil
}

func nodeNamed(c *model.Cluster, name string) *corev1.Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// firstWord is the program a command line starts with.
func firstWord(argv []string) string {
	if words, err := SplitCommand(argv[0]); err == nil && len(words) > 0 {
		return words[0]
	}
	return argv[0]
}

// isClientTool reports whether a command line starts with one of the
// client tools that walk the twin.
func isClientTool(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	return isTool(firstWord(argv))
}
