package templatehash

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// The pod-template-hash is FNV-32a over dump.ForHash of the template: go-spew
// with Indent " ", SortKeys, DisableMethods, SpewKeys, DisablePointerAddresses
// and DisableCapacities, printing "%#v" (k8s.io/utils/dump). Spew walks the
// value with reflect and fmt for every field, a large share of building a
// cluster of many Deployments. The dumper below prints the same bytes from a
// plan made once per type and reads the value's memory along the plan's
// offsets. The rules modeled are those of go-spew's format.go (formatState.
// format, formatPtr) and common.go (print*, sortValues); with "%#v" only the
// one-line formatter runs, so Indent, DisablePointerAddresses and
// DisableCapacities change nothing.
//
// A type that reaches a kind the dumper does not model (interfaces, channels,
// funcs, unsafe pointers, uintptrs, complex numbers, maps with keys other
// than strings, or a pointer type that points to itself) is dumped by
// dump.ForHash itself.

// dumpPlan is what the dumper needs of one type.
type dumpPlan struct {
	typ  reflect.Type
	kind reflect.Kind
	// name is the type as spew prints it (reflect.Type.String), and stars
	// the count of '*' in it, which spew adds to the indirection count of a
	// nil or already shown pointer whose type it does not print.
	name  string
	stars int
	// elem is a pointer's target, a slice's or array's element or a map's
	// value; n is an array's length.
	elem *dumpPlan
	n    int
	// vals is []V for a map's value type V: the sorted walk copies the
	// values there.
	vals   reflect.Type
	fields []dumpField
	// strMap is set for map[string]string, which is ranged natively.
	strMap bool
	ok     bool
}

type dumpField struct {
	label  string // "Name:", as spew prints it with the '#' flag
	offset uintptr
	plan   *dumpPlan
}

var (
	dumpPlansMu sync.Mutex
	dumpPlans   sync.Map // reflect.Type → *dumpPlan, complete plans only
)

// planFor returns the plan of t, making and caching it on first use.
func planFor(t reflect.Type) *dumpPlan {
	if p, ok := dumpPlans.Load(t); ok {
		return p.(*dumpPlan)
	}
	dumpPlansMu.Lock()
	defer dumpPlansMu.Unlock()
	if p, ok := dumpPlans.Load(t); ok {
		return p.(*dumpPlan)
	}
	building := map[reflect.Type]*dumpPlan{}
	root := makePlan(t, building)
	// A type is supported when everything it reaches is; recursive types
	// need a fixed point.
	for changed := true; changed; {
		changed = false
		for _, p := range building {
			if p.ok && !p.childrenOK() {
				p.ok, changed = false, true
			}
		}
	}
	for t, p := range building {
		dumpPlans.Store(t, p)
	}
	return root
}

func (p *dumpPlan) childrenOK() bool {
	if p.elem != nil && !p.elem.ok {
		return false
	}
	for _, f := range p.fields {
		if !f.plan.ok {
			return false
		}
	}
	return true
}

