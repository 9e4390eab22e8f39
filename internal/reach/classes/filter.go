package classes

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
)

// Filter selects sources (--from) or destinations (--to).
//
//	ns/NAME                      everything in namespace NAME
//	pod/NAME, pod/NS/NAME        the class of that pod
//	deploy/…, ds/…, sts/…        the classes of a workload's pods
//	svc/NAME, svc/NS/NAME        as a destination, the Service's ports; as a
//	                             source, the classes of the pods it selects
//	node/NAME                    as a source, the node itself (a node row)
//	anything else                a label selector (kubectl syntax) on pod
//	                             labels; a Service matches when its labels
//	                             or its selector do
//
// A filter that names a namespace (ns/, KIND/NS/NAME) reaches beyond -n; a
// KIND/NAME filter takes -n's namespace; a label selector applies within
// -n (or every namespace with -A).
type Filter struct {
	Text string
	Kind string // ns, pod, workload, svc, node, labels
	NS   string
	Name string
	Sel  labels.Selector
}

// FilterKind is the kind of filter a KIND word names, by the registry's
// resource names (plural, singular, short: "ns", "deploy", "svc", "no").
func FilterKind(word string) (string, bool) {
	k, ok := registry.ForResource(word)
	if !ok {
		return "", false
	}
	switch k.GroupKind() {
	case schema.GroupKind{Kind: "Namespace"}:
		return "ns", true
	case schema.GroupKind{Kind: "Pod"}:
		return "pod", true
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		return "workload", true
	case schema.GroupKind{Kind: "Service"}:
		return "svc", true
	case schema.GroupKind{Kind: "Node"}:
		return "node", true
	}
	return "", false
}

// ParseFilter reads one --from or --to value; ns is -n's namespace.
func ParseFilter(s, ns string) (Filter, error) {
	f := Filter{Text: s}
	if k, rest, ok := strings.Cut(s, "/"); ok && !strings.ContainsAny(s, "=!() ,") {
		if kind, known := FilterKind(k); known {
			f.Kind = kind
			parts := strings.Split(rest, "/")
			switch {
			case kind == "ns" || kind == "node":
				if len(parts) != 1 || parts[0] == "" {
					return f, fmt.Errorf("%q: use %s/NAME", s, k)
				}
				f.Name = parts[0]
				f.NS = parts[0]
			case len(parts) == 1 && parts[0] != "":
				f.NS, f.Name = ns, parts[0]
			case len(parts) == 2 && parts[0] != "" && parts[1] != "":
				f.NS, f.Name = parts[0], parts[1]
			default:
				return f, fmt.Errorf("%q: use %s/NAME or %s/NAMESPACE/NAME", s, k, k)
			}
			if kind == "node" {
				f.NS = ""
			}
			return f, nil
		}
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return f, fmt.Errorf("%q is neither KIND/NAME nor a label selector: %v", s, err)
	}
	f.Kind, f.Sel = "labels", sel
	return f, nil
}

// Explicit reports whether the filter places itself in a namespace.
func (f Filter) Explicit() bool { return f.Kind != "labels" }

func (f Filter) MatchClass(c *Class, svcs []*corev1.Service) bool {
	switch f.Kind {
	case "ns":
		return c.NS == f.NS
	case "pod":
		if c.NS != f.NS {
			return false
		}
		for _, m := range c.Members {
			if m.Pod.Name == f.Name {
				return true
			}
		}
	case "workload":
		return c.NS == f.NS && Contains(c.Workloads, f.Name)
	case "svc":
		for _, s := range svcs {
			if s.Namespace == f.NS && s.Name == f.Name && len(s.Spec.Selector) > 0 && c.NS == s.Namespace &&
				labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(c.Labels)) {
				return true
			}
		}
	case "labels":
		return f.Sel.Matches(labels.Set(c.Labels))
	}
	return false
}

func (f Filter) MatchService(s *corev1.Service) bool {
	switch f.Kind {
	case "ns":
		return s.Namespace == f.NS
	case "svc":
		return s.Namespace == f.NS && s.Name == f.Name
	case "labels":
		return f.Sel.Matches(labels.Set(s.Labels)) || len(s.Spec.Selector) > 0 && f.Sel.Matches(labels.Set(s.Spec.Selector))
	}
	return false
}

func (f Filter) MatchNode(name string) bool { return f.Kind == "node" && f.Name == name }

// IsNode reports whether the filter is node/NAME.
func (f Filter) IsNode() bool { return f.Kind == "node" }
