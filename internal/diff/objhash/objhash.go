// Package objhash hashes the values of API objects through reflection,
// without encoding them: a hash that stands for an object's JSON (several
// times cheaper than hashing the JSON). internal/diff's digest uses it;
// comparing objects is internal/model/objeq's.
package objhash

import (
	"encoding"
	"encoding/json"
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
	"sync"
)

// seed keys every hash of the process: the hashes are compared only
// within one process (two twins of one comparison or plan).
var seed = maphash.MakeSeed()

// Encoding is the hash of an encoding b with its kind first (the
// runtime's AES-based hash, many times faster than FNV's byte loop); an
// empty kind writes only b.
func Encoding(kind string, b []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if kind != "" {
		h.WriteString(kind)
		h.WriteByte(0)
	}
	h.Write(b)
	return h.Sum64()
}

// fieldHasher hashes a value through reflection, field by field, without
// encoding it: the hash of an object without protobuf code (the Calico and
// operator types), several times cheaper than hashing its JSON, whose
// encoder sorts each map's keys and escapes each string.
//
// The hash is a function of what the JSON encoding reads of the value —
// every exported field not tagged "-", what a json.Marshaler or
// encoding.TextMarshaler writes for itself (a metav1.Time, a Quantity, an
// address), whether each pointer, slice, map and interface is nil — and
// distinguishes more than JSON does (a nil slice from an empty one in an
// omitempty field), never less: two objects whose JSON differs hash
// differently (up to the 2^-64 chance of a collision), so a part whose
// inputs hash alike compiles alike. Held to JSON by
// TestFieldHashesDifferWhereJSONDoes and, over the lab, internal/diff's
// TestChangingAnyFieldOfTheLabsCalicoObjectsChangesTheirHash.
type fieldHasher struct{ acc uint64 }

// The rounds of xxHash64 (github.com/Cyan4973/xxHash): each word is
// folded into the state, strings first hashed whole by the runtime.
const (
	xxPrime1 = 11400714785074694791
	xxPrime2 = 14029467366897019727
	xxPrime3 = 1609587929392842791
)

func (f *fieldHasher) u64(v uint64) {
	f.acc = bits.RotateLeft64(f.acc+v*xxPrime2, 31) * xxPrime1
}

// sum is the state mixed so that every bit of it reaches every bit.
func (f *fieldHasher) sum() uint64 {
	h := f.acc
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// str writes s with its length: "ab","c" and "a","bc" differ. A short
// string is folded in eight bytes at a time, a long one hashed whole.
func (f *fieldHasher) str(s string) {
	f.u64(uint64(len(s)))
	if len(s) > 64 {
		f.u64(maphash.String(seed, s))
		return
	}
	for ; len(s) >= 8; s = s[8:] {
		f.u64(uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56)
	}
	if len(s) > 0 {
		var v uint64
		for i := 0; i < len(s); i++ {
			v |= uint64(s[i]) << (8 * i)
		}
		f.u64(v)
	}
}

// typeInfo is what the walk reads of a type, found once per type.
type typeInfo struct {
	// marshal: the type (or, when addressable, its pointer) writes its
	// own JSON or text.
	marshal, marshalAddr bool
	// fields are a struct's fields JSON reads, by index.
	fields []int
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{
		marshal:     t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType),
		marshalAddr: reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType),
	}
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() && !sf.Anonymous || sf.Tag.Get("json") == "-" {
				continue
			}
			ti.fields = append(ti.fields, i)
		}
	}
	typeInfos.Store(t, ti)
	return ti
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// MaxDepth bounds the walk (the API types nest a dozen levels); a
// deeper value, which only a cycle makes, is hashed through its JSON.
const MaxDepth = 64

// FieldHash is the hash of v's fields, with ok false when the walk cannot
// read it (a channel or function, a cycle, a marshaler that fails).
func FieldHash(v any) (sum uint64, ok bool) {
	var f fieldHasher
	rv := reflect.ValueOf(v)
	if rv.IsValid() {
		f.str(rv.Type().PkgPath())
		f.str(rv.Type().String())
	}
	if !f.value(rv, 0) {
		return 0, false
	}
	return f.sum(), true
}

// marshaler is the text v writes for itself as JSON does (Marshaler
// first, then TextMarshaler, by value or through v's address); ok is
// false when v's type has neither.
func marshaler(v reflect.Value, ti *typeInfo) (out []byte, ok bool, err error) {
	var m any
	switch {
	case !ti.marshal && !ti.marshalAddr || !v.CanInterface():
		return nil, false, nil
	case ti.marshal:
		m = v.Interface()
	case v.CanAddr():
		m = v.Addr().Interface()
	default:
		return nil, false, nil
	}
	if jm, ok := m.(json.Marshaler); ok {
		out, err = jm.MarshalJSON()
		return out, true, err
	}
	out, err = m.(encoding.TextMarshaler).MarshalText()
	return out, true, err
}

func (f *fieldHasher) value(v reflect.Value, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	if !v.IsValid() {
		f.u64(0)
		return true
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			f.u64(0)
			return true
		}
		f.u64(1)
		return f.value(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			f.u64(0)
			return true
		}
		e := v.Elem()
		f.u64(1)
		f.str(e.Type().PkgPath())
		f.str(e.Type().String())
		return f.value(e, depth+1)
	}
	// Only a struct or a named type has methods (a marshaler).
	var ti *typeInfo
	if t := v.Type(); t.Kind() == reflect.Struct || t.PkgPath() != "" {
		ti = infoOf(t)
	}
	if ti != nil {
		if out, ok, err := marshaler(v, ti); ok {
			if err != nil {
				return false
			}
			f.str(string(out))
			return true
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, i := range ti.fields {
			f.u64(uint64(i))
			if !f.value(v.Field(i), depth+1) {
				return false
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			f.u64(0)
			return true
		}
		f.u64(1)
		fallthrough
	case reflect.Array:
		n := v.Len()
		f.u64(uint64(n))
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			f.u64(maphash.Bytes(seed, v.Bytes()))
			return true
		}
		for i := 0; i < n; i++ {
			if !f.value(v.Index(i), depth+1) {
				return false
			}
		}
	case reflect.Map:
		if v.IsNil() {
			f.u64(0)
			return true
		}
		// The entries in any order: the sum of each entry's own hash.
		var sum uint64
		key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		it := v.MapRange()
		for it.Next() {
			key.SetIterKey(it)
			val.SetIterValue(it)
			var e fieldHasher
			if !e.value(key, depth+1) || !e.value(val, depth+1) {
				return false
			}
			sum += e.sum()
		}
		f.u64(1)
		f.u64(uint64(v.Len()))
		f.u64(sum)
	case reflect.String:
		f.str(v.String())
	case reflect.Bool:
		if v.Bool() {
			f.u64(1)
		} else {
			f.u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		f.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		f.u64(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		f.u64(math.Float64bits(real(c)))
		f.u64(math.Float64bits(imag(c)))
	default:
		// Channels, functions, unsafe pointers: JSON cannot encode them
		// either.
		return false
	}
	return true
}
