package reach

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// pairCheck is one full trace compared with its cell.
type pairCheck struct {
	row, col int
	src, dst string
}

// verifyAgainstTraces walks full traces between members of cells and
// compares each with the cell's verdict: an allowed cell must deliver, a
// denied one must not (a partial cell may do either). limit > 0 samples
// that many member pairs at random (seeded); 0 checks every pair.
func verifyAgainstTraces(t *testing.T, e *trace.Engine, m *Matrix, limit int) int {
	t.Helper()
	srcsOf := func(s Source) []string {
		if s.Kind == "node" {
			return []string{"node/" + s.node.Name}
		}
		var out []string
		for _, mb := range s.class.Members {
			out = append(out, "pod/"+mb.Pod.Namespace+"/"+mb.Pod.Name)
		}
		return out
	}
	dstsOf := func(d Destination) []string {
		if d.Kind == "service" {
			return []string{"svc/" + d.Namespace + "/" + d.Name}
		}
		var out []string
		for _, mb := range d.class.Members {
			out = append(out, mb.IP.String())
		}
		return out
	}
	self := func(s Source, d Destination, a, b string) bool {
		return s.class != nil && d.class != nil && s.class == d.class && a == "pod/"+podOf(s.class, b)
	}
	var checks []pairCheck
	if limit == 0 {
		for i, s := range m.Sources {
			for j, d := range m.Destinations {
				if m.At(i, j).Verdict == NotApplicable {
					continue
				}
				for _, a := range srcsOf(s) {
					for _, b := range dstsOf(d) {
						if !self(s, d, a, b) {
							checks = append(checks, pairCheck{i, j, a, b})
						}
					}
				}
			}
		}
	} else {
		r := rand.New(rand.NewPCG(1, 2))
		for tries := 0; len(checks) < limit && tries < 100*limit; tries++ {
			i, j := r.IntN(len(m.Sources)), r.IntN(len(m.Destinations))
			if m.At(i, j).Verdict == NotApplicable {
				continue
			}
			srcs, dsts := srcsOf(m.Sources[i]), dstsOf(m.Destinations[j])
			a, b := srcs[r.IntN(len(srcs))], dsts[r.IntN(len(dsts))]
			if !self(m.Sources[i], m.Destinations[j], a, b) {
				checks = append(checks, pairCheck{i, j, a, b})
			}
		}
	}
	for _, ck := range checks {
		src, err := e.ParseSource(ck.src, "")
		if err != nil {
			t.Fatal(err)
		}
		dst, err := e.ParseTarget(ck.dst, "")
		if err != nil {
			t.Fatal(err)
		}
		d := m.Destinations[ck.col]
		res := e.Trace(src, dst, d.Proto, d.Port)
		c := m.At(ck.row, ck.col)
		ok := c.Verdict == Partial || (c.Verdict == Allowed) == res.Delivered
		if !ok {
			t.Errorf("%s → %s (%s, cell %s → %s %s): cell %s (%s), trace %s: %s at %s %s",
				ck.src, ck.dst, flow(d.Proto, d.Port), m.Sources[ck.row].Label, d.Label, d.PortLabel(), c.Verdict, m.Reasons[c.Reason].Text, res.Outcome, res.Reason, res.AtNode, res.AtComp)
		}
	}
	if len(m.Stats.Mismatches) > 0 {
		t.Errorf("mismatches: %v", m.Stats.Mismatches)
	}
	return len(checks)
}

func podOf(c *classes.Class, ip string) string {
	for _, m := range c.Members {
		if m.IP.String() == ip {
			return m.Pod.Namespace + "/" + m.Pod.Name
		}
	}
	return fmt.Sprint("?", ip)
}

