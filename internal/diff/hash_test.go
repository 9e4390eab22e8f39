package diff

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// A field hash stands for the object's JSON in the digest: two values
// whose JSON differs must hash differently, and values JSON writes alike
// (a map filled in another order, a quantity written two ways, a time in
// another zone) should hash alike.
func TestFieldHashesDifferWhereJSONDoes(t *testing.T) {
	str := func(s string) *string { return &s }
	at := func(loc *time.Location) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).In(loc)}
	}
	block := func(change func(b *calico.IPAMBlock)) *calico.IPAMBlock {
		b := &calico.IPAMBlock{ObjectMeta: metav1.ObjectMeta{Name: "10-0-0-0-26"}, Spec: calico.IPAMBlockSpec{
			CIDR: "10.0.0.0/26", Affinity: str("host:a"), Allocations: []*int{nil, new(int)}, Unallocated: []int{0},
			Attributes: []calico.AllocationAttribute{{HandleID: str("h"), ActiveOwnerAttrs: map[string]string{"node": "a", "pod": "p"}}},
		}}
		change(b)
		return b
	}
	type pair struct{ A, B string }
	for _, tc := range []struct {
		name string
		a, b any
	}{
		{"the same block", block(func(*calico.IPAMBlock) {}), block(func(*calico.IPAMBlock) {})},
		{"a map's values swapped between its keys", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{"node": "p", "pod": "a"}
		})},
		{"a map filled in another order", block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{}
			for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
				b.Spec.Attributes[0].ActiveOwnerAttrs[k] = k
			}
		}), block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{}
			for _, k := range []string{"i", "h", "g", "f", "e", "d", "c", "b", "a"} {
				b.Spec.Attributes[0].ActiveOwnerAttrs[k] = k
			}
		})},
		{"an allocation freed", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { b.Spec.Allocations[1] = nil })},
		{"an allocation's index", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { *b.Spec.Allocations[1] = 1 })},
		{"a list emptied", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = []int{} })},
		{"a nil list against an empty one that JSON writes", block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = nil }), block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = []int{} })},
		{"a time in another zone", block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.UTC) }),
			block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.FixedZone("x", 3600)) })},
		{"another time", block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.UTC) }),
			block(func(b *calico.IPAMBlock) {
				b.Spec.AffinityClaimTime = &metav1.Time{Time: at(time.UTC).Add(time.Second)}
			})},
		{"two strings split in another place", pair{"ab", "c"}, pair{"a", "bc"}},
		{"an interface holding a number or its text", []any{1}, []any{"1"}},
		{"a quantity written two ways", map[string]resource.Quantity{"cpu": resource.MustParse("1")}, map[string]resource.Quantity{"cpu": resource.MustParse("1000m")}},
		{"two quantities", map[string]resource.Quantity{"cpu": resource.MustParse("1")}, map[string]resource.Quantity{"cpu": resource.MustParse("2")}},
		{"an Installation's field", &operator.Installation{Spec: operator.InstallationSpec{Variant: "Calico"}}, &operator.Installation{Spec: operator.InstallationSpec{Variant: "TigeraSecureEnterprise"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ja, err := json.Marshal(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			jb, err := json.Marshal(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			ha, oka := fieldHash(tc.a)
			hb, okb := fieldHash(tc.b)
			if !oka || !okb {
				t.Fatal("the fields could not be read")
			}
			sameJSON := string(ja) == string(jb)
			if !sameJSON && ha == hb {
				t.Errorf("JSON %s and %s differ, the hashes agree", ja, jb)
			}
			// Equal values, and what JSON writes through a value's own
			// marshaler alike, hash alike.
			if sameJSON && ha != hb {
				t.Errorf("JSON %s written alike, the hashes differ", ja)
			}
		})
	}
}

// Every leaf of the lab's objects without protobuf code counts: changing
// any one of them (a string, a number, a flag, a map entry added) changes
// the JSON, and must change the field hash.
func TestChangingAnyFieldOfTheLabsCalicoObjectsChangesTheirHash(t *testing.T) {
	c := build(t, true)
	var objs []any
	for _, o := range objectsOf(c) {
		if _, ok := o.obj.(interface{ Size() int }); !ok {
			objs = append(objs, o.obj)
		}
	}
	objs = append(objs, c.Hosts, c.CalicoNodes)
	leaves := 0
	for _, o := range objs {
		want, ok := fieldHash(o)
		if !ok {
			t.Fatalf("%T: the fields could not be read", o)
		}
		for i := 0; ; i++ {
			cp := reflect.New(reflect.TypeOf(o))
			raw, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, cp.Interface()); err != nil {
				t.Fatal(err)
			}
			n := i
			if !mutateLeaf(cp.Elem(), &n) {
				break
			}
			leaves++
			after, err := json.Marshal(cp.Elem().Interface())
			if err != nil {
				t.Fatal(err)
			}
			if string(after) == string(raw) {
				continue // a change JSON does not show (an omitempty zero)
			}
			if got, _ := fieldHash(cp.Elem().Interface()); got == want {
				t.Errorf("%T: leaf %d changed (%s), the hash did not", o, i, after)
			}
		}
	}
	if leaves < 100 {
		t.Fatalf("only %d leaves changed: the walk reaches too little", leaves)
	}
}

