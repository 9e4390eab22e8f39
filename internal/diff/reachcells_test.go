package diff

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// everyCell is the straightforward comparison cellDiffer stands for:
// every column pair of every row pair, each cell read through At.
func everyCell(_, _ *reach.Matrix, dsts []matched) func(a, b int) []int32 {
	all := make([]int32, len(dsts))
	for j := range all {
		all[j] = int32(j)
	}
	return func(int, int) []int32 { return all }
}

// copiedRows counts the rows m holds as their template's cells with
// columns of their own.
func copiedRows(m *reach.Matrix) int {
	n := 0
	for i := range m.Sources {
		if tmpl, diff := m.Held(i); tmpl != i && len(diff) > 0 {
			n++
		}
	}
	return n
}

// The reach comparison through the templates' cells gives what comparing
// every cell through At gives, for each change of an input reach reads,
// with and without node rows, with and without a Windows node.
func TestTheReachComparisonThroughTemplatesEqualsOneOfEveryCell(t *testing.T) {
	copied, changes := 0, 0
	for _, windows := range []int{0, 1} {
		base := generated(t, windows)
		cases := reachCases(t, base)
		for _, tc := range cases {
			if tc.reaches == fails || tc.onWindows && windows == 0 {
				continue
			}
			for _, opt := range []reach.Options{{AllNamespaces: true}, {AllNamespaces: true, Nodes: true}} {
				t.Run(fmt.Sprintf("%s (%d Windows nodes, node rows %v)", tc.name, windows, opt.Nodes), func(t *testing.T) {
					before, after := tc.clusters(base)
					ta, tb := NewTwin(before), NewTwin(after)
					got, err := compareReach(ta, tb, opt)
					if err != nil {
						t.Fatal(err)
					}
					want, err := compareReachWith(ta, tb, opt, everyCell)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("through the templates:\n%+v\nevery cell:\n%+v", got, want)
					}
					ma, _, _ := ta.reachMatrix(opt)
					mb, _, _ := tb.reachMatrix(opt)
					copied += copiedRows(ma) + copiedRows(mb)
					changes += len(want.Changes)
				})
			}
		}
	}
	// The comparison above would hold of any shortcut that reads every
	// cell: the matrices must hold rows copied from templates, and changed
	// cells.
	if copied == 0 || changes == 0 {
		t.Errorf("%d copied rows with columns of their own, %d changed cells: the test compares nothing the templates decide", copied, changes)
	}
}

// A twin whose reach inputs equal the one compared before it takes that
// twin's matrix, and the next comparison gives what one from fresh twins
// gives.
func TestATwinWithTheReachInputsOfTheOneBeforeTakesItsMatrix(t *testing.T) {
	base := generated(t, 0)
	cases := reachCases(t, base)
	pick := func(name string) reachCase {
		for _, tc := range cases {
			if tc.name == name {
				return tc
			}
		}
		t.Fatalf("no case %q", name)
		return reachCase{}
	}
	// a → b changes a pod's label, b → c nothing reach reads, c → d a
	// policy.
	b, d := *base, *base
	pick("a pod's label a policy selects").change(&b)
	c := b
	c.ConfigMaps = append(slices.Clone(b.ConfigMaps), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reach-test"}})
	d = c
	pick("a NetworkPolicy").change(&d)
	chain := []*model.Cluster{base, &b, &c, &d}
	twins := make([]*Twin, len(chain))
	for i, cl := range chain {
		twins[i] = NewTwin(cl)
	}
	var results []*ReachDiff
	for i := 1; i < len(twins); i++ {
		r, err := CompareTwins(twins[i-1], twins[i], Options{NoDataplane: true})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r.Reach)
	}
	if twins[2].matrix == nil || twins[2].matrix != twins[1].matrix {
		t.Errorf("the twin after a change reach does not read holds a matrix of its own")
	}
	for i := 1; i < len(chain); i++ {
		want, err := compareReachWith(NewTwin(chain[i-1]), NewTwin(chain[i]), reach.Options{AllNamespaces: true}, everyCell)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(results[i-1], want) {
			t.Errorf("comparison %d: %+v, want %+v", i, results[i-1], want)
		}
	}
	if len(results[2].Changes) == 0 {
		t.Errorf("the last comparison has no change: the test compares nothing the adopted matrix decides")
	}
}

