package report

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"
)

// sortGroup orders the group's objects by the JSONPath field the way
// kubectl get --sort-by does (k8s.io/kubectl/pkg/cmd/get/sorter.go): on the
// objects as the API server serves them, missing values first.
func sortGroup(g *Group, field string) error {
	if len(g.Objects) < 2 {
		return nil
	}
	us, err := Objects(g.Kind, g.Objects)
	if err != nil {
		return err
	}
	objs := make([]runtime.Object, len(us))
	for i, u := range us {
		objs[i] = u
	}
	if err := checkSortable(us, field); err != nil {
		return err
	}
	sorter, err := get.SortObjects(unstructured.UnstructuredJSONScheme, objs, field)
	if err != nil {
		return &UsageError{Message: err.Error()}
	}
	sorted := make([]any, len(g.Objects))
	for i := range sorted {
		sorted[i] = g.Objects[sorter.OriginalPosition(i)]
	}
	g.Objects = sorted
	return nil
}

// checkSortable refuses what kubectl's sorter would end the process on
// (klog.Exitf): a field whose values are lists, maps, booleans or of more
// than one type.
func checkSortable(us []*unstructured.Unstructured, field string) error {
	expr, err := get.RelaxedJSONPathExpression(field)
	if err != nil {
		return &UsageError{Message: err.Error()}
	}
	parser := jsonpath.New("sorting").AllowMissingKeys(true)
	if err := parser.Parse(expr); err != nil {
		return &UsageError{Message: fmt.Sprintf("sorting error: %v", err)}
	}
	var seen reflect.Type
	for _, u := range us {
		results, err := parser.FindResults(u.Object)
		if err != nil {
			return &UsageError{Message: err.Error()}
		}
		if len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		v := results[0][0]
		for v.Kind() == reflect.Interface && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Interface {
			continue // null
		}
		switch v.Kind() {
		case reflect.String, reflect.Int64, reflect.Float64, reflect.Int:
		default:
			return &UsageError{Message: fmt.Sprintf("--sort-by %s: the field is a %s, not a string or a number", field, kindName(v.Kind()))}
		}
		if seen != nil && seen != v.Type() {
			return &UsageError{Message: fmt.Sprintf("--sort-by %s: the field holds both %s and %s values", field, seen, v.Type())}
		}
		seen = v.Type()
	}
	return nil
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.Map:
		return "map"
	case reflect.Slice:
		return "list"
	case reflect.Bool:
		return "boolean"
	}
	return k.String()
}
