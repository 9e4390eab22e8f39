package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AdmitNamespace is the NamespaceLifecycle plugin's judgement of a create
// (k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go
// Admit), the first plugin of the default chain: ns is the pod's namespace,
// nil when it does not exist. A missing namespace is the NotFound error of
// the plugin's last-resort read; a terminating one refuses new content.
func AdmitNamespace(pod *corev1.Pod, ns *corev1.Namespace) error {
	if ns == nil {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, pod.Namespace)
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		return nil
	}
	err := forbidden(pod, fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", pod.Namespace))
	if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Details != nil {
		se.ErrStatus.Details.Causes = append(se.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", pod.Namespace),
			Field:   "metadata.namespace",
		})
	}
	return err
}

// mirrorPodAnnotation marks the API copy of a kubelet's static pod.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// DefaultServiceAccount is the account a pod without serviceAccountName
// runs as; the serviceaccounts controller creates it in every namespace.
const DefaultServiceAccount = "default"

// AdmitServiceAccount is the ServiceAccount plugin's judgement of a create
// (plugin/pkg/admission/serviceaccount/admission.go Admit and Validate): an
// empty serviceAccountName becomes "default", and the named account must
// exist. exists reports whether the pod's namespace holds the account; nil
// means the caller cannot tell (the account is then taken to exist). The
// plugin retries "default" because the controller creates it, so the twin
// always takes it to exist. Mirror pods are left alone (their own rules
// forbid service accounts and are not modelled). The token volume the
// plugin mounts is not added.
func AdmitServiceAccount(pod *corev1.Pod, exists func(name string) bool) error {
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccount
	}
	name := pod.Spec.ServiceAccountName
	if name == DefaultServiceAccount || exists == nil || exists(name) {
		return nil
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
	return forbidden(pod, fmt.Sprintf("error looking up service account %s/%s: %v", pod.Namespace, name, notFound))
}

// SystemPriorityClasses are the PriorityClasses kube-apiserver creates at
// start (pkg/registry/scheduling/rest/storage_scheduling.go
// AddSystemPriorityClasses, values from pkg/apis/scheduling/types.go).
func SystemPriorityClasses() []*schedulingv1.PriorityClass {
	policy := corev1.PreemptLowerPriority
	mk := func(name string, value int32, desc string) *schedulingv1.PriorityClass {
		p := policy
		return &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: name},
			Value:            value,
			Description:      desc,
			PreemptionPolicy: &p,
		}
	}
	return []*schedulingv1.PriorityClass{
		mk("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
		mk("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current node."),
	}
}

// AdmitPriority is the Priority plugin's mutation of a pod create
// (plugin/pkg/admission/priority/admission.go admitPod): priorityClassName
// must name one of classes (which should include SystemPriorityClasses);
// without one, the global default class with the lowest value applies, or
// priority 0. The resolved priority and preemption policy are written to
// the pod; values the client set that differ are refused.
func AdmitPriority(pod *corev1.Pod, classes []*schedulingv1.PriorityClass) error {
	var (
		name     string
		priority int32
		policy   = corev1.PreemptLowerPriority
	)
	if pod.Spec.PriorityClassName == "" {
		// getDefaultPriority: the global default of lowest value.
		var def *schedulingv1.PriorityClass
		for _, pc := range classes {
			if pc.GlobalDefault && (def == nil || pc.Value < def.Value) {
				def = pc
			}
		}
		if def != nil {
			name, priority, policy = def.Name, def.Value, classPolicy(def)
		}
	} else {
		var pc *schedulingv1.PriorityClass
		for _, c := range classes {
			if c.Name == pod.Spec.PriorityClassName {
				pc = c
				break
			}
		}
		if pc == nil {
			return forbidden(pod, fmt.Sprintf("no PriorityClass with name %v was found", pod.Spec.PriorityClassName))
		}
		name, priority, policy = pc.Name, pc.Value, classPolicy(pc)
	}
	pod.Spec.PriorityClassName = name
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden(pod, fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != policy {
		return forbidden(pod, fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, policy))
	}
	pod.Spec.PreemptionPolicy = &policy
	return nil
}

// classPolicy is a class's preemption policy as stored: the API defaults
// an unset one to PreemptLowerPriority (pkg/apis/scheduling/v1/defaults.go).
func classPolicy(pc *schedulingv1.PriorityClass) corev1.PreemptionPolicy {
	if pc.PreemptionPolicy == nil {
		return corev1.PreemptLowerPriority
	}
	return *pc.PreemptionPolicy
}
