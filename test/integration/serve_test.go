package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serveQuestion is one question asked of serve and, as a command line, of
// a fresh kubectl-hybrid run against the same cluster.
type serveQuestion struct {
	path string
	args []string
}

var serveQuestions = []serveQuestion{
	{"/api/v1/check", []string{"check", "-o", "json"}},
	{"/api/v1/get/pods?allNamespaces=true", []string{"get", "pods", "-A", "-o", "json"}},
	{"/api/v1/get/nodes", []string{"get", "nodes", "-o", "json"}},
	{"/api/v1/get/networkpolicies?allNamespaces=true", []string{"get", "networkpolicies", "-A", "-o", "json"}},
	{"/api/v1/get/installations", []string{"get", "installations", "-o", "json"}},
	{"/api/v1/get/routes", []string{"get", "routes", "-o", "json"}},
	{"/api/v1/trace?namespace=demo&src=deploy/hello&dst=svc/win-demo/aspnetapp",
		[]string{"trace", "-n", "demo", "deploy/hello", "svc/win-demo/aspnetapp", "-o", "json"}},
	{"/api/v1/reach?namespace=demo", []string{"reach", "-n", "demo", "-o", "json"}},
}

// coldAnswers runs every question as a fresh process.
func coldAnswers(t *testing.T, ctx context.Context) []string {
	t.Helper()
	out := make([]string, len(serveQuestions))
	for i, q := range serveQuestions {
		r := hybrid(ctx, append(q.args, "--kubeconfig", env.reader)...)
		if r.code > 1 {
			t.Fatalf("kubectl-hybrid %s: %s", strings.Join(q.args, " "), r)
		}
		out[i] = r.stdout
	}
	return out
}

func warmAnswers(base string) ([]string, error) {
	out := make([]string, len(serveQuestions))
	for i, q := range serveQuestions {
		resp, err := http.Get(base + q.path)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %d %s", q.path, resp.StatusCode, b)
		}
		out[i] = string(b)
	}
	return out, nil
}

