package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/declared"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
)

// candidate is one object's generic value with what is needed to build it.
type candidate struct {
	raw  map[string]any
	line int // where the object starts
	loc  interface{ Line(rawdoc.FieldPath) int }
	// jsonText is the object's own JSON when the input was JSON; YAML is
	// encoded to JSON for decoding.
	jsonText []byte
	// prob is a problem found while converting YAML; raw is then incomplete
	// and ident names the object.
	prob  *rawdoc.Problem
	ident struct{ apiVersion, kind, namespace, name string }
	// The list the object is an item of: typed lists (PodList) give items
	// without apiVersion and kind theirs.
	listAPIVersion, listKind string
}

func (c *candidate) lineOf(p rawdoc.FieldPath) int {
	if c.loc != nil && len(p) > 0 {
		if l := c.loc.Line(p); l > 0 {
			return l
		}
	}
	return c.line
}

// lineNear is the line of p, or of the nearest field above it that the
// document has (metadata for a missing metadata.name).
func (c *candidate) lineNear(p rawdoc.FieldPath) int {
	if c.loc != nil {
		for n := len(p); n > 0; n-- {
			if l := c.loc.Line(p[:n]); l > 0 {
				return l
			}
		}
	}
	return c.line
}

// fieldProblem turns a problem into the error for the object.
func (d *decoder) fieldProblem(c *candidate, label string, p *rawdoc.Problem) *Error {
	line := p.Line
	if line <= 0 {
		line = c.lineOf(p.Path)
	}
	msg := p.Msg
	if len(p.Path) > 0 {
		msg = p.Path.String() + ": " + msg
	}
	return d.errorAt(line, label, "%s", msg)
}

