package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// manyPods is the size of the big cluster; KUBECTL_HYBRID_PODS overrides it.
func manyPods() int {
	n := 20000
	if s := os.Getenv("KUBECTL_HYBRID_PODS"); s != "" {
		fmt.Sscan(s, &n)
	}
	return n
}

// bigCluster starts, on first use, a cluster of its own with manyPods pods
// on one Linux node and one Windows node.
func bigCluster(t *testing.T) *cluster {
	t.Helper()
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.big == nil && env.bigE == nil {
		env.big, env.bigE = startBig()
	}
	if env.bigE != nil {
		t.Fatal(env.bigE)
	}
	return env.big
}

func startBig() (*cluster, error) {
	start := time.Now()
	c, err := startCluster("big", env.bins, "")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(c.loader())
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"scale"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		if _, err := cs.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	for _, n := range []struct{ name, os, kernel, image, addr string }{
		{"big-linux-1", "linux", "7.0.0-42-generic", "Ubuntu 26.04.1 LTS", "192.168.10.24"},
		{"big-win-1", "windows", "10.0.26100.33438", "Windows Server 2025 Datacenter", "192.168.10.25"},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{
			"kubernetes.io/os": n.os, "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": n.name,
		}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return nil, err
		}
		pods := resource.MustParse("30000")
		created.Status = corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.addr}, {Type: corev1.NodeHostName, Address: n.name}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: n.os, Architecture: "amd64", KernelVersion: n.kernel, OSImage: n.image,
				KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.2.2",
			},
		}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
	}
	n := manyPods()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				win := i%4 == 3
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%05d", i), Namespace: "scale", Labels: map[string]string{"app": "scale"}},
					Spec: corev1.PodSpec{
						NodeName:                     "big-linux-1",
						AutomountServiceAccountToken: new(false),
						Containers:                   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
					},
				}
				if win {
					pod.Spec.NodeName = "big-win-1"
					pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
					pod.Spec.Containers[0].Image = "mcr.microsoft.com/windows/nanoserver:ltsc2025"
				}
				if _, err := cs.CoreV1().Pods("scale").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		c.stop()
		return nil, fmt.Errorf("creating pods: %w", err)
	}
	logf("big cluster with %d pods ready in %s", n, time.Since(start).Round(time.Millisecond))
	return c, nil
}

// TestReadsManyPodsInPages reads a cluster of 20,000 pods: in pages of
// 500 (the audit log shows the requests), every pod, and how long it took.
func TestReadsManyPodsInPages(t *testing.T) {
	c := bigCluster(t)
	kc := c.kubeconfig("admin", c.adminToken)
	ctx := context.Background()
	r := hybrid(ctx, "dump", "-o", "json", "--kubeconfig", kc)
	if r.code != 0 {
		t.Fatalf("dump: %s", r.String()[:min(len(r.String()), 2000)])
	}
	n := manyPods()
	if got := strings.Count(r.stdout, `"kind": "Pod"`); got != n {
		t.Errorf("the dump has %d pods, want %d", got, n)
	}
	t.Logf("read %d pods (dump -o json, %d MB) in %s", n, len(r.stdout)>>20, r.elapsed.Round(time.Millisecond))

	var pages, limited int
	for _, e := range auditEvents(t, c.AuditLog) {
		if e.User.Username != "admin" || e.ObjectRef == nil || e.ObjectRef.Resource != "pods" || e.Verb != "list" {
			continue
		}
		pages++
		if strings.Contains(e.RequestURI, "limit=500") {
			limited++
		}
	}
	want := (n + 499) / 500
	if pages != want || limited != pages {
		t.Errorf("pods were listed in %d requests (%d with limit=500), want %d pages of 500", pages, limited, want)
	}

	g := hybrid(ctx, "get", "pods", "-n", "scale", "--no-headers", "--kubeconfig", kc)
	if g.code != 0 {
		t.Fatalf("get pods: %s", g.String()[:min(len(g.String()), 2000)])
	}
	if got := strings.Count(g.stdout, "\n"); got != n {
		t.Errorf("get pods printed %d lines, want %d", got, n)
	}
	t.Logf("get pods -n scale over %d pods in %s", n, g.elapsed.Round(time.Millisecond))
}

// TestServerStoppedMidRun kills a kube-apiserver while the tool is reading
// pods from it, between two pages: the tool must say that it cannot reach
// the cluster, and exit 3.
func TestServerStoppedMidRun(t *testing.T) {
	big := bigCluster(t)
	// A second API server on the big cluster's etcd, to kill.
	c, err := startCluster("big", env.bins, big.etcdURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	kc := c.kubeconfig("admin", c.adminToken)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan result, 1)
	go func() { done <- hybrid(ctx, "dump", "--kubeconfig", kc) }()

	// Wait until the tool has read a page of pods and asks for the next.
	deadline := time.Now().Add(time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the tool never asked for a second page of pods")
		}
		data, _ := os.ReadFile(c.AuditLog)
		if strings.Contains(string(data), `"requestURI":"/api/v1/pods?continue=`) {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the tool finished before the API server was stopped: %s", r.String()[:min(len(r.String()), 2000)])
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	stopped := time.Now()
	c.apiserver.kill()
	r := <-done
	t.Logf("the tool gave up %s after the API server was stopped; stderr: %s", time.Since(stopped).Round(time.Millisecond), r.stderr)
	if r.code != 3 {
		t.Errorf("exit code %d, want 3", r.code)
	}
	want := "error: cannot reach the cluster at " + c.URL + ": "
	if !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("a failed read printed %d bytes on stdout", len(r.stdout))
	}
}

// TestUnreachableCluster: nothing listens at the kubeconfig's server.
func TestUnreachableCluster(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{name: "gone", dir: t.TempDir(), URL: fmt.Sprintf("https://127.0.0.1:%d", port), CAFile: env.lab.CAFile}
	kc := c.kubeconfig("admin", "token")
	r := hybrid(context.Background(), "get", "nodes", "--kubeconfig", kc)
	// The request timeout is the tool's default (30s) where the kubeconfig
	// and --request-timeout set none, not client-go discovery's 32s.
	want := "error: cannot reach the cluster at " + c.URL + ": Get \"" + c.URL + "/api/v1?timeout=30s\": dial tcp 127.0.0.1:" + fmt.Sprint(port) + ": connect: connection refused\n"
	if r.code != 3 || r.stderr != want || r.stdout != "" {
		t.Errorf("got %s\nwant exit 3 and stderr %q", r, want)
	}
}
