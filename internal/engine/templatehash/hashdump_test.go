package templatehash

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// dumpAny is the dumper's rendering of any value, as dump.ForHash(v) takes
// it, and whether the dumper models v's type.
func dumpAny(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	rv := reflect.ValueOf(v)
	p := planFor(rv.Type())
	if !p.ok {
		return "", false
	}
	box := reflect.New(rv.Type())
	box.Elem().Set(rv)
	var d dumper
	d.dump(p, box.UnsafePointer())
	return string(d.buf), true
}

// oldTemplateHash is Of as the Deployment controller spells it.
func oldTemplateHash(t *corev1.PodTemplateSpec) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*t))
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// checkTemplate fails unless the dumper's bytes and the hash match spew's.
func checkTemplate(t *testing.T, name string, tpl *corev1.PodTemplateSpec) {
	t.Helper()
	want := dump.ForHash(*tpl)
	var d dumper
	d.dump(templatePlan(), unsafe.Pointer(tpl))
	if got := string(d.buf); got != want {
		t.Errorf("%s: dump differs from dump.ForHash\n%s", name, firstDiff(got, want))
	}
	if got, want := Of(tpl), oldTemplateHash(tpl); got != want {
		t.Errorf("%s: Of = %s, want %s", name, got, want)
	}
}

func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-120)
	return fmt.Sprintf("at byte %d:\n got: …%s\nwant: …%s", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}

func quantity(t *testing.T, s string, stringed bool) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatalf("ParseQuantity(%q): %v", s, err)
	}
	if stringed {
		_ = q.String() // caches the canonical form in the unexported s
	}
	return q
}

