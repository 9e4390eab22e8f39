package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// resource is one API resource a fake server serves.
type resource struct {
	gv         string
	name, kind string
	namespaced bool
}

var coreResources = []resource{
	{"v1", "nodes", "Node", false},
	{"v1", "namespaces", "Namespace", false},
	{"v1", "pods", "Pod", true},
	{"v1", "services", "Service", true},
	{"v1", "configmaps", "ConfigMap", true},
	{"v1", "secrets", "Secret", true},
	{"v1", "serviceaccounts", "ServiceAccount", true},
	{"apps/v1", "deployments", "Deployment", true},
	{"apps/v1", "replicasets", "ReplicaSet", true},
	{"apps/v1", "daemonsets", "DaemonSet", true},
	{"apps/v1", "statefulsets", "StatefulSet", true},
	{"discovery.k8s.io/v1", "endpointslices", "EndpointSlice", true},
	{"networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", true},
	{"node.k8s.io/v1", "runtimeclasses", "RuntimeClass", false},
	{"scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", false},
	{"certificates.k8s.io/v1", "certificatesigningrequests", "CertificateSigningRequest", false},
}

func calicoResources(gv string, ipamConfigKind string) []resource {
	plural := strings.ToLower(ipamConfigKind) + "s"
	return []resource{
		{gv, "ippools", "IPPool", false},
		{gv, plural, ipamConfigKind, false},
		{gv, "ipamblocks", "IPAMBlock", false},
		{gv, "blockaffinities", "BlockAffinity", false},
		{gv, "felixconfigurations", "FelixConfiguration", false},
		{gv, "bgpconfigurations", "BGPConfiguration", false},
		{gv, "networkpolicies", "NetworkPolicy", true},
		{gv, "globalnetworkpolicies", "GlobalNetworkPolicy", false},
	}
}

var operatorResources = []resource{
	{"operator.tigera.io/v1", "installations", "Installation", false},
	{"operator.tigera.io/v1", "apiservers", "APIServer", false},
	{"operator.tigera.io/v1", "tigerastatuses", "TigeraStatus", false},
}

// fakeCluster is a fake discovery and dynamic client serving resources
// with objects.
type fakeCluster struct {
	disc   *fakediscovery.FakeDiscovery
	dyn    *dynamicfake.FakeDynamicClient
	paging *pagingDynamic
}

// pagingDynamic pages lists the way the API server does (client-go's fake
// ignores limit and continue): items in namespace/name order, at most limit
// of them, with the offset of the next page as the continue token. It
// records every list request.
type pagingDynamic struct {
	dynamic.Interface
	calls []listCall
	// expire makes the next request with a continue token for this
	// resource fail with 410 Gone, as after etcd compacted its revision.
	expire string
}

type listCall struct {
	gvr  schema.GroupVersionResource
	opts metav1.ListOptions
}

func (p *pagingDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &pagingResource{NamespaceableResourceInterface: p.Interface.Resource(gvr), p: p, gvr: gvr}
}

type pagingResource struct {
	dynamic.NamespaceableResourceInterface
	p   *pagingDynamic
	gvr schema.GroupVersionResource
}

func (r *pagingResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.p.calls = append(r.p.calls, listCall{r.gvr, opts})
	if opts.Continue != "" && r.p.expire == r.gvr.Resource {
		r.p.expire = ""
		return nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")
	}
	full, err := r.NamespaceableResourceInterface.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	items := full.Items
	sort.Slice(items, func(i, j int) bool {
		if a, b := items[i].GetNamespace(), items[j].GetNamespace(); a != b {
			return a < b
		}
		return items[i].GetName() < items[j].GetName()
	})
	start := 0
	if opts.Continue != "" {
		if _, err := fmt.Sscanf(opts.Continue, "offset-%d", &start); err != nil {
			return nil, apierrors.NewBadRequest("bad continue token")
		}
	}
	end := len(items)
	if opts.Limit > 0 {
		end = min(end, start+int(opts.Limit))
	}
	page := &unstructured.UnstructuredList{Object: full.Object}
	page.Items = items[start:end]
	page.SetContinue("")
	if end < len(items) {
		page.SetContinue(fmt.Sprintf("offset-%d", end))
	}
	return page, nil
}