// mutateLeaf changes the n-th settable leaf of v (a string, number or
// flag; a map gains an entry), counting down *n; false when v has fewer.
func mutateLeaf(v reflect.Value, n *int) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		e := v.Elem()
		if v.Kind() == reflect.Interface {
			if e.Kind() != reflect.Pointer {
				return false
			}
		}
		return mutateLeaf(e, n)
	case reflect.Struct:
		if _, ok := v.Addr().Interface().(json.Marshaler); ok {
			return false
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && mutateLeaf(v.Field(i), n) {
				return true
			}
		}
		return false
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if mutateLeaf(v.Index(i), n) {
				return true
			}
		}
		return false
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String || v.IsNil() {
			return false
		}
		if *n > 0 {
			*n--
			return false
		}
		v.SetMapIndex(reflect.ValueOf("zz-added").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		return true
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !v.CanSet() {
			return false
		}
		if *n > 0 {
			*n--
			return false
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(v.Int() + 1)
		default:
			v.SetUint(v.Uint() + 1)
		}
		return true
	}
	return false
}

// deepEqual, which prune compares fields with, must be reflect.DeepEqual:
// for every object of the lab against itself, a copy of it through JSON
// (where nil and empty lists and maps may differ) and copies with one
// leaf changed.
func TestDeepEqualAgreesWithReflect(t *testing.T) {
	c := build(t, true)
	pairs, unequal := 0, 0
	for _, o := range objectsOf(c) {
		raw, err := json.Marshal(o.obj)
		if err != nil {
			t.Fatal(err)
		}
		for i := -1; i < 40; i++ {
			cp := reflect.New(reflect.TypeOf(o.obj).Elem())
			if err := json.Unmarshal(raw, cp.Interface()); err != nil {
				t.Fatal(err)
			}
			if n := i; i >= 0 && !mutateLeaf(cp.Elem(), &n) {
				break
			}
			for _, other := range []any{o.obj, cp.Interface()} {
				want := reflect.DeepEqual(o.obj, other)
				if got := deepEqual(reflect.ValueOf(o.obj), reflect.ValueOf(other)); got != want {
					t.Errorf("%v (change %d): deepEqual %v, reflect.DeepEqual %v", o.key, i, got, want)
				}
				pairs++
				if !want {
					unequal++
				}
			}
		}
	}
	if unequal < pairs/4 {
		t.Fatalf("%d of %d pairs unequal: the copies test too little", unequal, pairs)
	}
	one, two := 1, 1
	for _, tc := range []struct{ a, b any }{
		{[]string(nil), []string{}},
		{map[string]string(nil), map[string]string{}},
		{map[string]string{"a": "b"}, map[string]string{"a": "c"}},
		{map[string]string{"a": "b"}, map[string]string{"c": "b"}},
		{&one, &two},
		{(*int)(nil), &one},
		{[]any{1}, []any{int64(1)}},
		{[]any{nil}, []any{(*int)(nil)}},
		{[2]float64{1, 2}, [2]float64{1, 3}},
	} {
		if got, want := deepEqual(reflect.ValueOf(tc.a), reflect.ValueOf(tc.b)), reflect.DeepEqual(tc.a, tc.b); got != want {
			t.Errorf("%#v and %#v: deepEqual %v, reflect.DeepEqual %v", tc.a, tc.b, got, want)
		}
	}
}
