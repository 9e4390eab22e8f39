package aggregate

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/output"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// genEngine builds a cluster of internal/gen's shape with the given
// number of nodes (30 pods per node, a tenth Windows, the generator's
// Services and policy mix), drawn with seed.
func genEngine(tb testing.TB, nodes int, seed uint64) *trace.Engine {
	tb.Helper()
	o := gentest.Shape(nodes)
	o.WindowsNodes, o.Seed, o.PlainNodes = nodes/10, seed, true
	c, err := engine.Build(gentest.Snapshot(tb, o, load.Options{}))
	if err != nil {
		tb.Fatal(err)
	}
	e, err := trace.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// pairCell is a cell as the pod-by-pod expansion counts it.
type pairCell struct {
	c       Counts
	reasons map[reach.Reason]int64
}

// expand counts every connection the matrix stands for one by one: each
// source pod (or node) with each destination pod at each column, or with
// each Service column, a pod and itself left out, each taking its class
// cell's verdict. It is the quadratic answer Fold must equal.
func expand(m *reach.Matrix, by By) map[[2]string]*pairCell {
	srcGroups := func(s reach.Source) (names, pods []string) {
		switch {
		case s.Kind == "node" && by == ByNamespace:
			return []string{NodesGroup}, []string{""}
		case s.Kind == "node":
			return []string{s.Label}, []string{""}
		}
		for k, p := range s.Pods {
			if by == ByNamespace {
				names = append(names, s.Namespace)
			} else {
				names = append(names, s.Workloads[k])
			}
			pods = append(pods, s.Namespace+"/"+p)
		}
		return names, pods
	}
	dstGroups := func(d reach.Destination) (names, pods []string) {
		switch {
		case d.Kind == "service" && by == ByNamespace:
			return []string{d.Namespace}, []string{""}
		case d.Kind == "service":
			return []string{d.Label}, []string{""}
		}
		for k, p := range d.Pods {
			if by == ByNamespace {
				names = append(names, d.Namespace)
			} else {
				names = append(names, d.Workloads[k])
			}
			pods = append(pods, d.Namespace+"/"+p)
		}
		return names, pods
	}
	out := map[[2]string]*pairCell{}
	for i, s := range m.Sources {
		sg, sp := srcGroups(s)
		for j, d := range m.Destinations {
			c := m.At(i, j)
			dg, dp := dstGroups(d)
			for a := range sg {
				for b := range dg {
					if sp[a] != "" && sp[a] == dp[b] {
						continue
					}
					k := [2]string{sg[a], dg[b]}
					x := out[k]
					if x == nil {
						x = &pairCell{reasons: map[reach.Reason]int64{}}
						out[k] = x
					}
					x.c.add(c.Verdict, 1)
					if c.Verdict == reach.Denied {
						x.reasons[m.Reasons[c.Reason]]++
					}
				}
			}
		}
	}
	return out
}

func TestAFoldedCellIsTheCountOfItsPodPairs(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		e := genEngine(t, 40, seed)
		m, err := reach.Compute(e, reach.Options{AllNamespaces: true, Nodes: true})
		if err != nil {
			t.Fatal(err)
		}
		copied, diffs := 0, 0
		for i := range m.Sources {
			if tm, d := m.Held(i); tm != i {
				copied++
				diffs += len(d)
			}
		}
		if copied == 0 || diffs == 0 {
			t.Fatalf("seed %d: %d rows copied from templates with %d differences: the fold's template path is not exercised", seed, copied, diffs)
		}
		for _, by := range []By{ByNamespace, ByWorkload} {
			for _, only := range []bool{false, true} {
				t.Run(fmt.Sprintf("seed %d by %s only denied %t", seed, by, only), func(t *testing.T) {
					want := expand(m, by)
					v := Fold(m, by, only)
					got := map[[2]string]Cell{}
					for _, c := range v.Cells {
						got[[2]string{c.From, c.To}] = c
					}
					denied := 0
					for k, w := range want {
						if w.c.Pairs() == 0 || only && w.c.Denied == 0 {
							continue
						}
						if w.c.Denied > 0 {
							denied++
						}
						g, ok := got[k]
						if !ok {
							t.Errorf("%s → %s: missing, want %+v", k[0], k[1], w.c)
							continue
						}
						delete(got, k)
						if g.Counts != w.c || g.Pairs != w.c.Pairs() || g.Verdict != w.c.Verdict() {
							t.Errorf("%s → %s: %s %d %+v, want %s %+v", k[0], k[1], g.Verdict, g.Pairs, g.Counts, w.c.Verdict(), w.c)
						}
						rs := map[reach.Reason]int64{}
						for _, r := range g.Reasons {
							rs[reach.Reason{Hop: r.Hop, Text: r.Reason}] += r.Pairs
						}
						if fmt.Sprint(rs) != fmt.Sprint(w.reasons) {
							t.Errorf("%s → %s: reasons %v, want %v", k[0], k[1], rs, w.reasons)
						}
					}
					for k := range got {
						t.Errorf("%s → %s: a cell the pairs do not have", k[0], k[1])
					}
					if denied == 0 {
						t.Errorf("no cell with denied connections: the generated cluster should deny some")
					}
				})
			}
		}
	}
}

