package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// Output formats (kubectl -o).
const (
	OutputTable = ""
	OutputWide  = "wide"
	OutputJSON  = "json"
	OutputYAML  = "yaml"
	OutputName  = "name"
)

// Options say how to print, as kubectl get's flags do.
type Options struct {
	// Output is one of the Output* formats.
	Output string
	// NoHeaders leaves out table headers (--no-headers).
	NoHeaders bool
	// AllNamespaces adds the NAMESPACE column to namespaced kinds (-A).
	AllNamespaces bool
	// ShowKind prefixes names with their kind even for one kind (--show-kind);
	// Print does so anyway when it prints more than one kind.
	ShowKind bool
	// ShowLabels adds a LABELS column (--show-labels).
	ShowLabels bool
	// Labels adds one column per label key (-L key1,key2).
	LabelColumns []string
	// SingleItem prints a lone object itself rather than a List with -o
	// json|yaml, as kubectl does for `get KIND NAME`.
	SingleItem bool
	// Now is the moment AGE and other durations are measured from.
	Now time.Time
	// Printer, when set, prints every format but the tables (kubectl's
	// PrintFlags: json, yaml, name, jsonpath, go-template, custom-columns);
	// Raw says it writes data with its own escaping (json, yaml).
	Printer printers.ResourcePrinter
	Raw     bool
	// SortBy is --sort-by: a JSONPath each kind's objects are sorted by.
	SortBy string
}

// Group is the objects of one kind to print, in order.
type Group struct {
	Kind    Kind
	Objects []any
}

// Print writes groups the way `kubectl get` does and reports whether it
// wrote anything (kubectl writes "No resources found" to stderr otherwise;
// see NoResourcesMessage). Tables get one table per kind with a blank line
// between them and kind/name prefixes when more than one kind has objects;
// json and yaml print one v1 List (or the lone object with SingleItem);
// name prints kind.group/name lines.
func Print(w io.Writer, groups []Group, opts Options) (bool, error) {
	tw := &trackingWriter{w: w}
	if opts.Raw || opts.Printer == nil && (opts.Output == OutputJSON || opts.Output == OutputYAML) {
		tw.w = textsafe.Raw(w) // data, escaped by its own rules
	}
	if opts.SortBy != "" {
		for i := range groups {
			if err := sortGroup(&groups[i], opts.SortBy); err != nil {
				return false, err
			}
		}
	}
	var err error
	switch {
	case opts.Printer != nil && opts.Output != OutputTable && opts.Output != OutputWide:
		err = printWith(tw, groups, opts)
		return tw.n > 0, err
	}
	switch opts.Output {
	case OutputTable, OutputWide:
		err = printTables(tw, groups, opts)
	case OutputJSON, OutputYAML:
		err = printGeneric(tw, groups, opts)
	case OutputName:
		err = printNames(tw, groups)
	default:
		err = &UsageError{Message: fmt.Sprintf("unable to match a printer suitable for the output format %q, allowed formats are: json,name,wide,yaml", opts.Output)}
	}
	return tw.n > 0, err
}

func printTables(w *trackingWriter, groups []Group, opts Options) error {
	kinds := 0
	for _, g := range groups {
		if len(g.Objects) > 0 {
			kinds++
		}
	}
	withKind := opts.ShowKind || kinds > 1
	sep := &separatorWriter{w: w}
	printed := false
	for _, g := range groups {
		if len(g.Objects) == 0 {
			continue
		}
		t, err := Table(g.Kind, g.Objects, opts.Now)
		if err != nil {
			return err
		}
		if printed && !opts.NoHeaders {
			sep.ready = true
		}
		p := printers.NewTablePrinter(printers.PrintOptions{
			NoHeaders:     opts.NoHeaders,
			WithNamespace: opts.AllNamespaces && g.Kind.Namespaced,
			WithKind:      withKind,
			Kind:          g.Kind.GroupKind(),
			Wide:          opts.Output == OutputWide,
			ShowLabels:    opts.ShowLabels,
			ColumnLabels:  opts.LabelColumns,
		})
		if err := p.PrintObj(t, sep); err != nil {
			return err
		}
		printed = true
	}
	return nil
}

