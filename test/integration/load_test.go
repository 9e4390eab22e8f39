package integration

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The lab in a real API server: every object `get -o json --lab` prints
// (observed and derived, with status), the lab's input objects of kinds get
// does not print (the operator's APIServer, …), kubeadm's ConfigMaps made
// from the lab's kubeadm configuration as `kubeadm init` uploads them, and
// what a real API server needs besides (the ServiceAccounts its pods name).

// printed are the resources whose objects come from `get RESOURCE -A -o
// json --lab`, in the order they are created.
var printed = []string{
	"namespaces", "nodes", "runtimeclasses", "configmaps", "serviceaccounts",
	"services", "endpointslices", "deployments", "replicasets", "daemonsets",
	"statefulsets", "networkpolicies", "pods", "certificatesigningrequests",
	"ippools", "ipamconfigurations", "ipamblocks", "blockaffinities",
	"installations", "tigerastatuses",
}

// client is the harness's view of a cluster: dynamic client and a REST
// mapper from discovery.
type client struct {
	cfg    *rest.Config
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newClient(cfg *rest.Config) (*client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &client{cfg: cfg, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

func (c *client) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvk := u.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		return c.dyn.Resource(m.Resource).Namespace(ns), m, nil
	}
	return c.dyn.Resource(m.Resource), m, nil
}

// clean drops what the API server assigns.
func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "generation"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u
}

