package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// A field of a kind nodeJSON does not write turns it off for every node
// (NodeJSON.Write falls back to the encoder): NodeDiff and Lines must keep
// to strings, string slices and Lines.
func TestANodesChangesAreWrittenWithoutTheEncodersReflection(t *testing.T) {
	if !nodeOK || !linesOK {
		t.Fatalf("NodeDiff (%v) or Lines (%v) has a field nodeJSON does not write: every node's JSON goes through json.Encoder again", nodeOK, linesOK)
	}
	type other struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	if _, ok := jsonFields(reflect.TypeFor[other]()); ok {
		t.Error("a struct with an int field is taken for one nodeJSON writes")
	}
}

// oddNodes hold every kind of line JSON escapes, HTML characters, and
// every empty form of a node's lists.
func oddNodes() []NodeDiff {
	lines := Lines{Added: []string{"10.0.0.0/26 via 10.0.0.0 dev vxlan.calico onlink"}, Removed: []string{"10.0.0.0/26 via 192.168.0.2 dev ens18 proto 80 onlink"}}
	return []NodeDiff{
		{Node: "n1", OS: "linux", Change: Changed, Routes: lines},
		{Node: "n<2>&", OS: "linux", Change: Changed, Routes: lines, KubeProxy: Lines{Added: []string{"a <b> & c"}}},
		{Node: "quote\"back\\slash", OS: "windows", Change: Added, Felix: Lines{Added: []string{"comment \"x\"", "tab\there", "nul\x00", "del\x7f", "ü", "line\u2028sep", "bad\xff", ""}},
			Endpoints: Lines{Removed: []string{`{"Type":"ACL","Settings":{"Action":"Block"}}`}}},
		{Node: "empty", Change: Removed, Routes: Lines{Added: []string{}}, FDB: Lines{Removed: []string{"x"}}, RulesReordered: []string{"cali-INPUT", "<b>"}},
		{Node: "none", Networks: Lines{Added: []string{}, Removed: []string{}}, RulesReordered: []string{}},
	}
}

func TestTheResultsStreamedJSONIsOneEncodingsBytes(t *testing.T) {
	nodes := oddNodes()
	tests := []struct {
		name string
		r    *Result
	}{
		{"an empty result", &Result{}},
		{"only nodes", &Result{Nodes: nodes}},
		{"nodes and every other part", &Result{Nodes: nodes,
			Workloads:    []WorkloadDiff{{Change: Changed, Restarts: []string{"a/b"}}},
			TigeraStatus: []StatusDiff{{Name: "calico", Before: []string{"x"}}},
			Objects:      []ObjectChange{{Change: Changed, Fields: []FieldChange{{Path: "spec.x", Before: "<a>", After: "&"}}}},
			Reach:        &ReachDiff{Notes: []string{"n"}},
			Deferred:     []Deferred{{Field: "f"}}}},
		{"no nodes but objects", &Result{Objects: []ObjectChange{{Change: Added}}}},
		{"nodes and an empty reach difference", &Result{Nodes: nodes[:1], Reach: &ReachDiff{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got, want bytes.Buffer
			if err := tt.r.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(tt.r); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("the streamed JSON differs from one encoding:\n got: %s\nwant: %s", got.String(), want.String())
			}
		})
	}
}
