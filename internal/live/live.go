// Package live reads a running cluster into a model.Snapshot: exactly the
// kinds the twin models (internal/apis/registry), listed cluster-wide in
// pages, plus the kubeadm, kubelet and kube-proxy configuration that kubeadm
// keeps in kube-system ConfigMaps. Every object goes through the file
// loader's typed decoding (load.Decode), so a live read and an offline read
// of its dump (`kubectl-hybrid dump`) give the same Snapshot.
//
// It only ever sends GET requests: discovery of the API groups it needs, and
// list (never watch) of the kinds it models. It never reads Secrets. A kind
// it may not list (403) or that the server does not serve (a CRD that is not
// installed) is skipped with a warning in Snapshot.Warnings and named, with
// why, in Snapshot.Unread.
package live

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// DefaultPageSize is the list page size when Options.PageSize is 0.
const DefaultPageSize = 500

// OriginPrefix starts the Origin.File of every object read from a cluster:
// "live:pod/demo/hello-1", "live:ippool.crd.projectcalico.org/default-ipv4",
// and for the documents a kubeadm ConfigMap holds the ConfigMap's
// "live:configmap/kube-system/kubeadm-config".
const OriginPrefix = "live:"

// DefaultRequestTimeout bounds each request when the rest.Config sets no
// timeout: kubectl's --request-timeout defaults to 0, no limit at all, and a
// server that accepts a connection and never answers would hang the read.
// An API server answers a page of 500 objects in well under a second.
const DefaultRequestTimeout = 30 * time.Second

// DefaultReadTimeout bounds the whole read: a cluster at Kubernetes' scale
// limits (150,000 pods) is 300 pages of pods, a few minutes at worst.
const DefaultReadTimeout = 10 * time.Minute

// DefaultMaxPageBytes bounds one response, as load.DefaultMaxInputBytes
// bounds a file: a server that ignores limit may send a kind whole.
const DefaultMaxPageBytes = load.DefaultMaxInputBytes

// Options say how to read.
type Options struct {
	// Progress receives progress lines (carriage-return updated); nil is
	// quiet. Use ProgressWriter to pass stderr only when it is a terminal.
	Progress io.Writer
	// PageSize is the limit of each list request (DefaultPageSize when 0).
	PageSize int64
	// RequestTimeout bounds each request when the rest.Config has no
	// Timeout (DefaultRequestTimeout when 0); a Timeout it has, such as
	// kubectl's --request-timeout, wins.
	RequestTimeout time.Duration
	// ReadTimeout bounds the whole read (DefaultReadTimeout when 0).
	ReadTimeout time.Duration
	// MaxPageBytes bounds each response's body (DefaultMaxPageBytes when 0).
	MaxPageBytes int64
}

// LimitError is a read the tool stopped: a response over
// Options.MaxPageBytes, a list whose pages do not end, a read over
// Options.ReadTimeout.
type LimitError struct {
	Host string
	// What was being read ("pods"); "" for the read as a whole.
	What string
	Msg  string
}

func (e *LimitError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("reading the cluster at %s: %s", e.Host, e.Msg)
	}
	return fmt.Sprintf("reading %s from the cluster at %s: %s", e.What, e.Host, e.Msg)
}

// UnreachableError is a cluster that did not answer: connection refused, a
// time-out, a TLS failure, a connection that broke mid-read.
type UnreachableError struct {
	// Host is the API server's URL as the kubeconfig gives it.
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the cluster at %s: %v", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// ServerError is an answer of the API server that is neither data nor a
// reason to skip a kind (401 Unauthorized, 500, …).
type ServerError struct {
	Host string
	// What was being read ("pods", "discovery of apps/v1").
	What string
	Err  error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("the cluster at %s refused to give %s: %v", e.Host, e.What, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }

// Read lists, from the cluster cfg points at, every kind the twin models and
// returns them as a Snapshot in a fixed order: the registry's kinds in
// registry order, each in the server's order (namespace, then name), with the
// objects kubeadm's ConfigMaps embed right after their ConfigMap.
//
// Each request is bounded by cfg.Timeout (Options.RequestTimeout when it
// has none) and by Options.MaxPageBytes, the whole read by
// Options.ReadTimeout.
//
// Errors are *UnreachableError, *ServerError, *LimitError or *load.Error (an
// object the loader refuses, exactly as it would refuse it in a file),
// wrapped with %w.
func Read(ctx context.Context, cfg *rest.Config, opts Options) (*model.Snapshot, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = cmp.Or(opts.RequestTimeout, DefaultRequestTimeout)
	}
	opts.RequestTimeout = cfg.Timeout
	maxPage := cmp.Or(opts.MaxPageBytes, DefaultMaxPageBytes)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &pageCap{rt: rt, max: maxPage} })
	readTimeout := cmp.Or(opts.ReadTimeout, DefaultReadTimeout)
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	// One request per page, one after the other: client-go's default of 5
	// requests a second would only slow a large cluster's read down.
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	if cfg.RateLimiter == nil {
		cfg.RateLimiter = deadlineLimiter{flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)}
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-hybrid"
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster at %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster at %s: %w", cfg.Host, err)
	}
	snap, err := read(ctx, cfg.Host, disc, dyn, opts)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, errReadDeadline) {
		return nil, &LimitError{Host: cfg.Host, Msg: fmt.Sprintf("not done after %s (--read-timeout)", readTimeout)}
	}
	return snap, err
}

