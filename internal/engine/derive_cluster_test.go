package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// A derivation takes the previous build's copy of the Cluster object only
// when that build left it as the input gave it: a host whose name is not
// its Node's is renamed in the copy (with a note), so the copy is made
// again.
func TestTheClusterObjectIsCopiedAgainWhereTheBuildRenamedAHost(t *testing.T) {
	tests := []struct {
		name   string
		rename bool
		taken  bool
	}{
		{"a Cluster whose hosts are named as their Nodes is taken", false, true},
		{"a Cluster with an upper-case host name is copied again", true, false},
	}
	generated := smallGenSnapshot(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := generated
			var input *hybrid.Cluster
			for _, o := range generated.Objects {
				if cl, ok := o.Typed.(*hybrid.Cluster); ok {
					input = cl
					if tc.rename {
						cp := *o
						input = copyJSON(cl)
						input.Spec.Hosts[len(input.Spec.Hosts)-1].Name = strings.ToUpper(input.Spec.Hosts[len(input.Spec.Hosts)-1].Name)
						cp.Typed, cp.Raw = input, nil
						base = layer(generated, &cp)
					}
				}
			}
			if input == nil {
				t.Fatal("the generated cluster has no Cluster object")
			}
			next := layer(base, bgpOff(t, base))
			prev, err := Build(base)
			if err != nil {
				t.Fatal(err)
			}
			if k := recall(prev); k == nil || k.clusterInput != input {
				t.Fatal("the build kept no copy of the Cluster object: the case does not test the guard")
			}
			renamed := false
			for _, n := range prev.Notes {
				renamed = renamed || (n.Object.Kind == "Cluster" && strings.Contains(n.Message, "registers as Node"))
			}
			if renamed != tc.rename {
				t.Fatalf("the build renamed a host: %v, want %v", renamed, tc.rename)
			}
			derived, err := Derive(prev, base, next)
			if err != nil {
				t.Fatal(err)
			}
			if got := recall(derived).cluster == recall(prev).cluster; got != tc.taken {
				t.Errorf("the derivation took the previous copy: %v, want %v", got, tc.taken)
			}
			full, err := Build(next)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(derived, full) {
				t.Error("the derived twin differs from the full build")
			}
		})
	}
}