func TestTemplateDumpMatchesSpewOnEdgeCases(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	b := func(v bool) *bool { return &v }
	shared := int64(30)
	rich := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Name:              "web",
				Labels:            map[string]string{"zeta": "1", "app": "web", "Alpha": "2", "app.kubernetes.io/name": "web", "": "empty key"},
				Annotations:       map[string]string{},
				CreationTimestamp: metav1.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)),
				OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", Controller: b(true)}},
			},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &shared,
				ActiveDeadlineSeconds:         &shared,
				NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
				Tolerations:                   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, TolerationSeconds: i64(300)}},
				Containers: []corev1.Container{{
					Name:  "web",
					Image: "nginx:1.27",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{
						{Name: "A", Value: "1"},
						{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: quantity(t, "100m", false), corev1.ResourceMemory: quantity(t, "1Gi", true), "example.com/gpu": quantity(t, "0.5", false)},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: quantity(t, "0.5", true), corev1.ResourceMemory: quantity(t, "123456789012345678901234567890", false)},
					},
					LivenessProbe: &corev1.Probe{
						ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
						PeriodSeconds:    10,
						FailureThreshold: 3,
					},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}},
					},
					SecurityContext: &corev1.SecurityContext{RunAsUser: &shared, Privileged: b(false)},
				}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: func() *resource.Quantity { q := quantity(t, "1e3", true); return &q }()}}}},
			},
		}
	}
	type inner struct {
		a int
		B *int64
	}
	type node struct {
		Name string
		Next *node
	}
	cycle := &node{Name: "a"}
	cycle.Next = &node{Name: "b", Next: cycle}
	five := 5
	pfive := &five
	var nilInt *int

	templates := []struct {
		name string
		tpl  *corev1.PodTemplateSpec
	}{
		{"an empty template matches dump.ForHash", &corev1.PodTemplateSpec{}},
		{"a template with probes, resources and env matches dump.ForHash", rich()},
		{"a template with a Local time and empty slices matches dump.ForHash", func() *corev1.PodTemplateSpec {
			p := rich()
			p.CreationTimestamp = metav1.NewTime(time.Unix(1700000000, 5).Local())
			p.Spec.Containers[0].Command = []string{}
			p.Spec.Containers[0].Args = []string{"", "a b", "]:{"}
			p.Spec.InitContainers = []corev1.Container{}
			return p
		}()},
		{"a template with a fixed-zone time and a monotonic clock reading matches dump.ForHash", func() *corev1.PodTemplateSpec {
			p := rich()
			p.CreationTimestamp = metav1.NewTime(time.Now().In(time.FixedZone("X", 3600)))
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			return p
		}()},
	}
	for _, tt := range templates {
		t.Run(tt.name, func(t *testing.T) { checkTemplate(t, tt.name, tt.tpl) })
	}

	values := []struct {
		name string
		v    any
	}{
		{"nil and empty maps and slices match dump.ForHash", struct {
			M, E map[string]string
			S, T []string
			R, Q corev1.ResourceList
		}{E: map[string]string{}, T: []string{}, Q: corev1.ResourceList{}}},
		{"a map with keys needing sorting matches dump.ForHash", map[string]string{"b": "1", "a": "2", "B": "3", "aa": "4", "a\x00": "5", "é": "6"}},
		{"a map of named string keys to structs matches dump.ForHash", corev1.ResourceList{"memory": quantity(t, "64Mi", false), "cpu": quantity(t, "2", true), "a": {}}},
		{"maps of nil pointers, slices and maps match dump.ForHash", struct {
			P     map[string]*int
			S     map[string][]int
			M     map[string]map[string]string
			After int
		}{P: map[string]*int{"x": nil, "y": &five}, S: map[string][]int{"a": nil, "b": {}, "c": {1}}, M: map[string]map[string]string{"n": nil, "e": {}, "f": {"k": "v"}}, After: 1}},
		{"nested maps of one type match dump.ForHash", map[string]map[string]corev1.ResourceList{
			"b": {"y": {"cpu": quantity(t, "1", false)}, "x": nil},
			"a": {"z": {"memory": quantity(t, "1Mi", true), "cpu": quantity(t, "250m", false), "pods": quantity(t, "110", false)}},
			"c": {},
		}},
		{"a nil pointer element hides the next field's type as spew does", struct {
			A     []*int
			After int
		}{A: []*int{&five, nil}, After: 3}},
		{"a nil map value pointer hides the next field's type as spew does", struct {
			A     map[string]*int
			After string
		}{A: map[string]*int{"a": nil}, After: "x"}},
		{"pointers to pointers match dump.ForHash", struct {
			PP   **int
			PNil **int
			Nil  **int
			L    []**int
		}{PP: &pfive, PNil: &nilInt, L: []**int{&pfive, &nilInt, nil}}},
		{"a pointer shared at two depths is shown once as spew does", struct {
			A *int64
			B struct{ C *int64 }
			D []*int64
		}{A: &shared, B: struct{ C *int64 }{&shared}, D: []*int64{&shared, &shared}}},
		{"a cycle of pointers matches dump.ForHash", cycle},
		{"a top-level nil pointer matches dump.ForHash", nilInt},
		{"unexported fields match dump.ForHash", struct {
			x inner
			y *inner
			z []inner
		}{x: inner{a: 1, B: &shared}, y: &inner{a: -2}, z: []inner{{}}}},
		{"floats, arrays and bytes match dump.ForHash", struct {
			F32   float32
			F64   []float64
			Arr   [3]int8
			PArr  [2]*int
			Bytes []byte
			U     []uint
			Bools []bool
		}{F32: 0.1, F64: []float64{1e21, 1e-7, math.NaN(), math.Inf(-1), math.Copysign(0, -1), 100}, Arr: [3]int8{-128, 0, 127}, PArr: [2]*int{nil, &five}, Bytes: []byte("hi"), U: []uint{math.MaxUint}, Bools: []bool{true, false}}},
		{"IntOrString of both kinds matches dump.ForHash", []intstr.IntOrString{intstr.FromInt32(-1), intstr.FromString("http"), {}}},
		{"quantities parsed and stringed match dump.ForHash", []resource.Quantity{
			quantity(t, "100m", false), quantity(t, "100m", true), quantity(t, "1Gi", false), quantity(t, "1Gi", true),
			quantity(t, "0.5", false), quantity(t, "0.5", true), quantity(t, "1e3", true), quantity(t, "-1.5Ki", true),
			quantity(t, "123456789012345678901234567890", true), quantity(t, "0.000000000001", false), {},
		}},
		{"times match dump.ForHash", []metav1.Time{{}, metav1.NewTime(time.Unix(0, 0).UTC()), metav1.NewTime(time.Unix(1, 2).Local())}},
		{"a pointer to a template matches dump.ForHash", rich()},
	}
	for _, tt := range values {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := dumpAny(tt.v)
			if !ok {
				t.Fatalf("the dumper does not model %T", tt.v)
			}
			if want := dump.ForHash(tt.v); got != want {
				t.Errorf("dump differs from dump.ForHash\n%s", firstDiff(got, want))
			}
		})
	}
}

func TestTemplateDumpFallsBackOnKindsItDoesNotModel(t *testing.T) {
	type named *int
	type loop *loop
	tests := []struct {
		name string
		typ  reflect.Type
		ok   bool
	}{
		{"a PodTemplateSpec is modeled", reflect.TypeFor[corev1.PodTemplateSpec](), true},
		{"a named pointer type is modeled", reflect.TypeFor[named](), true},
		{"a struct with an interface field is left to spew", reflect.TypeFor[struct{ V any }](), false},
		{"a map with int keys is left to spew", reflect.TypeFor[map[int]string](), false},
		{"a slice of channels is left to spew", reflect.TypeFor[[]chan int](), false},
		{"a func is left to spew", reflect.TypeFor[func()](), false},
		{"complex numbers are left to spew", reflect.TypeFor[complex128](), false},
		{"a pointer type pointing to itself is left to spew", reflect.TypeFor[loop](), false},
		{"a recursive struct reaching an interface is left to spew", reflect.TypeFor[recursiveAny](), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := planFor(tt.typ).ok; got != tt.ok {
				t.Errorf("planFor(%v).ok = %v, want %v", tt.typ, got, tt.ok)
			}
		})
	}
}