// deadlineLimiter is client-go's token bucket whose refusal to wait past
// the context's deadline says it is the deadline: the rate package refuses
// such a wait before the deadline comes, with an error of its own.
type deadlineLimiter struct{ flowcontrol.RateLimiter }

var errReadDeadline = errors.New("the read's deadline comes before the next request may be sent")

func (l deadlineLimiter) Wait(ctx context.Context) error {
	err := l.RateLimiter.Wait(ctx)
	if _, ok := ctx.Deadline(); err != nil && ok && ctx.Err() == nil {
		return fmt.Errorf("%w: %v", errReadDeadline, err)
	}
	return err
}

// pageCap fails a response whose body is over max bytes. It reads the body
// itself: client-go logs a failed read of a body on stderr before returning
// the error.
type pageCap struct {
	rt  http.RoundTripper
	max int64
}

// errPageTooLarge is the failure pageCap returns; fail makes it a
// *LimitError.
type errPageTooLarge struct{ max int64 }

func (e *errPageTooLarge) Error() string {
	return fmt.Sprintf("a response larger than %s (--max-input-bytes)", load.FormatBytes(e.max))
}

// WrappedRoundTripper lets client-go cancel a request through pageCap.
func (p *pageCap) WrappedRoundTripper() http.RoundTripper { return p.rt }

