package engine

import (
	"errors"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The lab without the Windows dataplane: calico-node-windows is not
// rendered, so the Windows node's network is not ready and its pods lose
// their sandboxes. Its observed pods qualify for reuse by the input alone;
// the derivation must notice, while building, that a reused pod would
// change, and not return its twin.
func TestAReusedPodOnANodeWhoseReadinessChangesStopsTheDerivation(t *testing.T) {
	base, err := load.Load(load.Options{Lab: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := load.Load(load.Options{Filenames: []string{"../../examples/what-if/no-windows-dataplane.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	next := layer(base, w.Objects...)
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	d := settle(prev, base, next)
	if d == nil {
		t.Fatal("no pod of the lab qualifies for reuse: the case does not test the guard")
	}
	onWindows := 0
	for p := range d.input {
		for _, n := range prev.Nodes {
			if n.Name == p.Spec.NodeName && isWindows(n) {
				onWindows++
			}
		}
	}
	if onWindows == 0 {
		t.Fatal("no reused pod on the Windows node: the case does not test the guard")
	}
	c, err := build(next, false, d)
	switch {
	case errors.Is(err, errUnsettled):
	case err != nil:
		t.Fatal(err)
	case d.holds(prev, c):
		t.Error("the derivation holds though the Windows node's readiness changed under its reused pods")
	}
}

// layer is plan.Layer (the engine cannot import plan): objs replace theirs
// by key, the rest stay the same pointers.
func layer(base *model.Snapshot, objs ...*model.Object) *model.Snapshot {
	out := &model.Snapshot{Objects: append([]*model.Object(nil), base.Objects...), Network: base.Network}
	index := map[model.Key]int{}
	for i, o := range out.Objects {
		index[o.Key] = i
	}
	for _, o := range objs {
		if i, ok := index[o.Key]; ok {
			out.Objects[i] = o
			continue
		}
		out.Objects = append(out.Objects, o)
	}
	return out
}
