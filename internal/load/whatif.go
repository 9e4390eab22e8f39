package load

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// What-if markers (hybrid.DeleteAnnotation, hybrid.ActionAnnotation): an
// object so marked acts on the object of its key from an earlier source
// and is not added itself. Deletions happen as the marker is read; actions
// once every source is read, in input order (a drain sees every pod).

// action is a marker read, to be done at the end.
type action struct {
	marker *model.Object
	src    source
	verb   string
}

// markerOf returns the marker's annotations when o is a what-if marker.
func markerOf(o *model.Object) (map[string]string, bool) {
	m, ok := o.Typed.(metav1.Object)
	if !ok {
		return nil, false
	}
	a := m.GetAnnotations()
	return a, hybrid.IsMarker(a)
}

func markerError(o *model.Object, format string, args ...any) *Error {
	return &Error{File: o.Origin.File, Doc: o.Origin.Doc, Line: o.Origin.Line, Object: keyLabel(o.Key), Msg: fmt.Sprintf(format, args...)}
}

// marker handles a marked object read from src: a deletion is done now,
// an action is checked and kept for the end.
func (b *builder) marker(o *model.Object, src source, ann map[string]string) error {
	del, isDel := ann[hybrid.DeleteAnnotation]
	verb, isAct := ann[hybrid.ActionAnnotation]
	if isDel && isAct {
		return markerError(o, "%s and %s: an object either deletes or acts, not both", hybrid.DeleteAnnotation, hybrid.ActionAnnotation)
	}
	if isAct {
		kinds, ok := hybrid.ActionKinds[verb]
		if !ok {
			return markerError(o, "%s %q: use one of %s", hybrid.ActionAnnotation, verb, actionNames())
		}
		if !slices.Contains(kinds, o.Key.Kind) {
			return markerError(o, "%s %q applies to %s, not to a %s", hybrid.ActionAnnotation, verb, strings.Join(kinds, ", "), o.Key.Kind)
		}
		b.actions = append(b.actions, action{marker: o, src: src, verb: verb})
		return nil
	}
	if del != "true" {
		return markerError(o, "%s %q: the only value is \"true\"", hybrid.DeleteAnnotation, del)
	}
	i, ok := b.index[o.Key]
	if !ok || b.source[i] >= src {
		return markerError(o, "%s: no earlier input (the lab, an earlier -f, the base) gives this object", hybrid.DeleteAnnotation)
	}
	b.snap.Objects[i] = nil
	delete(b.index, o.Key)
	return nil
}

func actionNames() string {
	names := make([]string, 0, len(hybrid.ActionKinds))
	for v := range hybrid.ActionKinds {
		names = append(names, v)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// finishMarkers does the actions in input order and drops the deleted
// objects' places.
func (b *builder) finishMarkers() error {
	for _, a := range b.actions {
		i, ok := b.index[a.marker.Key]
		if !ok || b.source[i] >= a.src {
			return markerError(a.marker, "%s %q: no earlier input (the lab, an earlier -f, the base) gives this object", hybrid.ActionAnnotation, a.verb)
		}
		target := b.snap.Objects[i]
		// The target may be shared with another snapshot (diff's base):
		// the action changes a copy.
		cp := *target
		typed, err := act(&cp, a, b.snap.Objects)
		if err != nil {
			return err
		}
		cp.Typed = typed
		if cp.Raw != nil {
			if raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed); err == nil {
				cp.Raw = raw
			}
		}
		b.snap.Objects[i] = &cp
		if a.verb == hybrid.ActionDrain {
			b.evict(cp.Key.Name)
		}
	}
	b.actions = nil
	kept := b.snap.Objects[:0]
	for _, o := range b.snap.Objects {
		if o != nil {
			kept = append(kept, o)
		}
	}
	clear(b.snap.Objects[len(kept):])
	b.snap.Objects = kept
	return nil
}

// act returns a changed copy of target's typed object.
func act(target *model.Object, a action, _ []*model.Object) (any, error) {
	switch t := target.Typed.(type) {
	case *certv1.CertificateSigningRequest:
		return csrDecision(t.DeepCopy(), a.verb), nil
	case *corev1.Node:
		n := t.DeepCopy()
		switch a.verb {
		case hybrid.ActionCordon, hybrid.ActionDrain:
			n.Spec.Unschedulable = true
		case hybrid.ActionUncordon:
			n.Spec.Unschedulable = false
		case hybrid.ActionTaint:
			m, _ := a.marker.Typed.(*corev1.Node)
			if m == nil || len(m.Spec.Taints) == 0 {
				return nil, markerError(a.marker, "%s %q: give the taints to add in spec.taints", hybrid.ActionAnnotation, a.verb)
			}
			n.Spec.Taints = addTaints(n.Spec.Taints, m.Spec.Taints)
		}
		return n, nil
	case *appsv1.Deployment:
		d := t.DeepCopy()
		restart(&d.Spec.Template, a.marker)
		return d, nil
	case *appsv1.DaemonSet:
		d := t.DeepCopy()
		restart(&d.Spec.Template, a.marker)
		return d, nil
	case *appsv1.StatefulSet:
		s := t.DeepCopy()
		restart(&s.Spec.Template, a.marker)
		return s, nil
	}
	return nil, markerError(a.marker, "%s %q: the earlier object is not a %s", hybrid.ActionAnnotation, a.verb, strings.Join(hybrid.ActionKinds[a.verb], ", "))
}

// csrDecision adds the condition kubectl certificate approve|deny adds,
// unless the CSR already has it (kubectl pkg/cmd/certificates
// modifyCertificateCondition leaves it then).
func csrDecision(csr *certv1.CertificateSigningRequest, verb string) *certv1.CertificateSigningRequest {
	cond := certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve.",
	}
	if verb == hybrid.ActionDeny {
		cond.Type, cond.Reason, cond.Message = certv1.CertificateDenied, "KubectlDeny", "This CSR was denied by kubectl certificate deny."
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == cond.Type {
			return csr
		}
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
	return csr
}

// addTaints adds each new taint, replacing one with the same key and
// effect (kubectl pkg/cmd/taint reorganizeTaints).
func addTaints(old, add []corev1.Taint) []corev1.Taint {
	out := slices.Clone(old)
	for _, t := range add {
		i := slices.IndexFunc(out, func(o corev1.Taint) bool { return o.Key == t.Key && o.Effect == t.Effect })
		if i >= 0 {
			out[i] = t
		} else {
			out = append(out, t)
		}
	}
	return out
}

// restart sets the template annotation kubectl rollout restart sets. Its
// value is a timestamp on a real cluster; here it names the marker (the
// marker's own restartedAt annotation when it gives one), so two restarts
// in a row are two changes.
func restart(t *corev1.PodTemplateSpec, marker *model.Object) {
	v := "simulated: " + marker.Origin.String()
	if m, ok := marker.Typed.(metav1.Object); ok {
		if given := m.GetAnnotations()[hybrid.RestartedAtAnnotation]; given != "" {
			v = given
		}
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[hybrid.RestartedAtAnnotation] = v
}

// evict removes the pods bound to the node that kubectl drain evicts:
// all but DaemonSet pods and mirror pods (kubectl pkg/drain/filters.go
// daemonSetFilter, mirrorPodFilter). Their controllers' pods are derived
// again by the twin and scheduled on another node.
func (b *builder) evict(node string) {
	for i, o := range b.snap.Objects {
		if o == nil {
			continue
		}
		p, ok := o.Typed.(*corev1.Pod)
		if !ok || p.Spec.NodeName != node {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
			continue
		}
		b.snap.Objects[i] = nil
		delete(b.index, o.Key)
	}
}