func newFakeCluster(t *testing.T, resources []resource, objs ...*unstructured.Unstructured) *fakeCluster {
	t.Helper()
	byGV := map[string]*metav1.APIResourceList{}
	var order []string
	listKinds := map[schema.GroupVersionResource]string{}
	for _, r := range resources {
		l, ok := byGV[r.gv]
		if !ok {
			l = &metav1.APIResourceList{GroupVersion: r.gv}
			byGV[r.gv] = l
			order = append(order, r.gv)
		}
		l.APIResources = append(l.APIResources,
			metav1.APIResource{Name: r.name, Kind: r.kind, Namespaced: r.namespaced, Verbs: []string{"get", "list", "watch"}},
			metav1.APIResource{Name: r.name + "/status", Kind: r.kind, Namespaced: r.namespaced, Verbs: []string{"get", "patch", "update"}})
		gv, _ := schema.ParseGroupVersion(r.gv)
		listKinds[gv.WithResource(r.name)] = r.kind + "List"
	}
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	for _, gv := range order {
		disc.Resources = append(disc.Resources, byGV[gv])
	}
	rt := make([]runtime.Object, len(objs))
	for i, o := range objs {
		rt[i] = o
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, rt...)
	return &fakeCluster{disc: disc, dyn: dyn, paging: &pagingDynamic{Interface: dyn}}
}

func (f *fakeCluster) read(t *testing.T, opts Options) (*model.Snapshot, error) {
	t.Helper()
	return read(context.Background(), "https://fake:6443", f.disc, f.paging, opts)
}

// lists returns the list requests for one resource.
func (f *fakeCluster) lists(resource string) []metav1.ListOptions {
	var out []metav1.ListOptions
	for _, c := range f.paging.calls {
		if c.gvr.Resource == resource {
			out = append(out, c.opts)
		}
	}
	return out
}

func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func pod(ns, name string) *unstructured.Unstructured {
	return obj("v1", "Pod", ns, name, map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}},
	})
}

func keys(s *model.Snapshot) []string {
	var out []string
	for _, o := range s.Objects {
		out = append(out, o.Key.String())
	}
	return out
}