// TestServeFollowsTheLiveCluster runs serve against the lab cluster as the
// read-only ServiceAccount of deploy/rbac.yaml, changes pods, nodes,
// policies and the Installation through the API server, and after each
// change waits for serve's answers to equal a fresh run's. Every change is
// undone, so the cluster is the lab's again afterwards.
func TestServeFollowsTheLiveCluster(t *testing.T) {
	ctx := context.Background()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	base := "http://" + addr
	p, err := startProcess("serve", filepath.Join(env.tmp, "serve.log"), env.bins.hybrid,
		"serve", "--kubeconfig", env.reader, "--listen", addr, "--debounce", "200ms")
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if err := waitFor(p, 2*time.Minute, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		t.Fatalf("serve is not ready: %v\n%s", err, p.tail())
	}
	c, err := newClient(env.lab.loader())
	if err != nil {
		t.Fatal(err)
	}

	prev := coldAnswers(t, ctx)
	// follow waits for serve to answer as a fresh run does, and checks
	// that the change did change some answer (else it proves nothing).
	follow := func(t *testing.T) {
		t.Helper()
		want := coldAnswers(t, ctx)
		changed := false
		for i := range want {
			changed = changed || want[i] != prev[i]
		}
		if !changed {
			t.Fatalf("the change is in none of the answers")
		}
		prev = want
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, err := warmAnswers(base)
			if err == nil {
				same := true
				for i := range want {
					same = same && got[i] == want[i]
				}
				if same {
					return
				}
			}
			if time.Now().After(deadline) {
				if err != nil {
					t.Fatalf("serve: %v\n%s", err, p.tail())
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s differs from `kubectl-hybrid %s` after 60s:\n%s", serveQuestions[i].path,
							strings.Join(serveQuestions[i].args, " "), diff("cold", want[i], "serve", got[i]))
					}
				}
				t.FailNow()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	pods := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("demo")
	nodes := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	policies := c.dyn.Resource(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}).Namespace("demo")
	installations := c.dyn.Resource(schema.GroupVersionResource{Group: "operator.tigera.io", Version: "v1", Resource: "installations"})

	obj := func(text string) *unstructured.Unstructured {
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON([]byte(text)); err != nil {
			t.Fatal(err)
		}
		return &u
	}
	update := func(t *testing.T, get func() (*unstructured.Unstructured, error), change func(u *unstructured.Unstructured), put func(*unstructured.Unstructured) error) {
		t.Helper()
		u, err := get()
		if err != nil {
			t.Fatal(err)
		}
		change(u)
		if err := put(u); err != nil {
			t.Fatal(err)
		}
	}
	opts := metav1.UpdateOptions{}

	steps := []struct {
		name string
		do   func(t *testing.T)
	}{
		{"a pod is created", func(t *testing.T) {
			_, err := pods.Create(ctx, obj(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"serve-probe","namespace":"demo","labels":{"app":"probe"}},
				"spec":{"nodeName":"k8s-lab-node-1","containers":[{"name":"c","image":"busybox:1.36","ports":[{"containerPort":8080}],
				"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}}}]}}`), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"the pod's labels change", func(t *testing.T) {
			update(t, func() (*unstructured.Unstructured, error) { return pods.Get(ctx, "serve-probe", metav1.GetOptions{}) },
				func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "hello"}) },
				func(u *unstructured.Unstructured) error { _, err := pods.Update(ctx, u, opts); return err })
		}},
		{"the pod is deleted", func(t *testing.T) {
			if err := pods.Delete(ctx, "serve-probe", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"a node is created", func(t *testing.T) {
			_, err := nodes.Create(ctx, obj(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"k8s-lab-node-9",
				"labels":{"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"k8s-lab-node-9"}}}`), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"the node is cordoned", func(t *testing.T) {
			update(t, func() (*unstructured.Unstructured, error) {
				return nodes.Get(ctx, "k8s-lab-node-9", metav1.GetOptions{})
			},
				func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, true, "spec", "unschedulable")
				},
				func(u *unstructured.Unstructured) error { _, err := nodes.Update(ctx, u, opts); return err })
		}},
		{"the node is deleted", func(t *testing.T) {
			if err := nodes.Delete(ctx, "k8s-lab-node-9", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"a policy is created", func(t *testing.T) {
			_, err := policies.Create(ctx, obj(`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"serve-deny","namespace":"demo"},
				"spec":{"podSelector":{},"policyTypes":["Ingress"]}}`), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"the policy also denies egress", func(t *testing.T) {
			update(t, func() (*unstructured.Unstructured, error) {
				return policies.Get(ctx, "serve-deny", metav1.GetOptions{})
			},
				func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedStringSlice(u.Object, []string{"Ingress", "Egress"}, "spec", "policyTypes")
				},
				func(u *unstructured.Unstructured) error { _, err := policies.Update(ctx, u, opts); return err })
		}},
		{"the policy is deleted", func(t *testing.T) {
			if err := policies.Delete(ctx, "serve-deny", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	// The Installation: changed, deleted, and created again as it was.
	orig, err := installations.Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps = append(steps,
		struct {
			name string
			do   func(t *testing.T)
		}{"the Installation turns BGP on", func(t *testing.T) {
			update(t, func() (*unstructured.Unstructured, error) {
				return installations.Get(ctx, "default", metav1.GetOptions{})
			},
				func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, "Enabled", "spec", "calicoNetwork", "bgp")
				},
				func(u *unstructured.Unstructured) error { _, err := installations.Update(ctx, u, opts); return err })
		}},
		struct {
			name string
			do   func(t *testing.T)
		}{"the Installation is deleted", func(t *testing.T) {
			if err := installations.Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		struct {
			name string
			do   func(t *testing.T)
		}{"the Installation is created again", func(t *testing.T) {
			if err := c.put(ctx, orig); err != nil {
				t.Fatal(err)
			}
		}},
	)
	for _, st := range steps {
		if !t.Run(st.name, func(t *testing.T) {
			st.do(t)
			follow(t)
		}) {
			break
		}
	}
	// Whatever failed, leave the lab cluster as the other tests expect it.
	_ = pods.Delete(ctx, "serve-probe", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	_ = nodes.Delete(ctx, "k8s-lab-node-9", metav1.DeleteOptions{})
	_ = policies.Delete(ctx, "serve-deny", metav1.DeleteOptions{})
	if _, err := installations.Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if err := c.put(ctx, orig); err != nil {
			t.Errorf("restoring the Installation: %v", err)
		}
	} else {
		cur, _ := installations.Get(ctx, "default", metav1.GetOptions{})
		if bgp, _, _ := unstructured.NestedString(cur.Object, "spec", "calicoNetwork", "bgp"); bgp == "Enabled" {
			if err := c.put(ctx, orig); err != nil {
				t.Errorf("restoring the Installation: %v", err)
			}
		}
	}
	if _, err := http.Get(base + "/metrics"); err != nil {
		t.Errorf("/metrics: %v", err)
	}
}
