package live

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// An Update is what one object of the cluster is now, as Read would have
// decoded it.
type Update struct {
	// Unit names the object: the Origin.File of the objects decoded from
	// it, "live:pod/demo/hello-1". One of kubeadm's ConfigMaps is one unit
	// with the configuration documents it embeds.
	Unit string
	// Objects are the objects decoded from it, in Read's order; nil when
	// it was deleted.
	Objects []*model.Object
	// Warnings are Read's warnings about it (a kubeadm ConfigMap without
	// its key, an embedded kind not modeled).
	Warnings []string
	// Err is the loader's refusal of it, as Read would fail.
	Err error
}

// Watch calls changed with each object of a kind Read lists that is
// added, changed or deleted, until ctx ends. It calls ready once every
// watch has listed its kind: a Read after that misses no change, and the
// updates after it, applied to that Read in order, give what a Read would
// give then.
//
// It uses client-go's informers on the dynamic client with a transform
// that keeps of each object only its identity and, once the watch is
// ready, what decodeItem (Read's code) decodes from it, until the handler
// hands that on: the informers' cache holds identities, as metadata
// informers would, and nothing is decoded twice (what the informers list
// first, before ready, the Read after ready reads). A watch needs the watch verb on each kind, which
// deploy/rbac.yaml grants beside get and list. The kinds are those Read
// would read now: a kind the server starts to serve later is not watched.
func Watch(ctx context.Context, cfg *rest.Config, changed func(Update), ready func()) error {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-hybrid"
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watching the cluster at %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watching the cluster at %s: %w", cfg.Host, err)
	}
	return watch(ctx, cfg.Host, disc, dyn, changed, ready)
}

func watch(ctx context.Context, host string, disc discoverer, dyn dynamic.Interface, changed func(Update), ready func()) error {
	kinds, err := watched(host, disc)
	if err != nil {
		return err
	}
	// No resync: an update is a change of the object, not a timer.
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	// decoding is set once the watch is ready: from then on each object
	// is decoded as it arrives.
	var decoding atomic.Bool
	// The handlers of all kinds run on goroutines of their own; changed
	// is called by one at a time.
	var mu sync.Mutex
	deliver := func(obj any) {
		d, ok := obj.(*decoded)
		if !ok {
			return
		}
		// Taken once: the cache keeps the identity only.
		u := d.update.Swap(nil)
		if u == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		changed(*u)
	}
	for _, k := range kinds {
		inf := f.ForResource(k.gvr).Informer()
		if err := inf.SetTransform(transform(k.gvr, k.kind, &decoding)); err != nil {
			return fmt.Errorf("watching %s: %w", k.gvr.Resource, err)
		}
		prefix := originPrefix(k.gvr.GroupVersion().WithKind(k.kind))
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, _ bool) { deliver(obj) },
			UpdateFunc: func(before, after any) {
				if resourceVersion(before) != resourceVersion(after) {
					deliver(after)
				}
			},
			DeleteFunc: func(obj any) {
				// The unit is the informer's key behind the kind's prefix,
				// whatever the last state the informer saw.
				key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
				if err == nil {
					mu.Lock()
					defer mu.Unlock()
					changed(Update{Unit: prefix + key})
				}
			},
		})
		if err != nil {
			return fmt.Errorf("watching %s: %w", k.gvr.Resource, err)
		}
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	f.WaitForCacheSync(ctx.Done())
	if ctx.Err() == nil {
		decoding.Store(true)
		ready()
	}
	<-ctx.Done()
	return nil
}

// decoded is what the informers keep of an object: its identity, and
// what Read decodes from it until the handler takes it (nil for what was
// listed before the watch was ready).
type decoded struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	update atomic.Pointer[Update]
}

// DeepCopyObject copies the identity and shares the update, whose
// objects are never changed.
func (d *decoded) DeepCopyObject() runtime.Object {
	c := &decoded{TypeMeta: d.TypeMeta, ObjectMeta: *d.ObjectMeta.DeepCopy()}
	c.update.Store(d.update.Load())
	return c
}

// transform makes an object of the server a *decoded, decoding it when
// decoding is set.
func transform(gvr schema.GroupVersionResource, kind string, decoding *atomic.Bool) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			// Already made, or a tombstone the informer makes itself.
			return obj, nil
		}
		d := &decoded{ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(),
			ResourceVersion: u.GetResourceVersion(), UID: u.GetUID()}}
		d.APIVersion, d.Kind = u.GetAPIVersion(), u.GetKind()
		if decoding.Load() {
			up := DecodeUpdate(u, gvr, kind)
			d.update.Store(&up)
		}
		return d, nil
	}
}

// DecodeUpdate is the Update of one object of the server as the watch
// delivers it; it drops u's managedFields.
func DecodeUpdate(u *unstructured.Unstructured, gvr schema.GroupVersionResource, kind string) Update {
	var warnings []string
	var objs []*model.Object
	unit, err := decodeItem(u, gvr, kind, func(o *model.Object) { objs = append(objs, o) },
		func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) })
	if err != nil {
		objs = nil
	}
	return Update{Unit: unit, Objects: objs, Warnings: warnings, Err: err}
}

func resourceVersion(o any) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	return ""
}

// watchedKind is one kind Read lists, as the server serves it.
type watchedKind struct {
	gvr  schema.GroupVersionResource
	kind string
}

// watched resolves the kinds Read lists to the resources the server
// serves them as, as Read resolves them.
func watched(host string, disc discoverer) ([]watchedKind, error) {
	r := &reader{
		host: host, disc: disc,
		served:  map[string]*metav1.APIResourceList{},
		refused: map[string]string{},
		snap:    &model.Snapshot{},
		prog:    &progress{},
	}
	var out []watchedKind
	for _, t := range Targets() {
		gvr, kind, ok, err := r.resolve(t)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, watchedKind{gvr, kind})
		}
	}
	return out, nil
}

// Rank orders the units of Read's snapshot by kind: the index of the
// unit's kind among Targets; a unit no Target reads comes after every
// kind. Within a kind Read keeps the server's order, namespace then name
// as the API server's storage sorts its keys: the units' byte order.
func Rank(unit string) int {
	ranks := rankOnce()
	i := strings.IndexByte(unit[min(len(unit), len(OriginPrefix)):], '/')
	if !strings.HasPrefix(unit, OriginPrefix) || i < 0 {
		return len(ranks)
	}
	if r, ok := ranks[unit[:len(OriginPrefix)+i+1]]; ok {
		return r
	}
	return len(ranks)
}

// rankOnce maps each Target choice's origin prefix to the Target's index.
var rankOnce = sync.OnceValue(func() map[string]int {
	out := map[string]int{}
	for i, t := range Targets() {
		for _, c := range t.Choices {
			out[originPrefix(c)] = i
		}
	}
	return out
})
