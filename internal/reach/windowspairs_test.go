package reach

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen/gentest"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// TestEveryWindowsPairOfAGeneratedClusterMatchesFullTraces builds a
// generated cluster with 20 Windows workers that observe nothing (no VTEP
// MAC, no DrPort name: the twin's placeholders) and, for every ordered pair
// of Windows nodes and each protocol, compares a cell's verdict with a full
// trace from a pod on the one to a pod on the other.
func TestEveryWindowsPairOfAGeneratedClusterMatchesFullTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated cluster")
	}
	o := gen.Options{Nodes: 24, WindowsNodes: 20, Namespaces: 3, Pods: 400, Services: 12, Policies: 4, Seed: 3, ObservedIPs: true}
	c, err := engine.Build(gentest.Snapshot(t, o, load.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	placeholders := 0
	for _, n := range c.Nodes {
		if n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] != "" {
			placeholders++
		}
	}
	if placeholders != 20 {
		t.Fatalf("%d nodes carry a placeholder VTEP MAC, want the 20 Windows nodes", placeholders)
	}
	e, err := trace.New(c)
	if err != nil {
		t.Fatal(err)
	}
	// Every Windows node routes to every other node's blocks, Windows or
	// Linux, with the VTEP MAC the node itself has.
	blocksOf := map[string]int{}
	for _, b := range c.IPAMBlocks {
		if b.Spec.Affinity != nil {
			blocksOf[strings.TrimPrefix(*b.Spec.Affinity, "host:")]++
		}
	}
	drMAC := map[string]string{}
	for _, n := range c.Nodes {
		if w := e.WindowsNode(n.Name); w != nil {
			drMAC[n.Name] = strings.ToLower(w.Networks()[1].DrMacAddress)
		}
	}
	for _, n := range c.Nodes {
		w := e.WindowsNode(n.Name)
		if w == nil {
			continue
		}
		routes := 0
		for _, p := range w.Networks()[1].Policies {
			if p.Type != windows.PolicyRemoteSubnetRoute {
				continue
			}
			routes++
			if want, ok := drMAC[p.Node]; ok && strings.ToLower(p.DistributedRouterMacAddress) != want {
				t.Errorf("%s routes to %s with DR MAC %s, but its DrPort has %s", n.Name, p.Node, p.DistributedRouterMacAddress, want)
			}
		}
		if want := len(c.IPAMBlocks) - blocksOf[n.Name]; routes != want {
			t.Errorf("%s has %d RemoteSubnetRoutes, want one per other node's block (%d)", n.Name, routes, want)
		}
	}
	for _, proto := range []trace.Proto{trace.ICMP, trace.TCP} {
		m, err := Compute(e, Options{AllNamespaces: true, Proto: proto})
		if err != nil {
			t.Fatal(err)
		}
		checked, allowed, services, across := windowsPairs(t, e, m)
		if want := 20 * 19; checked != want {
			t.Errorf("%s: %d Windows node pairs checked, want %d", proto, checked, want)
		}
		if allowed == 0 {
			t.Errorf("%s: no Windows pair is allowed: the check compares nothing delivered", proto)
		}
		t.Logf("%s: %d Windows node pairs agree with full traces (%d delivered); %d Service cells from Windows pods too (%d landing on another Windows node)", proto, checked, allowed, services, across)
	}
}

// windowsPairs traces, for every ordered pair of distinct Windows nodes,
// one pod on the first to one pod on the second, and compares the trace
// with the cell of their classes, then every Service column from one pod on
// each Windows node. It returns the pairs checked, how many were delivered,
// the Service cells checked and how many of those connections landed on a
// backend on another Windows node.
func windowsPairs(t *testing.T, e *trace.Engine, m *Matrix) (checked, delivered, services, across int) {
	t.Helper()
	type at struct {
		idx int // row or column
		m   classes.Member
	}
	rows, cols := map[int]at{}, map[int]at{} // by node index
	for i, s := range m.Sources {
		if s.class == nil || s.class.OS != "windows" {
			continue
		}
		for _, mb := range s.class.Members {
			if _, ok := rows[mb.Node]; !ok {
				rows[mb.Node] = at{i, mb}
			}
		}
	}
	for j, d := range m.Destinations {
		if d.class == nil || d.class.OS != "windows" || d.Kind != "pods" {
			continue
		}
		for _, mb := range d.class.Members {
			if _, ok := cols[mb.Node]; !ok {
				cols[mb.Node] = at{j, mb}
			}
		}
	}
	for a, src := range rows {
		for b, dst := range cols {
			if a == b {
				continue
			}
			c := m.At(src.idx, dst.idx)
			if c.Verdict == NotApplicable {
				continue
			}
			d := m.Destinations[dst.idx]
			s, err := e.ParseSource("pod/"+src.m.Pod.Namespace+"/"+src.m.Pod.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			tg, err := e.ParseTarget(dst.m.IP.String(), "")
			if err != nil {
				t.Fatal(err)
			}
			res := e.Trace(s, tg, d.Proto, d.Port)
			checked++
			if res.Delivered {
				delivered++
			}
			if c.Verdict != Partial && (c.Verdict == Allowed) != res.Delivered {
				t.Errorf("%s → %s (%s): cell %s (%s), trace %s: %s at %s %s", src.m.Pod.Name, dst.m.IP, flow(d.Proto, d.Port),
					c.Verdict, m.Reasons[c.Reason].Text, res.Outcome, res.Reason, res.AtNode, res.AtComp)
			}
		}
	}
	// Services from every Windows node: the cell against the trace, and
	// some connection must land on a backend on another Windows node.
	isWin := map[string]bool{}
	for _, n := range e.Cluster().Nodes {
		isWin[n.Name] = n.Labels["kubernetes.io/os"] == hybrid.OSWindows
	}
	for _, src := range rows {
		for j, d := range m.Destinations {
			if d.Kind != "service" {
				continue
			}
			c := m.At(src.idx, j)
			if c.Verdict == NotApplicable {
				continue
			}
			s, err := e.ParseSource("pod/"+src.m.Pod.Namespace+"/"+src.m.Pod.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			tg, err := e.ParseTarget("svc/"+d.Namespace+"/"+d.Name, "")
			if err != nil {
				t.Fatal(err)
			}
			res := e.Trace(s, tg, d.Proto, d.Port)
			services++
			if c.Verdict != Partial && (c.Verdict == Allowed) != res.Delivered {
				t.Errorf("%s → svc/%s/%s (%s): cell %s (%s), trace %s: %s at %s %s", src.m.Pod.Name, d.Namespace, d.Name, flow(d.Proto, d.Port),
					c.Verdict, m.Reasons[c.Reason].Text, res.Outcome, res.Reason, res.AtNode, res.AtComp)
			}
			if res.Delivered && res.DeliveredTo != nil && isWin[res.DeliveredTo.Node] && res.DeliveredTo.Node != src.m.Pod.Spec.NodeName {
				across++
			}
		}
	}
	if d := m.Destinations; len(d) > 0 && d[0].Proto != trace.ICMP && across == 0 {
		t.Error("no Service connection from a Windows pod lands on a backend on another Windows node")
	}
	return checked, delivered, services, across
}
