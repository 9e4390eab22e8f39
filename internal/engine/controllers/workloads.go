package controllers

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/templatehash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// ownerRef points a pod or ReplicaSet at its controller.
func ownerRef(apiVersion, kind, name string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// ControllerOf returns the kind and name of a pod's controlling owner.
func ControllerOf(m metav1.Object) (string, string) {
	for _, r := range m.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return r.Kind, r.Name
		}
	}
	if refs := m.GetOwnerReferences(); len(refs) == 1 {
		return refs[0].Kind, refs[0].Name
	}
	return "", ""
}

// PodIndex finds observed pods by namespace and controller.
type PodIndex map[ownerKey][]*corev1.Pod

// ownerKey is a controller by namespace, kind and name (a map key built
// without a string per pod).
type ownerKey struct{ namespace, kind, name string }

// IndexPods indexes observed pods by namespace and controller.
func IndexPods(pods []*corev1.Pod) PodIndex {
	idx := PodIndex{}
	for _, p := range pods {
		kind, name := ControllerOf(p)
		if kind != "" {
			k := ownerKey{p.Namespace, kind, name}
			idx[k] = append(idx[k], p)
		}
	}
	return idx
}

// Owned are the pods a controller owns.
func (x PodIndex) Owned(ns, kind, name string) []*corev1.Pod { return x[ownerKey{ns, kind, name}] }

// IsStub reports whether an observed pod carries only identity and placement
// (the lab's way of recording names and addresses the seed prints): its spec
// is completed from the controller's template.
func IsStub(p *corev1.Pod) bool { return len(p.Spec.Containers) == 0 }

// fromTemplate builds a pod the way a controller does: the template's
// labels, annotations and spec, owned by the controller
// (pkg/controller/controller_utils.go GetPodFromTemplate).
func fromTemplate(t *corev1.PodTemplateSpec, ns, name string, owner metav1.OwnerReference, extraLabels map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       ns,
			Labels:          map[string]string{},
			Annotations:     nil,
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	for k, v := range t.Labels {
		p.Labels[k] = v
	}
	for k, v := range extraLabels {
		p.Labels[k] = v
	}
	if len(t.Annotations) > 0 {
		p.Annotations = map[string]string{}
		for k, v := range t.Annotations {
			p.Annotations[k] = v
		}
	}
	return p
}

// completeStub fills an observed stub from the controller's template,
// keeping everything observed (name, node, addresses, status).
func completeStub(stub *corev1.Pod, t *corev1.PodTemplateSpec, extraLabels map[string]string) {
	node := stub.Spec.NodeName
	stub.Spec = *t.Spec.DeepCopy()
	stub.Spec.NodeName = node
	if stub.Labels == nil {
		stub.Labels = make(map[string]string, len(t.Labels)+len(extraLabels))
	}
	// The template's labels with the controller's over them (as
	// fromTemplate makes them), where the stub has none of its own.
	for k, v := range extraLabels {
		if _, ok := stub.Labels[k]; !ok {
			stub.Labels[k] = v
		}
	}
	for k, v := range t.Labels {
		if _, ok := stub.Labels[k]; !ok {
			stub.Labels[k] = v
		}
	}
	if stub.TypeMeta.Kind == "" {
		stub.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	}
}

// ExpandDeployment derives a Deployment's current ReplicaSet and its pods.
// The ReplicaSet's name comes from observed pods when they name it, else from
// the template hash (pkg/controller/deployment/sync.go getNewReplicaSet).
func ExpandDeployment(d *appsv1.Deployment, idx PodIndex, observedRS ReplicaSetHashes) (*appsv1.ReplicaSet, []*corev1.Pod, []string) {
	var notes []string
	hash := observedRS.Of(d.Namespace, d.Name)
	prefix := d.Name + "-"
	if hash == "" {
		hash = templatehash.Of(&d.Spec.Template)
	}
	rsName := prefix + hash
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	hashLabel := map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{
			Name: rsName, Namespace: d.Namespace,
			Labels:          mergeLabels(d.Spec.Template.Labels, hashLabel),
			OwnerReferences: []metav1.OwnerReference{ownerRef("apps/v1", "Deployment", d.Name)},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: withLabel(d.Spec.Selector, hashLabel),
		},
	}
	rs.Spec.Template = *d.Spec.Template.DeepCopy()
	rs.Spec.Template.Labels = mergeLabels(d.Spec.Template.Labels, hashLabel)
	pods := expandReplicas(&rs.Spec.Template, d.Namespace, rsName, int(replicas), ownerRef("apps/v1", "ReplicaSet", rsName), idx.Owned(d.Namespace, "ReplicaSet", rsName), hashLabel)
	if n := len(idx.Owned(d.Namespace, "ReplicaSet", rsName)); n > int(replicas) {
		notes = append(notes, fmt.Sprintf("Deployment %s/%s: %d observed pods for %d replicas; all observed pods are kept", d.Namespace, d.Name, n, replicas))
	}
	return rs, pods, notes
}

// ObservedReplicaSets maps a Deployment (by namespace and name) to the
// pod-template-hash of the ReplicaSet that observed pods name as their
// owner ("<deployment>-<hash>"), the last pod's.
func ObservedReplicaSets(pods []*corev1.Pod) ReplicaSetHashes {
	out := ReplicaSetHashes{}
	for _, p := range pods {
		kind, name := ControllerOf(p)
		if kind != "ReplicaSet" {
			continue
		}
		i := strings.LastIndex(name, "-")
		if i <= 0 {
			continue
		}
		out[ownerKey{p.Namespace, "Deployment", name[:i]}] = name[i+1:]
	}
	return out
}