func makePlan(t reflect.Type, building map[reflect.Type]*dumpPlan) *dumpPlan {
	if p, ok := dumpPlans.Load(t); ok {
		return p.(*dumpPlan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	name := t.String()
	p := &dumpPlan{typ: t, kind: t.Kind(), name: name, stars: strings.Count(name, "*"), ok: true}
	building[t] = p
	switch p.kind {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	case reflect.Pointer:
		p.ok = !selfPointer(t)
		p.elem = makePlan(t.Elem(), building)
	case reflect.Slice:
		p.elem = makePlan(t.Elem(), building)
	case reflect.Array:
		p.n = t.Len()
		p.elem = makePlan(t.Elem(), building)
	case reflect.Map:
		// common.go canSortSimply: string keys sort by their value; other
		// kinds sort by rules (or spewed renderings) not modeled here.
		p.ok = t.Key().Kind() == reflect.String
		p.strMap = t == reflect.TypeFor[map[string]string]()
		p.vals = reflect.SliceOf(t.Elem())
		p.elem = makePlan(t.Elem(), building)
	case reflect.Struct:
		p.fields = make([]dumpField, t.NumField())
		for i := range p.fields {
			f := t.Field(i)
			p.fields[i] = dumpField{label: f.Name + ":", offset: f.Offset, plan: makePlan(f.Type, building)}
		}
	default:
		p.ok = false
	}
	return p
}

// selfPointer reports a pointer type whose chain of targets comes back to a
// pointer type already on it (type P *P), which spew's formatPtr would
// follow forever.
func selfPointer(t reflect.Type) bool {
	var seen []reflect.Type
	for ; t.Kind() == reflect.Pointer; t = t.Elem() {
		if slices.Contains(seen, t) {
			return true
		}
		seen = append(seen, t)
	}
	return false
}

// dumper holds spew's formatState for one value.
type dumper struct {
	buf []byte
	// ignore is formatState.ignoreNextType: set before slice elements, map
	// keys and values and pointer targets, cleared by the next non-pointer
	// value printed. A nil pointer printed as "<nil>" leaves it set, so the
	// type of whatever spew prints next is omitted too.
	ignore bool
	depth  int
	// seen is formatState.pointers: the pointers followed and the depth at
	// which each was.
	seen []seenPointer
	// Scratch for maps: the pairs of a map[string]string, the sorted keys
	// of other maps (a stack, as their values may hold maps) and copies
	// per map type.
	kv      []stringPair
	entries []mapEntry
	slabs   map[*dumpPlan]mapScratch
}

// mapScratch is where sortedMap copies a map's keys, one at a time, and
// values.
type mapScratch struct{ vals, key reflect.Value }

type mapEntry struct {
	key string
	i   int
}

type seenPointer struct {
	addr  uintptr
	depth int
}

type stringPair struct{ k, v string }

// dump appends the dump.ForHash bytes of the value of p's type at v.
func (d *dumper) dump(p *dumpPlan, v unsafe.Pointer) {
	d.ignore, d.depth, d.seen = false, 0, d.seen[:0]
	d.value(p, v)
}

// value is format.go formatState.format.
func (d *dumper) value(p *dumpPlan, v unsafe.Pointer) {
	if p.kind == reflect.Pointer {
		d.pointer(p, v)
		return
	}
	if !d.ignore {
		d.buf = append(d.buf, '(')
		d.buf = append(d.buf, p.name...)
		d.buf = append(d.buf, ')')
	}
	d.ignore = false
	switch p.kind {
	case reflect.Bool:
		d.buf = strconv.AppendBool(d.buf, *(*bool)(v))
	case reflect.Int:
		d.buf = strconv.AppendInt(d.buf, int64(*(*int)(v)), 10)
	case reflect.Int8:
		d.buf = strconv.AppendInt(d.buf, int64(*(*int8)(v)), 10)
	case reflect.Int16:
		d.buf = strconv.AppendInt(d.buf, int64(*(*int16)(v)), 10)
	case reflect.Int32:
		d.buf = strconv.AppendInt(d.buf, int64(*(*int32)(v)), 10)
	case reflect.Int64:
		d.buf = strconv.AppendInt(d.buf, *(*int64)(v), 10)
	case reflect.Uint:
		d.buf = strconv.AppendUint(d.buf, uint64(*(*uint)(v)), 10)
	case reflect.Uint8:
		d.buf = strconv.AppendUint(d.buf, uint64(*(*uint8)(v)), 10)
	case reflect.Uint16:
		d.buf = strconv.AppendUint(d.buf, uint64(*(*uint16)(v)), 10)
	case reflect.Uint32:
		d.buf = strconv.AppendUint(d.buf, uint64(*(*uint32)(v)), 10)
	case reflect.Uint64:
		d.buf = strconv.AppendUint(d.buf, *(*uint64)(v), 10)
	case reflect.Float32:
		// common.go printFloat: 'g', shortest, at the value's own bit size.
		d.buf = strconv.AppendFloat(d.buf, float64(*(*float32)(v)), 'g', -1, 32)
	case reflect.Float64:
		d.buf = strconv.AppendFloat(d.buf, *(*float64)(v), 'g', -1, 64)
	case reflect.String:
		// Unquoted: the '#' flag only adds type names.
		d.buf = append(d.buf, *(*string)(v)...)
	case reflect.Slice:
		// Every slice header has []byte's layout; only data and len are
		// read, and a nil slice is one whose data pointer is nil.
		s := *(*[]byte)(v)
		if s == nil {
			d.buf = append(d.buf, "<nil>"...)
			return
		}
		d.list(p.elem, unsafe.Pointer(unsafe.SliceData(s)), len(s))
	case reflect.Array:
		d.list(p.elem, v, p.n)
	case reflect.Struct:
		d.buf = append(d.buf, '{')
		d.depth++
		for i := range p.fields {
			f := &p.fields[i]
			if i > 0 {
				d.buf = append(d.buf, ' ')
			}
			d.buf = append(d.buf, f.label...)
			d.value(f.plan, unsafe.Add(v, f.offset))
		}
		d.depth--
		d.buf = append(d.buf, '}')
	case reflect.Map:
		d.mapValue(p, v)
	}
}

// list prints an array or a non-nil slice of n elements at data.
func (d *dumper) list(elem *dumpPlan, data unsafe.Pointer, n int) {
	size := elem.typ.Size()
	d.buf = append(d.buf, '[')
	d.depth++
	for i := range n {
		if i > 0 {
			d.buf = append(d.buf, ' ')
		}
		d.ignore = true
		d.value(elem, unsafe.Add(data, uintptr(i)*size))
	}
	d.depth--
	d.buf = append(d.buf, ']')
}

// pointer is format.go formatPtr: the chain of pointers is followed to a
// non-pointer value, a nil pointer or a pointer already followed at a lower
// depth (which need not be a cycle: spew forgets pointers only when it next
// formats a pointer at their depth or above).
func (d *dumper) pointer(p *dumpPlan, v unsafe.Pointer) {
	if *(*unsafe.Pointer)(v) == nil && d.ignore {
		d.buf = append(d.buf, "<nil>"...)
		return
	}
	kept := d.seen[:0]
	for _, s := range d.seen {
		if s.depth < d.depth {
			kept = append(kept, s)
		}
	}
	d.seen = kept

	var nilFound, cycleFound bool
	indirects := 0
	cur, at := p, v
	for cur.kind == reflect.Pointer {
		target := *(*unsafe.Pointer)(at)
		if target == nil {
			nilFound = true
			break
		}
		indirects++
		if d.follow(uintptr(target)) {
			cycleFound = true
			indirects--
			break
		}
		cur, at = cur.elem, target
	}

	if !d.ignore {
		d.buf = append(d.buf, '(')
		d.stars(indirects)
		d.buf = append(d.buf, cur.name...)
		d.buf = append(d.buf, ')')
	} else {
		if nilFound || cycleFound {
			indirects += cur.stars
		}
		d.buf = append(d.buf, '<')
		d.stars(indirects)
		d.buf = append(d.buf, '>')
	}

	switch {
	case nilFound:
		d.buf = append(d.buf, "<nil>"...)
	case cycleFound:
		d.buf = append(d.buf, "<shown>"...)
	default:
		d.ignore = true
		d.value(cur, at)
	}
}

// follow records addr at the current depth and reports whether it was
// already recorded at a lower one (formatPtr's pointers map).
func (d *dumper) follow(addr uintptr) bool {
	for _, s := range d.seen {
		if s.addr == addr {
			return s.depth < d.depth
		}
	}
	d.seen = append(d.seen, seenPointer{addr, d.depth})
	return false
}

func (d *dumper) stars(n int) {
	for range n {
		d.buf = append(d.buf, '*')
	}
}

// mapValue prints a map with its keys in order. common.go sortValues: string
// keys are "simple", so SpewKeys does not apply and they sort by their
// value. Keys and values are printed without their types.
func (d *dumper) mapValue(p *dumpPlan, v unsafe.Pointer) {
	// A map value is one pointer, nil for a nil map.
	if *(*unsafe.Pointer)(v) == nil {
		d.buf = append(d.buf, "<nil>"...)
		return
	}
	d.buf = append(d.buf, "map["...)
	d.depth++
	if p.strMap {
		d.stringMap(*(*map[string]string)(v))
	} else {
		d.sortedMap(p, reflect.NewAt(p.typ, v).Elem())
	}
	d.depth--
	d.buf = append(d.buf, ']')
}

func (d *dumper) stringMap(m map[string]string) {
	kv := d.kv[:0]
	for k, v := range m {
		kv = append(kv, stringPair{k, v})
	}
	slices.SortFunc(kv, func(a, b stringPair) int { return strings.Compare(a.k, b.k) })
	for i, e := range kv {
		if i > 0 {
			d.buf = append(d.buf, ' ')
		}
		d.buf = append(d.buf, e.k...)
		d.buf = append(d.buf, ':')
		d.buf = append(d.buf, e.v...)
	}
	if len(kv) > 0 {
		d.ignore = false
	}
	clear(kv)
	d.kv = kv[:0]
}

// sortedMap copies the values into a slice so that they can be read in
// place, in the order of their keys. The dumper keeps the slice and the
// entries for the next map; a map nested in a value takes its own.
func (d *dumper) sortedMap(p *dumpPlan, m reflect.Value) {
	n := m.Len()
	if n == 0 {
		return
	}
	sc, ok := d.slabs[p]
	if ok && sc.vals.Len() >= n {
		delete(d.slabs, p)
	} else {
		sc = mapScratch{vals: reflect.MakeSlice(p.vals, n, n), key: reflect.New(p.typ.Key()).Elem()}
	}
	vals := sc.vals
	start := len(d.entries)
	// SetIterKey and SetIterValue copy without allocating, unlike Key and
	// Value.
	var it reflect.MapIter
	it.Reset(m)
	for i := 0; i < n && it.Next(); i++ {
		sc.key.SetIterKey(&it)
		vals.Index(i).SetIterValue(&it)
		d.entries = append(d.entries, mapEntry{sc.key.String(), i})
	}
	it.Reset(reflect.Value{})
	sc.key.SetZero()
	slices.SortFunc(d.entries[start:], func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	base, size := vals.UnsafePointer(), p.elem.typ.Size()
	for j := start; j < len(d.entries); j++ {
		// The entries may move while a value's own maps are printed.
		e := d.entries[j]
		if j > start {
			d.buf = append(d.buf, ' ')
		}
		d.buf = append(d.buf, e.key...)
		d.buf = append(d.buf, ':')
		d.ignore = true
		d.value(p.elem, unsafe.Add(base, uintptr(e.i)*size))
	}
	clear(d.entries[start:])
	d.entries = d.entries[:start]
	// The copies are dropped so that a pooled dumper holds no one's data.
	for i := range n {
		vals.Index(i).SetZero()
	}
	if d.slabs == nil {
		d.slabs = map[*dumpPlan]mapScratch{}
	}
	if old, ok := d.slabs[p]; !ok || old.vals.Len() < vals.Len() {
		d.slabs[p] = sc
	}
}

var (
	templatePlan = sync.OnceValue(func() *dumpPlan {
		return planFor(reflect.TypeFor[corev1.PodTemplateSpec]())
	})
	dumpers = sync.Pool{New: func() any { return new(dumper) }}
)

// FNV-32a (hash/fnv), inlined so that the dump need not go through an
// io.Writer.
const (
	fnv32Offset = 2166136261
	fnv32Prime  = 16777619
)

// templateDumpHash is FNV-32a over dump.ForHash(*t) (pkg/util/hash
// DeepHashObject).
func templateDumpHash(t *corev1.PodTemplateSpec) uint32 {
	var b []byte
	d := dumpers.Get().(*dumper)
	if p := templatePlan(); p.ok {
		d.buf = d.buf[:0]
		d.dump(p, unsafe.Pointer(t))
		b = d.buf
	} else {
		b = []byte(dump.ForHash(*t))
	}
	h := uint32(fnv32Offset)
	for _, c := range b {
		h ^= uint32(c)
		h *= fnv32Prime
	}
	// Big dumps are not kept for the next template.
	if cap(d.buf) <= 1<<20 {
		dumpers.Put(d)
	}
	return h
}

// Of is the pod-template-hash the Deployment controller computes:
// FNV-32a over dump.ForHash of the template, its decimal value encoded with
// rand.SafeEncodeString (pkg/controller/controller_utils.go ComputeHash,
// pkg/util/hash DeepHashObject). The API server's defaulting of the template
// is only partly modeled, so the value can differ from a real cluster's;
// observed ReplicaSet names always win.
func Of(t *corev1.PodTemplateSpec) string {
	return utilrand.SafeEncodeString(strconv.FormatUint(uint64(templateDumpHash(t)), 10))
}
