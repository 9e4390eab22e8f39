package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// workload is a controller with its pod template and how it rolls a new
// one out.
type workload struct {
	ref      ObjectRef
	idx      int // its index in the cluster's list of its kind (digest.sumOf)
	template *corev1.PodTemplateSpec
	// onDelete: the controller replaces a pod only when it is deleted.
	onDelete bool
	rollout  string
}

func workloadsOf(c *model.Cluster) map[ObjectRef]workload {
	out := map[ObjectRef]workload{}
	for i, d := range c.DaemonSets {
		w := workload{ref: ObjectRef{Group: "apps", Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name}, idx: i, template: &d.Spec.Template}
		// kubernetes pkg/controller/daemon/update.go rollingUpdate: old
		// pods are deleted node by node, at most maxUnavailable (default
		// 1) at a time; OnDelete leaves them until someone deletes them.
		if d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			w.onDelete = true
			w.rollout = "OnDelete: the pods keep the old template until each is deleted"
		} else {
			w.rollout = "RollingUpdate: each node's pod is deleted and re-created, " + maxUnavailable(d.Spec.UpdateStrategy.RollingUpdate) + " node(s) at a time"
		}
		out[w.ref] = w
	}
	for i, d := range c.Deployments {
		w := workload{ref: ObjectRef{Group: "apps", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name}, idx: i, template: &d.Spec.Template}
		// kubernetes pkg/controller/deployment: a new ReplicaSet (new
		// pod-template-hash) scales up as the old one scales down
		// (rolling.go), or the old one goes to zero first (recreate.go).
		if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			w.rollout = "Recreate: every old pod is deleted before the new ReplicaSet's pods are created"
		} else {
			w.rollout = "RollingUpdate: a new ReplicaSet replaces the pods, within maxSurge and maxUnavailable"
		}
		out[w.ref] = w
	}
	for i, s := range c.StatefulSets {
		w := workload{ref: ObjectRef{Group: "apps", Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name}, idx: i, template: &s.Spec.Template}
		// kubernetes pkg/controller/statefulset/stateful_set_control.go:
		// pods are replaced from the highest ordinal down.
		if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			w.onDelete = true
			w.rollout = "OnDelete: the pods keep the old template until each is deleted"
		} else {
			w.rollout = "RollingUpdate: pods are replaced one at a time from the highest ordinal down"
		}
		out[w.ref] = w
	}
	return out
}

func maxUnavailable(ru *appsv1.RollingUpdateDaemonSet) string {
	if ru == nil || ru.MaxUnavailable == nil {
		return "1"
	}
	return ru.MaxUnavailable.String()
}

// podsByController is the twin's podsByController, made once.
func (t *Twin) podsByController() map[ObjectRef][]string {
	t.ownedOnce.Do(func() { t.owned = podsByController(t.c) })
	return t.owned
}

// workloads is the twin's controllers (workloadsOf), made once: a plan
// compares each twin with the one before and then with the one after.
func (t *Twin) workloads() map[ObjectRef]workload {
	t.wlOnce.Do(func() { t.wl = workloadsOf(t.c) })
	return t.wl
}

// compareWorkloadsOf reports the controllers whose pod template differs,
// of the twins' controllers wa and wb, and the pods of the before twin a
// rollout replaces (its pods by controller, made by owners when first
// needed).
//
// A controller whose object hashes the same in both digests (the same
// JSON) has the same template, which is then not compared field by field;
// the pods are listed by controller only when a rollout needs them.
func compareWorkloadsOf(owners func() map[ObjectRef][]string, wa, wb map[ObjectRef]workload, da, db *digest) []WorkloadDiff {
	var owned map[ObjectRef][]string
	pods := func() map[ObjectRef][]string {
		if owned == nil {
			owned = owners()
		}
		return owned
	}
	var out []WorkloadDiff
	for ref, w := range wb {
		old, ok := wa[ref]
		if !ok {
			out = append(out, WorkloadDiff{Workload: ref, Change: Added, Rollout: "created: its pods start"})
			continue
		}
		if da.sumOf(ref.Kind, old.idx).sum == db.sumOf(ref.Kind, w.idx).sum {
			continue
		}
		if old.template == w.template || equality.Semantic.DeepEqual(old.template, w.template) {
			continue
		}
		fields := fieldChanges(old.template, w.template)
		if len(fields) == 0 {
			continue
		}
		for i := range fields {
			fields[i].Path = "spec.template." + fields[i].Path
		}
		d := WorkloadDiff{Workload: ref, Change: Changed, Template: fields, Rollout: w.rollout}
		if !w.onDelete {
			d.Restarts = slices.Clone(pods()[ref]) // the cache stays the twin's
		}
		out = append(out, d)
	}
	for ref := range wa {
		if _, ok := wb[ref]; !ok {
			out = append(out, WorkloadDiff{Workload: ref, Change: Removed, Restarts: nil,
				Rollout: fmt.Sprintf("deleted: its %d pod(s) are deleted", len(pods()[ref]))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessRef(out[i].Workload, out[j].Workload) })
	return out
}

// podsByController lists each controller's pods (namespace/name, sorted):
// a DaemonSet's or StatefulSet's own, a Deployment's through its
// ReplicaSets.
func podsByController(c *model.Cluster) map[ObjectRef][]string {
	rsOwner := map[string]ObjectRef{} // "ns/rs" → Deployment
	for _, rs := range c.ReplicaSets {
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.Kind == "Deployment" {
			rsOwner[rs.Namespace+"/"+rs.Name] = ObjectRef{Group: "apps", Kind: "Deployment", Namespace: rs.Namespace, Name: ref.Name}
		}
	}
	out := map[ObjectRef][]string{}
	for _, p := range c.Pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		var w ObjectRef
		switch ref.Kind {
		case "DaemonSet", "StatefulSet":
			w = ObjectRef{Group: "apps", Kind: ref.Kind, Namespace: p.Namespace, Name: ref.Name}
		case "ReplicaSet":
			d, ok := rsOwner[p.Namespace+"/"+ref.Name]
			if !ok {
				continue
			}
			w = d
		default:
			continue
		}
		out[w] = append(out[w], p.Namespace+"/"+p.Name)
	}
	for _, ps := range out {
		sort.Strings(ps)
	}
	return out
}

// compareTigeraStatus reports the operator's status objects whose
// conditions differ (kubectl get tigerastatus: AVAILABLE, PROGRESSING,
// DEGRADED and the message).
func compareTigeraStatus(a, b *model.Cluster) []StatusDiff {
	before := map[string]*operator.TigeraStatus{}
	for _, s := range a.TigeraStatuses {
		before[s.Name] = s
	}
	names := map[string]bool{}
	for _, s := range a.TigeraStatuses {
		names[s.Name] = true
	}
	after := map[string]*operator.TigeraStatus{}
	for _, s := range b.TigeraStatuses {
		after[s.Name] = s
		names[s.Name] = true
	}
	var out []StatusDiff
	for name := range names {
		ca, cb := conditions(before[name]), conditions(after[name])
		if strings.Join(ca, "\n") != strings.Join(cb, "\n") {
			out = append(out, StatusDiff{Name: name, Before: ca, After: cb})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// conditions prints a TigeraStatus's conditions, one a line, in type order.
func conditions(s *operator.TigeraStatus) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, c := range s.Status.Conditions {
		line := c.Type + "=" + c.Status
		if c.Reason != "" {
			line += " " + c.Reason
		}
		if c.Message != "" {
			line += ": " + c.Message
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}
