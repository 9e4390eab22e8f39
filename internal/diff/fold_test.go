package diff

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// routeLine is node i's route to node j's block, before (eth0, bird) or
// after (vxlan.calico) a change of the encapsulation.
func routeLine(j int, after bool) string {
	if after {
		return fmt.Sprintf("10.244.%d.0/26 via 10.244.%d.0 dev vxlan.calico onlink", j, j)
	}
	return fmt.Sprintf("10.244.%d.0/26 via 10.0.0.%d dev eth0 proto bird", j, j)
}

// encapNodes are n nodes of the OS whose routes to every other node's
// block are replaced, as a change of the pools' encapsulation does.
func encapNodes(os string, n int) []NodeDiff {
	var out []NodeDiff
	for i := range n {
		nd := NodeDiff{Node: fmt.Sprintf("%s-%02d", os, i), OS: os, Change: Changed}
		for j := range n {
			if j != i {
				nd.Routes.Removed = append(nd.Routes.Removed, routeLine(j, false))
				nd.Routes.Added = append(nd.Routes.Added, routeLine(j, true))
			}
		}
		slices.Sort(nd.Routes.Removed)
		slices.Sort(nd.Routes.Added)
		out = append(out, nd)
	}
	return out
}

// readNodes reads the nodes' lines back from WriteText's output: a folded
// node's are the shared lines less its "not" lines plus its own.
func readNodes(t *testing.T, text string) (nodes map[string][]Section, folded int) {
	t.Helper()
	titles := (&NodeDiff{}).Sections()
	index := map[string]int{}
	for i, s := range titles {
		index[s.Title] = i
	}
	shared := map[string][]Section{}
	nodes = map[string][]Section{}
	var cur []Section // the sections being read
	sec := -1
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "  shared by most of the "):
			var n int
			var os string
			if _, err := fmt.Sscanf(strings.TrimPrefix(l, "  shared by most of the "), "%d changed %s nodes", &n, &os); err != nil {
				t.Fatalf("shared head %q: %v", l, err)
			}
			cur = slices.Clone(titles)
			shared[os] = cur
			folded++
		case strings.HasPrefix(l, "  node/"):
			name, rest, _ := strings.Cut(strings.TrimPrefix(l, "  node/"), " (")
			os, tail, _ := strings.Cut(rest, ")")
			cur = slices.Clone(titles)
			if strings.HasPrefix(tail, ": the shared changes") {
				for i, s := range shared[os] {
					cur[i].Lines = Lines{Added: slices.Clone(s.Lines.Added), Removed: slices.Clone(s.Lines.Removed)}
				}
			}
			nodes[name] = cur
		case strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "      "):
			at := strings.LastIndex(l, ": +")
			if at < 0 {
				continue
			}
			var ok bool
			if sec, ok = index[strings.TrimSpace(l[:at])]; !ok {
				t.Fatalf("unknown section %q", l)
			}
		case strings.HasPrefix(l, "      not - "):
			cur[sec].Lines.Removed = slices.DeleteFunc(cur[sec].Lines.Removed, func(s string) bool { return s == l[len("      not - "):] })
		case strings.HasPrefix(l, "      not + "):
			cur[sec].Lines.Added = slices.DeleteFunc(cur[sec].Lines.Added, func(s string) bool { return s == l[len("      not + "):] })
		case strings.HasPrefix(l, "      - "):
			cur[sec].Lines.Removed = append(cur[sec].Lines.Removed, l[len("      - "):])
		case strings.HasPrefix(l, "      + "):
			cur[sec].Lines.Added = append(cur[sec].Lines.Added, l[len("      + "):])
		case l == "" || !strings.HasPrefix(l, "  "):
			cur = nil
		}
	}
	for _, secs := range nodes {
		for i := range secs {
			slices.Sort(secs[i].Lines.Added)
			slices.Sort(secs[i].Lines.Removed)
			if len(secs[i].Lines.Added) == 0 {
				secs[i].Lines.Added = nil
			}
			if len(secs[i].Lines.Removed) == 0 {
				secs[i].Lines.Removed = nil
			}
		}
	}
	return nodes, folded
}

