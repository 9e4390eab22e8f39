package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// describe is an update as a line: the unit, then each object's key and
// origin and its labels, or "deleted".
func describe(u Update) string {
	if u.Err != nil {
		return u.Unit + ": refused: " + u.Err.Error()
	}
	if u.Objects == nil {
		return u.Unit + ": deleted"
	}
	var parts []string
	for _, o := range u.Objects {
		labels := ""
		if m, ok := o.Typed.(metav1.Object); ok {
			labels = fmt.Sprint(m.GetLabels())
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s", o.Key, o.Origin, labels))
	}
	return u.Unit + ": " + strings.Join(parts, "; ")
}

// The watch delivers each object added, changed or deleted after it is
// ready, decoded as Read decodes it, and nothing of what it listed first.
func TestTheWatchDeliversEachChangedObjectAsReadDecodesIt(t *testing.T) {
	f := newFakeCluster(t, coreResources, pod("demo", "first"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := make(chan Update, 16)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- watch(ctx, "https://fake:6443", f.disc, f.dyn, func(u Update) { updates <- u }, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the watch ended before it was ready: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the watch was not ready after 30s")
	}
	pods := f.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("demo")
	cms := f.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("kube-system")
	kubeadm := obj("v1", "ConfigMap", "kube-system", "kubeadm-config", map[string]any{"data": map[string]any{
		"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.35.0\n",
	}})
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"a pod is created", func() error {
			_, err := pods.Create(ctx, pod("demo", "second"), metav1.CreateOptions{})
			return err
		}, "live:pod/demo/second: Pod demo/second (live:pod/demo/second) map[]"},
		{"its labels change", func() error {
			u := pod("demo", "second")
			u.SetLabels(map[string]string{"app": "hello"})
			u.SetResourceVersion("2")
			_, err := pods.Update(ctx, u, metav1.UpdateOptions{})
			return err
		}, "live:pod/demo/second: Pod demo/second (live:pod/demo/second) map[app:hello]"},
		{"it is deleted", func() error { return pods.Delete(ctx, "second", metav1.DeleteOptions{}) }, "live:pod/demo/second: deleted"},
		{"kubeadm's ConfigMap comes with the document it holds", func() error {
			_, err := cms.Create(ctx, kubeadm, metav1.CreateOptions{})
			return err
		}, "live:configmap/kube-system/kubeadm-config: ConfigMap kube-system/kubeadm-config (live:configmap/kube-system/kubeadm-config) map[]; " +
			"ClusterConfiguration.kubeadm.k8s.io  (live:configmap/kube-system/kubeadm-config:1 (document 1)) map[]"},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		select {
		case u := <-updates:
			if got := describe(u); got != st.want {
				t.Errorf("%s: the watch delivered\n%s\nwant\n%s", st.name, got, st.want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: nothing delivered after 30s", st.name)
		}
	}
	// What Read decodes now, unit by unit, is what the watch delivered.
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range snap.Objects {
		got = append(got, fmt.Sprintf("%s (%s)", o.Key, o.Origin))
	}
	want := []string{"Pod demo/first (live:pod/demo/first)", "ConfigMap kube-system/kubeadm-config (live:configmap/kube-system/kubeadm-config)",
		"ClusterConfiguration.kubeadm.k8s.io  (live:configmap/kube-system/kubeadm-config:1 (document 1))"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Read gives\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	select {
	case u := <-updates:
		t.Errorf("an update nobody made: %s", describe(u))
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the watch ended with %v", err)
	}
}

// Rank orders units by their kind's place among Targets; a unit of no
// Target's kind comes after all.
func TestRankOrdersUnitsAsReadListsTheirKinds(t *testing.T) {
	targets := Targets()
	for i, tg := range targets {
		for _, c := range tg.Choices {
			unit := originPrefix(c) + "ns/name"
			if got := Rank(unit); got != i {
				t.Errorf("Rank(%q) = %d, want %d (%s)", unit, got, i, tg.Label)
			}
		}
	}
	for _, unit := range []string{"live:widget.example.com/x", "lab:pods.yaml", "", "live:"} {
		if got := Rank(unit); got < len(targets) {
			t.Errorf("Rank(%q) = %d, want after every kind (%d or more)", unit, got, len(targets))
		}
	}
}
