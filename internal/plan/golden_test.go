package plan

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// Golden bundles: every format the command prints, and the files
// --output-dir writes, for the lab before its Windows node, the main
// cluster after its migration, and a plain `kubectl get -o yaml` dump.
func TestBundlesMatchTheirGoldenFiles(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		req   Request
	}{
		{"lab", []string{labBefore}, labRequest},
		{"main-cluster-migrated", []string{"../../examples/main-cluster", "../../examples/what-if/main-cluster-migrated.yaml"},
			Request{Nodes: []NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40", CPU: "4", Memory: "8Gi"}}}},
		{"main-cluster-refused", []string{"../../examples/main-cluster"},
			Request{Nodes: []NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40"}}}},
		{"plain", []string{"../../examples/plain"},
			Request{Nodes: []NodeRequest{{Name: "win-02", Address: "10.20.0.32", CPU: "4", Memory: "8Gi"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Compute(input(t, false, tc.files...), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var text, yml, js bytes.Buffer
			if err := WriteText(&text, b); err != nil {
				t.Fatal(err)
			}
			if err := WriteYAML(&yml, b); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, b); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+tc.name+".txt", text.String())
			golden.Check(t, "testdata/"+tc.name+".yaml", yml.String())
			golden.Check(t, "testdata/"+tc.name+".json", js.String())
			files := Files(b)
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			var dir strings.Builder
			for _, n := range names {
				dir.WriteString("==> " + n + " <==\n" + files[n] + "\n")
			}
			golden.Check(t, "testdata/"+tc.name+".dir.txt", dir.String())
		})
	}
}

// The golden inputs are clean plans but for the refusal: the exit code the
// command derives from them is part of what the files hold.
func TestGoldenPlansAreCleanOrRefused(t *testing.T) {
	cases := []struct {
		name    string
		files   []string
		req     Request
		refused bool
	}{
		{"lab", []string{labBefore}, labRequest, false},
		{"main cluster migrated", []string{"../../examples/main-cluster", "../../examples/what-if/main-cluster-migrated.yaml"},
			Request{Nodes: []NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40", CPU: "4", Memory: "8Gi"}}}, false},
		{"main cluster", []string{"../../examples/main-cluster"}, Request{Nodes: []NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40"}}}, true},
		{"plain", []string{"../../examples/plain"}, Request{Nodes: []NodeRequest{{Name: "win-02", Address: "10.20.0.32", CPU: "4", Memory: "8Gi"}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Compute(input(t, false, tc.files...), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if b.Refused != tc.refused {
				t.Fatalf("refused %v: %+v", b.Refused, b.Findings)
			}
			if !tc.refused && !b.Proof.Clean {
				t.Errorf("the predicted cluster is not clean: %+v %+v", b.Proof.Check, b.Proof.Traces)
			}
		})
	}
}
