package integration

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const collectNS = "kubectl-hybrid-collect"

// collectUsers applies deploy/collect-rbac.yaml and makes two
// ServiceAccounts: one bound to its roles, one to the read-only role only.
// There is no controller manager, so the namespace's default
// ServiceAccount (which pod admission looks up) is made here too. All of it
// is removed when the test ends, the namespace through its finalize
// subresource (no namespace controller runs).
func collectUsers(t *testing.T, ctx context.Context) (cs kubernetes.Interface, collector, readonly string) {
	t.Helper()
	c, err := newClient(env.lab.loader())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.applyFile(ctx, filepath.Join("..", "..", "deploy", "collect-rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	k, err := kubernetes.NewForConfig(env.lab.loader())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, n := range []string{"collect-test-collector-nodes", "collect-test-readonly"} {
			_ = k.RbacV1().ClusterRoleBindings().Delete(ctx, n, metav1.DeleteOptions{})
		}
		_ = k.RbacV1().ClusterRoles().Delete(ctx, "kubectl-hybrid-collect-nodes", metav1.DeleteOptions{})
		_ = k.CoreV1().Namespaces().Delete(ctx, collectNS, metav1.DeleteOptions{})
		ns, err := k.CoreV1().Namespaces().Get(ctx, collectNS, metav1.GetOptions{})
		if err == nil {
			ns.Spec.Finalizers = nil
			if _, err := k.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
				t.Errorf("finalizing namespace %s: %v", collectNS, err)
			}
		}
	})
	for _, sa := range []string{"default", "collector", "readonly"} {
		if _, err := k.CoreV1().ServiceAccounts(collectNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	subject := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: collectNS}}
	}
	if _, err := k.RbacV1().RoleBindings(collectNS).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "collect-test-collector"}, Subjects: subject("collector"),
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "kubectl-hybrid-collect"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][2]string{
		"collect-test-collector-nodes": {"collector", "kubectl-hybrid-collect-nodes"},
		"collect-test-readonly":        {"readonly", "kubectl-hybrid-reader"},
	} {
		if _, err := k.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject(b[0]),
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: b[1]},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	token := func(name string) string {
		tok, err := serviceAccountToken(ctx, c, collectNS, name)
		if err != nil {
			t.Fatal(err)
		}
		return env.lab.kubeconfig("collect-"+name, tok)
	}
	return k, token("collector"), token("readonly")
}

func collectPods(t *testing.T, k kubernetes.Interface) []corev1.Pod {
	t.Helper()
	l, err := k.CoreV1().Pods(collectNS).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=kubectl-hybrid-collect"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// watchPods records every collect pod seen while f runs.
func watchPods(k kubernetes.Interface, f func()) map[string]corev1.Pod {
	seen := map[string]corev1.Pod{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		for {
			l, err := k.CoreV1().Pods(collectNS).List(context.Background(), metav1.ListOptions{})
			if err == nil {
				mu.Lock()
				for _, p := range l.Items {
					seen[p.Name] = p
				}
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	mu.Lock()
	defer mu.Unlock()
	return seen
}

// TestCollectAgainstAServerWithoutKubelets: there is no kubelet, so the
// pods collect creates stay Pending. It must create them right, time out
// per node, say so and leave none; refuse without --yes when stdin is no
// terminal; and create nothing with only the read-only role.
func TestCollectAgainstAServerWithoutKubelets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	k, collector, readonly := collectUsers(t, ctx)

	t.Run("without --yes and without a terminal it refuses", func(t *testing.T) {
		r := hybrid(ctx, "collect", "--kubeconfig", collector, "--output-dir", t.TempDir(), "--node", "k8s-lab-node-1")
		if r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
			t.Fatalf("want exit 2 asking for --yes: %s", r)
		}
		if p := collectPods(t, k); len(p) != 0 {
			t.Fatalf("%d pods created", len(p))
		}
	})

	t.Run("with only the read-only role it creates nothing", func(t *testing.T) {
		var r result
		seen := watchPods(k, func() {
			r = hybrid(ctx, "collect", "--kubeconfig", readonly, "-n", collectNS, "--output-dir", t.TempDir(), "--yes")
		})
		if r.code != 3 || !strings.Contains(r.stderr, "create pods") || !strings.Contains(r.stderr, "collect-rbac.yaml") {
			t.Fatalf("want exit 3 naming the missing rights: %s", r)
		}
		if len(seen) != 0 {
			t.Fatalf("pods created: %v", seen)
		}
	})

	t.Run("each node times out, is reported, and its pod is deleted", func(t *testing.T) {
		dir := t.TempDir()
		var r result
		seen := watchPods(k, func() {
			r = hybrid(ctx, "collect", "--kubeconfig", collector, "--output-dir", dir, "--yes", "--timeout", "3s",
				"--node", "k8s-lab-node-1", "--node", "k8s-lab-win-1")
		})
		if r.code != 1 {
			t.Fatalf("want exit 1: %s", r)
		}
		for _, n := range []string{"k8s-lab-node-1", "k8s-lab-win-1"} {
			if !strings.Contains(r.stderr, "node "+n+": timed out after 3s") {
				t.Errorf("no timeout reported for %s: %s", n, r)
			}
		}
		if len(seen) != 2 {
			t.Fatalf("saw %d pods, want 2: %v", len(seen), seen)
		}
		for _, p := range seen {
			node := p.Labels["hybrid.kubectl-hybrid.io/collect-node"]
			if p.Spec.NodeName != node || !p.Spec.HostNetwork || len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0].Operator != corev1.TolerationOpExists {
				t.Errorf("pod %s: node %q (label %q), hostNetwork %v, tolerations %v", p.Name, p.Spec.NodeName, node, p.Spec.HostNetwork, p.Spec.Tolerations)
			}
			if node == "k8s-lab-win-1" {
				wo := p.Spec.SecurityContext.WindowsOptions
				if wo == nil || wo.HostProcess == nil || !*wo.HostProcess || p.Spec.OS == nil || p.Spec.OS.Name != corev1.Windows {
					t.Errorf("pod %s is not a HostProcess pod: %+v", p.Name, p.Spec.SecurityContext)
				}
			} else if sc := p.Spec.Containers[0].SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged || !p.Spec.HostPID {
				t.Errorf("pod %s is not privileged with the host's PID namespace", p.Name)
			}
			if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
				t.Errorf("pod %s: phase %s without a kubelet", p.Name, p.Status.Phase)
			}
		}
		if p := collectPods(t, k); len(p) != 0 {
			t.Fatalf("%d pods left behind", len(p))
		}
	})

	t.Run("an interrupt deletes the pod it created", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, env.bins.hybrid, "collect", "--kubeconfig", collector, "--output-dir", t.TempDir(), "--yes", "--timeout", "2m", "--node", "k8s-lab-node-2")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(env.tmp, "no-such-kubeconfig"), "HOME="+env.tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for len(collectPods(t, k)) == 0 {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("no pod created in 30s: %s", errb.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(errb.String(), "interrupted") {
			t.Fatalf("want exit 3 after the interrupt, got %v: %s", err, errb.String())
		}
		if p := collectPods(t, k); len(p) != 0 {
			t.Fatalf("%d pods left behind after the interrupt", len(p))
		}
	})
}