func (p *pageCap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > p.max {
		return nil, &errPageTooLarge{max: p.max}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > p.max {
		return nil, &errPageTooLarge{max: p.max}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// discoverer is the part of client-go's discovery client the reader uses.
type discoverer interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

type reader struct {
	host string
	disc discoverer
	dyn  dynamic.Interface
	opts Options
	// served caches discovery: nil for a group version the server does not
	// serve.
	served map[string]*metav1.APIResourceList
	// refused holds the server's message for a group version whose
	// discovery it refused (Snapshot.Unread's reason).
	refused map[string]string
	snap    *model.Snapshot
	keys    map[model.Key]model.Origin
	prog    *progress
}

func read(ctx context.Context, host string, disc discoverer, dyn dynamic.Interface, opts Options) (*model.Snapshot, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	r := &reader{
		host: host, disc: disc, dyn: dyn, opts: opts,
		served:  map[string]*metav1.APIResourceList{},
		refused: map[string]string{},
		snap:    &model.Snapshot{},
		keys:    map[model.Key]model.Origin{},
		prog:    &progress{w: opts.Progress},
	}
	defer r.prog.done()
	var absent []string
	for _, t := range Targets() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		gvr, kind, ok, err := r.resolve(t)
		if err != nil {
			return nil, err
		}
		if !ok {
			if !t.Optional {
				absent = append(absent, t.Label)
				r.unread(t, r.whyNot(t))
			}
			continue
		}
		err = r.list(ctx, gvr, kind)
		var skip *skipError
		switch {
		case errors.As(err, &skip):
			r.warnf("not read: %s: %s", skip.what, skip.reason)
			r.unread(t, skip.reason)
		case err != nil:
			return nil, err
		}
	}
	if len(absent) > 0 {
		r.warnf("not read, the server does not serve them (no such API or CRD): %s", strings.Join(absent, ", "))
	}
	return r.snap, nil
}

// notServed is why a kind the server does not serve was not read.
const notServed = "the server does not serve it (no such API or CRD)"

// skipError is a kind list refused (403) or not served (404): the kind is
// skipped, the read goes on.
type skipError struct{ what, reason string }

func (e *skipError) Error() string { return e.what + ": " + e.reason }

// whyNot is why none of t's choices was served: the first refused
// discovery, else notServed.
func (r *reader) whyNot(t Target) string {
	for _, c := range t.Choices {
		if why, ok := r.refused[c.GroupVersion().String()]; ok {
			return why
		}
	}
	return notServed
}

// unread records a kind the read skips; for the ConfigMaps, also the
// kubeadm configuration they hold (EmbeddedConfig).
func (r *reader) unread(t Target, reason string) {
	c := t.Choices[0]
	r.snap.Unread = append(r.snap.Unread, model.UnreadKind{Group: c.Group, Kind: c.Kind, Reason: reason})
	if c.Group == "" && c.Kind == "ConfigMap" {
		for _, k := range [][2]string{{"kubeadm.k8s.io", "ClusterConfiguration"}, {"kubelet.config.k8s.io", "KubeletConfiguration"}, {"kubeproxy.config.k8s.io", "KubeProxyConfiguration"}} {
			r.snap.Unread = append(r.snap.Unread, model.UnreadKind{Group: k[0], Kind: k[1], Reason: "kept in a ConfigMap, and ConfigMaps were not read"})
		}
	}
}

// Target is one kind the reader lists: the first of Choices the server
// serves is read.
type Target struct {
	// Label names the kind in warnings: "pods", "ippools.projectcalico.org".
	Label   string
	Choices []schema.GroupVersionKind
	// Optional kinds (the project's own Cluster CRD) are skipped quietly when
	// the server does not serve them.
	Optional bool
}

// configGroups are the kinds that no API serves: they come from kubeadm's
// ConfigMaps (see embedded).
var configGroups = map[string]bool{
	kubeadm.Group:               true,
	kubeletv1beta1.GroupName:    true,
	kubeproxyv1alpha1.GroupName: true,
}

// Targets lists what Read lists, in order, derived from the registry: each
// registered kind that an API server serves, Calico's from
// projectcalico.org/v3 when served and crd.projectcalico.org/v1 otherwise,
// and kinds registered twice with one type (Calico's IPAMConfiguration and
// IPAMConfig) once.
func Targets() []Target {
	type typeKey struct {
		group string
		t     reflect.Type
	}
	var out []Target
	index := map[typeKey]int{}
	for _, k := range registry.All() {
		if configGroups[k.Group] {
			continue
		}
		tk := typeKey{k.Group, reflect.TypeOf(k.New())}
		i, seen := index[tk]
		if !seen {
			i = len(out)
			index[tk] = i
			out = append(out, Target{Label: label(k), Optional: k.Group == hybrid.Group})
		}
		out[i].Choices = append(out[i].Choices, choices(k)...)
	}
	for i := range out {
		if out[i].Choices[0].Group == calico.Group {
			// v3 of every name before crd.projectcalico.org/v1 of any.
			var v3, v1 []schema.GroupVersionKind
			for _, c := range out[i].Choices {
				if c.Group == calico.Group {
					v3 = append(v3, c)
				} else {
					v1 = append(v1, c)
				}
			}
			out[i].Choices = append(v3, v1...)
		}
	}
	return out
}

func choices(k meta.Kind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, v := range k.Versions {
		out = append(out, schema.GroupVersionKind{Group: k.Group, Version: v, Kind: k.Kind})
	}
	if k.Group == calico.Group {
		out = append(out, schema.GroupVersionKind{Group: calico.CRDGroup, Version: "v1", Kind: k.Kind})
	}
	return out
}

func label(k meta.Kind) string { return k.GroupResource().String() }

// Plural is the resource name of a kind the reader lists ("ippools",
// "blockaffinities", "tigerastatuses"), as apimachinery guesses it; the
// server's discovery has the final word, this names them in
// deploy/rbac.yaml's test.
func Plural(kind string) string {
	plural, _ := apimeta.UnsafeGuessKindToResource(schema.GroupVersionKind{Kind: kind})
	return plural.Resource
}

// resolve finds the first of t's choices the server serves with the list
// verb.
func (r *reader) resolve(t Target) (schema.GroupVersionResource, string, bool, error) {
	for _, c := range t.Choices {
		gv := c.GroupVersion().String()
		list, ok := r.served[gv]
		if !ok {
			var err error
			list, err = r.disc.ServerResourcesForGroupVersion(gv)
			switch {
			case err == nil:
			case apierrors.IsNotFound(err):
				list = nil
			case apierrors.IsForbidden(err), apierrors.IsServiceUnavailable(err):
				// Refused, or an aggregated API (Calico's API server) that is
				// down: try the next choice.
				r.warnf("not read: discovery of %s: %s", gv, statusMessage(err))
				r.refused[gv] = "discovery of " + gv + ": " + statusMessage(err)
				list = nil
			default:
				return schema.GroupVersionResource{}, "", false, r.fail("discovery of "+gv, err)
			}
			r.served[gv] = list
		}
		if list == nil {
			continue
		}
		for _, res := range list.APIResources {
			if res.Kind != c.Kind || strings.Contains(res.Name, "/") || !hasVerb(res.Verbs, "list") {
				continue
			}
			return c.GroupVersion().WithResource(res.Name), c.Kind, true, nil
		}
	}
	return schema.GroupVersionResource{}, "", false, nil
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// list reads one kind cluster-wide, page by page, decoding each item as it
// comes.
func (r *reader) list(ctx context.Context, gvr schema.GroupVersionResource, kind string) error {
	what := gvr.Resource
	if gvr.Group != "" {
		what += "." + gvr.Group
	}
	client := r.dyn.Resource(gvr)
	opts := metav1.ListOptions{Limit: r.opts.PageSize}
	n := 0
	// The continue tokens given so far: a server that gives one again would
	// page for ever (client-go's pager trusts it to end).
	seen := map[string]bool{}
	for {
		page, err := client.List(ctx, opts)
		if err != nil {
			switch {
			case apierrors.IsForbidden(err):
				return &skipError{what: what, reason: statusMessage(err)}
			case apierrors.IsNotFound(err):
				return &skipError{what: what, reason: notServed}
			case apierrors.IsResourceExpired(err) && opts.Continue != "":
				// The continue token outlived etcd's compaction: read the
				// whole kind again in one request, as client-go's pager does.
				r.dropKind(gvr.GroupVersion().WithKind(kind))
				opts = metav1.ListOptions{}
				n = 0
				clear(seen)
				continue
			}
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return r.fail(what, err)
		}
		for i := range page.Items {
			if err := r.add(&page.Items[i], gvr, kind); err != nil {
				return err
			}
		}
		n += len(page.Items)
		r.prog.update(what, n)
		next := page.GetContinue()
		if next == "" {
			return nil
		}
		if seen[next] || next == opts.Continue {
			return &LimitError{Host: r.host, What: what, Msg: fmt.Sprintf(
				"the server gave the continue token %q again, after %d objects of kind %s; its pages would never end", clipToken(next), n, kind)}
		}
		seen[next] = true
		opts.Continue = next
	}
}

// dropKind forgets what a restarted list had already added: the objects
// whose Origin names its type, with what a ConfigMap embeds.
func (r *reader) dropKind(gvk schema.GroupVersionKind) {
	prefix := originPrefix(gvk)
	kept := r.snap.Objects[:0]
	for _, o := range r.snap.Objects {
		if strings.HasPrefix(o.Origin.File, prefix) {
			delete(r.keys, o.Key)
			continue
		}
		kept = append(kept, o)
	}
	r.snap.Objects = kept
}

// originPrefix is "live:TYPE/" with TYPE as kubectl names objects in
// TYPE/NAME: "pod", "deployment.apps", "ippool.crd.projectcalico.org".
func originPrefix(gvk schema.GroupVersionKind) string {
	t := strings.ToLower(gvk.Kind)
	if gvk.Group != "" {
		t += "." + gvk.Group
	}
	return OriginPrefix + t + "/"
}

// add decodes one listed item with the file loader and appends it, followed
// by the configuration documents it embeds when it is one of kubeadm's
// ConfigMaps.
func (r *reader) add(u *unstructured.Unstructured, gvr schema.GroupVersionResource, kind string) error {
	_, err := decodeItem(u, gvr, kind, r.append, r.warnf)
	return err
}

// decodeItem decodes one object the server gave (a listed item or a
// watch's) with the file loader: emit gets the object, then the
// configuration documents it embeds when it is one of kubeadm's
// ConfigMaps, each with the Origin "live:TYPE/NAMESPACE/NAME" it returns.
// It drops u's managedFields.
func decodeItem(u *unstructured.Unstructured, gvr schema.GroupVersionResource, kind string, emit func(*model.Object), warnf func(string, ...any)) (string, error) {
	obj := u.Object
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(gvr.GroupVersion().String())
	}
	if u.GetKind() == "" {
		u.SetKind(kind)
	}
	origin := originPrefix(gvr.GroupVersion().WithKind(kind))
	if ns := u.GetNamespace(); ns != "" {
		origin += ns + "/"
	}
	origin += u.GetName()
	text, err := json.Marshal(obj)
	if err != nil {
		return origin, fmt.Errorf("encoding %s %s/%s: %w", kind, u.GetNamespace(), u.GetName(), err)
	}
	objs, err := decode(text, origin)
	if err != nil {
		return origin, err
	}
	for _, o := range objs {
		o.Origin = model.Origin{File: origin}
		emit(o)
		if cm, ok := o.Typed.(*corev1.ConfigMap); ok {
			if err := embedded(cm, emit, warnf); err != nil {
				return origin, err
			}
		}
	}
	return origin, nil
}

func decode(text []byte, origin string) ([]*model.Object, error) {
	objs, err := load.DecodeDocuments(bytes.NewReader(text), origin)
	if err != nil {
		return nil, fmt.Errorf("decoding what the cluster gave: %w", err)
	}
	return objs, nil
}

func (r *reader) append(o *model.Object) {
	if prev, dup := r.keys[o.Key]; dup {
		r.warnf("%s: %s is also given by %s; the first is kept", o.Origin, o.Key, prev)
		return
	}
	r.keys[o.Key] = o.Origin
	r.snap.Objects = append(r.snap.Objects, o)
}

// Embedded is one configuration document kubeadm keeps in a ConfigMap.
type Embedded struct {
	Namespace, Name, Key string
}

// EmbeddedConfig lists the ConfigMap keys that hold kubeadm's configuration:
// the ClusterConfiguration `kubeadm init` uploads, the cluster-wide
// KubeletConfiguration, and kube-proxy's KubeProxyConfiguration (kubeadm
// app/constants: KubeadmConfigConfigMap, KubeletBaseConfigurationConfigMap,
// KubeProxyConfigMap and KubeProxyConfigMapKey).
var EmbeddedConfig = []Embedded{
	{"kube-system", "kubeadm-config", "ClusterConfiguration"},
	{"kube-system", "kubelet-config", "kubelet"},
	{"kube-system", "kube-proxy", "config.conf"},
}

// embedded turns the documents a kubeadm ConfigMap holds into objects of
// their own, emitted right after the ConfigMap, with the Origin
// "live:configmap/NAMESPACE/NAME".
func embedded(cm *corev1.ConfigMap, emit func(*model.Object), warnf func(string, ...any)) error {
	for _, e := range EmbeddedConfig {
		if cm.Namespace != e.Namespace || cm.Name != e.Name {
			continue
		}
		text, ok := cm.Data[e.Key]
		if !ok || strings.TrimSpace(text) == "" {
			warnf("%sconfigmap/%s/%s has no %s; not read", OriginPrefix, e.Namespace, e.Name, e.Key)
			continue
		}
		origin := OriginPrefix + "configmap/" + e.Namespace + "/" + e.Name
		objs, err := decode([]byte(text), origin)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.Typed == nil {
				warnf("%s: kind %s (%s) is not modeled; kept as-is", o.Origin, o.GVK.Kind, o.GVK.GroupVersion())
			}
			emit(o)
		}
	}
	return nil
}

func (r *reader) warnf(format string, args ...any) {
	r.prog.clear()
	r.snap.Warnings = append(r.snap.Warnings, fmt.Sprintf(format, args...))
}

// clipToken shortens a continue token (a base64 blob of a few hundred
// bytes) for a message.
func clipToken(s string) string {
	if len(s) <= 40 {
		return s
	}
	return s[:40] + "…"
}

// fail classifies an error of a request.
func (r *reader) fail(what string, err error) error {
	var big *errPageTooLarge
	if errors.As(err, &big) {
		return &LimitError{Host: r.host, What: what, Msg: big.Error()}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && r.opts.RequestTimeout > 0 {
		err = fmt.Errorf("no answer within %s (--request-timeout): %w", r.opts.RequestTimeout, err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return &ServerError{Host: r.host, What: what, Err: err}
	}
	return &UnreachableError{Host: r.host, Err: err}
}

// statusMessage is the server's own message for a refusal.
func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// progress writes "reading pods: 12500" lines, each replacing the last.
type progress struct {
	w     io.Writer
	dirty bool
}

func (p *progress) update(what string, n int) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[Kreading %s: %d", what, n)
	p.dirty = true
}

func (p *progress) clear() {
	if p.w != nil && p.dirty {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.dirty = false
	}
}

func (p *progress) done() {
	p.clear()
}

// ProgressWriter returns w when it is a terminal and nil otherwise, so that
// progress shows to a person and never lands in a log or a pipe.
func ProgressWriter(w io.Writer) io.Writer {
	if isTerminal(w) {
		return w
	}
	return nil
}

// isTerminal reports whether w is a character device; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