// ReplicaSetHashes is what ObservedReplicaSets gives.
type ReplicaSetHashes map[ownerKey]string

// Of is the hash the observed pods give Deployment ns/name, "" for none.
func (h ReplicaSetHashes) Of(ns, name string) string { return h[ownerKey{ns, "Deployment", name}] }

// ExpandReplicaSet derives the pods of a ReplicaSet given on its own.
func ExpandReplicaSet(rs *appsv1.ReplicaSet, idx PodIndex) []*corev1.Pod {
	replicas := 1
	if rs.Spec.Replicas != nil {
		replicas = int(*rs.Spec.Replicas)
	}
	return expandReplicas(&rs.Spec.Template, rs.Namespace, rs.Name, replicas, ownerRef("apps/v1", "ReplicaSet", rs.Name), idx.Owned(rs.Namespace, "ReplicaSet", rs.Name), nil)
}

// expandReplicas keeps the observed pods (completing stubs) and adds derived
// ones named <owner>-<suffix> until there are `replicas`.
func expandReplicas(t *corev1.PodTemplateSpec, ns, owner string, replicas int, ref metav1.OwnerReference, observed []*corev1.Pod, extra map[string]string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range observed {
		if IsStub(p) {
			completeStub(p, t, extra)
		}
		out = append(out, p)
	}
	for i := 0; len(out) < replicas; i++ {
		name := owner + "-" + names.Suffix(fmt.Sprintf("%s/%s/%d", ns, owner, i))
		out = append(out, fromTemplate(t, ns, name, ref, extra))
	}
	return out
}

// ExpandStatefulSet derives <name>-0 … <name>-(n-1).
func ExpandStatefulSet(s *appsv1.StatefulSet, idx PodIndex) []*corev1.Pod {
	replicas := 1
	if s.Spec.Replicas != nil {
		replicas = int(*s.Spec.Replicas)
	}
	observed := map[string]*corev1.Pod{}
	for _, p := range idx.Owned(s.Namespace, "StatefulSet", s.Name) {
		observed[p.Name] = p
	}
	var out []*corev1.Pod
	for i := 0; i < replicas; i++ {
		name := fmt.Sprintf("%s-%d", s.Name, i)
		if p, ok := observed[name]; ok {
			if IsStub(p) {
				completeStub(p, &s.Spec.Template, nil)
			}
			out = append(out, p)
			continue
		}
		p := fromTemplate(&s.Spec.Template, s.Namespace, name, ownerRef("apps/v1", "StatefulSet", s.Name), map[string]string{"statefulset.kubernetes.io/pod-name": name})
		p.Spec.Hostname = name
		p.Spec.Subdomain = s.Spec.ServiceName
		out = append(out, p)
	}
	return out
}

// DaemonPods makes one DaemonSet's pods: the template the controller
// creates them from is made once for every node.
type DaemonPods struct {
	ds *appsv1.DaemonSet
	t  *corev1.PodTemplateSpec
}

// NewDaemonPods makes the pods of ds.
func NewDaemonPods(ds *appsv1.DaemonSet) *DaemonPods { return &DaemonPods{ds: ds} }

// template is the DaemonSet's pod template with the tolerations the
// controller adds (not-ready, unreachable, the pressure conditions, ...)
// before creating a pod. Its metadata is the DaemonSet's, read only: the
// pods copy what they take of it, and their spec.
func (m *DaemonPods) template() *corev1.PodTemplateSpec {
	if m.t == nil {
		m.t = &corev1.PodTemplateSpec{ObjectMeta: m.ds.Spec.Template.ObjectMeta, Spec: *scheduler.DaemonPodSpec(m.ds)}
	}
	return m.t
}

// Pod builds the DaemonSet's pod for one node. The DaemonSet controller
// pins it with a required node affinity on metadata.name
// (pkg/controller/daemon/util/daemonset_util.go ReplaceDaemonSetPodNodeNameNodeAffinity).
func (m *DaemonPods) Pod(node string, observed *corev1.Pod) *corev1.Pod {
	if observed != nil && !IsStub(observed) {
		return observed // nothing of the template is read
	}
	extra := map[string]string{"pod-template-generation": "1"}
	ds, t := m.ds, m.template()
	if observed != nil {
		completeStub(observed, t, extra)
		return observed
	}
	name := ds.Name + "-" + names.Suffix(ds.Namespace+"/"+ds.Name+"/"+node)
	p := fromTemplate(t, ds.Namespace, name, ownerRef("apps/v1", "DaemonSet", ds.Name), extra)
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node},
		}}}},
	}}
	// No nodeName: the controller aims the pod at its node with this term
	// (pkg/controller/daemon/util ReplaceDaemonSetPodNodeNameNodeAffinity)
	// and the default scheduler binds it there, or leaves it Pending where
	// it does not fit (NodeAffinity's PreFilter keeps only that node).
	return p
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func withLabel(sel *metav1.LabelSelector, l map[string]string) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if sel != nil {
		out = sel.DeepCopy()
	}
	out.MatchLabels = mergeLabels(out.MatchLabels, l)
	return out
}

// selects reports whether a workload selector matches a pod's labels.
func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return false
	}
	return s.Matches(labels.Set(l))
}
