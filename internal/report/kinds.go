package report

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
)

// Kind is one resource type the twin can print, with the names kubectl
// resolves to it.
type Kind struct {
	Group      string
	Version    string
	Kind       string
	Resource   string // plural, as in URLs and kubectl get
	Singular   string
	ShortNames []string
	Namespaced bool

	// source, when set, makes this a kind the caller supplies (the compiled
	// dataplanes' objects): its objects come from source in the order
	// given, as *Row, and its table has columns.
	source  func() ([]any, error)
	columns []metav1.TableColumnDefinition
}

// WithSource returns k as a kind whose objects (*Row values) source lists
// and whose table has columns; Get resolves it among Request.Extra.
func (k Kind) WithSource(columns []metav1.TableColumnDefinition, source func() ([]any, error)) Kind {
	k.columns, k.source = columns, source
	return k
}

// Row is one object of a caller-supplied kind: the object -o json|yaml,
// jsonpath and the selectors read, and its table cells.
type Row struct {
	*unstructured.Unstructured
	Cells []any
}

// GroupKind is the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// GroupVersionKind is the kind's group, version and kind.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// GroupResource is the kind's group and plural resource.
func (k Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// APIVersion is the apiVersion written on output copies ("v1", "apps/v1").
func (k Kind) APIVersion() string { return k.GroupVersionKind().GroupVersion().String() }

// QualifiedResource is the resource as kubectl names it in server errors:
// "pods", "deployments.apps", "ippools.projectcalico.org".
func (k Kind) QualifiedResource() string { return k.GroupResource().String() }

// NamePrefix is what -o name and multi-kind tables put before the name:
// "pod", "deployment.apps", "ippool.projectcalico.org".
func (k Kind) NamePrefix() string { return strings.ToLower(k.GroupKind().String()) }

// Kinds the twin prints, in the order they are listed in errors and help:
// the registry's kinds (names, short names, scope, version) that this
// package has printers for (table.go).
var (
	KindNode                      = registered("", "Node")
	KindNamespace                 = registered("", "Namespace")
	KindPod                       = registered("", "Pod")
	KindService                   = registered("", "Service")
	KindConfigMap                 = registered("", "ConfigMap")
	KindServiceAccount            = registered("", "ServiceAccount")
	KindEndpointSlice             = registered("discovery.k8s.io", "EndpointSlice")
	KindDaemonSet                 = registered("apps", "DaemonSet")
	KindDeployment                = registered("apps", "Deployment")
	KindReplicaSet                = registered("apps", "ReplicaSet")
	KindStatefulSet               = registered("apps", "StatefulSet")
	KindNetworkPolicy             = registered("networking.k8s.io", "NetworkPolicy")
	KindRuntimeClass              = registered("node.k8s.io", "RuntimeClass")
	KindCertificateSigningRequest = registered("certificates.k8s.io", "CertificateSigningRequest")
	KindIPPool                    = registered(calico.Group, "IPPool")
	KindIPAMBlock                 = registered(calico.Group, "IPAMBlock")
	KindBlockAffinity             = registered(calico.Group, "BlockAffinity")
	KindIPAMConfiguration         = registered(calico.Group, "IPAMConfiguration")
	KindFelixConfiguration        = registered(calico.Group, "FelixConfiguration")
	KindTigeraStatus              = registered(operator.Group, "TigeraStatus")
	KindInstallation              = registered(operator.Group, "Installation")
)

// registered is the printed kind for a registered group and kind. A kind
// the registry lacks has no resource names, which TestEveryPrintedKindIsRegistered
// catches.
func registered(group, kind string) Kind {
	k, _ := registry.ForGroupKind(schema.GroupKind{Group: group, Kind: kind})
	return Kind{Group: group, Version: k.Version(), Kind: kind, Resource: k.Resource, Singular: k.Singular(),
		ShortNames: k.ShortNames, Namespaced: k.Namespaced}
}

// Kinds returns every kind the twin prints.
func Kinds() []Kind {
	return []Kind{
		KindNode, KindNamespace, KindPod, KindService, KindConfigMap, KindServiceAccount,
		KindEndpointSlice, KindDaemonSet, KindDeployment, KindReplicaSet, KindStatefulSet,
		KindNetworkPolicy, KindRuntimeClass, KindCertificateSigningRequest,
		KindIPPool, KindIPAMBlock, KindBlockAffinity, KindIPAMConfiguration, KindFelixConfiguration,
		KindTigeraStatus, KindInstallation,
	}
}

// UnknownResourceError is a resource word no kind answers to. Its text is
// the line kubectl writes to stderr; Known lists the words that would work.
type UnknownResourceError struct {
	Word  string
	Known []string
}

func (e *UnknownResourceError) Error() string {
	return fmt.Sprintf("error: the server doesn't have a resource type %q", e.Word)
}

// Hint lists the resource types the twin knows, for a line after Error.
func (e *UnknownResourceError) Hint() string {
	return "known resource types: " + strings.Join(e.Known, ", ")
}

// KnownResources lists each kind's plural with its short names, the way
// the UnknownResourceError hint shows them: "pods (po)".
func KnownResources(extra ...Kind) []string {
	var out []string
	for _, k := range append(Kinds(), extra...) {
		s := k.Resource
		if len(k.ShortNames) > 0 {
			s += " (" + strings.Join(k.ShortNames, ", ") + ")"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ResolveKind maps one word as kubectl accepts it to a kind: the plural,
// the singular, a short name, or any of those followed by ".group" or
// ".version.group" ("deployments.apps", "ippools.v3.projectcalico.org").
// Words are matched without regard to case.
func ResolveKind(word string, extra ...Kind) (Kind, error) {
	w := strings.ToLower(strings.TrimSpace(word))
	if w != "" {
		for _, k := range append(Kinds(), extra...) {
			if kindAnswersTo(k, w) {
				return k, nil
			}
		}
	}
	return Kind{}, &UnknownResourceError{Word: word, Known: KnownResources(extra...)}
}

// AllKinds are what the "all" category of kubectl get expands to among the
// kinds the twin prints (the API server's "all" category: pods, services,
// daemonsets, deployments, replicasets, statefulsets, jobs, cronjobs,
// horizontalpodautoscalers, replicationcontrollers).
func AllKinds() []Kind {
	return []Kind{KindPod, KindService, KindDaemonSet, KindDeployment, KindReplicaSet, KindStatefulSet}
}

// ResolveKinds resolves a comma list such as "pods,svc". Repeated kinds are
// kept once, in first-mention order, as kubectl does.
func ResolveKinds(words string, extra ...Kind) ([]Kind, error) {
	var out []Kind
	seen := map[schema.GroupKind]bool{}
	add := func(k Kind) {
		if !seen[k.GroupKind()] {
			seen[k.GroupKind()] = true
			out = append(out, k)
		}
	}
	for _, w := range strings.Split(words, ",") {
		if strings.EqualFold(strings.TrimSpace(w), "all") {
			for _, k := range AllKinds() {
				add(k)
			}
			continue
		}
		k, err := ResolveKind(w, extra...)
		if err != nil {
			return nil, err
		}
		add(k)
	}
	return out, nil
}

func kindAnswersTo(k Kind, w string) bool {
	names := append([]string{k.Resource, k.Singular}, k.ShortNames...)
	for _, n := range names {
		if w == n {
			return true
		}
		if k.Group != "" && w == n+"."+k.Group || w == n+"."+k.Version+"."+k.Group {
			return true
		}
	}
	return false
}
