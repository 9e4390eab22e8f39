// Package validate finds what the API server would refuse in an object
// before it reaches admission: names, labels and annotations for every kind,
// and the spec rules of the kinds the twin models (Services, NetworkPolicies,
// workload selectors, Calico pools and selectors). Errors are a
// field.ErrorList, worded as the API server words them
// ("spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535,
// inclusive").
//
// The rules of k8s.io/kubernetes pkg/apis/*/validation are not a dependency
// of the twin; the few modeled here are written after them, each citing its
// upstream function. Name, label, annotation and selector rules come from
// k8s.io/apimachinery itself.
//
// Not here: a pod's spec (package admission checks it, and a refused pod is
// reported without stopping the build, as kubectl apply reports it), and
// the fields of the kinds the twin reads but does not check (EndpointSlice,
// ConfigMap data, RuntimeClass, CertificateSigningRequest beyond names).
package validate

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// Object returns what the API server's validation on create finds wrong in
// typed, a pointer to an object of kind k from the registry. Kinds that are not API objects (kubeadm, kubelet and
// kube-proxy configuration, the twin's Cluster) have no checks here.
func Object(typed any, k meta.Kind) field.ErrorList {
	nameFn := nameRule(typed, k.Group)
	if nameFn == nil {
		return nil
	}
	acc, err := apimeta.Accessor(typed)
	if err != nil {
		return nil
	}
	if _, ok := typed.(*corev1.Pod); ok {
		// The API server lists a pod's metadata errors with its spec
		// errors in one refusal of that pod (ValidatePod), which package
		// admission gives through PodMeta; the load goes on.
		return nil
	}
	errs := objectMeta(acc, k.Namespaced, nameFn)
	spec := field.NewPath("spec")
	switch t := typed.(type) {
	case *corev1.Service:
		errs = append(errs, serviceSpec(&t.Spec, spec)...)
	case *networkingv1.NetworkPolicy:
		errs = append(errs, networkPolicySpec(&t.Spec, spec)...)
	case *appsv1.Deployment:
		errs = append(errs, workloadSelector("deployment", t.Spec.Selector, t.Spec.Template.Labels, spec)...)
	case *appsv1.ReplicaSet:
		errs = append(errs, workloadSelector("deployment", t.Spec.Selector, t.Spec.Template.Labels, spec)...)
	case *appsv1.DaemonSet:
		errs = append(errs, workloadSelector("daemonset", t.Spec.Selector, t.Spec.Template.Labels, spec)...)
	case *appsv1.StatefulSet:
		errs = append(errs, workloadSelector("statefulset", t.Spec.Selector, t.Spec.Template.Labels, spec)...)
	case *calico.IPPool:
		errs = append(errs, ipPoolSpec(&t.Spec, spec)...)
	case *calico.NetworkPolicy:
		errs = append(errs, calicoPolicySpec(&t.Spec, spec)...)
	case *calico.GlobalNetworkPolicy:
		errs = append(errs, calicoPolicySpec(&t.Spec, spec)...)
	}
	return sortRuns(errs)
}

// PodMeta is the metadata part of ValidatePod (k8s.io/kubernetes
// pkg/apis/core/validation/validation.go: ValidateObjectMeta with
// ValidatePodName), which the API server reports with the spec's errors.
func PodMeta(pod *corev1.Pod) field.ErrorList {
	return sortRuns(objectMeta(pod, true, apivalidation.NameIsDNSSubdomain))
}

// nameRule is the name rule of typed's kind, nil for kinds that are not API
// objects. Upstream: pkg/apis/core/validation/validation.go (ValidatePodName,
// ValidateServiceName = DNS-1035 label, ValidateNamespaceName = DNS-1123
// label, ValidateNodeName …), pkg/apis/apps/validation,
// pkg/apis/networking/validation (ValidateNetworkPolicyName); custom
// resources (Calico, the Tigera operator) are DNS-1123 subdomains
// (apiextensions-apiserver pkg/registry/customresource/validator.go).
func nameRule(typed any, group string) apivalidation.ValidateNameFunc {
	if group == calico.Group || group == operator.Group {
		return apivalidation.NameIsDNSSubdomain
	}
	switch typed.(type) {
	case *corev1.Service:
		return apivalidation.NameIsDNS1035Label
	case *corev1.Namespace:
		return apivalidation.ValidateNamespaceName
	case *corev1.Pod, *corev1.Node, *corev1.ConfigMap, *corev1.ServiceAccount,
		*appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.DaemonSet, *appsv1.StatefulSet,
		*schedulingv1.PriorityClass,
		*discoveryv1.EndpointSlice, *networkingv1.NetworkPolicy, *nodev1.RuntimeClass,
		*certv1.CertificateSigningRequest:
		return apivalidation.NameIsDNSSubdomain
	}
	return nil
}

// objectMeta is apimachinery's ValidateObjectMetaAccessor with two
// departures the twin's input needs: a cluster-scoped object's namespace is
// dropped rather than refused (the API server clears it before validating,
// apiserver pkg/registry/rest/create.go BeforeCreate), and owner references
// are not checked (objects written for the twin name their owner without a
// uid, which only the real controller knows).
func objectMeta(acc metav1.Object, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	if !namespaced {
		acc = clusterScoped{acc}
	}
	var out field.ErrorList
	for _, e := range apivalidation.ValidateObjectMetaAccessor(acc, namespaced, nameFn, field.NewPath("metadata")) {
		if strings.HasPrefix(e.Field, "metadata.ownerReferences") || strings.HasPrefix(e.Field, "metadata.managedFields") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// clusterScoped is an object whose namespace the API server has cleared.
type clusterScoped struct{ metav1.Object }

func (clusterScoped) GetNamespace() string { return "" }

// sortRuns orders the errors about one map (labels, annotations,
// matchLabels), which upstream finds in map order, by their text; the
// other errors keep upstream's order.
func sortRuns(errs field.ErrorList) field.ErrorList {
	for i := 0; i < len(errs); {
		j := i + 1
		for j < len(errs) && errs[j].Field == errs[i].Field {
			j++
		}
		f := errs[i].Field
		if strings.HasSuffix(f, "labels") || strings.HasSuffix(f, "annotations") || strings.HasSuffix(f, "matchLabels") {
			run := errs[i:j]
			sort.SliceStable(run, func(a, b int) bool { return run[a].Error() < run[b].Error() })
		}
		i = j
	}
	return errs
}