// put creates u (or updates the object of that name, for the ones the API
// server makes itself) and then writes its status, the way the components
// that own it would.
func (c *client) put(ctx context.Context, u *unstructured.Unstructured) error {
	u = clean(u)
	ri, m, err := c.resource(u)
	if err != nil {
		return err
	}
	if err := c.fixOwners(ctx, u); err != nil {
		return err
	}
	status, hasStatus := u.Object["status"]
	cur, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		// The API server made it (AlreadyExists, or for default/kubernetes
		// an Invalid "IP already allocated"): update it instead.
		if existing, gerr := ri.Get(ctx, u.GetName(), metav1.GetOptions{}); gerr == nil {
			u.SetResourceVersion(existing.GetResourceVersion())
			cur, err = ri.Update(ctx, u, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("creating %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	if !hasStatus || m.Resource.Resource == "certificatesigningrequests" {
		return nil
	}
	cur.Object["status"] = status
	if _, err := ri.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// fixOwners fills in the uid of owner references that have none (the twin
// leaves it out of what it derives; the API server requires it) with the
// owner's, created before.
func (c *client) fixOwners(ctx context.Context, u *unstructured.Unstructured) error {
	refs := u.GetOwnerReferences()
	changed := false
	for i, ref := range refs {
		if ref.UID != "" {
			continue
		}
		owner := &unstructured.Unstructured{}
		owner.SetAPIVersion(ref.APIVersion)
		owner.SetKind(ref.Kind)
		owner.SetNamespace(u.GetNamespace())
		ri, _, err := c.resource(owner)
		if err != nil {
			return fmt.Errorf("owner of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		got, err := ri.Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("owner of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		refs[i].UID = got.GetUID()
		changed = true
	}
	if changed {
		u.SetOwnerReferences(refs)
		ownerUIDsFilled++
	}
	return nil
}

// ownerUIDsFilled counts the objects fixOwners changed.
var ownerUIDsFilled int

// putCSR creates a CertificateSigningRequest as its requestor (so that the
// API server records the lab's spec.username and groups), with a real
// request for a kubelet serving certificate, and approves it as the lab's
// admin did.
func (c *client) putCSR(ctx context.Context, u *unstructured.Unstructured) error {
	u = clean(u)
	user, _, _ := unstructured.NestedString(u.Object, "spec", "username")
	groups, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "groups")
	if _, ok, _ := unstructured.NestedString(u.Object, "spec", "request"); !ok {
		req, err := csrRequest(user)
		if err != nil {
			return err
		}
		_ = unstructured.SetNestedField(u.Object, req, "spec", "request")
	}
	status, _ := u.Object["status"].(map[string]any)
	delete(u.Object, "status")
	as := rest.CopyConfig(c.cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: withoutAuthenticated(groups)}
	dyn, err := dynamic.NewForConfig(as)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	cur, err := dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating CSR %s as %s: %w", u.GetName(), user, err)
	}
	if status == nil {
		return nil
	}
	cur.Object["status"] = status
	if _, err := c.dyn.Resource(gvr).Update(ctx, cur, metav1.UpdateOptions{}, "approval"); err != nil {
		return fmt.Errorf("approving CSR %s: %w", u.GetName(), err)
	}
	return nil
}

func withoutAuthenticated(groups []string) []string {
	var out []string
	for _, g := range groups {
		if g != "system:authenticated" {
			out = append(out, g)
		}
	}
	return out
}

// csrRequest is a PEM certificate request, base64 as JSON has []byte, for a kubelet serving certificate.
func csrRequest(user string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	node := strings.TrimPrefix(user, "system:node:")
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: user, Organization: []string{"system:nodes"}},
		DNSNames: []string{node},
	}, key)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

// applyFile creates every object of a YAML file (CRDs, deploy/rbac.yaml).
func (c *client) applyFile(ctx context.Context, path string) error {
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	for _, u := range objs {
		if err := c.put(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// waitForCRDs waits until the API server serves every CRD of the file.
func (c *client) waitForCRDs(ctx context.Context, path string) error {
	objs, err := readObjects(path)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, o := range objs {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			crd, err := c.dyn.Resource(gvr).Get(ctx, o.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", o.GetName(), err)
		}
	}
	c.mapper.Reset()
	return nil
}

// labList runs `get RESOURCE -A -o json --lab`.
func labList(ctx context.Context, resource string) ([]*unstructured.Unstructured, error) {
	r := hybrid(ctx, "get", resource, "-A", "-o", "json", "--lab")
	if r.code != 0 {
		return nil, fmt.Errorf("get %s --lab: %s", resource, r)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	// utiljson keeps integers int64: IPAM sequence numbers exceed a float's
	// 53 bits.
	if err := utiljson.Unmarshal([]byte(r.stdout), &list); err != nil {
		return nil, fmt.Errorf("get %s --lab -o json: %w", resource, err)
	}
	var out []*unstructured.Unstructured
	for _, it := range list.Items {
		out = append(out, &unstructured.Unstructured{Object: it})
	}
	return out, nil
}

// labKeys are the Keys of every object the lab gives: its input and what
// the twin prints. An object of the live cluster without one of them is an
// extra (see extrasFile).
var labKeys = map[model.Key]bool{}

func addLabKeys(objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		data, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		decoded, err := load.DecodeDocuments(bytes.NewReader(data), "lab")
		if err != nil {
			return err
		}
		for _, o := range decoded {
			labKeys[o.Key] = true
		}
	}
	return nil
}

// configOf returns the lab input's only object of kind, as YAML.
func configOf(snap *model.Snapshot, group, kind string) (string, error) {
	for _, o := range snap.Objects {
		if o.Key.Group == group && o.Key.Kind == kind && o.Key.Name == "" {
			data, err := yaml.Marshal(o.Raw)
			return string(data), err
		}
	}
	return "", fmt.Errorf("the lab has no %s.%s", kind, group)
}

func setUpLab(ctx context.Context) error {
	c, err := newClient(env.lab.loader())
	if err != nil {
		return err
	}
	crds := filepath.Join("testdata", "crds.yaml")
	if err := c.applyFile(ctx, crds); err != nil {
		return err
	}
	if err := c.waitForCRDs(ctx, crds); err != nil {
		return err
	}
	if err := c.applyFile(ctx, filepath.Join("..", "..", "deploy", "rbac.yaml")); err != nil {
		return err
	}

	input, err := load.Load(load.Options{Lab: true})
	if err != nil {
		return err
	}
	for _, o := range input.Objects {
		labKeys[o.Key] = true
	}
	byResource := map[string][]*unstructured.Unstructured{}
	for _, res := range printed {
		objs, err := labList(ctx, res)
		if err != nil {
			return err
		}
		if err := addLabKeys(objs); err != nil {
			return err
		}
		byResource[res] = objs
	}

	// kubeadm init uploads the ClusterConfiguration, the cluster-wide
	// KubeletConfiguration and kube-proxy's configuration to ConfigMaps.
	cm := func(name, key, text string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "kube-system"},
			"data":     map[string]any{key: text},
		}}
	}
	for _, e := range []struct{ group, kind, cm, key string }{
		{"kubeadm.k8s.io", "ClusterConfiguration", "kubeadm-config", "ClusterConfiguration"},
		{"kubelet.config.k8s.io", "KubeletConfiguration", "kubelet-config", "kubelet"},
		{"kubeproxy.config.k8s.io", "KubeProxyConfiguration", "kube-proxy", "config.conf"},
	} {
		text, err := configOf(input, e.group, e.kind)
		if err != nil {
			return err
		}
		byResource["configmaps"] = append(byResource["configmaps"], cm(e.cm, e.key, text))
	}

	// The ServiceAccounts the lab's pods run as: the API server's
	// ServiceAccount admission refuses a pod whose account does not exist.
	sas := map[[2]string]bool{}
	for _, u := range byResource["serviceaccounts"] {
		sas[[2]string{u.GetNamespace(), u.GetName()}] = true
	}
	var missing [][2]string
	for _, p := range byResource["pods"] {
		if _, mirror := p.GetAnnotations()["kubernetes.io/config.mirror"]; mirror {
			continue
		}
		name, _, _ := unstructured.NestedString(p.Object, "spec", "serviceAccountName")
		if name == "" {
			name = "default"
		}
		k := [2]string{p.GetNamespace(), name}
		if !sas[k] {
			sas[k] = true
			missing = append(missing, k)
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i][0]+"/"+missing[i][1] < missing[j][0]+"/"+missing[j][1] })
	for _, k := range missing {
		byResource["serviceaccounts"] = append(byResource["serviceaccounts"], &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": k[1], "namespace": k[0]},
		}})
	}

	for _, res := range printed {
		for _, u := range byResource[res] {
			var err error
			if res == "certificatesigningrequests" {
				err = c.putCSR(ctx, u)
			} else {
				err = c.put(ctx, u)
			}
			if err != nil {
				return err
			}
		}
	}

	// Input objects of kinds get does not print but the API serves (the
	// operator's APIServer). The lab's Cluster is not loaded: its hosts
	// join with kubeadm configuration files that no cluster keeps.
	for _, o := range input.Objects {
		switch o.Key.Group {
		case "projectcalico.org", "operator.tigera.io":
		default:
			continue
		}
		u := &unstructured.Unstructured{Object: o.Raw}
		if _, _, err := c.resource(u); err != nil {
			continue // a kind the CRDs do not define
		}
		ri, _, _ := c.resource(u)
		if _, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{}); err == nil {
			continue // printed, and so created above
		}
		if err := c.put(ctx, u); err != nil {
			return err
		}
	}

	if ownerUIDsFilled > 0 {
		logf("filled in the owner's uid in %d derived objects (the twin prints ownerReferences without one; the API server requires it)", ownerUIDsFilled)
	}
	env.admin = env.lab.kubeconfig("admin", env.lab.adminToken)
	token, err := serviceAccountToken(ctx, c, "kubectl-hybrid", "kubectl-hybrid")
	if err != nil {
		return err
	}
	env.reader = env.lab.kubeconfig("reader", token)
	return nil
}

// serviceAccountToken asks the TokenRequest API for a token of a
// ServiceAccount, as `kubectl create token` does.
func serviceAccountToken(ctx context.Context, c *client, ns, name string) (string, error) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	req := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"expirationSeconds": int64(3600)},
	}}
	resp, err := c.dyn.Resource(gvr).Namespace(ns).Create(ctx, req, metav1.CreateOptions{}, "token")
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", ns, name, err)
	}
	token, _, _ := unstructured.NestedString(resp.Object, "status", "token")
	if token == "" {
		return "", fmt.Errorf("token for %s/%s: empty", ns, name)
	}
	return token, nil
}
