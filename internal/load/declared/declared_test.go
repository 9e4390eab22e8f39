package declared

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

func paths(fs []Field) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path.Dotted()+"|"+f.CaseOf)
	}
	return out
}

func TestUnknownJSONFindsTheKeysUnknownFindsInTheGenericValue(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		text string
		want []string
	}{
		{"none", reflect.TypeFor[*corev1.Pod](), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}}}`, []string{}},
		{"one in metadata and one in a list item, sorted", reflect.TypeFor[*corev1.Pod](),
			`{"spec":{"containers":[{"name":"c"},{"name":"d","imagePullPolcy":"x"}]},"metadata":{"colour":"red"}}`,
			[]string{"metadata.colour|", "spec.containers[1].imagePullPolcy|"}},
		{"a map of quantities is not entered, a list of conditions is", reflect.TypeFor[*corev1.Pod](), `{"spec":{"overhead":{"cpu":"1"}},"status":{"conditions":[{"x":1}]}}`,
			[]string{"status.conditions[0].x|"}},
		{"values that decode themselves are not entered", reflect.TypeFor[*corev1.Pod](), `{"spec":{"containers":[{"resources":{"limits":{"cpu":{"x":1}}}}]}}`, []string{}},
		{"null and scalars where objects are declared", reflect.TypeFor[*corev1.Pod](), `{"spec":null,"status":1,"metadata":[{"x":1}]}`, []string{}},
		{"the twin's renderings of Calico skip keys they do not model", reflect.TypeFor[*calico.IPPool](), `{"spec":{"cidr":"10.0.0.0/16","someCalicoField":1}}`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := UnknownJSON(tt.typ, []byte(tt.text))
			if !ok {
				t.Fatal("gave up")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(tt.text), &m); err != nil {
				t.Fatal(err)
			}
			if g, w := paths(got), paths(Unknown(tt.typ, m)); !reflect.DeepEqual(g, w) || !reflect.DeepEqual(g, tt.want) {
				t.Errorf("text: %q, generic value: %q, want %q", g, w, tt.want)
			}
		})
	}
}

func TestUnknownJSONGivesUpWhereTheGenericValueDiffersFromTheText(t *testing.T) {
	pod := reflect.TypeFor[*corev1.Pod]()
	tests := []struct{ name, text string }{
		{"an object given twice", `{"spec":{"x":1},"spec":{}}`},
		{"an unknown key given twice", `{"metadata":{"x":1,"x":2}}`},
		{"a key with an escape", `{"metadata":{"label\u0073":{}}}`},
		{"a key that differs from a field by case", `{"Spec":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := UnknownJSON(pod, []byte(tt.text)); ok {
				t.Errorf("found %q; it should give up", paths(got))
			}
		})
	}
	if _, ok := UnknownJSON(pod, []byte(`{"spec":1,"spec":{}}`)); !ok {
		t.Error("a scalar given before an object is what the generic value drops: nothing to give up on")
	}
}