type recursiveAny struct {
	Next *recursiveAny
	List []recursiveAny
	V    any
}

// fuzzBytes hands out values drawn from fuzz input, zero once it runs out.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) str() string {
	n := min(int(f.byte()%24), len(f.b))
	s := string(f.b[:n])
	f.b = f.b[n:]
	return s
}

func (f *fuzzBytes) stringMap() map[string]string {
	switch c := f.byte(); c % 4 {
	case 0:
		return nil
	default:
		m := map[string]string{}
		for range int(c % 8) {
			m[f.str()] = f.str()
		}
		return m
	}
}

func (f *fuzzBytes) int64p() *int64 {
	if f.byte()%2 == 0 {
		return nil
	}
	v := int64(f.byte())<<40 - int64(f.byte())<<8
	return &v
}

func (f *fuzzBytes) resources() corev1.ResourceList {
	c := f.byte()
	if c%4 == 0 {
		return nil
	}
	rl := corev1.ResourceList{}
	for range int(c % 5) {
		s := f.str()
		if f.byte()%2 == 0 {
			// A well-formed quantity more often than random bytes give one,
			// some too big for int64Amount.
			suffixes := []string{"", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "Ei", "e3", "e-7", "E18", "n", "u"}
			s = fmt.Sprintf("%d.%d%s", int(int8(f.byte()))*int(f.byte())*int(f.byte())*int(f.byte()), f.byte(), suffixes[int(f.byte())%len(suffixes)])
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			continue
		}
		if f.byte()%2 == 0 {
			_ = q.String()
		}
		rl[corev1.ResourceName(f.str())] = q
	}
	return rl
}

func (f *fuzzBytes) template() *corev1.PodTemplateSpec {
	tpl := &corev1.PodTemplateSpec{}
	tpl.Name = f.str()
	tpl.Labels = f.stringMap()
	tpl.Annotations = f.stringMap()
	if c := f.byte(); c%3 == 1 {
		tpl.CreationTimestamp = metav1.NewTime(time.Unix(int64(c)<<24, int64(f.byte())).UTC())
	} else if c%3 == 2 {
		tpl.CreationTimestamp = metav1.NewTime(time.Unix(int64(c)<<20, 0).In(time.FixedZone(f.str(), int(f.byte())*60)))
	}
	tpl.Spec.NodeSelector = f.stringMap()
	tpl.Spec.TerminationGracePeriodSeconds = f.int64p()
	if f.byte()%2 == 1 {
		tpl.Spec.Tolerations = []corev1.Toleration{}
	}
	for range int(f.byte() % 4) {
		c := corev1.Container{Name: f.str(), Image: f.str()}
		if n := f.byte(); n%3 != 0 {
			c.Ports = []corev1.ContainerPort{}
			for range int(n % 4) {
				c.Ports = append(c.Ports, corev1.ContainerPort{Name: f.str(), ContainerPort: int32(f.byte()) << 8, Protocol: corev1.Protocol(f.str())})
			}
		}
		for range int(f.byte() % 4) {
			e := corev1.EnvVar{Name: f.str(), Value: f.str()}
			if f.byte()%2 == 1 {
				e.ValueFrom = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: f.str()}}
			}
			c.Env = append(c.Env, e)
		}
		c.Resources.Requests = f.resources()
		c.Resources.Limits = f.resources()
		if p := f.byte(); p%3 != 0 {
			port := intstr.FromInt32(int32(p))
			if p%3 == 2 {
				port = intstr.FromString(f.str())
			}
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: f.str(), Port: port}}, PeriodSeconds: int32(f.byte())}
		}
		if f.byte()%2 == 1 {
			c.SecurityContext = &corev1.SecurityContext{RunAsUser: f.int64p(), RunAsGroup: tpl.Spec.TerminationGracePeriodSeconds}
		}
		tpl.Spec.Containers = append(tpl.Spec.Containers, c)
	}
	return tpl
}

func FuzzTemplateDump(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x05\x03app\x03web\x02\x01a\x01b\x07\x01\x02\x03\x031Gi\x03cpu\x04100m"))
	f.Add(bytes.Repeat([]byte{7, 3, 'a', 'b', 'c', 5, '1', '0', '0', 'm', 1}, 40))
	f.Fuzz(func(t *testing.T, data []byte) {
		tpl := (&fuzzBytes{b: data}).template()
		checkTemplate(t, "fuzzed template", tpl)
	})
}
