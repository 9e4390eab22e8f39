package diff

import (
	"bufio"
	"slices"
	"strconv"
)

// foldMin is the number of changed nodes of one OS from which the text
// output prints the lines most of them share once. A change of the
// cluster's routing (the encapsulation of the pools, say) replaces on
// every node the routes to every other node's blocks: listed node by node,
// a thousand nodes print some two million lines that differ only by the
// node's own blocks. JSON lists every node's lines whole.
const foldMin = 10

// fold is what the nodes of one OS whose dataplane changes share: per
// section (in NodeDiff.Sections order), the lines added and removed on more
// than half of them.
type fold struct {
	os     string
	nodes  int
	shared []Lines
}

// folds are the node groups the text output folds, in the order their
// OS first comes in nodes: the changed nodes of each OS, when there are at
// least foldMin and they share a line.
func folds(nodes []NodeDiff) []*fold {
	byOS := map[string][]*NodeDiff{}
	var order []string
	for i := range nodes {
		n := &nodes[i]
		if n.Change != Changed {
			continue
		}
		if _, ok := byOS[n.OS]; !ok {
			order = append(order, n.OS)
		}
		byOS[n.OS] = append(byOS[n.OS], n)
	}
	var out []*fold
	for _, os := range order {
		group := byOS[os]
		if len(group) < foldMin {
			continue
		}
		f := &fold{os: os, nodes: len(group)}
		secs := make([][]Section, len(group))
		for i, n := range group {
			secs[i] = n.Sections()
		}
		shares := false
		for s := range secs[0] {
			var sl Lines
			sl.Removed = majority(secs, func(ns []Section) []string { return ns[s].Lines.Removed })
			sl.Added = majority(secs, func(ns []Section) []string { return ns[s].Lines.Added })
			shares = shares || !sl.Empty()
			f.shared = append(f.shared, sl)
		}
		if shares {
			out = append(out, f)
		}
	}
	return out
}

// majority are the lines more than half of the nodes list, sorted; each
// node is given by its sections.
func majority(nodes [][]Section, lines func([]Section) []string) []string {
	count := map[string]int{}
	for _, n := range nodes {
		for _, l := range lines(n) {
			count[l]++
		}
	}
	var out []string
	for l, c := range count {
		if 2*c > len(nodes) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// without splits a node's sorted lines against the sorted shared ones:
// the shared lines the node lacks, and the node's lines not shared.
func without(node, shared []string) (lacks, own []string) {
	i, j := 0, 0
	for i < len(node) || j < len(shared) {
		switch {
		case j == len(shared) || (i < len(node) && node[i] < shared[j]):
			own = append(own, node[i])
			i++
		case i == len(node) || shared[j] < node[i]:
			lacks = append(lacks, shared[j])
			j++
		default:
			i++
			j++
		}
	}
	return lacks, own
}

// writeShared prints what the fold's nodes share.
func (f *fold) writeShared(bw *bufio.Writer, titles []Section) {
	bw.WriteString("  shared by most of the " + strconv.Itoa(f.nodes) + " changed " + f.os + " nodes (each node below lists where it differs):\n")
	for s, sl := range f.shared {
		if sl.Empty() {
			continue
		}
		bw.WriteString("    " + titles[s].Title + ": +" + strconv.Itoa(len(sl.Added)) + " -" + strconv.Itoa(len(sl.Removed)) + "\n")
		writeLines(bw, "      - ", sl.Removed)
		writeLines(bw, "      + ", sl.Added)
	}
}

// writeNode prints one node of the fold: the shared lines it lacks
// ("not -", "not +") and its own lines, under its real counts.
func (f *fold) writeNode(bw *bufio.Writer, n *NodeDiff) {
	bw.WriteString("  node/" + n.Node + " (" + n.OS + "): the shared changes")
	secs := n.Sections()
	same := true
	for s, sec := range secs {
		if !slices.Equal(sec.Lines.Removed, f.shared[s].Removed) || !slices.Equal(sec.Lines.Added, f.shared[s].Added) {
			same = false
			break
		}
	}
	if same {
		bw.WriteString("\n")
		return
	}
	bw.WriteString(", except\n")
	for s, sec := range secs {
		lacksR, ownR := without(sec.Lines.Removed, f.shared[s].Removed)
		lacksA, ownA := without(sec.Lines.Added, f.shared[s].Added)
		if len(lacksR)+len(ownR)+len(lacksA)+len(ownA) == 0 {
			continue
		}
		bw.WriteString("    " + sec.Title + ": +" + strconv.Itoa(len(sec.Lines.Added)) + " -" + strconv.Itoa(len(sec.Lines.Removed)) + "\n")
		writeLines(bw, "      not - ", lacksR)
		writeLines(bw, "      not + ", lacksA)
		writeLines(bw, "      - ", ownR)
		writeLines(bw, "      + ", ownA)
	}
}

// writeLines writes each line after the prefix; the lines are most of a
// large cluster's output: written without formatting each.
func writeLines(bw *bufio.Writer, prefix string, lines []string) {
	for _, l := range lines {
		bw.WriteString(prefix)
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
}

// foldOf is the fold that holds the node, if any.
func foldOf(fs []*fold, n *NodeDiff) *fold {
	if n.Change != Changed {
		return nil
	}
	for _, f := range fs {
		if f.os == n.OS {
			return f
		}
	}
	return nil
}