// printWith prints the groups' objects as one v1 List (or the lone object)
// with opts.Printer.
func printWith(w io.Writer, groups []Group, opts Options) error {
	obj, err := listOf(groups, opts)
	if err != nil {
		return err
	}
	return opts.Printer.PrintObj(obj, w)
}

func listOf(groups []Group, opts Options) (runtime.Object, error) {
	var items []unstructured.Unstructured
	for _, g := range groups {
		us, err := Objects(g.Kind, g.Objects)
		if err != nil {
			return nil, err
		}
		for _, u := range us {
			items = append(items, *u)
		}
	}
	if opts.SingleItem && len(items) == 1 {
		return &items[0], nil
	}
	return List(items), nil
}

func printGeneric(w io.Writer, groups []Group, opts Options) error {
	var items []unstructured.Unstructured
	for _, g := range groups {
		us, err := Objects(g.Kind, g.Objects)
		if err != nil {
			return err
		}
		for _, u := range us {
			items = append(items, *u)
		}
	}
	var obj runtime.Object
	if opts.SingleItem && len(items) == 1 {
		obj = &items[0]
	} else {
		obj = List(items)
	}
	var p printers.ResourcePrinter = &printers.JSONPrinter{}
	if opts.Output == OutputYAML {
		p = &printers.YAMLPrinter{}
	}
	return p.PrintObj(obj, w)
}

// List is the v1 List kubectl prints for -o json|yaml.
func List(items []unstructured.Unstructured) *unstructured.UnstructuredList {
	return &unstructured.UnstructuredList{
		Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "List",
			"metadata":   map[string]any{"resourceVersion": ""},
		},
		Items: items,
	}
}

