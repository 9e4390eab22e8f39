package live

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Watch calls changed after any object of a kind Read lists is added,
// changed or deleted, until ctx ends; changed gets the kind's resource.
// It calls ready once every watch has listed its kind: a Read after that
// misses no change.
//
// It watches metadata only (client-go's metadata informers): it holds
// each object's name and resource version, not the object, so watching
// costs little memory; a watch needs the watch verb on each kind, which
// deploy/rbac.yaml grants beside get and list. The kinds are those Read
// would read now: a kind the server starts to serve later is not watched.
func Watch(ctx context.Context, cfg *rest.Config, changed func(resource string), ready func()) error {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kubectl-hybrid"
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watching the cluster at %s: %w", cfg.Host, err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("watching the cluster at %s: %w", cfg.Host, err)
	}
	gvrs, err := watched(cfg.Host, disc)
	if err != nil {
		return err
	}
	// No resync: an update is a change of the object, not a timer.
	f := metadatainformer.NewSharedInformerFactory(mc, 0)
	for _, gvr := range gvrs {
		res := gvr.GroupResource().String()
		_, err := f.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(_ any, initial bool) {
				if !initial {
					changed(res)
				}
			},
			UpdateFunc: func(before, after any) {
				if resourceVersion(before) != resourceVersion(after) {
					changed(res)
				}
			},
			DeleteFunc: func(any) { changed(res) },
		})
		if err != nil {
			return fmt.Errorf("watching %s: %w", res, err)
		}
	}
	f.Start(ctx.Done())
	defer f.Shutdown()
	f.WaitForCacheSync(ctx.Done())
	if ctx.Err() == nil {
		ready()
	}
	<-ctx.Done()
	return nil
}

func resourceVersion(o any) string {
	if m, ok := o.(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	return ""
}

// watched resolves the kinds Read lists to the resources the server
// serves them as, as Read resolves them.
func watched(host string, disc discoverer) ([]schema.GroupVersionResource, error) {
	r := &reader{
		host: host, disc: disc,
		served:  map[string]*metav1.APIResourceList{},
		refused: map[string]string{},
		snap:    &model.Snapshot{},
		prog:    &progress{},
	}
	var out []schema.GroupVersionResource
	for _, t := range Targets() {
		gvr, _, ok, err := r.resolve(t)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, gvr)
		}
	}
	return out, nil
}