// checkDecisions compares reach's decision of each end (the class-level
// evaluator, or Felix's decision for a class a Calico policy selects) with
// the Felix calculation's Decide on every class's representative pod
// (peers: every class's representative address and every node address),
// and every compiled Windows endpoint's ACLs with trace.Engine.EndpointACL.
// limit > 0 samples that many class pairs.
func checkDecisions(t *testing.T, e *trace.Engine, limit int) {
	t.Helper()
	an := newAnalyzer(e, Options{AllNamespaces: true})
	an.prepare()
	x := e.Felix()
	w := an.newWorker()
	type pair struct{ a, b *classes.Class }
	var pairs []pair
	for _, a := range an.Classes {
		for _, b := range an.Classes {
			pairs = append(pairs, pair{a, b})
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	if limit > 0 && len(pairs) > limit {
		r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		pairs = pairs[:limit]
	}
	type flow struct {
		proto trace.Proto
		port  int
	}
	flows := func(b *classes.Class) []flow {
		out := []flow{{trace.ICMP, 0}, {trace.TCP, 80}, {trace.UDP, 53}}
		for _, p := range b.Ports {
			pr, _ := trace.ParseProto(p.Proto)
			out = append(out, flow{pr, p.Port})
		}
		return out
	}
	n := 0
	for _, p := range pairs {
		for _, f := range flows(p.b) {
			up := f.proto.Upper()
			gotIn := w.k8s(p.b, false, classes.Peer{Cls: p.a}, p.a.RepIP, f.proto, f.port).allowed
			wantIn := x.Decide(p.b.Rep, true, felix.Flow{Peer: p.a.RepIP, Proto: up, DstPort: int32(f.port)})
			gotEg := w.k8s(p.a, true, classes.Peer{Cls: p.b}, p.b.RepIP, f.proto, f.port).allowed
			wantEg := x.Decide(p.a.Rep, false, felix.Flow{Peer: p.b.RepIP, Proto: up, DstPort: int32(f.port)})
			if gotIn != wantIn.Allowed || gotEg != wantEg.Allowed {
				t.Errorf("%s → %s %s: ingress %t (index %t: %s), egress %t (index %t: %s)", p.a.Label, p.b.Label, flowString(f.proto, f.port),
					gotIn, wantIn.Allowed, wantIn.Reason, gotEg, wantEg.Allowed, wantEg.Reason)
			}
			n++
			for _, end := range []struct {
				c      *classes.Class
				peer   netip.Addr
				egress bool
			}{{p.b, p.a.RepIP, false}, {p.a, p.b.RepIP, true}} {
				if end.c.OS != "windows" {
					continue
				}
				comp := an.EndpointACLs(end.c.RepIP)
				dir := policy.Ingress
				if end.egress {
					dir = policy.Egress
				}
				want, ok := e.EndpointACL(end.c.Rep, dir, end.peer, f.proto, f.port)
				if !ok || comp == nil {
					t.Fatalf("no endpoint for %s", end.c.Label)
				}
				i := comp.Match(end.egress, end.peer, f.proto, f.port)
				rules, texts, none := comp.In, comp.InText, comp.InNone
				if end.egress {
					rules, texts, none = comp.Out, comp.OutText, comp.OutNone
				}
				got, gotRule := true, none
				if i >= 0 {
					got, gotRule = rules[i].Action == "Allow", texts[i]
				}
				// The compiled form names a rule by its policy and
				// index, the trace by its ACL ID: compare the
				// action, direction and priority.
				g, _, _ := strings.Cut(gotRule, " (")
				wr, _, _ := strings.Cut(want.Rule, " (")
				if got != want.Allowed || g != wr {
					t.Errorf("%s %s %s %s: compiled %t %s, engine %t %s", end.c.Label, dir, end.peer, flowString(f.proto, f.port), got, gotRule, want.Allowed, want.Rule)
				}
			}
		}
	}
	type classNode struct {
		b  *classes.Class
		nd *classes.NodeInfo
	}
	var cns []classNode
	for _, b := range an.Classes {
		for _, nd := range an.Nodes {
			cns = append(cns, classNode{b, nd})
		}
	}
	if limit > 0 && len(cns) > limit {
		r.Shuffle(len(cns), func(i, j int) { cns[i], cns[j] = cns[j], cns[i] })
		cns = cns[:limit]
	}
	for _, cn := range cns {
		b, nd := cn.b, cn.nd
		{
			for _, f := range flows(b) {
				up := f.proto.Upper()
				got := w.k8s(b, false, classes.Peer{IP: nd.IP}, nd.IP, f.proto, f.port).allowed
				want := x.Decide(b.Rep, true, felix.Flow{Peer: nd.IP, Proto: up, DstPort: int32(f.port)})
				if got != want.Allowed {
					t.Errorf("node %s → %s %s: %t, index %t (%s)", nd.Name, b.Label, flowString(f.proto, f.port), got, want.Allowed, want.Reason)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no decisions compared")
	}
}

func flowString(p trace.Proto, port int) string { return flow(p, port) }
