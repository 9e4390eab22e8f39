package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// object is one object of a built cluster with its key.
type object struct {
	key model.Key
	obj any
}

// add appends every object of a typed list under group and kind.
func add[T metav1.Object](out []object, group, kind string, list []T) []object {
	for _, o := range list {
		out = append(out, object{model.Key{Group: group, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, o})
	}
	return out
}

// objectsOf lists the cluster's API objects (not the Cluster kind's hosts,
// not kubeadm's configuration files, which no API server holds).
func objectsOf(c *model.Cluster) []object {
	// Sized once: a twin lists tens of thousands of objects.
	out := make([]object, 0, len(c.Nodes)+len(c.Namespaces)+len(c.Pods)+len(c.Deployments)+len(c.ReplicaSets)+
		len(c.DaemonSets)+len(c.StatefulSets)+len(c.Services)+len(c.EndpointSlices)+len(c.NetworkPolicies)+
		len(c.RuntimeClasses)+len(c.ConfigMaps)+len(c.ServiceAccounts)+len(c.CSRs)+3+len(c.TigeraStatuses)+
		len(c.IPPools)+len(c.IPAMBlocks)+len(c.BlockAffinities)+len(c.FelixConfigs)+len(c.BGPConfigs)+
		len(c.CalicoPolicies)+len(c.GlobalNetworkPolicies))
	out = add(out, "", "Node", c.Nodes)
	out = add(out, "", "Namespace", c.Namespaces)
	out = add(out, "", "Pod", c.Pods)
	out = add(out, "apps", "Deployment", c.Deployments)
	out = add(out, "apps", "ReplicaSet", c.ReplicaSets)
	out = add(out, "apps", "DaemonSet", c.DaemonSets)
	out = add(out, "apps", "StatefulSet", c.StatefulSets)
	out = add(out, "", "Service", c.Services)
	out = add(out, "discovery.k8s.io", "EndpointSlice", c.EndpointSlices)
	out = add(out, "networking.k8s.io", "NetworkPolicy", c.NetworkPolicies)
	out = add(out, "node.k8s.io", "RuntimeClass", c.RuntimeClasses)
	out = add(out, "", "ConfigMap", c.ConfigMaps)
	out = add(out, "", "ServiceAccount", c.ServiceAccounts)
	out = add(out, "certificates.k8s.io", "CertificateSigningRequest", c.CSRs)
	if c.Installation != nil {
		out = add(out, operator.Group, "Installation", []*operator.Installation{c.Installation})
	}
	if c.APIServer != nil {
		out = add(out, operator.Group, "APIServer", []*operator.APIServer{c.APIServer})
	}
	out = add(out, operator.Group, "TigeraStatus", c.TigeraStatuses)
	out = add(out, calico.Group, "IPPool", c.IPPools)
	if c.IPAMConfig != nil {
		out = add(out, calico.Group, "IPAMConfiguration", []*calico.IPAMConfiguration{c.IPAMConfig})
	}
	out = add(out, calico.Group, "IPAMBlock", c.IPAMBlocks)
	out = add(out, calico.Group, "BlockAffinity", c.BlockAffinities)
	out = add(out, calico.Group, "FelixConfiguration", c.FelixConfigs)
	out = add(out, calico.Group, "BGPConfiguration", c.BGPConfigs)
	out = add(out, calico.Group, "NetworkPolicy", c.CalicoPolicies)
	out = add(out, calico.Group, "GlobalNetworkPolicy", c.GlobalNetworkPolicies)
	return out
}

// ignoredFields are metadata the API server sets on every write and the
// twin stamps on derived objects from the newest input timestamp: a
// what-if with a newer object moves them all, and they say nothing.
var ignoredFields = map[string]bool{
	"metadata.creationTimestamp": true,
	"metadata.resourceVersion":   true,
	"metadata.uid":               true,
	"metadata.generation":        true,
	"metadata.managedFields":     true,
}

// compareObjectsMatched lists the objects only one twin holds and those
// whose JSON differs (by hash; then field by field), by kind, namespace
// and name. An object both twins hold as the same pointer is the same
// object (a derived twin shares those it leaves alone): paired by align,
// not by key; only the others are matched by key. match is that pairing
// (align(a.objects, b.objects)) when made already, else nil.
func compareObjectsMatched(a, b *digest, match []int32) []ObjectChange {
	if match == nil {
		match = align(a.objects, b.objects)
	}
	shared, before := unshared(a.objects, match)
	var out []ObjectChange
	memo := fieldMemo{}
	// matched marks, by the index before gives a key, the keys b holds.
	matched := make([]bool, len(a.objects))
	for i, o := range b.objects {
		if match[i] >= 0 {
			continue
		}
		k, ok := before[o.key]
		if ok {
			matched[k] = true
		}
		switch {
		case !ok:
			out = append(out, ObjectChange{Object: objectRef(o.key), Change: Added})
		case a.objects[k].obj == o.obj || a.sums[k].sum == b.sums[i].sum:
			// The same object, or the same JSON.
		default:
			if f := memo.changes(a.objects[k].obj, o.obj); len(f) > 0 {
				out = append(out, ObjectChange{Object: objectRef(o.key), Change: Changed, Fields: f})
			}
		}
	}
	for i, o := range a.objects {
		if !shared[i] && !matched[before[o.key]] {
			out = append(out, ObjectChange{Object: objectRef(o.key), Change: Removed})
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessRef(out[i].Object, out[j].Object) })
	return out
}

func objectRef(k model.Key) ObjectRef {
	return ObjectRef{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

func lessRef(a, b ObjectRef) bool {
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// fieldChanges lists the leaf fields that differ between two objects of
// one type, by JSON path (spec.template.spec.containers[0].image), in path
// order, with both values.
func fieldChanges(a, b any) []FieldChange {
	return fieldChangesOf(prune(a, b))
}

// fieldChangesOf is fieldChanges without pruning.
func fieldChangesOf(a, b any) []FieldChange {
	ua, ub := toMap(a), toMap(b)
	var out []FieldChange
	walk("", ua, ub, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// toMap is the object as its JSON fields.
func toMap(o any) map[string]any {
	if m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o); err == nil {
		return m
	}
	// A type the converter cannot read (untyped maps of any): through JSON.
	var m map[string]any
	if data, err := json.Marshal(o); err == nil {
		_ = json.Unmarshal(data, &m)
	}
	return m
}

func walk(path string, a, b any, out *[]FieldChange) {
	if ignoredFields[path] {
		return
	}
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		for k := range keys {
			walk(join(path, k), ma[k], mb[k], out)
		}
		return
	}
	la, aok := a.([]any)
	lb, bok := b.([]any)
	if aok && bok {
		if na, nb := byName(la), byName(lb); na != nil && nb != nil {
			// Lists merged by name (containers, env, volumes, ports:
			// the patch merge key of most lists): compared by name, not
			// by position.
			names := map[string]bool{}
			for k := range na {
				names[k] = true
			}
			for k := range nb {
				names[k] = true
			}
			for k := range names {
				walk(path+"[name="+k+"]", na[k], nb[k], out)
			}
			return
		}
	}
	if aok && bok && len(la) == len(lb) {
		for i := range la {
			walk(fmt.Sprintf("%s[%d]", path, i), la[i], lb[i], out)
		}
		return
	}
	if aok && bok {
		// Lists of different lengths: what each side holds that the
		// other does not, as elements (positions would all shift).
		d := lines(jsonEach(la), jsonEach(lb))
		for _, e := range d.Removed {
			*out = append(*out, FieldChange{Path: path + "[]", Before: e})
		}
		for _, e := range d.Added {
			*out = append(*out, FieldChange{Path: path + "[]", After: e})
		}
		return
	}
	if reflect.DeepEqual(a, b) {
		return
	}
	*out = append(*out, FieldChange{Path: path, Before: value(a), After: value(b)})
}

// byName indexes a list of objects by their "name" field; nil unless
// every element has a name of its own.
func byName(l []any) map[string]any {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]any, len(l))
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		n, ok := m["name"].(string)
		if !ok || n == "" {
			return nil
		}
		if _, dup := out[n]; dup {
			return nil
		}
		out[n] = m
	}
	return out
}

func jsonEach(l []any) []string {
	out := make([]string, len(l))
	for i, e := range l {
		out[i] = value(e)
	}
	return out
}

// join adds a map key to a path; keys with dots (annotations, labels) are
// quoted as kubectl's JSONPath quotes them.
func join(path, k string) string {
	if strings.ContainsAny(k, "./[]") {
		k = "[" + k + "]"
		return path + k
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// value prints a leaf (or a whole subtree that only one side has) as
// compact JSON; "" for a missing value.
func value(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
