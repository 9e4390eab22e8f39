// Package collect gathers the node command outputs that verify reads from
// a live cluster: one short-lived pod per node (privileged with the host's
// namespaces on Linux, HostProcess on Windows), the commands run through
// pods/exec, the pod deleted afterwards.
package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

const (
	// ManagedByLabel marks every pod collect creates, so that a later run
	// finds and deletes what an interrupted one left.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "kubectl-hybrid-collect"
	// RunLabel tells the pods of one run apart.
	RunLabel = "hybrid.kubectl-hybrid.io/collect-run"
	// NodeLabel names the node a pod collects from.
	NodeLabel = "hybrid.kubectl-hybrid.io/collect-node"
	container = "collect"
)

// Selector selects every pod collect creates.
var Selector = ManagedByLabel + "=" + managedBy

// Executor runs a command in a pod's container (pods/exec).
type Executor interface {
	Exec(ctx context.Context, namespace, pod, container string, argv []string) (stdout, stderr string, err error)
}

// Options is one collection.
type Options struct {
	Client    kubernetes.Interface
	Exec      Executor
	Namespace string
	OutputDir string
	// Nodes to collect from; all nodes when empty.
	Nodes []string
	// Timeout bounds each node: the pod's start and every command.
	Timeout      time.Duration
	LinuxImage   string
	WindowsImage string
	// Confirm is asked before anything is created, with what will be.
	Confirm func(plan string) (bool, error)
	// Log receives progress and per-node failures.
	Log io.Writer
}

// NodeResult is what happened on one node.
type NodeResult struct {
	Node  string
	Files int
	Err   error
}

// ErrDeclined is returned when Confirm says no.
var ErrDeclined = errors.New("nothing created: not confirmed")

// PermissionError is a missing right, found before anything is created.
type PermissionError struct{ Missing []string }

func (e *PermissionError) Error() string {
	return fmt.Sprintf("collect needs rights the current user lacks (%s); nothing was created. Apply deploy/collect-rbac.yaml and bind it, or use an admin kubeconfig", strings.Join(e.Missing, ", "))
}

// needed are the rights collect uses; it never reads Secrets.
var needed = []authorizationv1.ResourceAttributes{
	{Verb: "list", Resource: "nodes"},
	{Verb: "create", Resource: "pods"},
	{Verb: "get", Resource: "pods"},
	{Verb: "list", Resource: "pods"},
	{Verb: "delete", Resource: "pods"},
	{Verb: "create", Resource: "pods", Subresource: "exec"},
}

// CheckRights asks the API server whether the current user may do what
// collect does in the namespace (SelfSubjectAccessReview).
func CheckRights(ctx context.Context, c kubernetes.Interface, ns string) error {
	var missing []string
	for _, ra := range needed {
		ra := ra
		if ra.Resource != "nodes" {
			ra.Namespace = ns
		}
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking the API server what the current user may do: %w", err)
		}
		if !r.Status.Allowed {
			what := ra.Verb + " " + ra.Resource
			if ra.Subresource != "" {
				what += "/" + ra.Subresource
			}
			missing = append(missing, what)
		}
	}
	if len(missing) > 0 {
		return &PermissionError{Missing: missing}
	}
	return nil
}

// Cleanup deletes every pod an earlier run left (found by its label) and
// returns their names.
func Cleanup(ctx context.Context, c kubernetes.Interface, ns string) ([]string, error) {
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: Selector})
	if err != nil {
		return nil, fmt.Errorf("listing leftover collect pods: %w", err)
	}
	var names []string
	for _, p := range pods.Items {
		if err := deletePod(ctx, c, ns, p.Name); err != nil {
			return names, err
		}
		names = append(names, p.Name)
	}
	return names, nil
}

// deletePod removes a pod at once: collect's pods only sleep, and a pod
// bound to a node that never confirms its end would otherwise stay.
func deletePod(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	zero := int64(0)
	err := c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", ns, name, err)
	}
	return nil
}

