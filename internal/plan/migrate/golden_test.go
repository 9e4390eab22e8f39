package migrate

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
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
