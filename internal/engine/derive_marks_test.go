package engine

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derivation that marks derived exactly the fields the previous build
// marked, in the same order, shares the previous twin's DerivedFields;
// one that does not (a pod given whole now, no longer a stub) makes its
// own, equal to the full build's.
func TestADerivationSharesDerivedFieldsOnlyWhenItMarksThePreviousBuildsFields(t *testing.T) {
	tests := []struct {
		name   string
		next   func(t *testing.T, s *model.Snapshot) *model.Snapshot
		shared bool
	}{
		{name: "strictAffinity turned off shares them", next: withStrictAffinity(false), shared: true},
		{name: "a stub given whole does not", next: stubGivenWhole},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The previous twin is a derived one here; the first
			// derivation from a full build is
			// TestTheFirstDerivationFromAFullBuildSharesItsDerivedFields.
			first := genSnapshot(t)
			built, err := Build(first)
			if err != nil {
				t.Fatal(err)
			}
			base := withStrictAffinity(true)(t, first)
			prev := derivedAsBuilt(t, built, first, base)
			if len(prev.DerivedFields) == 0 {
				t.Fatal("the previous twin marks no field derived: the case tests nothing")
			}
			got := derivedAsBuilt(t, prev, base, tt.next(t, base))
			shared := reflect.ValueOf(got.DerivedFields).UnsafePointer() == reflect.ValueOf(prev.DerivedFields).UnsafePointer()
			if shared != tt.shared {
				t.Errorf("DerivedFields shared with the previous twin: %v, want %v", shared, tt.shared)
			}
		})
	}
}

// Build keeps the log of its marks too: the first derivation from its
// twin shares its DerivedFields when it marks the same fields, and makes
// its own when it does not.
func TestTheFirstDerivationFromAFullBuildSharesItsDerivedFields(t *testing.T) {
	tests := []struct {
		name   string
		next   func(t *testing.T, s *model.Snapshot) *model.Snapshot
		shared bool
	}{
		{name: "strictAffinity turned on shares them", next: withStrictAffinity(true), shared: true},
		{name: "a stub given whole does not", next: stubGivenWhole},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := genSnapshot(t)
			built, err := Build(first)
			if err != nil {
				t.Fatal(err)
			}
			if len(built.DerivedFields) == 0 {
				t.Fatal("the full build marks no field derived: the case tests nothing")
			}
			got := derivedAsBuilt(t, built, first, tt.next(t, first))
			shared := reflect.ValueOf(got.DerivedFields).UnsafePointer() == reflect.ValueOf(built.DerivedFields).UnsafePointer()
			if shared != tt.shared {
				t.Errorf("DerivedFields shared with the full build's twin: %v, want %v", shared, tt.shared)
			}
		})
	}
}

// The marks a build makes give the DerivedFields that marking them one by
// one gives, taken from the previous build only when they are all its
// marks: a prefix of them, one more or another one are not.
func TestMarksGiveTheDerivedFieldsOfMarkingThemOneByOne(t *testing.T) {
	a := model.Key{Kind: "Pod", Namespace: "ns", Name: "a"}
	b := model.Key{Kind: "Pod", Namespace: "ns", Name: "b"}
	prevMarks := []mark{{a, "spec"}, {b, "spec"}, {a, "status.podIP"}}
	tests := []struct {
		name   string
		marks  []mark
		shared bool
	}{
		{name: "the previous build's marks share its fields", marks: prevMarks, shared: true},
		{name: "a prefix of them does not", marks: prevMarks[:2]},
		{name: "one more does not", marks: append(slices.Clone(prevMarks), mark{b, "status.podIP"})},
		{name: "another field does not", marks: []mark{{a, "spec"}, {b, "spec"}, {b, "status.podIP"}}},
		{name: "none does not", marks: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := &builder{c: &model.Cluster{}, d: &derivation{}}
			for _, m := range prevMarks {
				prev.markField(m.k, m.field)
			}
			prev.finishMarks()
			want := &model.Cluster{}
			for _, m := range tt.marks {
				want.MarkDerived(m.k, m.field)
			}
			got := &builder{c: &model.Cluster{}, d: &derivation{}}
			got.marks.after(prev.carry.marks, prev.carry.fields, 0)
			for _, m := range tt.marks {
				got.markField(m.k, m.field)
			}
			got.finishMarks()
			if !reflect.DeepEqual(got.c.DerivedFields, want.DerivedFields) {
				t.Errorf("DerivedFields %v, want %v", got.c.DerivedFields, want.DerivedFields)
			}
			shared := reflect.ValueOf(got.c.DerivedFields).UnsafePointer() == reflect.ValueOf(prev.c.DerivedFields).UnsafePointer()
			if shared != tt.shared {
				t.Errorf("shared with the previous build: %v, want %v", shared, tt.shared)
			}
		})
	}
}

// stubGivenWhole is the snapshot with its first pod, a stub, given whole:
// the build no longer marks that pod's fields derived.
func stubGivenWhole(t *testing.T, s *model.Snapshot) *model.Snapshot {
	return editFirst(t, s, "Pod", func(p *corev1.Pod) {
		if len(p.Spec.Containers) > 0 {
			t.Fatal("the first pod is not a stub: the case tests nothing")
		}
		p.Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}
	})
}
