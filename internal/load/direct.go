package load

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/declared"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Decoding straight from the text. The general path (build) decodes an
// object into generic values first: it reads the object's identity and
// its unknown fields from them, keeps them as Object.Raw, and names the
// field of any error from them. When Raw is dropped (Options.DropRaw) and
// the object is an ordinary one of a known kind, none of that needs the
// generic values: the identity and the unknown fields are read from the
// JSON text, which encoding/json then decodes into the typed object. That
// generic pass was a third of decoding a cluster's JSON and most of its
// garbage.
//
// direct gives up (false) on anything the general path would treat
// differently from what the text shows at a glance: a key given twice
// (the generic value keeps the last one), a key with escapes, a key that
// differs from a field only by case (dropped before decoding), a name to
// generate or to take from elsewhere, a value that does not decode or an
// address that does not parse. build then does it all as before, with its
// exact errors; direct's result, when it has one, is build's
// (TestDirectDecodingGivesWhatTheGenericPathGives, FuzzDirect).

// directDecoding switches the direct path on; tests turn it off to compare.
var directDecoding = true

// direct builds the object of c.jsonText (the input's JSON, or the text a
// YAML document was written as) from that text alone; false when build
// must.
func (d *decoder) direct(c *candidate) (*model.Object, bool) {
	if !d.directOn() {
		return nil, false
	}
	text := c.jsonText
	if !utf8.Valid(text) {
		return nil, false // the generic value has U+FFFD where the text has bad bytes
	}
	var apiVersion, kind, name, namespace string
	mdStart, mdEnd := -1, -1
	var seen [3]bool
	ok := true
	rawdoc.EachField(text, 0, func(k string, start, end int) bool {
		v := text[start:end]
		switch k {
		case "apiVersion":
			apiVersion, ok = directString(v, seen[0])
			seen[0] = true
		case "kind":
			kind, ok = directString(v, seen[1])
			seen[1] = true
		case "metadata":
			ok = !seen[2] && (v[0] == '{' || string(v) == "null")
			seen[2] = true
			if v[0] == '{' {
				mdStart, mdEnd = start, end
			}
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	if mdStart >= 0 {
		md := text[mdStart:mdEnd]
		var mseen [3]bool
		rawdoc.EachField(md, 0, func(k string, start, end int) bool {
			v := md[start:end]
			switch k {
			case "name":
				name, ok = directString(v, mseen[0])
				mseen[0] = true
			case "namespace":
				namespace, ok = directString(v, mseen[1])
				mseen[1] = true
			case "generateName":
				ok = !mseen[2]
				mseen[2] = true
			}
			return ok
		})
		if !ok {
			return nil, false
		}
	}
	// Inherited from a typed list when missing, as build does.
	if listItemKind := strings.TrimSuffix(c.listKind, "List"); listItemKind != "" {
		if apiVersion == "" && c.listAPIVersion != "" {
			apiVersion = c.listAPIVersion
		}
		if kind == "" {
			kind = listItemKind
		}
	}
	if apiVersion == "" || kind == "" || name == "" || kind == "KubeletConfiguration" {
		return nil, false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	k, known := registry.Lookup(apiVersion, kind)
	if !known {
		return nil, false
	}
	if !k.Namespaced {
		namespace = ""
	} else if namespace == "" {
		namespace = "default"
	}
	typed := k.New()
	unknown, ok := declared.UnknownJSON(reflect.TypeOf(typed), text)
	if !ok {
		return nil, false
	}
	if err := json.Unmarshal(text, typed); err != nil {
		return nil, false
	}
	obj := &model.Object{
		GVK:    gv.WithKind(kind),
		Origin: model.Origin{File: d.file, Doc: d.doc, Line: c.line},
		Key:    model.Key{Group: k.Group, Kind: canonicalKind(k), Namespace: namespace, Name: name},
	}
	if t, ok := typed.(interface{ GetObjectKind() schema.ObjectKind }); ok {
		t.GetObjectKind().SetGroupVersionKind(obj.GVK)
	}
	if t, ok := typed.(interface{ SetNamespace(string) }); ok && namespace != "" {
		t.SetNamespace(namespace)
	}
	if checkFields(typed) != nil {
		return nil, false
	}
	obj.Typed = typed
	d.check(c, obj, k, objectLabel(kind, namespace, name), unknown)
	return obj, true
}

// directOn reports whether objects may be decoded directly: when they are
// validated (the unknown fields are read on the way) and their generic
// values dropped.
func (d *decoder) directOn() bool {
	return directDecoding && d.val != nil && d.val.dropRaw
}

// directString reads a string member as the generic value would give it:
// "" for null; false for another type or a member given twice.
func directString(v []byte, twice bool) (string, bool) {
	switch {
	case twice:
		return "", false
	case string(v) == "null":
		return "", true
	case v[0] != '"':
		return "", false
	}
	return rawdoc.DecodeKey(v), true
}
