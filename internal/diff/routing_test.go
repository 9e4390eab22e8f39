package diff

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// A node's routing difference read through the shared lines equals the
// difference of its two whole tables, whatever lines its own routes and
// its own blocks repeat, add or leave out.
func TestANodesLinesThroughTheSharedOnesEqualThoseOfItsWholeTables(t *testing.T) {
	tests := []struct {
		name             string
		sharedA, sharedB []string
		ownersA, ownersB []string
		ownA, ownB       []string
		node             string
	}{
		{"every remote route replaced", []string{"b1 via x", "b2 via y", "b3 via n"}, []string{"b1 via X", "b2 via Y", "b3 via N"},
			[]string{"x", "y", "n"}, []string{"x", "y", "n"}, []string{"default", "blackhole b3"}, []string{"default", "blackhole b3"}, "n"},
		{"the node's own block moves to another node", []string{"b1 via x", "b2 via n"}, []string{"b1 via x", "b2 via y"},
			[]string{"x", "n"}, []string{"x", "y"}, []string{"blackhole b2"}, nil, "n"},
		{"an own route equals a shared line", []string{"a via x"}, []string{"a via x", "a via x"},
			[]string{"x"}, []string{"x", "y"}, []string{"a via x"}, nil, "n"},
		{"nothing differs", []string{"b1 via x"}, []string{"b1 via x"}, []string{"x"}, []string{"x"}, []string{"d"}, []string{"d"}, "n"},
		{"the node owns a shared line twice", []string{"c", "c", "d"}, []string{"c", "d"}, []string{"n", "n", "x"}, []string{"n", "x"}, nil, []string{"c"}, "n"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d", "e"}
	nodes := []string{"n", "x", "y"}
	for i := 0; i < 200; i++ {
		gen := func() ([]string, []string) {
			var l, o []string
			for j := r.IntN(6); j > 0; j-- {
				l = append(l, words[r.IntN(len(words))])
				o = append(o, nodes[r.IntN(len(nodes))])
			}
			return l, o
		}
		sa, oa := gen()
		sb, ob := gen()
		wa, _ := gen()
		wb, _ := gen()
		tests = append(tests, struct {
			name             string
			sharedA, sharedB []string
			ownersA, ownersB []string
			ownA, ownB       []string
			node             string
		}{fmt.Sprintf("random %d", i), sa, sb, oa, ob, wa, wb, "n"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newSharedLines(tt.sharedA, tt.ownersA), newSharedLines(tt.sharedB, tt.ownersB)
			got := nodeLines((&pairCache{}).get(a, b), tt.ownA, tt.ownB, a.byNode[tt.node], b.byNode[tt.node])
			whole := func(own, shared, owners []string) []string {
				out := append([]string(nil), own...)
				for i, s := range shared {
					if owners[i] != tt.node {
						out = append(out, s)
					}
				}
				return out
			}
			want := lines(whole(tt.ownA, tt.sharedA, tt.ownersA), whole(tt.ownB, tt.sharedB, tt.ownersB))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("through the shared lines %+v, from the whole tables %+v", got, want)
			}
		})
	}
}