func TestTheTextOutputFoldsWhatMostChangedNodesShareAndLosesNoLine(t *testing.T) {
	withOwn := encapNodes("linux", 12)
	withOwn[3].Felix.Added = []string{"add rule ip filter cali-fw-x accept"}
	withOwn[5].Routes.Added = append(withOwn[5].Routes.Added, "blackhole 10.244.5.64/26 proto 80")
	slices.Sort(withOwn[5].Routes.Added)
	withOwn[7].RulesReordered = []string{"cali-INPUT"}
	addedRemoved := encapNodes("linux", 11)
	addedRemoved[0].Change = Added
	addedRemoved[1].Change = Removed
	twoOS := append(encapNodes("linux", 10), encapNodes("windows", 10)...)
	for i := range twoOS[10:] {
		n := &twoOS[10+i]
		n.Networks, n.Routes = n.Routes, Lines{}
	}
	cases := []struct {
		name   string
		nodes  []NodeDiff
		folded int
	}{
		{"twelve nodes each lacking their own block's route fold into one shared list", encapNodes("linux", 12), 1},
		{"nodes with lines of their own and reordered rules keep them", withOwn, 1},
		{"an added and a removed node stay whole while the changed ones, fewer than the fold needs, print whole", addedRemoved, 0},
		{"nine changed nodes print whole", encapNodes("linux", 9), 0},
		{"the nodes of each OS fold apart", twoOS, 2},
		{"nodes that share no line print whole", func() []NodeDiff {
			ns := encapNodes("linux", 10)
			for i := range ns {
				ns[i].Routes = Lines{Added: []string{fmt.Sprintf("10.9.%d.0/24 dev eth0", i)}}
			}
			return ns
		}(), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (&Result{Nodes: tc.nodes}).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			got, folded := readNodes(t, b.String())
			if folded != tc.folded {
				t.Errorf("%d folds, want %d:\n%s", folded, tc.folded, b.String())
			}
			if len(got) != len(tc.nodes) {
				t.Fatalf("%d nodes read back, want %d", len(got), len(tc.nodes))
			}
			for _, n := range tc.nodes {
				if want := n.Sections(); !reflect.DeepEqual(got[n.Node], want) {
					t.Errorf("node %s read back as\n%v\nwant\n%v", n.Node, got[n.Node], want)
				}
				if len(n.RulesReordered) > 0 && !strings.Contains(b.String(), "the rules of "+n.RulesReordered[0]+" are reordered") {
					t.Errorf("node %s's reordered chain is not printed", n.Node)
				}
			}
		})
	}
}

func TestAFoldedNodePrintsOnlyWhereItDiffersFromTheShared(t *testing.T) {
	var b bytes.Buffer
	if err := (&Result{Nodes: encapNodes("linux", 12)}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 11 removed and 11 added lines of each node's, of 12 blocks: every
	// block's two lines are shared (11 of 12 nodes hold them), each node
	// lacks its own two.
	if n := strings.Count(out, "\n      - "); n != 12 {
		t.Errorf("%d removed lines printed, want the 12 shared ones:\n%s", n, out)
	}
	if n := strings.Count(out, "\n      not - "); n != 12 {
		t.Errorf("%d lacked removed lines, want one a node:\n%s", n, out)
	}
	want := "  node/linux-03 (linux): the shared changes, except\n" +
		"    routes (ip route): +11 -11\n" +
		"      not - " + routeLine(3, false) + "\n" +
		"      not + " + routeLine(3, true) + "\n"
	if !strings.Contains(out, want) {
		t.Errorf("node linux-03 is not printed as\n%s\nin\n%s", want, out)
	}
}