func (d *decoder) build(c candidate) (*model.Object, error) {
	if c.prob != nil || c.raw == nil {
		id := c.ident
		label := ""
		if id.kind != "" {
			label = objectLabel(id.kind, defaultNamespace(id.apiVersion, id.kind, id.namespace), id.name)
		}
		if c.prob == nil {
			return nil, d.errorAt(c.line, label, "expected an object")
		}
		return nil, d.fieldProblem(&c, label, c.prob)
	}
	m := c.raw

	// apiVersion and kind, inherited from a typed list when missing.
	listItemKind := strings.TrimSuffix(c.listKind, "List")
	if isMissing(m["apiVersion"]) && listItemKind != "" && c.listAPIVersion != "" {
		m["apiVersion"] = c.listAPIVersion
	}
	if isMissing(m["kind"]) && listItemKind != "" {
		m["kind"] = listItemKind
	}
	apiVersion, err := d.stringField(&c, m, "", rawdoc.KeyElem("apiVersion"))
	if err != nil {
		return nil, err
	}
	kind, err := d.stringField(&c, m, "", rawdoc.KeyElem("kind"))
	if err != nil {
		return nil, err
	}
	var md map[string]any
	if v, ok := m["metadata"]; ok && v != nil {
		if md, ok = v.(map[string]any); !ok {
			return nil, d.errorAt(c.lineOf(rawdoc.FieldPath{rawdoc.KeyElem("metadata")}), objectLabel(kind, "", ""), "metadata: expected an object, got %s", rawdoc.Describe(v))
		}
	}
	name, err := d.stringField(&c, md, objectLabel(kind, "", ""), rawdoc.KeyElem("metadata"), rawdoc.KeyElem("name"))
	if err != nil {
		return nil, err
	}
	namespace, err := d.stringField(&c, md, objectLabel(kind, "", name), rawdoc.KeyElem("metadata"), rawdoc.KeyElem("namespace"))
	if err != nil {
		return nil, err
	}
	switch {
	case apiVersion == "" && kind == "":
		return nil, d.errorAt(c.line, "", "apiVersion and kind are missing")
	case kind == "":
		return nil, d.errorAt(c.line, "", "kind is missing")
	case apiVersion == "":
		return nil, d.errorAt(c.line, objectLabel(kind, namespace, name), "apiVersion is missing")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, d.errorAt(c.lineOf(rawdoc.FieldPath{rawdoc.KeyElem("apiVersion")}), objectLabel(kind, namespace, name), "apiVersion: %s is not a valid group/version", strconv.Quote(rawdoc.Clip(apiVersion)))
	}

	k, known := registry.Lookup(apiVersion, kind)
	obj := &model.Object{
		GVK:    gv.WithKind(kind),
		Raw:    m,
		Origin: model.Origin{File: d.file, Doc: d.doc, Line: c.line},
	}
	if !known {
		obj.Key = model.Key{Group: groupAlias(gv.Group), Kind: kind, Namespace: namespace, Name: name}
		return obj, nil
	}
	if k.Namespaced {
		if namespace == "" {
			namespace = "default"
		}
	} else {
		namespace = ""
	}
	if name == "" {
		name = fallbackName(k, m, d.file)
	}
	if name == "" {
		if name, err = d.generateName(&c, md, objectLabel(kind, namespace, "")); err != nil {
			return nil, err
		}
	}
	obj.Key = model.Key{Group: k.Group, Kind: canonicalKind(k), Namespace: namespace, Name: name}
	label := objectLabel(kind, namespace, name)

	typed := k.New()
	text := c.jsonText
	var unknown []declared.Field
	if d.val != nil {
		unknown = declared.Unknown(reflect.TypeOf(typed), m)
		if dropCaseVariants(m, unknown) {
			// Items of a JSON list are built in parallel: not into jsonBuf.
			if text, err = rawdoc.MarshalGeneric(nil, m); err != nil {
				return nil, d.errorAt(c.line, label, "cannot encode as JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
			}
		}
	}
	if text == nil {
		// marshalGeneric is json.Marshal without reflection, into a buffer
		// the decoder reuses: json.Unmarshal's Unmarshalers copy what they
		// keep, and the text is dropped once the object is built.
		if text, err = rawdoc.MarshalGeneric(d.jsonBuf[:0], m); err != nil {
			return nil, d.errorAt(c.line, label, "cannot encode as JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		d.jsonBuf = text[:0]
	}
	if err := json.Unmarshal(text, typed); err != nil {
		if bad := undecodable(k, gv.Version, err); bad != nil {
			obj.Typed = bad
			return obj, nil
		}
		p := typeProblem(err, text, m, typed)
		return nil, d.fieldProblem(&c, label, p)
	}
	if t, ok := typed.(interface{ GetObjectKind() schema.ObjectKind }); ok {
		t.GetObjectKind().SetGroupVersionKind(obj.GVK)
	}
	if t, ok := typed.(interface{ SetNamespace(string) }); ok && namespace != "" {
		t.SetNamespace(namespace) // "default" when the document gives none, as kubectl applies it
	}
	if p := checkFields(typed); p != nil {
		return nil, d.fieldProblem(&c, label, p)
	}
	obj.Typed = typed
	if d.val != nil {
		d.check(&c, obj, k, label, unknown)
	}
	return obj, nil
}

// generateName gives an object with only metadata.generateName the name
// the API server would generate before validating it (k8s.io/apiserver
// pkg/registry/rest/create.go BeforeCreate), written into md. The random
// suffix is a hash of the document and the line it starts on, so a load is
// repeatable and two copies of one document get two names.
func (d *decoder) generateName(c *candidate, md map[string]any, label string) (string, error) {
	base, err := d.stringField(c, md, label, rawdoc.KeyElem("metadata"), rawdoc.KeyElem("generateName"))
	if err != nil || base == "" {
		return "", err
	}
	seed, err := rawdoc.MarshalGeneric(nil, c.raw)
	if err != nil {
		return "", d.errorAt(c.line, label, "cannot encode as JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	name := names.Generate(base, strconv.Itoa(c.line)+"\n"+string(seed))
	md["name"] = name
	c.jsonText = nil // the object is now the generic value, with its name
	return name, nil
}

// undecodable is the API server's answer to a pod whose quantity does not
// parse: its decoder's error, as the create handler reports it
// (k8s.io/apiserver pkg/endpoints/handlers/rest.go transformDecodeError),
// a BadRequest for that pod alone. Other decode errors stay load errors.
func undecodable(k meta.Kind, version string, err error) *model.Undecodable {
	if k.Group != "" || k.Kind != "Pod" {
		return nil
	}
	if !errors.Is(err, resource.ErrFormatWrong) && !errors.Is(err, resource.ErrNumeric) && !errors.Is(err, resource.ErrSuffix) {
		return nil
	}
	return &model.Undecodable{Err: apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", k.Kind, version, k.Kind, err))}
}

func isMissing(v any) bool { return v == nil || v == "" }

// stringField reads an optional string at path (relative to m, which is at
// path[:len-1] from the root).
func (d *decoder) stringField(c *candidate, m map[string]any, label string, path ...rawdoc.PathElem) (string, error) {
	if m == nil {
		return "", nil
	}
	v, ok := m[path[len(path)-1].Key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		p := rawdoc.FieldPath(path)
		return "", d.errorAt(c.lineOf(p), label, "%s: expected string, got %s", p, rawdoc.Describe(v))
	}
	return s, nil
}

// groupAlias maps crd.projectcalico.org to projectcalico.org, as the registry
// does, so that kinds not modeled also have one identity in both groups.
func groupAlias(g string) string {
	if g == calico.CRDGroup {
		return "projectcalico.org"
	}
	return g
}

// defaultNamespace is the namespace kubectl would use.
func defaultNamespace(apiVersion, kind, namespace string) string {
	k, ok := registry.Lookup(apiVersion, kind)
	switch {
	case !ok:
		return namespace
	case !k.Namespaced:
		return ""
	case namespace == "":
		return "default"
	}
	return namespace
}

// kubeletPatchFile matches kubeadm's patch file names for the kubelet
// configuration target (kubeadm app/util/patches): such a document is
// identified by its file name.
var kubeletPatchFile = regexp.MustCompile(`^kubeletconfiguration[^+.]*(\+(strategic|merge|json))?\.(ya?ml|json)$`)

// fallbackName identifies objects without metadata.name that kubeadm tells
// apart otherwise: a JoinConfiguration by its node, a kubelet configuration
// patch by its file name.
func fallbackName(k meta.Kind, m map[string]any, file string) string {
	switch {
	case k.Group == "kubeadm.k8s.io" && k.Kind == "JoinConfiguration":
		if nr, ok := m["nodeRegistration"].(map[string]any); ok {
			if s, ok := nr["name"].(string); ok {
				return s
			}
		}
	case k.Group == "kubelet.config.k8s.io" && k.Kind == "KubeletConfiguration":
		base := strings.ReplaceAll(strings.TrimPrefix(file, "lab:"), `\`, "/")
		if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		if kubeletPatchFile.MatchString(base) {
			return base[:strings.LastIndexByte(base, '.')]
		}
	}
	return ""
}
