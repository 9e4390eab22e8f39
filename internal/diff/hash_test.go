package diff

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff/objhash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model/objeq"
)

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
		want, ok := objhash.FieldHash(o)
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
			if got, _ := objhash.FieldHash(cp.Elem().Interface()); got == want {
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

// objeq.DeepEqual, which prune compares fields with, must be reflect.DeepEqual:
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
				if got := objeq.DeepEqual(reflect.ValueOf(o.obj), reflect.ValueOf(other)); got != want {
					t.Errorf("%v (change %d): objeq.DeepEqual %v, reflect.DeepEqual %v", o.key, i, got, want)
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
}
