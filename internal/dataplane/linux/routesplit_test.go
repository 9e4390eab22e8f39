package linux

import (
	"slices"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

// A node's routes are its own routes and the shared routes to blocks it
// does not own; its neighbour and FDB entries are the shared ones of the
// other nodes' VTEPs (the comparison of twins reads them that way).
func TestANodesRoutesAreItsOwnAndTheSharedOnesOfBlocksItDoesNotOwn(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts load.Options
	}{
		{"the lab", load.Options{Lab: true}},
		{"the main cluster", load.Options{Filenames: []string{"../../../examples/main-cluster"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := load.Load(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			c, err := engine.Build(s)
			if err != nil {
				t.Fatal(err)
			}
			nodes, err := Compile(c)
			if err != nil {
				t.Fatal(err)
			}
			shared := 0
			for name, n := range nodes {
				if n.RouteClass() == "" {
					t.Fatalf("%s: no route class", name)
				}
				var got []string
				for _, r := range n.OwnRoutes() {
					got = append(got, r.String())
				}
				for _, r := range n.SharedRoutes() {
					if r.Node != name {
						got = append(got, r.String())
						shared++
					}
				}
				var want []string
				for _, r := range n.Routes() {
					want = append(want, r.String())
				}
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: own and shared routes\n%q\nwant\n%q", name, got, want)
				}
				ns, fs, owners := n.SharedL2()
				var gotN []Neighbor
				var gotFDB []FDBEntry
				if n.HasVXLAN() {
					for i := range ns {
						if owners[i] != name {
							gotN = append(gotN, ns[i])
							gotFDB = append(gotFDB, fs[i])
						}
					}
				}
				if !sameL2(gotN, n.Neighbors(), func(e Neighbor) string { return e.IP.String() + e.MAC.String() + e.Dev + e.State }) ||
					!sameL2(gotFDB, n.FDB(), func(e FDBEntry) string { return e.MAC.String() + e.Dst.String() + e.Dev }) {
					t.Errorf("%s: shared L2 entries %v %v, want %v %v", name, gotN, gotFDB, n.Neighbors(), n.FDB())
				}
			}
			if shared == 0 {
				t.Fatal("no shared route compared")
			}
		})
	}
}

func sameL2[T any](a, b []T, key func(T) string) bool {
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i] = key(a[i])
	}
	for i := range b {
		kb[i] = key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}
