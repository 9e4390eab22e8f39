package migrate

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// Golden migrations: the main cluster (with the reachability difference),
// the lab lacking only strictAffinity, and the lab already migrated.
func TestMigrationsMatchTheirGoldenFiles(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		opts  diff.Options
	}{
		{"main-cluster", []string{mainCluster}, diff.Options{}},
		{"lab-no-strict-affinity", []string{"../../../examples/lab", "../../../examples/what-if/no-strict-affinity.yaml"}, diff.Options{NoReach: true}},
		{"lab", []string{"../../../examples/lab"}, diff.Options{NoReach: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := migrate(t, Request{Diff: tc.opts}, tc.files...)
			var text, js bytes.Buffer
			if err := WriteText(&text, m); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, m); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/"+tc.name+".txt", text.String())
			golden.Check(t, "testdata/"+tc.name+".json", js.String())
			files := Files(m)
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

// A generated cluster of twelve nodes before its migration: the
// encapsulation step replaces every node's routes to the other nodes'
// blocks, which the text prints once for all of them (diff's fold).
func TestAGeneratedClustersMigrationMatchesItsGoldenFile(t *testing.T) {
	snap := beforeMigration(t, 12)
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteText(&text, m); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/generated-12-nodes.txt", text.String())
}
