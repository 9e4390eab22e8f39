package plan

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestLayerStacksObjectsByKeyAsALaterFileDoes(t *testing.T) {
	obj := func(kind, name, from string) *model.Object {
		return &model.Object{Key: model.Key{Kind: kind, Namespace: "ns", Name: name}, Origin: model.Origin{File: from}}
	}
	base := func() []*model.Object {
		return []*model.Object{obj("Pod", "a", "base"), obj("ConfigMap", "a", "base"), obj("Pod", "b", "base")}
	}
	many := func(from string) []*model.Object {
		var out []*model.Object
		for i := range layerScan + 2 {
			out = append(out, obj("Pod", fmt.Sprintf("p%d", i%(layerScan-1)), from))
		}
		return append(out, obj("Pod", "b", from))
	}
	for _, tc := range []struct {
		name string
		base []*model.Object
		objs []*model.Object
		// want lists each object as kind/name@file, in order.
		want []string
	}{
		{"an object of a new key is added at the end", base(), []*model.Object{obj("Pod", "c", "what-if")},
			[]string{"Pod/a@base", "ConfigMap/a@base", "Pod/b@base", "Pod/c@what-if"}},
		{"an object of a key the base holds takes its place", base(), []*model.Object{obj("ConfigMap", "a", "what-if")},
			[]string{"Pod/a@base", "ConfigMap/a@what-if", "Pod/b@base"}},
		{"of two layered objects of one key the later wins, in the base's place", base(),
			[]*model.Object{obj("Pod", "b", "one"), obj("Pod", "b", "two")},
			[]string{"Pod/a@base", "ConfigMap/a@base", "Pod/b@two"}},
		{"of two layered objects of a new key the later wins, added once", base(),
			[]*model.Object{obj("Pod", "c", "one"), obj("Pod", "d", "one"), obj("Pod", "c", "two")},
			[]string{"Pod/a@base", "ConfigMap/a@base", "Pod/b@base", "Pod/c@two", "Pod/d@one"}},
		{"a key the base holds twice is replaced at its last place",
			[]*model.Object{obj("Pod", "a", "first"), obj("Pod", "a", "second")}, []*model.Object{obj("Pod", "a", "what-if")},
			[]string{"Pod/a@first", "Pod/a@what-if"}},
		{"nothing layered leaves the base as it is", base(), nil,
			[]string{"Pod/a@base", "ConfigMap/a@base", "Pod/b@base"}},
		{"more objects than are found by comparing keys are found by an index", base(), many("many"),
			append([]string{"Pod/a@base", "ConfigMap/a@base", "Pod/b@many"}, manyWant()...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &model.Snapshot{Objects: tc.base}
			before := slices.Clone(b.Objects)
			got := Layer(b, tc.objs...)
			var names []string
			for _, o := range got.Objects {
				names = append(names, o.Key.Kind+"/"+o.Key.Name+"@"+o.Origin.File)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("layered:\n got %v\nwant %v", names, tc.want)
			}
			if !slices.Equal(b.Objects, before) {
				t.Errorf("the base changed")
			}
		})
	}
}

// manyWant is what many adds to base: layerScan-1 new pods, the first
// three of them given twice (the later wins).
func manyWant() []string {
	var out []string
	for i := range layerScan - 1 {
		out = append(out, fmt.Sprintf("Pod/p%d@many", i))
	}
	return out
}
