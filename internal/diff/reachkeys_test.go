package diff

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// sourceKeyMap maps each pod and node to its row, as a map assignment in
// row order does: the reference sourceKeys is held to.
func sourceKeyMap(m *reach.Matrix) map[string]int {
	out := map[string]int{}
	for i, s := range m.Sources {
		if s.Kind == "node" {
			out[s.Label] = i
			continue
		}
		for _, p := range s.Pods {
			out[s.Namespace+"/"+p] = i
		}
	}
	return out
}

// destKeyMap maps each pod at a port and each Service port to its column.
func destKeyMap(m *reach.Matrix) map[string]int {
	out := map[string]int{}
	for j, d := range m.Destinations {
		at := " " + strconv.Itoa(d.Port) + "/" + string(d.Proto)
		if d.Kind == "service" {
			out["svc/"+d.Namespace+"/"+d.Name+at] = j
			continue
		}
		for _, p := range d.Pods {
			out[d.Namespace+"/"+p+at] = j
		}
	}
	return out
}

// sortedKeys lists m by key.
func sortedKeys(m map[string]int) []keyed {
	out := make([]keyed, 0, len(m))
	for k, i := range m {
		out = append(out, keyed{k, i})
	}
	slices.SortFunc(out, func(x, y keyed) int { return strings.Compare(x.key, y.key) })
	return out
}

// A matrix's rows and columns listed by key are its keys through a map,
// sorted: a key two rows (or columns) hold is the last one's.
func TestAMatrixsKeysListedInOrderAreItsKeysThroughAMapSorted(t *testing.T) {
	dup := &reach.Matrix{
		Sources: []reach.Source{{Kind: "pods", Namespace: "a", Pods: []string{"x", "y"}}, {Kind: "node", Label: "node/n1"},
			{Kind: "pods", Namespace: "a", Pods: []string{"x"}}, {Kind: "pods", Namespace: "a-b", Pods: []string{"x"}}},
		Destinations: []reach.Destination{{Kind: "pods", Namespace: "a", Pods: []string{"x"}, Port: 80, Proto: "TCP"},
			{Kind: "service", Namespace: "a", Name: "s", Port: 80, Proto: "TCP"},
			{Kind: "pods", Namespace: "a", Pods: []string{"x", "z"}, Port: 80, Proto: "TCP"}},
	}
	matrices := map[string]*reach.Matrix{"pods of one name in two rows and columns": dup}
	base := generated(t, 1)
	for _, tc := range reachCases(t, base)[:3] {
		before, _ := tc.clusters(base)
		m, _, err := NewTwin(before).reachMatrix(reach.Options{AllNamespaces: true, Nodes: true})
		if err != nil {
			t.Fatal(err)
		}
		matrices[tc.name] = m
	}
	for name, m := range matrices {
		t.Run(name, func(t *testing.T) {
			if got, want := sourceKeys(m), sortedKeys(sourceKeyMap(m)); !reflect.DeepEqual(got, want) {
				t.Errorf("sources:\n%v\nthrough a map:\n%v", got, want)
			}
			if got, want := destKeys(m), sortedKeys(destKeyMap(m)); !reflect.DeepEqual(got, want) {
				t.Errorf("destinations:\n%v\nthrough a map:\n%v", got, want)
			}
		})
	}
	if got := sourceKeys(dup); len(got) != 4 || got[0] != (keyed{"a-b/x", 3}) || got[1] != (keyed{"a/x", 2}) {
		t.Errorf("the duplicate key is not the last row's: %v", got)
	}
}