func TestParseByReadsNamespaceAndWorkload(t *testing.T) {
	cases := []struct {
		name, in string
		want     By
		err      bool
	}{
		{"namespace", "namespace", ByNamespace, false},
		{"its short name", "ns", ByNamespace, false},
		{"workload", "workload", ByWorkload, false},
		{"a node is no grouping", "node", "", true},
		{"nothing is no grouping", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBy(tc.in)
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("ParseBy(%q) = %q, %v", tc.in, got, err)
			}
		})
	}
}

// BenchmarkReachBy compares `reach -A` printed as the whole matrix with
// the matrix folded by namespace and by workload, on a cluster of
// internal/gen's shape with HYBRID_BENCH_REACH_BY_NODES nodes (default
// 100; 1000 is the documented figure). compute is reach.Compute, which
// every view shares; the others start from its matrix.
func BenchmarkReachBy(b *testing.B) {
	nodes := 100
	if s := os.Getenv("HYBRID_BENCH_REACH_BY_NODES"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			nodes = n
		}
	}
	t0 := time.Now()
	e := genEngine(b, nodes, 1)
	b.Logf("%d nodes, %d pods: built in %v", nodes, len(e.Cluster().Pods), time.Since(t0))
	opt := reach.Options{AllNamespaces: true}
	m, err := reach.Compute(e, opt)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d pods, %d classes, %d×%d cells, %d held", m.Stats.Pods, m.Stats.Classes, len(m.Sources), len(m.Destinations), m.Stats.Stored)
	b.Run("compute", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := reach.Compute(e, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("print-matrix", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := output.WriteText(io.Discard, m); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The workload view of a whole cluster has about as many cells as the
	// class matrix (most workloads reach most others, and this shape
	// denies some connections between most pairs): at 1,000 nodes that is
	// tens of millions of cells and gigabytes, so it is measured on small
	// clusters only.
	for _, tc := range []struct {
		by   By
		only bool
	}{{ByNamespace, false}, {ByNamespace, true}, {ByWorkload, true}} {
		name := "fold-" + string(tc.by)
		if tc.only {
			name += "-only-denied"
		}
		b.Run(name, func(b *testing.B) {
			if tc.by == ByWorkload && nodes > 200 {
				b.Skipf("the workload view of %d nodes is about as large as the class matrix", nodes)
			}
			var v *View
			for i := 0; i < b.N; i++ {
				v = Fold(m, tc.by, tc.only)
				if err := WriteTable(io.Discard, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(v.Cells)), "cells")
		})
	}
}
