package collect

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

func node(name, os string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}
}

// cluster is a fake API server: rights granted or not, pods that start
// (a kubelet) or stay pending (none), and a record of created pods.
type cluster struct {
	*fake.Clientset
	mu      sync.Mutex
	created []*corev1.Pod
}

func newCluster(allowed, kubelet bool, objs ...runtime.Object) *cluster {
	c := &cluster{Clientset: fake.NewSimpleClientset(objs...)}
	c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		r.Status.Allowed = allowed || r.Spec.ResourceAttributes.Verb == "list"
		return true, r, nil
	})
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if kubelet {
			p.Status.Phase = corev1.PodRunning
		}
		c.mu.Lock()
		c.created = append(c.created, p.DeepCopy())
		c.mu.Unlock()
		return false, nil, nil
	})
	return c
}

func (c *cluster) pods(t *testing.T) []corev1.Pod {
	t.Helper()
	l, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// fakeExec answers each command with a line naming it and the pod.
type fakeExec struct {
	mu    sync.Mutex
	argvs [][]string
	hook  func()
}

func (f *fakeExec) Exec(ctx context.Context, ns, pod, container string, argv []string) (string, string, error) {
	f.mu.Lock()
	f.argvs = append(f.argvs, argv)
	f.mu.Unlock()
	if f.hook != nil {
		f.hook()
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	return "output of " + strings.Join(argv, " ") + " in " + pod + "\n", "", nil
}

func options(c *cluster, ex Executor, dir string) Options {
	return Options{Client: c, Exec: ex, Namespace: "default", OutputDir: dir, Timeout: 5 * time.Second,
		LinuxImage: DefaultLinuxImage, WindowsImage: DefaultWindowsImage,
		Confirm: func(string) (bool, error) { return true, nil }, Log: &bytes.Buffer{}}
}

func TestCollectWritesEveryCommandAndDeletesItsPods(t *testing.T) {
	c := newCluster(true, true, node("lin-1", "linux"), node("win-1", "windows"))
	ex := &fakeExec{}
	dir := t.TempDir()
	res, err := Run(context.Background(), options(c, ex, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("node %s: %v", r.Node, r.Err)
		}
	}
	for _, cmd := range verify.Commands {
		n := "lin-1"
		if cmd.Windows {
			n = "win-1"
		}
		data, err := os.ReadFile(filepath.Join(dir, n, cmd.File))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "# "+cmd.Typed+"\noutput of ") {
			t.Errorf("%s/%s starts %q", n, cmd.File, strings.SplitN(string(data), "\n", 3)[:2])
		}
	}
	if left := c.pods(t); len(left) != 0 {
		t.Fatalf("%d pods left behind", len(left))
	}
	if len(c.created) != 2 {
		t.Fatalf("%d pods created, want 2", len(c.created))
	}
	for _, p := range c.created {
		if p.Labels[ManagedByLabel] != managedBy || p.Spec.NodeName != p.Labels[NodeLabel] || !p.Spec.HostNetwork {
			t.Errorf("pod %s: labels %v, node %q, hostNetwork %v", p.Name, p.Labels, p.Spec.NodeName, p.Spec.HostNetwork)
		}
		if len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0].Operator != corev1.TolerationOpExists {
			t.Errorf("pod %s does not tolerate every taint: %v", p.Name, p.Spec.Tolerations)
		}
		win := p.Spec.NodeName == "win-1"
		hp := p.Spec.SecurityContext != nil && p.Spec.SecurityContext.WindowsOptions != nil && *p.Spec.SecurityContext.WindowsOptions.HostProcess
		priv := p.Spec.Containers[0].SecurityContext != nil && *p.Spec.Containers[0].SecurityContext.Privileged
		if win != hp || win == priv || win == p.Spec.HostPID {
			t.Errorf("pod %s: hostProcess %v, privileged %v, hostPID %v", p.Name, hp, priv, p.Spec.HostPID)
		}
	}
	if got := strings.Join(ex.argvs[0], " "); got != "nsenter --target 1 --mount --uts --ipc --net -- ip route" {
		t.Errorf("first Linux command ran as %q", got)
	}
}

func TestCollectCreatesNothingWithoutTheRights(t *testing.T) {
	c := newCluster(false, true, node("lin-1", "linux"))
	_, err := Run(context.Background(), options(c, &fakeExec{}, t.TempDir()))
	var pe *PermissionError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "create pods") || !strings.Contains(err.Error(), "collect-rbac.yaml") {
		t.Fatalf("got %v, want a PermissionError naming create pods and collect-rbac.yaml", err)
	}
	if len(c.created) != 0 {
		t.Fatalf("%d pods created", len(c.created))
	}
}

func TestADeclinedCollectCreatesNothing(t *testing.T) {
	c := newCluster(true, true, node("lin-1", "linux"))
	o := options(c, &fakeExec{}, t.TempDir())
	var plan string
	o.Confirm = func(p string) (bool, error) { plan = p; return false, nil }
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrDeclined) {
		t.Fatalf("got %v, want ErrDeclined", err)
	}
	if len(c.created) != 0 || !strings.Contains(plan, "on node lin-1 (privileged") {
		t.Fatalf("%d pods created; plan %q", len(c.created), plan)
	}
}

func TestANodeWithoutAKubeletTimesOutAndLeavesNoPod(t *testing.T) {
	c := newCluster(true, false, node("lin-1", "linux"), node("lin-2", "linux"))
	o := options(c, &fakeExec{}, t.TempDir())
	o.Timeout = 700 * time.Millisecond
	o.Nodes = []string{"lin-2"}
	start := time.Now()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "timed out after 700ms") {
		t.Fatalf("got %+v, want lin-2 timed out", res)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %s for a 700ms timeout", el)
	}
	if len(c.created) != 1 || len(c.pods(t)) != 0 {
		t.Fatalf("%d created, %d left", len(c.created), len(c.pods(t)))
	}
}

func TestAnInterruptDeletesThePodsItCreated(t *testing.T) {
	c := newCluster(true, true, node("lin-1", "linux"), node("lin-2", "linux"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ex := &fakeExec{hook: cancel}
	res, err := Run(ctx, options(c, ex, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err == nil {
			t.Errorf("node %s collected after the interrupt", r.Node)
		}
	}
	if len(c.created) != 1 || len(c.pods(t)) != 0 {
		t.Fatalf("%d created, %d left", len(c.created), len(c.pods(t)))
	}
}

func TestLeftoversOfAnEarlierRunAreDeletedFirst(t *testing.T) {
	left := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hybrid-collect-lin-1-old00", Namespace: "default", Labels: map[string]string{ManagedByLabel: managedBy}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	c := newCluster(true, true, node("lin-1", "linux"), left, other)
	o := options(c, &fakeExec{}, t.TempDir())
	log := &bytes.Buffer{}
	o.Log = log
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	pods := c.pods(t)
	if len(pods) != 1 || pods[0].Name != "web" || !strings.Contains(log.String(), "hybrid-collect-lin-1-old00") {
		t.Fatalf("pods %v, log %q", pods, log)
	}
}

func TestAnUnknownNodeCreatesNothing(t *testing.T) {
	c := newCluster(true, true, node("lin-1", "linux"))
	o := options(c, &fakeExec{}, t.TempDir())
	o.Nodes = []string{"nope"}
	var nf *NodeNotFoundError
	if _, err := Run(context.Background(), o); !errors.As(err, &nf) || len(c.created) != 0 {
		t.Fatalf("got %v with %d pods created", err, len(c.created))
	}
}