// Run collects from every node, one after another. Pods it created are
// deleted before it returns, also when ctx is cancelled (an interrupt):
// the deletion uses its own short context.
func Run(ctx context.Context, o Options) ([]NodeResult, error) {
	if err := CheckRights(ctx, o.Client, o.Namespace); err != nil {
		return nil, err
	}
	nodes, err := selectNodes(ctx, o.Client, o.Nodes)
	if err != nil {
		return nil, err
	}
	runID := rand.String(5)
	var plan strings.Builder
	fmt.Fprintf(&plan, "collect will create %d short-lived pods in namespace %s (label %s), run read-only commands in them and delete them:\n", len(nodes), o.Namespace, Selector)
	for _, n := range nodes {
		kind := "privileged, host network and PID namespace"
		if isWindows(n) {
			kind = "HostProcess"
		}
		fmt.Fprintf(&plan, "  %s on node %s (%s)\n", podName(n.Name, runID), n.Name, kind)
	}
	ok, err := o.Confirm(plan.String())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrDeclined
	}
	if left, err := Cleanup(ctx, o.Client, o.Namespace); err != nil {
		return nil, err
	} else if len(left) > 0 {
		fmt.Fprintf(o.Log, "deleted %d pods an earlier collect left: %s\n", len(left), strings.Join(left, ", "))
	}
	var created sync.Map
	defer func() {
		// Delete whatever is still there, whatever ended the run.
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		created.Range(func(k, _ any) bool {
			if err := deletePod(cctx, o.Client, o.Namespace, k.(string)); err != nil {
				fmt.Fprintf(o.Log, "warning: %v; delete it with: kubectl -n %s delete pod -l %s\n", err, o.Namespace, Selector)
			}
			return true
		})
	}()
	var results []NodeResult
	for _, n := range nodes {
		if ctx.Err() != nil {
			results = append(results, NodeResult{Node: n.Name, Err: ctx.Err()})
			continue
		}
		r := collectNode(ctx, o, n, runID, &created)
		if r.Err != nil {
			fmt.Fprintf(o.Log, "node %s: %v\n", n.Name, r.Err)
		} else {
			fmt.Fprintf(o.Log, "node %s: %d outputs written\n", n.Name, r.Files)
		}
		results = append(results, r)
	}
	return results, nil
}

func selectNodes(ctx context.Context, c kubernetes.Interface, names []string) ([]*corev1.Node, error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	byName := map[string]*corev1.Node{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var out []*corev1.Node
	if len(names) == 0 {
		for _, n := range byName {
			out = append(out, n)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	for _, name := range names {
		n, ok := byName[name]
		if !ok {
			return nil, &NodeNotFoundError{Name: name}
		}
		out = append(out, n)
	}
	return out, nil
}

// NodeNotFoundError is a --node the cluster does not have.
type NodeNotFoundError struct{ Name string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Name) }

func isWindows(n *corev1.Node) bool { return n.Labels[corev1.LabelOSStable] == "windows" }

func podName(node, runID string) string {
	name := "hybrid-collect-" + node
	if len(name) > 63-6 {
		name = name[:63-6]
	}
	return strings.TrimSuffix(name, "-") + "-" + runID
}

func collectNode(ctx context.Context, o Options, n *corev1.Node, runID string, created *sync.Map) NodeResult {
	res := NodeResult{Node: n.Name}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	pod := Pod(n, o.Namespace, runID, o.LinuxImage, o.WindowsImage, o.Timeout)
	p, err := o.Client.CoreV1().Pods(o.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		res.Err = fmt.Errorf("creating pod %s: %w", pod.Name, err)
		return res
	}
	created.Store(p.Name, true)
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer dcancel()
		if err := deletePod(dctx, o.Client, o.Namespace, p.Name); err == nil {
			created.Delete(p.Name)
		}
	}()
	if err := waitRunning(ctx, o.Client, o.Namespace, p.Name); err != nil {
		res.Err = err
		if errors.Is(err, context.DeadlineExceeded) {
			res.Err = fmt.Errorf("timed out after %s: pod %s did not start (%w)", o.Timeout, p.Name, err)
		}
		return res
	}
	for _, cmd := range verify.Commands {
		if cmd.Windows != isWindows(n) {
			continue
		}
		argv := CommandLine(cmd, isWindows(n))
		out, errOut, err := o.Exec.Exec(ctx, o.Namespace, p.Name, container, argv)
		if err != nil {
			res.Err = fmt.Errorf("%s: %w %s", cmd.Typed, err, strings.TrimSpace(errOut))
			return res
		}
		if err := verify.WriteOutput(o.OutputDir, n.Name, cmd, out); err != nil {
			res.Err = err
			return res
		}
		res.Files++
	}
	return res
}

// waitRunning polls the pod until it runs, fails or ctx ends; the last
// state seen is in the error.
func waitRunning(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	var last string
	for {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			switch p.Status.Phase {
			case corev1.PodRunning:
				return nil
			case corev1.PodFailed, corev1.PodSucceeded:
				return fmt.Errorf("pod %s ended (%s) before the commands ran: %s", name, p.Status.Phase, p.Status.Message)
			}
			last = string(p.Status.Phase)
			if last == "" {
				last = "no status: no kubelet has taken it"
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("last seen %s: %w", last, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
