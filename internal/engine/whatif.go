package engine

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// actions does the snapshot's what-if actions (hybrid.ActionAnnotation)
// in input order, on the built objects of their keys, observed or derived:
// after the nodes, kubeadm's objects and the operator's render exist, and
// before the pods are scheduled, so that a cordoned or drained node gets
// no new pod and a restarted template is the one the pods are made from.
func (b *builder) actions() error {
	for _, m := range b.in.actions {
		verb := m.Typed.(metav1.Object).GetAnnotations()[hybrid.ActionAnnotation]
		if err := b.act(m, verb); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) act(m *model.Object, verb string) error {
	c, k := b.c, m.Key
	missing := &Error{Origin: m.Origin, Msg: fmt.Sprintf("%s: %s %q: the cluster has no such object", k, hybrid.ActionAnnotation, verb)}
	switch k.Kind {
	case "CertificateSigningRequest":
		i := slices.IndexFunc(c.CSRs, func(r *certv1.CertificateSigningRequest) bool { return r.Name == k.Name })
		if i < 0 {
			return missing
		}
		csrDecision(c.CSRs[i], verb)
	case "Node":
		n := b.nodeByName(k.Name)
		if n == nil {
			return missing
		}
		return b.nodeAction(n, m, verb)
	case "Deployment", "DaemonSet", "StatefulSet":
		t := b.template(k)
		if t == nil {
			return missing
		}
		restart(t, m)
	default:
		return &Error{Origin: m.Origin, Msg: fmt.Sprintf("%s: %s %q does not apply to a %s", k, hybrid.ActionAnnotation, verb, k.Kind)}
	}
	b.note(model.Info, k, "what-if %s (%s)", verb, m.Origin)
	return nil
}

// nodeAction cordons, uncordons, taints or drains a node.
func (b *builder) nodeAction(n *corev1.Node, m *model.Object, verb string) error {
	switch verb {
	case hybrid.ActionCordon:
		n.Spec.Unschedulable = true
	case hybrid.ActionUncordon:
		n.Spec.Unschedulable = false
	case hybrid.ActionTaint:
		mk, _ := m.Typed.(*corev1.Node)
		if mk == nil || len(mk.Spec.Taints) == 0 {
			return &Error{Origin: m.Origin, Msg: fmt.Sprintf("%s: %s %q: give the taints to add in spec.taints", m.Key, hybrid.ActionAnnotation, verb)}
		}
		n.Spec.Taints = addTaints(n.Spec.Taints, mk.Spec.Taints)
	case hybrid.ActionDrain:
		n.Spec.Unschedulable = true
		evicted := b.evict(n.Name)
		b.note(model.Info, m.Key, "what-if drain: %d pod(s) evicted from %s; their controllers re-create them where the scheduler puts them", evicted, n.Name)
	}
	b.note(model.Info, m.Key, "what-if %s (%s)", verb, m.Origin)
	return nil
}

// template is the pod template of a Deployment, DaemonSet or StatefulSet.
func (b *builder) template(k model.Key) *corev1.PodTemplateSpec {
	switch k.Kind {
	case "Deployment":
		if i := slices.IndexFunc(b.c.Deployments, func(d *appsv1.Deployment) bool { return d.Namespace == k.Namespace && d.Name == k.Name }); i >= 0 {
			return &b.c.Deployments[i].Spec.Template
		}
	case "DaemonSet":
		if i := slices.IndexFunc(b.c.DaemonSets, func(d *appsv1.DaemonSet) bool { return d.Namespace == k.Namespace && d.Name == k.Name }); i >= 0 {
			return &b.c.DaemonSets[i].Spec.Template
		}
	case "StatefulSet":
		if i := slices.IndexFunc(b.c.StatefulSets, func(s *appsv1.StatefulSet) bool { return s.Namespace == k.Namespace && s.Name == k.Name }); i >= 0 {
			return &b.c.StatefulSets[i].Spec.Template
		}
	}
	return nil
}

// csrDecision adds the condition kubectl certificate approve|deny adds,
// unless the CSR has it already (kubectl pkg/cmd/certificates
// certificates.go modifyCertificateCondition leaves it then).
func csrDecision(csr *certv1.CertificateSigningRequest, verb string) {
	cond := certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve.",
	}
	if verb == hybrid.ActionDeny {
		cond.Type, cond.Reason, cond.Message = certv1.CertificateDenied, "KubectlDeny", "This CSR was denied by kubectl certificate deny."
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == cond.Type {
			return
		}
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
}

// addTaints adds each new taint, replacing one with the same key and
// effect (kubectl pkg/cmd/taint/utils.go reorganizeTaints).
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

// restart sets the template annotation kubectl rollout restart sets
// (kubectl pkg/polymorphichelpers/objectrestarter.go). Its value is the
// time on a real cluster; here it names the marker (or is the marker's own
// restartedAt annotation), so two restarts in a row are two changes.
func restart(t *corev1.PodTemplateSpec, m *model.Object) {
	v := "simulated: " + m.Origin.String()
	if given := m.Typed.(metav1.Object).GetAnnotations()[hybrid.RestartedAtAnnotation]; given != "" {
		v = given
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[hybrid.RestartedAtAnnotation] = v
}

// evict removes the pods bound to the node that kubectl drain evicts: all
// but DaemonSet pods and mirror pods (kubectl pkg/drain/filters.go
// daemonSetFilter, mirrorPodFilter; a mirror pod's controller is its
// Node). It returns how many it removed.
func (b *builder) evict(node string) int {
	kept := b.c.Pods[:0]
	n := 0
	for _, p := range b.c.Pods {
		ref := metav1.GetControllerOf(p)
		_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
		if p.Spec.NodeName != node || mirror || ref != nil && (ref.Kind == "DaemonSet" || ref.Kind == "Node") {
			kept = append(kept, p)
			continue
		}
		n++
	}
	clear(b.c.Pods[len(kept):])
	b.c.Pods = kept
	return n
}
