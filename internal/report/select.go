package report

import (
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// DefaultNamespace is the namespace used when none is given, as with a
// kubeconfig context that names none.
const DefaultNamespace = "default"

// NotFoundError is a named object that is not in the cluster. Its text is
// the line kubectl writes to stderr.
type NotFoundError struct {
	Kind Kind
	Name string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("Error from server (NotFound): %s %q not found", e.Kind.QualifiedResource(), e.Name)
}

// UsageError is a request kubectl refuses before asking the server; its text
// is the line kubectl writes to stderr.
type UsageError struct{ Message string }

func (e *UsageError) Error() string { return "error: " + e.Message }

// BadSelectorError is a field selector the API server refuses; its text is
// the line kubectl writes to stderr.
type BadSelectorError struct {
	Kind     Kind
	Label    string
	Field    string
	Problem  string
	Resource string
}

func (e *BadSelectorError) Error() string {
	return fmt.Sprintf("Error from server (BadRequest): Unable to find %q that match label selector %q, field selector %q: %s",
		e.Resource, e.Label, e.Field, e.Problem)
}

// Select picks objects of one kind out of the Cluster, the way
// `kubectl get KIND [NAME] [-n NAMESPACE | -A]` does. kind is any word
// ResolveKind accepts. An empty namespace means DefaultNamespace; namespace
// and allNamespaces are ignored for cluster-scoped kinds.
//
// The result holds the Cluster's own typed pointers (*corev1.Pod,
// *calico.IPPool, …) sorted by namespace and name; treat them as read-only
// (Objects makes output copies). A named object that does not exist is a
// *NotFoundError; an empty list is an empty result and no error (see
// NoResourcesMessage for what kubectl then writes to stderr).
func Select(c *model.Cluster, kind, name, namespace string, allNamespaces bool) ([]any, error) {
	k, err := ResolveKind(kind)
	if err != nil {
		return nil, err
	}
	return selectKind(c, k, name, namespace, allNamespaces, nil, nil)
}

// SelectKind is Select for an already resolved kind, with optional label and
// field selectors (nil selects everything).
func SelectKind(c *model.Cluster, k Kind, name, namespace string, allNamespaces bool, label labels.Selector, field fields.Selector) ([]any, error) {
	return selectKind(c, k, name, namespace, allNamespaces, label, field)
}

func selectKind(c *model.Cluster, k Kind, name, namespace string, allNamespaces bool, label labels.Selector, field fields.Selector) ([]any, error) {
	if name != "" && allNamespaces && k.Namespaced {
		return nil, &UsageError{Message: "a resource cannot be retrieved by name across all namespaces"}
	}
	if namespace == "" {
		namespace = DefaultNamespace
	}
	all := objectsOf(c, k)
	if k.source != nil {
		var err error
		if all, err = k.source(); err != nil {
			return nil, err
		}
	}
	var out []any
	for _, o := range all {
		m := metaOf(o)
		if m == nil {
			continue
		}
		if k.Namespaced && !allNamespaces && m.GetNamespace() != namespace {
			continue
		}
		if name != "" && m.GetName() != name {
			continue
		}
		if label != nil && !label.Matches(labels.Set(m.GetLabels())) {
			continue
		}
		if field != nil {
			set := fieldSet(k, o)
			if !field.Matches(set) {
				continue
			}
		}
		out = append(out, o)
	}
	if k.source == nil {
		sortObjects(out) // a supplied kind keeps its source's order
	}
	if name != "" && len(out) == 0 {
		return nil, &NotFoundError{Kind: k, Name: name}
	}
	return out, nil
}

// CheckFieldSelector reports the error kubectl gets for a field selector
// (--field-selector text) naming a field the kind does not support, or nil.
// labelSel is the -l text, which kubectl repeats in the message.
func CheckFieldSelector(k Kind, labelSel, fieldSel string) error {
	if fieldSel == "" {
		return nil
	}
	sel, err := fields.ParseSelector(fieldSel)
	if err != nil {
		return &UsageError{Message: err.Error()}
	}
	supported := map[string]bool{}
	for _, f := range supportedFields(k) {
		supported[f] = true
	}
	for _, r := range sel.Requirements() {
		if supported[r.Field] {
			continue
		}
		// Kinds with their own field label conversion (pkg/apis/*/v1
		// conversion.go) word it one way, the rest use apimachinery's default.
		problem := fmt.Sprintf("%q is not a known field selector: only %q, %q", r.Field, "metadata.name", "metadata.namespace")
		switch k.GroupKind() {
		case KindPod.GroupKind(), KindNode.GroupKind(), KindNamespace.GroupKind(), KindService.GroupKind(),
			KindReplicaSet.GroupKind(), KindCertificateSigningRequest.GroupKind():
			problem = "field label not supported: " + r.Field
		}
		return &BadSelectorError{
			Kind:     k,
			Resource: k.GroupVersionKind().GroupVersion().WithResource(k.Resource).String(),
			Label:    labelSel,
			Field:    fieldSel,
			Problem:  problem,
		}
	}
	return nil
}

// NoResourcesMessage is what kubectl writes to stderr when a get printed
// nothing: "No resources found in demo namespace." when every kind asked for
// is namespaced and -A was not given, "No resources found" otherwise.
func NoResourcesMessage(kinds []Kind, namespace string, allNamespaces bool) string {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	namespaced := !allNamespaces
	for _, k := range kinds {
		namespaced = namespaced && k.Namespaced
	}
	if namespaced {
		return fmt.Sprintf("No resources found in %s namespace.", namespace)
	}
	return "No resources found"
}

func objectsOf(c *model.Cluster, k Kind) []any {
	var out []any
	switch k.GroupKind() {
	case KindNode.GroupKind():
		out = appendAll(out, c.Nodes)
	case KindNamespace.GroupKind():
		out = appendAll(out, c.Namespaces)
	case KindPod.GroupKind():
		out = appendAll(out, c.Pods)
	case KindService.GroupKind():
		out = appendAll(out, c.Services)
	case KindConfigMap.GroupKind():
		out = appendAll(out, c.ConfigMaps)
	case KindServiceAccount.GroupKind():
		out = appendAll(out, c.ServiceAccounts)
	case KindEndpointSlice.GroupKind():
		out = appendAll(out, c.EndpointSlices)
	case KindDaemonSet.GroupKind():
		out = appendAll(out, c.DaemonSets)
	case KindDeployment.GroupKind():
		out = appendAll(out, c.Deployments)
	case KindReplicaSet.GroupKind():
		out = appendAll(out, c.ReplicaSets)
	case KindStatefulSet.GroupKind():
		out = appendAll(out, c.StatefulSets)
	case KindNetworkPolicy.GroupKind():
		out = appendAll(out, c.NetworkPolicies)
	case KindRuntimeClass.GroupKind():
		out = appendAll(out, c.RuntimeClasses)
	case KindCertificateSigningRequest.GroupKind():
		out = appendAll(out, c.CSRs)
	case KindIPPool.GroupKind():
		out = appendAll(out, c.IPPools)
	case KindIPAMBlock.GroupKind():
		out = appendAll(out, c.IPAMBlocks)
	case KindBlockAffinity.GroupKind():
		out = appendAll(out, c.BlockAffinities)
	case KindIPAMConfiguration.GroupKind():
		if c.IPAMConfig != nil {
			out = append(out, c.IPAMConfig)
		}
	case KindFelixConfiguration.GroupKind():
		out = appendAll(out, c.FelixConfigs)
	case KindTigeraStatus.GroupKind():
		out = appendAll(out, c.TigeraStatuses)
	case KindInstallation.GroupKind():
		if c.Installation != nil {
			out = append(out, c.Installation)
		}
	}
	return out
}

// appendAll appends the non-nil pointers of xs.
func appendAll[T any](out []any, xs []*T) []any {
	for _, x := range xs {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

// metaOf returns the object's metadata accessor; every kind the twin prints
// embeds metav1.ObjectMeta.
func metaOf(o any) metav1.Object {
	if m, ok := o.(metav1.Object); ok {
		return m
	}
	return nil
}

func sortObjects(objs []any) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := metaOf(objs[i]), metaOf(objs[j])
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

// supportedFields are the field selector labels the API server accepts for
// the kind (pkg/registry/*/strategy.go and the CRD defaults).
func supportedFields(k Kind) []string {
	base := []string{"metadata.name"}
	if k.Namespaced {
		base = append(base, "metadata.namespace")
	}
	switch k.GroupKind() {
	case KindPod.GroupKind():
		return append(base, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
			"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
			"status.podIPs", "status.nominatedNodeName")
	case KindNode.GroupKind():
		return append(base, "spec.unschedulable")
	case KindNamespace.GroupKind():
		return append(base, "status.phase")
	case KindService.GroupKind():
		return append(base, "spec.clusterIP", "spec.type")
	case KindReplicaSet.GroupKind():
		return append(base, "status.replicas")
	case KindCertificateSigningRequest.GroupKind():
		return append(base, "spec.signerName")
	}
	return base
}

// fieldSet is the object's values for its supported field labels.
func fieldSet(k Kind, o any) fields.Set {
	m := metaOf(o)
	set := fields.Set{"metadata.name": m.GetName()}
	if k.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	switch t := o.(type) {
	case *corev1.Pod:
		set["spec.nodeName"] = t.Spec.NodeName
		set["spec.restartPolicy"] = string(t.Spec.RestartPolicy)
		set["spec.schedulerName"] = t.Spec.SchedulerName
		set["spec.serviceAccountName"] = t.Spec.ServiceAccountName
		set["spec.hostNetwork"] = strconv.FormatBool(t.Spec.HostNetwork)
		set["status.phase"] = string(t.Status.Phase)
		set["status.podIP"] = podIP(t)
		set["status.nominatedNodeName"] = t.Status.NominatedNodeName
		var ips string
		for i, ip := range t.Status.PodIPs {
			if i > 0 {
				ips += ","
			}
			ips += ip.IP
		}
		set["status.podIPs"] = ips
	case *corev1.Node:
		set["spec.unschedulable"] = strconv.FormatBool(t.Spec.Unschedulable)
	case *corev1.Namespace:
		set["status.phase"] = namespacePhase(t)
	case *corev1.Service:
		set["spec.clusterIP"] = t.Spec.ClusterIP
		set["spec.type"] = string(serviceType(t))
	case *appsv1.ReplicaSet:
		set["status.replicas"] = strconv.Itoa(int(t.Status.Replicas))
	case *certv1.CertificateSigningRequest:
		set["spec.signerName"] = t.Spec.SignerName
	}
	return set
}

// MatchesFields says whether the object matches a field selector on the
// kind's supported fields.
func MatchesFields(k Kind, o any, sel fields.Selector) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	if metaOf(o) == nil {
		return false
	}
	return sel.Matches(fieldSet(k, o))
}

// MatchesLabels says whether the object's labels match the selector.
func MatchesLabels(o any, sel labels.Selector) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	m := metaOf(o)
	return m != nil && sel.Matches(labels.Set(m.GetLabels()))
}