// matchThroughMaps is match as a lookup of every key in the other side's
// map and one sort of the keys both hold: what the merge of sorted keys
// stands for.
func matchThroughMaps(a, b map[string]int) (out []matched, onlyA, onlyB int) {
	type ab struct{ a, b int }
	idx := map[ab]int{}
	keys := make([]string, 0, len(a))
	for k := range a {
		if _, ok := b[k]; ok {
			keys = append(keys, k)
		} else {
			onlyA++
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			onlyB++
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := ab{a[k], b[k]}
		i, ok := idx[p]
		if !ok {
			i = len(out)
			idx[p] = i
			out = append(out, matched{a: p.a, b: p.b})
		}
		out[i].keys = append(out[i].keys, k)
	}
	return out, onlyA, onlyB
}

// The rows and columns of two twins' matrices are paired alike through
// their sorted keys and through maps, for each change of an input reach
// reads.
func TestMatchingSortedKeysEqualsMatchingThroughMaps(t *testing.T) {
	base := generated(t, 1)
	onlyOne := 0
	for _, tc := range reachCases(t, base) {
		if tc.reaches == fails {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			before, after := tc.clusters(base)
			opt := reach.Options{AllNamespaces: true, Nodes: true}
			ma, _, err := NewTwin(before).reachMatrix(opt)
			if err != nil {
				t.Fatal(err)
			}
			mb, _, err := NewTwin(after).reachMatrix(opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, keys := range []func(*reach.Matrix) map[string]int{sourceKeyMap, destKeyMap} {
				a, b := keys(ma), keys(mb)
				got, ga, gb := match(a, b)
				want, wa, wb := matchThroughMaps(a, b)
				if !reflect.DeepEqual(got, want) || ga != wa || gb != wb {
					t.Errorf("merged: %+v %d %d\nthrough maps: %+v %d %d", got, ga, gb, want, wa, wb)
				}
				onlyOne += wa + wb
			}
		})
	}
	if onlyOne == 0 {
		t.Error("no key only one side holds: the test pairs nothing the merge skips")
	}
}

// A twin's matrix made ahead (PrepareReach, with the options the
// comparison then uses) is the one the comparison reads, and gives the
// same difference; options without reach make none.
func TestAPreparedTwinsMatrixIsTheOneItsComparisonReads(t *testing.T) {
	base := generated(t, 0)
	after := *base
	for _, tc := range reachCases(t, base) {
		if tc.name == "a NetworkPolicy" {
			tc.change(&after)
		}
	}
	none := NewTwin(base)
	if err := none.PrepareReach(Options{NoReach: true}); err != nil || none.matrix != nil {
		t.Errorf("PrepareReach without reach made a matrix (%v)", err)
	}
	prepared := NewTwin(base)
	if err := prepared.PrepareReach(Options{NoDataplane: true}); err != nil {
		t.Fatal(err)
	}
	made := prepared.matrix
	if made == nil {
		t.Fatal("PrepareReach made no matrix")
	}
	got, err := CompareTwins(prepared, NewTwin(&after), Options{NoDataplane: true})
	if err != nil {
		t.Fatal(err)
	}
	if prepared.matrix != made {
		t.Error("the comparison made the prepared twin's matrix again")
	}
	want, err := CompareTwins(NewTwin(base), NewTwin(&after), Options{NoDataplane: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Reach.Changes) == 0 {
		t.Fatal("the change alters no verdict: the test compares nothing")
	}
	if !reflect.DeepEqual(got.Reach, want.Reach) {
		t.Errorf("with the matrix prepared: %+v, want %+v", got.Reach, want.Reach)
	}
}
