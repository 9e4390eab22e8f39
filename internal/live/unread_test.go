package live

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestTheKindsAReadSkipsAreNamedWithWhy(t *testing.T) {
	f := newFakeCluster(t, coreResources, pod("default", "a"))
	f.dyn.PrependReactor("list", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "",
			errors.New(`User "alice" cannot list resource "nodes" in API group "" at the cluster scope`))
	})
	f.dyn.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "")
	})
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range snap.Unread {
		got[u.String()] = u.Reason
	}
	want := map[string]string{
		"Node":                                `nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope`,
		"ConfigMap":                           notServed,
		"ClusterConfiguration.kubeadm.k8s.io": "kept in a ConfigMap, and ConfigMaps were not read",
		"KubeletConfiguration.kubelet.config.k8s.io":     "kept in a ConfigMap, and ConfigMaps were not read",
		"KubeProxyConfiguration.kubeproxy.config.k8s.io": "kept in a ConfigMap, and ConfigMaps were not read",
		"IPPool.projectcalico.org":                       notServed,
		"IPAMConfiguration.projectcalico.org":            notServed,
		"Installation.operator.tigera.io":                notServed,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Unread[%s] = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["Pod"]; ok {
		t.Error("pods were read, yet named unread")
	}
	if _, ok := got["Cluster.hybrid.kubectl-hybrid.io"]; ok {
		t.Error("the optional Cluster CRD is named unread")
	}
}

func TestARefusedDiscoveryIsTheReasonAKindWasNotRead(t *testing.T) {
	f := newFakeCluster(t, coreResources, pod("default", "a"))
	disc := failingDiscovery{discoverer: f.disc, errs: map[string]error{
		"projectcalico.org/v3": apierrors.NewServiceUnavailable("the server is currently unable to handle the request"),
	}}
	snap, err := read(context.Background(), "https://fake:6443", disc, f.paging, Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range snap.Unread {
		if u.Kind == "IPPool" {
			found = true
			if want := "discovery of projectcalico.org/v3: the server is currently unable to handle the request"; u.Reason != want {
				t.Errorf("IPPool: reason %q, want %q", u.Reason, want)
			}
		}
	}
	if !found {
		t.Errorf("IPPool is not named unread: %+v", snap.Unread)
	}
}

// TestAServerThatAnswers404ToEverythingGivesAnEmptySnapshotNamingEveryKind
// reads from a real HTTP server on loopback that serves nothing.
func TestAServerThatAnswers404ToEverythingGivesAnEmptySnapshotNamingEveryKind(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	snap, err := Read(context.Background(), &rest.Config{Host: srv.URL}, Options{})
	if err != nil {
		t.Fatalf("a server that serves nothing is not an error of the read: %v", err)
	}
	if len(snap.Objects) != 0 {
		t.Errorf("objects %v", keys(snap))
	}
	var got []string
	for _, u := range snap.Unread {
		if u.Reason == notServed {
			got = append(got, u.String())
		}
	}
	var want []string
	for _, tg := range Targets() {
		if tg.Optional {
			continue
		}
		u := model.UnreadKind{Group: tg.Choices[0].Group, Kind: tg.Choices[0].Kind}
		want = append(want, u.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unread %v,\nwant every kind %v", got, want)
	}
}
