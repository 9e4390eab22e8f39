package admission

import (
	"errors"
	"fmt"
	"net/http"
	"sort"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podsResource = schema.GroupResource{Resource: "pods"}

// ApplyRuntimeClass does what the RuntimeClass admission plugin
// (plugin/pkg/admission/runtimeclass/admission.go) does to a pod on create,
// mutating pod in place:
//
//   - a pod without runtimeClassName is left alone, except that a pod.spec.overhead
//     without a RuntimeClass is refused;
//   - an empty runtimeClassName is the server error of the plugin's client
//     lookup ("resource name may not be empty");
//   - rc == nil while the pod names a RuntimeClass is the "not found" refusal;
//   - rc.overhead is copied to pod.spec.overhead (a different overhead already
//     on the pod is refused);
//   - rc.scheduling.nodeSelector is merged into pod.spec.nodeSelector, a key
//     with a different value on both sides being refused;
//   - rc.scheduling.tolerations are merged into pod.spec.tolerations, keeping
//     only tolerations not covered by a broader one (pkg/util/tolerations
//     MergeTolerations).
//
// Errors are Forbidden StatusErrors, so err.Error() is the API server's
// message ("pods \"x\" is forbidden: ...") and FormatError gives kubectl's
// line. rc is assumed to be the RuntimeClass the pod names; the caller looks
// it up.
func ApplyRuntimeClass(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if pod.Spec.RuntimeClassName == nil {
		if pod.Spec.Overhead != nil {
			return forbidden(pod, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
		}
		return nil
	}
	if *pod.Spec.RuntimeClassName == "" {
		// The plugin's lister finds nothing, and its fallback client Get
		// refuses an empty name before any request; the API server reports
		// that plain error as a status of unknown reason
		// (k8s.io/apiserver pkg/endpoints/handlers/responsewriters
		// ErrorToAPIStatus).
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusInternalServerError, Message: "resource name may not be empty"}}
	}
	if rc == nil {
		return forbidden(pod, fmt.Sprintf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err := setOverhead(pod, rc); err != nil {
		return err
	}
	if err := setScheduling(pod, rc); err != nil {
		return err
	}
	// The plugin's Validate step: overhead set on the pod but none defined by
	// the RuntimeClass. (A matching overhead was just copied in by setOverhead.)
	if rc.Overhead == nil && pod.Spec.Overhead != nil {
		return forbidden(pod, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	return nil
}

func setOverhead(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc.Overhead == nil {
		return nil
	}
	want := rc.Overhead.PodFixed
	if pod.Spec.Overhead != nil && !apiequality.Semantic.DeepEqual(want, pod.Spec.Overhead) {
		return forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	}
	pod.Spec.Overhead = want.DeepCopy()
	return nil
}

// setScheduling merges the RuntimeClass scheduling constraints. Upstream
// walks the selector map in Go's random order, so with several conflicting
// keys the reported one varies; here keys are visited sorted, which makes the
// message deterministic.
func setScheduling(pod *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if rc.Scheduling == nil {
		return nil
	}
	rcSelector := rc.Scheduling.NodeSelector
	selector := pod.Spec.NodeSelector
	if selector == nil {
		if len(rcSelector) > 0 {
			selector = make(map[string]string, len(rcSelector))
		}
	}
	keys := make([]string, 0, len(rcSelector))
	for k := range rcSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rcValue := rcSelector[k]
		if podValue, ok := selector[k]; ok && podValue != rcValue {
			return forbidden(pod, fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s",
				k, rcValue, k, podValue))
		}
		selector[k] = rcValue
	}
	pod.Spec.NodeSelector = selector
	pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, rc.Scheduling.Tolerations)
	return nil
}

// mergeTolerations follows pkg/util/tolerations MergeTolerations: the pod's
// tolerations, then the RuntimeClass's, dropping any toleration that another
// one in the list already covers (exact duplicates keep their first copy).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := make([]corev1.Toleration, 0, len(first)+len(second))
	all = append(all, first...)
	all = append(all, second...)
	var merged []corev1.Toleration
	for i := range all {
		t := all[i]
		redundant := false
		for j := range merged {
			if coversToleration(merged[j], t) {
				redundant = true
				break
			}
		}
		for j := i + 1; !redundant && j < len(all); j++ {
			if !apiequality.Semantic.DeepEqual(t, all[j]) && coversToleration(all[j], t) {
				redundant = true
			}
		}
		if !redundant {
			merged = append(merged, t)
		}
	}
	return merged
}

// coversToleration reports whether broad tolerates every taint narrow does
// (pkg/util/tolerations isSuperset).
func coversToleration(broad, narrow corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(broad, narrow) {
		return true
	}
	// An empty key with Exists matches every key.
	if narrow.Key != broad.Key && (broad.Key != "" || broad.Operator != corev1.TolerationOpExists) {
		return false
	}
	// An empty effect matches every effect.
	if narrow.Effect != broad.Effect && broad.Effect != "" {
		return false
	}
	// A bounded NoExecute toleration only covers one bounded at least as tightly.
	if broad.Effect == corev1.TaintEffectNoExecute && broad.TolerationSeconds != nil {
		if narrow.TolerationSeconds == nil || *narrow.TolerationSeconds > *broad.TolerationSeconds {
			return false
		}
	}
	switch broad.Operator {
	case corev1.TolerationOpEqual, "":
		return narrow.Operator == corev1.TolerationOpEqual && narrow.Value == broad.Value
	case corev1.TolerationOpExists:
		return true
	default:
		return false
	}
}

// defaultTolerationSeconds is kube-apiserver's default for both
// --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds.
const defaultTolerationSeconds int64 = 300

// DefaultTolerations does what the DefaultTolerationSeconds admission plugin
// (plugin/pkg/admission/defaulttolerationseconds/admission.go) does: unless
// the pod already tolerates node.kubernetes.io/not-ready (resp. unreachable)
// with effect NoExecute — a toleration with that key or an empty key, and
// effect NoExecute or empty, counts — it appends
// {key, operator: Exists, effect: NoExecute, tolerationSeconds: 300},
// not-ready first.
func DefaultTolerations(pod *corev1.Pod) {
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		if t.Effect != corev1.TaintEffectNoExecute && t.Effect != "" {
			continue
		}
		if t.Key == corev1.TaintNodeNotReady || t.Key == "" {
			notReady = true
		}
		if t.Key == corev1.TaintNodeUnreachable || t.Key == "" {
			unreachable = true
		}
	}
	for _, add := range []struct {
		key     string
		present bool
	}{{corev1.TaintNodeNotReady, notReady}, {corev1.TaintNodeUnreachable, unreachable}} {
		if add.present {
			continue
		}
		seconds := defaultTolerationSeconds
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
			Key:               add.key,
			Operator:          corev1.TolerationOpExists,
			Effect:            corev1.TaintEffectNoExecute,
			TolerationSeconds: &seconds,
		})
	}
}

// forbidden builds the Forbidden StatusError the admission chain returns
// (k8s.io/apiserver admission.NewForbidden): at mutating admission the name
// is not generated yet, so a generateName pod is named by its prefix and a
// nameless one "Unknown".
func forbidden(pod *corev1.Pod, msg string) error {
	return apierrors.NewForbidden(podsResource, admissionName(pod), errors.New(msg))
}

func admissionName(pod *corev1.Pod) string {
	switch {
	case pod.Name != "":
		return pod.Name
	case pod.GenerateName != "":
		return pod.GenerateName
	default:
		return "Unknown"
	}
}
