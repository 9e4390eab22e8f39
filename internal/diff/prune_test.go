package diff

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Leaving the fields equal in both objects out before converting them
// must give exactly the differences of the whole objects, also where a
// type converts itself (an IntOrString reads StrVal only for a string), a
// pointer is nil on one side, or a list is nil on one side and empty on
// the other.
func TestPrunedObjectsHaveTheFieldDifferencesOfTheWholeObjects(t *testing.T) {
	probe := func(port intstr.IntOrString) *corev1.Pod {
		p := pod("p", "a")
		p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: port}}}
		return p
	}
	withCPU := func(q string) *corev1.Pod {
		p := pod("p", "a")
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		return p
	}
	stamped := func(sec int64) *corev1.Pod {
		p := pod("p", "a")
		p.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0))
		p.Status.StartTime = &metav1.Time{Time: time.Unix(sec, 0)}
		return p
	}
	for _, tc := range []struct {
		name string
		a, b func() any
	}{
		{"a named port string changes", func() any { return probe(intstr.FromString("http")) }, func() any { return probe(intstr.FromString("web")) }},
		{"a port number becomes a name", func() any { return probe(intstr.FromInt32(80)) }, func() any { return probe(intstr.FromString("http")) }},
		{"a quantity changes", func() any { return withCPU("1") }, func() any { return withCPU("2") }},
		{"a probe appears", func() any { return pod("p", "a") }, func() any { return probe(intstr.FromInt32(80)) }},
		{"the stamps move", func() any { return stamped(1) }, func() any { return stamped(2) }},
		{"a nil list becomes an empty one", func() any {
			p := pod("p", "a")
			p.Spec.Containers = nil
			return p
		}, func() any {
			p := pod("p", "a")
			p.Spec.Containers = []corev1.Container{}
			p.Spec.Volumes = []corev1.Volume{}
			return p
		}},
		{"a label and the node change", func() any { return pod("p", "a") }, func() any {
			p := pod("p", "a")
			p.Labels = map[string]string{"app": "x"}
			p.Spec.NodeName = "n2"
			return p
		}},
		{"a surge given as a percentage changes", func() any { return surge("25%") }, func() any { return surge("50%") }},
		{"a surge becomes a number", func() any { return surge("25%") }, func() any { return surge("") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.a(), tc.b()
			want := fieldChangesOf(a, b)
			if len(want) == 0 {
				t.Fatal("the case has no difference to find")
			}
			if got := fieldChanges(a, b); !reflect.DeepEqual(got, want) {
				t.Errorf("pruned %+v\nwhole %+v", got, want)
			}
			if got := (fieldMemo{}).changes(a, b); !reflect.DeepEqual(got, want) {
				t.Errorf("through the memo %+v\nwhole %+v", got, want)
			}
		})
	}
}

// surge is a Deployment whose rolling update's maxSurge is s (2 when "").
func surge(s string) *appsv1.Deployment {
	v := intstr.FromInt32(2)
	if s != "" {
		v = intstr.FromString(s)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "a"}}
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &v}}
	return d
}

// Every changed object of a comparison (each what-if on the lab, and a
// rollout of every host-network pod, which the memo answers once per
// distinct change) has the fields of its whole objects' differences.
func TestEachChangedObjectsFieldsAreThoseOfTheWholeObjects(t *testing.T) {
	base := build(t, true)
	files, err := filepath.Glob("../../examples/what-if/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no what-if examples: %v", err)
	}
	afters := map[string]*model.Cluster{}
	for _, f := range files {
		afters[filepath.Base(f)] = build(t, true, f)
	}
	afters["every agent rolled out"] = sharing(base, func(_ *testing.T, c *model.Cluster) {
		for i, p := range c.Pods {
			if p.Spec.HostNetwork {
				p = p.DeepCopy()
				p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "ROLLED", Value: "1"})
				p.Annotations = map[string]string{"example.com/restartedAt": "now"}
				c.Pods[i] = p
			}
		}
	}, t)
	changed := 0
	for name, after := range afters {
		t.Run(name, func(t *testing.T) {
			da, db := newDigest(base, nil), newDigest(after, nil)
			before := map[model.Key]any{}
			for _, o := range da.objects {
				before[o.key] = o.obj
			}
			after := map[model.Key]any{}
			for _, o := range db.objects {
				after[o.key] = o.obj
			}
			for _, ch := range compareObjects(da, db) {
				if ch.Change != Changed {
					continue
				}
				k := model.Key{Group: ch.Object.Group, Kind: ch.Object.Kind, Namespace: ch.Object.Namespace, Name: ch.Object.Name}
				if want := fieldChangesOf(before[k], after[k]); !reflect.DeepEqual(ch.Fields, want) {
					t.Errorf("%s: fields %+v\nof the whole objects %+v", k, ch.Fields, want)
				}
				changed++
			}
		})
	}
	if changed < 10 {
		t.Fatalf("%d changed objects compared, want at least 10", changed)
	}
}