func TestTargetsAreTheModelsKinds(t *testing.T) {
	var got []string
	for _, tg := range Targets() {
		var cs []string
		for _, c := range tg.Choices {
			cs = append(cs, c.GroupVersion().String()+" "+c.Kind)
		}
		got = append(got, tg.Label+": "+strings.Join(cs, ", "))
	}
	want := []string{
		"nodes: v1 Node",
		"namespaces: v1 Namespace",
		"pods: v1 Pod",
		"services: v1 Service",
		"configmaps: v1 ConfigMap",
		"serviceaccounts: v1 ServiceAccount",
		"deployments.apps: apps/v1 Deployment",
		"replicasets.apps: apps/v1 ReplicaSet",
		"daemonsets.apps: apps/v1 DaemonSet",
		"statefulsets.apps: apps/v1 StatefulSet",
		"endpointslices.discovery.k8s.io: discovery.k8s.io/v1 EndpointSlice",
		"networkpolicies.networking.k8s.io: networking.k8s.io/v1 NetworkPolicy",
		"runtimeclasses.node.k8s.io: node.k8s.io/v1 RuntimeClass",
		"priorityclasses.scheduling.k8s.io: scheduling.k8s.io/v1 PriorityClass",
		"certificatesigningrequests.certificates.k8s.io: certificates.k8s.io/v1 CertificateSigningRequest",
		"clusters.hybrid.kubectl-hybrid.io: hybrid.kubectl-hybrid.io/v1alpha1 Cluster",
		"ippools.projectcalico.org: projectcalico.org/v3 IPPool, crd.projectcalico.org/v1 IPPool",
		"ipamconfigurations.projectcalico.org: projectcalico.org/v3 IPAMConfiguration, projectcalico.org/v3 IPAMConfig, crd.projectcalico.org/v1 IPAMConfiguration, crd.projectcalico.org/v1 IPAMConfig",
		"ipamblocks.projectcalico.org: projectcalico.org/v3 IPAMBlock, crd.projectcalico.org/v1 IPAMBlock",
		"blockaffinities.projectcalico.org: projectcalico.org/v3 BlockAffinity, crd.projectcalico.org/v1 BlockAffinity",
		"felixconfigurations.projectcalico.org: projectcalico.org/v3 FelixConfiguration, crd.projectcalico.org/v1 FelixConfiguration",
		"bgpconfigurations.projectcalico.org: projectcalico.org/v3 BGPConfiguration, crd.projectcalico.org/v1 BGPConfiguration",
		"networkpolicies.projectcalico.org: projectcalico.org/v3 NetworkPolicy, crd.projectcalico.org/v1 NetworkPolicy",
		"globalnetworkpolicies.projectcalico.org: projectcalico.org/v3 GlobalNetworkPolicy, crd.projectcalico.org/v1 GlobalNetworkPolicy",
		"installations.operator.tigera.io: operator.tigera.io/v1 Installation",
		"apiservers.operator.tigera.io: operator.tigera.io/v1 APIServer",
		"tigerastatuses.operator.tigera.io: operator.tigera.io/v1 TigeraStatus",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadPaginates(t *testing.T) {
	const total = 1203
	var objs []*unstructured.Unstructured
	for i := range total {
		objs = append(objs, pod(fmt.Sprintf("ns-%d", i/500), fmt.Sprintf("pod-%04d", i)))
	}
	f := newFakeCluster(t, coreResources, objs...)
	snap, err := f.read(t, Options{PageSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	calls := f.lists("pods")
	if len(calls) != 3 {
		t.Fatalf("pods were listed in %d requests, want 3: %+v", len(calls), calls)
	}
	wantContinue := []string{"", "offset-500", "offset-1000"}
	for i, c := range calls {
		if c.Limit != 500 || c.Continue != wantContinue[i] {
			t.Errorf("request %d: limit=%d continue=%q, want 500 %q", i, c.Limit, c.Continue, wantContinue[i])
		}
	}
	if len(snap.Objects) != total {
		t.Fatalf("got %d objects, want %d", len(snap.Objects), total)
	}
	for i, o := range snap.Objects {
		if want := objs[i].GetName(); o.Key.Name != want || o.Key.Kind != "Pod" {
			t.Fatalf("object %d is %s, want pod %s (the server's order)", i, o.Key, want)
		}
	}
	if len(snap.Warnings) == 0 || !strings.Contains(strings.Join(snap.Warnings, "\n"), "installations.operator.tigera.io") {
		t.Errorf("warnings %q should name the kinds without a CRD", snap.Warnings)
	}
}

func TestReadRestartsAnExpiredList(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := range 25 {
		objs = append(objs, pod("default", fmt.Sprintf("pod-%02d", i)))
	}
	f := newFakeCluster(t, coreResources, objs...)
	f.paging.expire = "pods"
	snap, err := f.read(t, Options{PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.lists("pods") {
		got = append(got, fmt.Sprintf("limit=%d continue=%q", c.Limit, c.Continue))
	}
	want := []string{`limit=10 continue=""`, `limit=10 continue="offset-10"`, `limit=0 continue=""`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests %q, want %q: after 410 Gone the kind is read again whole", got, want)
	}
	if len(snap.Objects) != 25 {
		t.Errorf("%d objects, want each of the 25 pods once", len(snap.Objects))
	}
}

func TestReadDefaultPageSize(t *testing.T) {
	f := newFakeCluster(t, coreResources, pod("default", "a"))
	if _, err := f.read(t, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(f.paging.calls) != 15 {
		t.Errorf("%d list requests, want one for each of the 15 served kinds", len(f.paging.calls))
	}
	for _, c := range f.paging.calls {
		if c.opts.Limit != DefaultPageSize {
			t.Errorf("%s listed with limit %d, want %d", c.gvr.Resource, c.opts.Limit, DefaultPageSize)
		}
	}
}

func TestReadSkipsForbiddenKinds(t *testing.T) {
	f := newFakeCluster(t, coreResources,
		obj("v1", "Node", "", "n1", nil), pod("default", "a"))
	f.dyn.PrependReactor("list", "nodes", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "",
			errors.New(`User "alice" cannot list resource "nodes" in API group "" at the cluster scope`))
	})
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatalf("a forbidden kind must not fail the read: %v", err)
	}
	if got := keys(snap); !reflect.DeepEqual(got, []string{"Pod default/a"}) {
		t.Errorf("objects %q, want only the pod", got)
	}
	w := strings.Join(snap.Warnings, "\n")
	if !strings.Contains(w, `not read: nodes: nodes is forbidden: User "alice" cannot list resource "nodes"`) {
		t.Errorf("warnings %q should report the forbidden kind with the server's message", w)
	}
}

func TestReadSkipsMissingCRDs(t *testing.T) {
	// Calico's CRDs are in discovery but the list answers 404 (a CRD deleted
	// since discovery); the operator's are not served at all.
	rs := append(append([]resource{}, coreResources...), calicoResources("crd.projectcalico.org/v1", "IPAMConfig")...)
	f := newFakeCluster(t, rs, pod("default", "a"))
	f.dyn.PrependReactor("list", "ipamblocks", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "crd.projectcalico.org", Resource: "ipamblocks"}, "")
	})
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(snap.Warnings, "\n")
	for _, want := range []string{
		"not read: ipamblocks.crd.projectcalico.org: the server does not serve it",
		"not read, the server does not serve them (no such API or CRD): installations.operator.tigera.io, apiservers.operator.tigera.io, tigerastatuses.operator.tigera.io",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if strings.Contains(w, "clusters.hybrid") {
		t.Errorf("the optional Cluster CRD must be skipped quietly:\n%s", w)
	}
	if got := keys(snap); !reflect.DeepEqual(got, []string{"Pod default/a"}) {
		t.Errorf("objects %q", got)
	}
}

func TestReadNeverAsksForSecretsOrWatches(t *testing.T) {
	secret := obj("v1", "Secret", "kube-system", "bootstrap-token-abcdef", map[string]any{"data": map[string]any{"token-secret": "c2VjcmV0"}})
	rs := append(append(append([]resource{}, coreResources...), calicoResources("projectcalico.org/v3", "IPAMConfiguration")...), operatorResources...)
	f := newFakeCluster(t, rs, secret, pod("default", "a"))
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snap.Objects {
		if o.Key.Kind == "Secret" {
			t.Errorf("read %s", o.Key)
		}
	}
	for _, c := range f.paging.calls {
		if c.gvr.Resource == "secrets" {
			t.Errorf("list request for secrets")
		}
	}
	listed := map[string]bool{}
	for _, a := range f.dyn.Actions() {
		if a.GetResource().Resource == "secrets" {
			t.Errorf("request for secrets: %#v", a)
		}
		if a.GetVerb() != "list" {
			t.Errorf("%s %s: only list is used", a.GetVerb(), a.GetResource())
		}
		listed[a.GetResource().GroupResource().String()] = true
	}
	if len(listed) != 26 {
		t.Errorf("listed %d resources, want the 26 served kinds the model needs: %v", len(listed), listed)
	}
	if len(snap.Warnings) != 0 {
		t.Errorf("warnings: %q", snap.Warnings)
	}
}

func TestReadPrefersCalicoV3(t *testing.T) {
	rs := append(append(append([]resource{}, coreResources...),
		calicoResources("crd.projectcalico.org/v1", "IPAMConfig")...),
		calicoResources("projectcalico.org/v3", "IPAMConfiguration")...)
	pool := func(apiVersion, cidr string) *unstructured.Unstructured {
		return obj(apiVersion, "IPPool", "", "default-ipv4-ippool", map[string]any{"spec": map[string]any{"cidr": cidr}})
	}
	f := newFakeCluster(t, rs,
		pool("crd.projectcalico.org/v1", "10.0.0.0/16"),
		pool("projectcalico.org/v3", "172.21.0.0/16"),
		obj("crd.projectcalico.org/v1", "IPAMConfig", "", "default", map[string]any{"spec": map[string]any{"strictAffinity": false}}),
		obj("projectcalico.org/v3", "IPAMConfiguration", "", "default", map[string]any{"spec": map[string]any{"strictAffinity": true}}))
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(snap); !reflect.DeepEqual(got, []string{"IPPool.projectcalico.org default-ipv4-ippool", "IPAMConfiguration.projectcalico.org default"}) {
		t.Fatalf("objects %q", got)
	}
	if cidr := snap.Objects[0].Typed.(*calico.IPPool).Spec.CIDR; cidr != "172.21.0.0/16" {
		t.Errorf("IPPool from crd.projectcalico.org/v1 (%s), want projectcalico.org/v3", cidr)
	}
	if !snap.Objects[1].Typed.(*calico.IPAMConfiguration).Spec.StrictAffinity {
		t.Errorf("IPAMConfig from crd.projectcalico.org/v1, want IPAMConfiguration from projectcalico.org/v3")
	}
	for _, a := range f.dyn.Actions() {
		if a.GetResource().Group == "crd.projectcalico.org" {
			t.Errorf("listed %s although projectcalico.org/v3 serves it", a.GetResource())
		}
	}
}

// failingDiscovery answers some group versions with an error.
type failingDiscovery struct {
	discoverer
	errs map[string]error
}

func (d failingDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if err := d.errs[gv]; err != nil {
		return nil, err
	}
	return d.discoverer.ServerResourcesForGroupVersion(gv)
}

func TestReadFallsBackWhenCalicoAPIServerIsDown(t *testing.T) {
	rs := append(append(append([]resource{}, coreResources...),
		calicoResources("crd.projectcalico.org/v1", "IPAMConfig")...),
		calicoResources("projectcalico.org/v3", "IPAMConfiguration")...)
	f := newFakeCluster(t, rs,
		obj("crd.projectcalico.org/v1", "IPPool", "", "default-ipv4-ippool", map[string]any{"spec": map[string]any{"cidr": "172.21.0.0/16"}}))
	disc := failingDiscovery{discoverer: f.disc, errs: map[string]error{
		"projectcalico.org/v3": apierrors.NewServiceUnavailable("the server is currently unable to handle the request"),
	}}
	snap, err := read(context.Background(), "https://fake:6443", disc, f.paging, Options{})
	if err != nil {
		t.Fatalf("an aggregated API that is down must not fail the read: %v", err)
	}
	if got := keys(snap); !reflect.DeepEqual(got, []string{"IPPool.projectcalico.org default-ipv4-ippool"}) {
		t.Errorf("objects %q, want the pool from crd.projectcalico.org/v1", got)
	}
	if w := strings.Join(snap.Warnings, "\n"); !strings.Contains(w, "not read: discovery of projectcalico.org/v3: the server is currently unable to handle the request") {
		t.Errorf("warnings %q", w)
	}
}

func TestReadCalicoCRDGroupAlone(t *testing.T) {
	rs := append(append([]resource{}, coreResources...), calicoResources("crd.projectcalico.org/v1", "IPAMConfig")...)
	f := newFakeCluster(t, rs,
		obj("crd.projectcalico.org/v1", "IPAMConfig", "", "default", map[string]any{"spec": map[string]any{"strictAffinity": true}}))
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(snap); !reflect.DeepEqual(got, []string{"IPAMConfiguration.projectcalico.org default"}) {
		t.Fatalf("objects %q: the v1 IPAMConfig has the v3 IPAMConfiguration's key", got)
	}
	if o := snap.Objects[0]; o.Origin.File != "live:ipamconfig.crd.projectcalico.org/default" {
		t.Errorf("origin %q", o.Origin.File)
	}
}

const clusterConfiguration = `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
networking:
  podSubnet: 172.21.0.0/16
  serviceSubnet: 10.96.0.0/12
`

func TestReadKubeadmConfigMaps(t *testing.T) {
	cm := func(name string, data map[string]any) *unstructured.Unstructured {
		return obj("v1", "ConfigMap", "kube-system", name, map[string]any{"data": data})
	}
	f := newFakeCluster(t, coreResources,
		cm("coredns", map[string]any{"Corefile": ".:53 {}"}),
		cm("kube-proxy", map[string]any{
			"config.conf":     "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\n",
			"kubeconfig.conf": "apiVersion: v1\nkind: Config\n",
		}),
		cm("kubeadm-config", map[string]any{"ClusterConfiguration": clusterConfiguration}),
		cm("kubelet-config", map[string]any{"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n"}),
		// A kubeadm-config elsewhere is only a ConfigMap.
		obj("v1", "ConfigMap", "default", "kubeadm-config", map[string]any{"data": map[string]any{"ClusterConfiguration": clusterConfiguration}}),
	)
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ConfigMap default/kubeadm-config",
		"ConfigMap kube-system/coredns",
		"ConfigMap kube-system/kube-proxy",
		"KubeProxyConfiguration.kubeproxy.config.k8s.io ",
		"ConfigMap kube-system/kubeadm-config",
		"ClusterConfiguration.kubeadm.k8s.io ",
		"ConfigMap kube-system/kubelet-config",
		"KubeletConfiguration.kubelet.config.k8s.io ",
	}
	if got := keys(snap); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cc := snap.Objects[5]
	if cc.Origin.File != "live:configmap/kube-system/kubeadm-config" {
		t.Errorf("origin %q", cc.Origin.File)
	}
	if got := cc.Typed.(*kubeadm.ClusterConfiguration).Networking.PodSubnet; got != "172.21.0.0/16" {
		t.Errorf("podSubnet %q", got)
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, "configmap") {
			t.Errorf("warning %q", w)
		}
	}
}

