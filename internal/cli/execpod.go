package cli

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// emulatedInPods is what exec answers in pods, for the refusal message.
const emulatedInPods = "ping, curl, curl.exe, wget, nslookup, powershell Resolve-DnsName, and sh -c scripts of them with | tail, head, grep"

// findPod resolves pod/NAME or deploy/NAME (the first running pod of the
// Deployment, as kubectl exec deploy/NAME picks one) in a namespace.
func findPod(c *model.Cluster, kind, ns, name string) (*corev1.Pod, error) {
	switch kind {
	case "pod", "po", "pods":
		for _, p := range c.Pods {
			if p.Namespace == ns && p.Name == name {
				return p, nil
			}
		}
		return nil, &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): pods %q not found", name)}
	}
	var rs []string
	for _, r := range c.ReplicaSets {
		for _, ref := range r.OwnerReferences {
			if r.Namespace == ns && ref.Kind == "Deployment" && ref.Name == name {
				rs = append(rs, r.Name)
			}
		}
	}
	if len(rs) == 0 {
		return nil, &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): deployments.apps %q not found", name)}
	}
	for _, p := range c.Pods {
		for _, ref := range p.OwnerReferences {
			if p.Namespace == ns && ref.Kind == "ReplicaSet" && contains(rs, ref.Name) && p.Status.Phase == corev1.PodRunning {
				return p, nil
			}
		}
	}
	return nil, &exitError{code: ExitNegative, err: fmt.Errorf("error: unable to upgrade connection: no running pod of deployment %s", name)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// toolError maps what the trace engine's tools report to the CLI's errors.
func toolError(err error) error {
	var nm *trace.NotModeledError
	if errors.As(err, &nm) {
		return fmt.Errorf("not modeled: %s", nm.Msg)
	}
	return err
}

// execInPod runs the pod commands the twin emulates through the trace
// engine: ping, curl, wget and nslookup walk the twin, and their output is
// what the real tools print.
func execInPod(c *model.Cluster, kind, ns, name string, argv []string) (string, string, int, error) {
	p, err := findPod(c, kind, ns, name)
	if err != nil {
		return "", "", 0, err
	}
	if p.Status.Phase != corev1.PodRunning {
		return "", "", 0, &exitError{code: ExitNegative, err: fmt.Errorf("error: unable to upgrade connection: container not found (%q)", p.Name)}
	}
	e, err := trace.New(c)
	if err != nil {
		return "", "", 0, err
	}
	src, err := e.ParseSource("pod/"+p.Namespace+"/"+p.Name, ns)
	if err != nil {
		return "", "", 0, &exitError{code: ExitNegative, err: err}
	}
	out, handled, err := e.Exec(src, argv)
	if err != nil {
		return "", "", 0, toolError(err)
	}
	if !handled {
		word := argv[0]
		if words, serr := trace.SplitCommand(argv[0]); serr == nil && len(words) > 0 {
			word = words[0]
		}
		return "", fmt.Sprintf("kubectl-hybrid: %q is not emulated in pods; emulated: %s\n", word, emulatedInPods), 127, nil
	}
	if out.NotStarted {
		// The runtime refused to start it: kubectl's own error, no remote
		// exit code.
		return "", "", 0, &exitError{code: out.Code, err: errors.New(strings.TrimSuffix(out.Stderr, "\n"))}
	}
	return out.Stdout, out.Stderr, out.Code, nil
}

// execNode runs a command on a node: the client tools (ping, curl,
// nslookup on Windows) walk the twin; everything else goes to the node's
// dataplane emulation (ip, nft, the HNS cmdlets, …).
func execNode(pl *plane.Plane, name string, argv []string) (string, string, int, error) {
	if pl.Node(name) != nil && isClientTool(argv) {
		e, err := trace.FromPlane(pl)
		if err != nil {
			return "", "", 0, err
		}
		src, err := e.ParseSource("node/"+name, "")
		if err == nil {
			out, handled, err := e.Exec(src, argv)
			if err != nil {
				return "", "", 0, toolError(err)
			}
			if handled {
				return out.Stdout, out.Stderr, out.Code, nil
			}
		}
	}
	return execOnNode(pl, name, argv)
}

// isClientTool reports whether a command line starts with a tool the
// trace engine answers.
func isClientTool(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	first := argv[0]
	if len(argv) == 1 {
		if words, err := trace.SplitCommand(argv[0]); err == nil && len(words) > 0 {
			first = words[0]
		}
	}
	switch strings.ToLower(first) {
	case "ping", "ping.exe", "curl", "curl.exe", "wget", "nslookup", "nslookup.exe", "resolve-dnsname":
		return true
	}
	return false
}
