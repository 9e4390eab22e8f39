// Package objeq compares API objects as reflect.DeepEqual does, without
// its allocations: the map of visited pointers DeepEqual makes for every
// call (API objects have no cycles) and a copy of every map key and value
// it reads. The engine compares each object it built again with the
// previous twin's through it (engine.shareEqual).
package objeq

import (
	"maps"
	"reflect"
)

// MaxDepth bounds the walk (the API types nest a dozen levels); a value
// nested deeper is compared by reflect.DeepEqual.
const MaxDepth = 64

// Equal is reflect.DeepEqual(a, b).
func Equal(a, b any) bool {
	return DeepEqual(reflect.ValueOf(a), reflect.ValueOf(b))
}

// DeepEqual is reflect.DeepEqual of two values of one type. Held to
// reflect.DeepEqual by TestDeepEqualAgreesWithReflect.
func DeepEqual(x, y reflect.Value) bool {
	eq, ok := equalValues(x, y, 0)
	if ok {
		return eq
	}
	if !x.CanInterface() || !y.CanInterface() {
		return false
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}

var stringMap = reflect.TypeFor[map[string]string]()

// equalValues compares x and y as reflect.DeepEqual does; ok is false
// when they nest too deep.
func equalValues(x, y reflect.Value, depth int) (eq, ok bool) {
	if depth > MaxDepth {
		return false, false
	}
	if !x.IsValid() || !y.IsValid() {
		return x.IsValid() == y.IsValid(), true
	}
	if x.Type() != y.Type() {
		return false, true
	}
	switch x.Kind() {
	case reflect.Array:
		for i := 0; i < x.Len(); i++ {
			if eq, ok := equalValues(x.Index(i), y.Index(i), depth+1); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case reflect.Slice:
		if x.IsNil() != y.IsNil() || x.Len() != y.Len() {
			return false, true
		}
		if x.UnsafePointer() == y.UnsafePointer() {
			return true, true
		}
		for i := 0; i < x.Len(); i++ {
			if eq, ok := equalValues(x.Index(i), y.Index(i), depth+1); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case reflect.Interface:
		if x.IsNil() || y.IsNil() {
			return x.IsNil() == y.IsNil(), true
		}
		return equalValues(x.Elem(), y.Elem(), depth+1)
	case reflect.Pointer:
		if x.UnsafePointer() == y.UnsafePointer() {
			return true, true
		}
		if x.IsNil() || y.IsNil() {
			return false, true
		}
		return equalValues(x.Elem(), y.Elem(), depth+1)
	case reflect.Struct:
		for i, n := 0, x.NumField(); i < n; i++ {
			if eq, ok := equalValues(x.Field(i), y.Field(i), depth+1); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case reflect.Map:
		return equalMaps(x, y, depth)
	case reflect.Func:
		return x.IsNil() && y.IsNil(), true
	case reflect.String:
		return x.String() == y.String(), true
	case reflect.Bool:
		return x.Bool() == y.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return x.Int() == y.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return x.Uint() == y.Uint(), true
	case reflect.Float32, reflect.Float64:
		return x.Float() == y.Float(), true
	case reflect.Complex64, reflect.Complex128:
		return x.Complex() == y.Complex(), true
	case reflect.Chan, reflect.UnsafePointer:
		return x.UnsafePointer() == y.UnsafePointer(), true
	}
	return false, false
}

// equalMaps compares two maps of one type: labels and annotations
// (map[string]string) directly; others key by key, reading x's keys and
// values into one holder each instead of a copy per entry.
func equalMaps(x, y reflect.Value, depth int) (eq, ok bool) {
	if x.IsNil() != y.IsNil() || x.Len() != y.Len() {
		return false, true
	}
	if x.UnsafePointer() == y.UnsafePointer() {
		return true, true
	}
	readable := x.CanInterface() && y.CanInterface()
	if readable && x.Type() == stringMap {
		return maps.Equal(x.Interface().(map[string]string), y.Interface().(map[string]string)), true
	}
	var k, v reflect.Value
	if readable {
		k, v = reflect.New(x.Type().Key()).Elem(), reflect.New(x.Type().Elem()).Elem()
	}
	it := x.MapRange()
	for it.Next() {
		key, val := k, v
		if readable {
			k.SetIterKey(it)
			v.SetIterValue(it)
		} else {
			key, val = it.Key(), it.Value()
		}
		w := y.MapIndex(key)
		if !w.IsValid() {
			return false, true
		}
		if eq, ok := equalValues(val, w, depth+1); !eq || !ok {
			return eq, ok
		}
	}
	return true, true
}