func TestReadStripsManagedFields(t *testing.T) {
	p := pod("default", "a")
	p.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}})
	p.SetUID("1234")
	f := newFakeCluster(t, coreResources, p)
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md := snap.Objects[0].Raw["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; ok {
		t.Error("managedFields kept")
	}
	if md["uid"] != "1234" {
		t.Errorf("metadata %v: the rest must stay as read", md)
	}
}

// What a live read gives, written as a List and read back by the file
// loader, is the same snapshot: dump reproduces live.
func TestReadMatchesTheLoader(t *testing.T) {
	rs := append(append(append([]resource{}, coreResources...), calicoResources("projectcalico.org/v3", "IPAMConfiguration")...), operatorResources...)
	f := newFakeCluster(t, rs,
		obj("v1", "Node", "", "win-1", map[string]any{"status": map[string]any{"nodeInfo": map[string]any{"operatingSystem": "windows"}}}),
		pod("demo", "hello"),
		obj("v1", "ConfigMap", "kube-system", "kubeadm-config", map[string]any{"data": map[string]any{"ClusterConfiguration": clusterConfiguration}}),
		obj("projectcalico.org/v3", "IPPool", "", "default-ipv4-ippool", map[string]any{"spec": map[string]any{"cidr": "172.21.0.0/16", "blockSize": int64(26)}}),
		obj("operator.tigera.io/v1", "Installation", "", "default", map[string]any{"spec": map[string]any{"variant": "Calico"}}))
	snap, err := f.read(t, Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]any, len(snap.Objects))
	for i, o := range snap.Objects {
		items[i] = o.Raw
	}
	text, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	back, err := load.DecodeDocuments(bytes.NewReader(text), "dump.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(snap.Objects) {
		t.Fatalf("%d objects back, want %d", len(back), len(snap.Objects))
	}
	for i, o := range snap.Objects {
		b := back[i]
		if o.Key != b.Key || o.GVK != b.GVK || !reflect.DeepEqual(o.Typed, b.Typed) || !reflect.DeepEqual(o.Raw, b.Raw) {
			t.Errorf("object %d: live %s %#v\nfile %s %#v", i, o.Key, o.Typed, b.Key, b.Typed)
		}
	}
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	if ProgressWriter(&buf) != nil {
		t.Error("a buffer is not a terminal")
	}
	f := newFakeCluster(t, coreResources, pod("default", "a"))
	if _, err := f.read(t, Options{Progress: ProgressWriter(&buf)}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("progress written to a non-terminal: %q", buf.String())
	}

	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = old }()
	w := ProgressWriter(&buf)
	if w == nil {
		t.Fatal("ProgressWriter(terminal) = nil")
	}
	f = newFakeCluster(t, coreResources, pod("default", "a"))
	if _, err := f.read(t, Options{Progress: w}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "reading pods: 1") {
		t.Errorf("progress %q lacks the pods' count", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("progress %q does not clear its line at the end", out)
	}
}

func TestReadUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	host := "https://" + addr
	_, err = Read(context.Background(), &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, Options{})
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %T %v, want *UnreachableError", err, err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "cannot reach the cluster at "+host+": ") || !strings.Contains(msg, "connection refused") {
		t.Errorf("message %q", msg)
	}
}

func TestReadServerErrorIsFatal(t *testing.T) {
	f := newFakeCluster(t, coreResources, pod("default", "a"))
	f.dyn.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("Unauthorized")
	})
	_, err := f.read(t, Options{})
	var se *ServerError
	if !errors.As(err, &se) || !apierrors.IsUnauthorized(err) {
		t.Fatalf("err = %T %v, want a *ServerError wrapping 401", err, err)
	}
	if want := "the cluster at https://fake:6443 refused to give pods: Unauthorized"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}