func printNames(w io.Writer, groups []Group) error {
	for _, g := range groups {
		for _, o := range g.Objects {
			if _, err := fmt.Fprintln(w, Name(g.Kind, o)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Name is what -o name prints for the object: "pod/x", "ippool.projectcalico.org/x".
func Name(k Kind, o any) string {
	name := "<unknown>"
	if m := metaOf(o); m != nil && m.GetName() != "" {
		name = m.GetName()
	}
	return k.NamePrefix() + "/" + name
}

// Objects returns output copies of objs as the API server serves them:
// JSON-shaped, with apiVersion and kind set and managedFields left out (as
// kubectl shows them). The Cluster's objects are not touched. The copies
// are what -o json|yaml print and what a jsonpath template reads.
func Objects(k Kind, objs []any) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if r, ok := o.(*Row); ok {
			u := r.DeepCopy()
			u.SetAPIVersion(k.APIVersion())
			u.SetKind(k.Kind)
			out = append(out, u)
			continue
		}
		data, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", Name(k, o), err)
		}
		m := map[string]any{}
		if err := utiljson.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", Name(k, o), err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion(k.APIVersion())
		u.SetKind(k.Kind)
		unstructured.RemoveNestedField(m, "metadata", "managedFields")
		out = append(out, u)
	}
	return out, nil
}

// Request is one `kubectl get` invocation.
type Request struct {
	// Args are get's arguments: "pods,svc" [NAME...], or TYPE/NAME ones.
	Args []string
	// Namespace is -n (empty: DefaultNamespace).
	Namespace string
	// LabelSelector is -l, FieldSelector is --field-selector.
	LabelSelector string
	FieldSelector string
	// Extra are kinds the caller supplies (Kind.WithSource) besides Kinds().
	Extra []Kind
	Options
}

// Get runs a `kubectl get` against the Cluster: it writes what kubectl
// writes to stdout to out, and returns what kubectl writes to stderr. notice
// is a line that does not fail the command ("No resources found in demo
// namespace."); err's text is the error lines kubectl prints (one per line;
// each error type's text is kubectl's, e.g. `Error from server (NotFound):
// pods "x" not found`) and means kubectl would exit 1. Objects found are
// printed even when others were not.
func Get(out io.Writer, c *model.Cluster, req Request) (notice string, err error) {
	type target struct {
		kind  Kind
		names []string
	}
	var targets []target
	switch {
	case len(req.Args) == 0:
		return "", &UsageError{Message: `You must specify the type of resource to get. Use "kubectl api-resources" for a complete list of supported resources.`}
	case strings.Contains(req.Args[0], "/"):
		for _, a := range req.Args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok {
				return "", &UsageError{Message: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'"}
			}
			if name == "" {
				return "", &UsageError{Message: "arguments in resource/name form must have a single resource and name"}
			}
			k, err := ResolveKind(typ, req.Extra...)
			if err != nil {
				return "", err
			}
			if n := len(targets); n > 0 && targets[n-1].kind.GroupKind() == k.GroupKind() {
				targets[n-1].names = append(targets[n-1].names, name)
			} else {
				targets = append(targets, target{kind: k, names: []string{name}})
			}
		}
	default:
		kinds, err := ResolveKinds(req.Args[0], req.Extra...)
		if err != nil {
			return "", err
		}
		for _, k := range kinds {
			targets = append(targets, target{kind: k, names: req.Args[1:]})
		}
	}

	named := 0
	for _, t := range targets {
		named += len(t.names)
	}
	var label labels.Selector
	var field fields.Selector
	if req.LabelSelector != "" {
		if named > 0 {
			return "", &UsageError{Message: "name cannot be provided when a selector is specified"}
		}
		label, err = labels.Parse(req.LabelSelector)
		if err != nil {
			return "", &UsageError{Message: err.Error()}
		}
	}
	if req.FieldSelector != "" {
		if named > 0 {
			return "", &UsageError{Message: "name cannot be provided when a selector is specified"}
		}
		field, err = fields.ParseSelector(req.FieldSelector)
		if err != nil {
			return "", &UsageError{Message: err.Error()}
		}
	}
	if named > 0 && req.AllNamespaces {
		for _, t := range targets {
			if t.kind.Namespaced {
				return "", &UsageError{Message: "a resource cannot be retrieved by name across all namespaces"}
			}
		}
	}

	var groups []Group
	var errs []error
	var kinds []Kind
	for _, t := range targets {
		kinds = append(kinds, t.kind)
		if err := CheckFieldSelector(t.kind, req.LabelSelector, req.FieldSelector); err != nil {
			errs = append(errs, err)
			continue
		}
		g := Group{Kind: t.kind}
		if len(t.names) == 0 {
			objs, err := selectKind(c, t.kind, "", req.Namespace, req.AllNamespaces, label, field)
			if err != nil {
				errs = append(errs, err)
			}
			g.Objects = objs
		}
		for _, n := range t.names {
			objs, err := selectKind(c, t.kind, n, req.Namespace, req.AllNamespaces, nil, nil)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			g.Objects = append(g.Objects, objs...)
		}
		groups = append(groups, g)
	}

	opts := req.Options
	opts.SingleItem = len(targets) == 1 && named == 1
	if opts.SingleItem && len(errs) > 0 {
		// kubectl prints nothing but the error for a lone named object.
		return "", errors.Join(errs...)
	}
	wrote, perr := Print(out, groups, opts)
	if perr != nil {
		errs = append(errs, perr)
	}
	if !wrote && len(errs) == 0 {
		notice = NoResourcesMessage(kinds, req.Namespace, req.AllNamespaces)
	}
	return notice, errors.Join(errs...)
}

// trackingWriter counts what was written.
type trackingWriter struct {
	w io.Writer
	n int
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.n += n
	return n, err
}

// separatorWriter writes a blank line before the next write once ready, the
// way kubectl separates one kind's table from the next.
type separatorWriter struct {
	w     io.Writer
	ready bool
}

func (s *separatorWriter) Write(p []byte) (int, error) {
	if s.ready && len(p) > 0 {
		if _, err := s.w.Write([]byte("\n")); err != nil {
			return 0, err
		}
		s.ready = false
	}
	return s.w.Write(p)
}
