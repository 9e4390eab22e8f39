package reach

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
)

// transferable reports whether a sub-result holds for another source of the
// signature: allowed, or denied by what does not name the source (an
// egress denial names it).
func (w *worker) transferable(s subRes) bool {
	return s.v == Allowed || s.v == Denied && !w.an.isEgressReason(s.reason)
}

// bothRels is the sub-result of class a → t for pods on other nodes and,
// where a and t's class share a node group, on the same node, whether or
// not a's own pods sit so (the pairs of another class of the signature
// may): ok when the two agree and the answer is transferable.
func (w *worker) bothRels(a *classes.Class, t target) (subRes, bool) {
	x := w.podPod(a, t, relCross)
	if w.an.Placements[a.Placement].Group == w.an.Placements[t.cls.Placement].Group && !w.pathsAlike(a, t) {
		if y := w.podPod(a, t, relSame); y != x {
			return x, false
		}
	}
	return x, w.transferable(x)
}

// pathsAlike reports whether traces showed every stage of the same-node
// and the cross-node path from a's placement to t's, with one answer
// each: a pod pair's decisions (ends) do not depend on the path, so the
// two sub-results are then one.
func (w *worker) pathsAlike(a *classes.Class, t target) bool {
	kc := w.knowOf(podPathKey(a, t, relCross))
	ks := w.knowOf(podPathKey(a, t, relSame))
	for i := 0; i < 4; i++ {
		if c := kc.stage(i); c.st == unknown || c != ks.stage(i) {
			return false
		}
	}
	return kc.srcAt == ks.srcAt
}

// podCopyable reports whether a template row's pod cell to class b holds
// for every source of the signature: every pair placement gives one
// transferable answer. A Windows destination whose ACLs judge its ingress
// matches the source's address, which the signature does not cover.
func (w *worker) podCopyable(a *classes.Class, d *Destination) bool {
	if a == d.class || d.class.ACLIn {
		return false
	}
	_, ok := w.bothRels(a, d.tgt)
	return ok
}

// svcCopyable is podCopyable for a Service cell: copyable when the node
// group's view balances the port and every backend, on the same node or
// another, gives one transferable answer (the cell is then that answer for
// any source of the signature whose class is not a backend), or when the
// view does not balance it and the first stage fails (a fact of the
// placement).
func (w *worker) svcCopyable(a *classes.Class, d *Destination, cell Cell) bool {
	if d.itpLocal || d.gviews == nil {
		return false
	}
	v := d.gviews[w.an.Placements[a.Placement].Group]
	if v == nil || !v.pass {
		return cell.Verdict == Denied && cell.Also < 0 && !w.an.isEgressReason(cell.Reason)
	}
	var first subRes
	for i, t := range w.an.targets(v, d.Proto) {
		var s subRes
		switch {
		case t.cls == a || t.cls != nil && t.cls.ACLIn:
			return false
		case t.cls != nil:
			var ok bool
			if s, ok = w.bothRels(a, t.tgt); !ok {
				return false
			}
		default:
			s = w.toHost(a, nil, t.host, d.Proto, relCross)
			if y := w.toHost(a, nil, t.host, d.Proto, relSame); y != s || !w.transferable(s) {
				return false
			}
		}
		if i == 0 {
			first = s
		} else if s != first {
			return false
		}
	}
	return true
}

// rowFrom fills source a's row r from the template row of its signature
// (tmpl, by source t at index ti): a cell the template marked copyable is
// the template's, with t's "no NetworkPolicy selects … for egress" reason
// made a's, unless it may hold otherwise for a (markUnlike: an ingress
// rule tells a and t apart, a Service balances to such a class or to a,
// or the column is a's own); those and the columns the template could not
// mark (nonCopy) are computed, and kept where they differ from the copy.
func (w *worker) rowFrom(src *Source, cols []Destination, r *row, ti int, t *Source, tmpl []Cell, nonCopy []int32) {
	w.startRow(src, cols)
	a := src.class
	w.markUnlike(a, t.class, len(cols))
	r.tmpl, r.fromEg, r.toEg = ti, t.class.NoEg, a.NoEg
	todo := w.unlikeCol // markUnlike made it afresh for this row
	for _, j := range nonCopy {
		todo.Set(int(j))
	}
	for _, j := range w.an.podCols[a.ID] {
		todo.Set(int(j))
	}
	w.unlike.Each(func(id int) {
		for _, j := range w.an.podCols[id] {
			todo.Set(int(j))
		}
	})
	// The cells are computed into the worker's buffer and the row keeps
	// exactly the ones that differ.
	w.diffJ, w.diffC = w.diffJ[:0], w.diffC[:0]
	todo.Each(func(j int) {
		c := w.cell(src, &cols[j])
		if c != r.copied(tmpl[j]) {
			w.diffJ = append(w.diffJ, int32(j))
			w.diffC = append(w.diffC, c)
		}
	})
	r.diffCols = slices.Clone(w.diffJ)
	r.diffCells = slices.Clone(w.diffC)
}

// indexPodCols lists, per class, the pod columns it is the destination of
// (rowFrom).
func (an *analyzer) indexPodCols() {
	an.podCols = make([][]int32, len(an.Classes))
	for j := range an.cols {
		if d := &an.cols[j]; d.Kind == "pods" && d.class != nil {
			an.podCols[d.class.ID] = append(an.podCols[d.class.ID], int32(j))
		}
	}
}

// markUnlike marks what of a template row of source t may not hold for
// source a, which shares t's signature: the classes an ingress rule
// protects whose peers match one of a and t but not the other (unlike),
// and the Service columns (unlikeCol) whose backends, as a's node group
// balances the port, include such a class or a itself.
func (w *worker) markUnlike(a, t *classes.Class, ncols int) {
	an := w.an
	w.unlike = w.unlike.Reset(len(an.Classes))
	w.unlikeCol = w.unlikeCol.Reset(ncols)
	backendOf := an.backendCols(an.Placements[a.Placement].Group)
	mark := func(id int32) {
		if !w.unlike.Has(int(id)) {
			w.unlike.Set(int(id))
			for _, j := range backendOf[id] {
				w.unlikeCol.Set(int(j))
			}
		}
	}
	for _, r := range an.inRules {
		if r.Bits.Has(a.ID) != r.Bits.Has(t.ID) {
			for _, id := range an.protects[r.Pol] {
				mark(id)
			}
		}
	}
	for _, r := range an.calicoInRules {
		if r.bits.Has(a.ID) != r.bits.Has(t.ID) {
			for _, id := range r.protects {
				mark(id)
			}
		}
	}
	for _, j := range backendOf[a.ID] {
		w.unlikeCol.Set(int(j))
	}
}

// backendCols lists, per class, the Service columns whose backends as
// node group g's view balances the port include the class (once per
// group).
func (an *analyzer) backendCols(g int) [][]int32 {
	an.bcMu.Lock()
	defer an.bcMu.Unlock()
	if out, ok := an.bcByGroup[g]; ok {
		return out
	}
	out := make([][]int32, len(an.Classes))
	for j := range an.cols {
		d := &an.cols[j]
		if d.Kind != "service" || d.gviews == nil {
			continue
		}
		if v := d.gviews[g]; v != nil && v.pass {
			for _, x := range an.targets(v, d.Proto) {
				if x.cls != nil {
					if l := out[x.cls.ID]; len(l) == 0 || l[len(l)-1] != int32(j) {
						out[x.cls.ID] = append(l, int32(j))
					}
				}
			}
		}
	}
	if an.bcByGroup == nil {
		an.bcByGroup = map[int][][]int32{}
	}
	an.bcByGroup[g] = out
	return out
}

// indexIngress lists the ingress rules with peers and, per policy, the
// classes it selects for ingress (markUnlike).
func (an *analyzer) indexIngress() {
	an.inRules, an.protects = nil, map[*classes.Npol][]int32{}
	for _, c := range an.Classes {
		for _, p := range c.InPols {
			an.protects[p] = append(an.protects[p], int32(c.ID))
		}
	}
	for _, list := range an.Pol.ByNS {
		for _, p := range list {
			if len(an.protects[p]) == 0 {
				continue
			}
			for _, r := range p.InRules {
				if !r.All {
					an.inRules = append(an.inRules, r)
				}
			}
		}
	}
}

// calicoInRule is an ingress rule of a projectcalico.org policy, as
// markUnlike reads it: the classes whose pods its source side matches,
// and the classes the policy selects for ingress.
type calicoInRule struct {
	bits     classes.Bitset
	protects []int32
}

// indexCalicoIngress lists the Calico policies' ingress rules with the
// classes each matches as a source (felix.Calc.PeerSideMatches on the
// class's representative) and the classes it protects.
func (an *analyzer) indexCalicoIngress() {
	an.calicoInRules = nil
	if !an.HasCalico {
		return
	}
	fc := an.E.Felix()
	protects := map[*felix.Policy][]int32{}
	for _, c := range an.Classes {
		for _, t := range c.FIn {
			for _, p := range t.Policies {
				if p.Kind != felix.KindKubernetes {
					protects[p] = append(protects[p], int32(c.ID))
				}
			}
		}
	}
	for _, p := range fc.Policies {
		if len(protects[p]) == 0 {
			continue
		}
		for i := range p.In {
			r := calicoInRule{bits: classes.NewBitset(len(an.Classes)), protects: protects[p]}
			for _, c := range an.Classes {
				if c.FEP == nil {
					c.FEP = fc.EndpointOf(c.Rep)
				}
				if fc.PeerSideMatches(p, &p.In[i], true, c.RepIP, c.FEP) {
					r.bits.Set(c.ID)
				}
			}
			an.calicoInRules = append(an.calicoInRules, r)
		}
	}
}

// markEgress notes a reason that names its source (an egress decision).
func (an *analyzer) markEgress(id int32) {
	an.rmu.Lock()
	if an.egressIDs == nil {
		an.egressIDs = map[int32]bool{}
	}
	an.egressIDs[id] = true
	an.rmu.Unlock()
}

func (an *analyzer) isEgressReason(id int32) bool {
	an.rmu.Lock()
	defer an.rmu.Unlock()
	return an.egressIDs[id]
}

// sourceSignature is what of class a every cell of its row reads as a
// source: its placement and OS, the policies selecting it for egress, and
// the ACLs that judge its egress on Windows. Which ingress rules match it
// matters only for the destinations those rules protect (markUnlike).
func (an *analyzer) sourceSignature(a *classes.Class) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\x00%s\x00", a.Placement, a.OS)
	for _, p := range a.EgPols {
		b.WriteString(p.Name)
		b.WriteByte(1)
	}
	if a.ACLOut {
		fmt.Fprintf(&b, "\x00acl%p", a.ACL)
	}
	if a.CalicoOut {
		// Felix's decision reads the source's own endpoint.
		fmt.Fprintf(&b, "\x00calico%d", a.ID)
	}
	return b.String()
}
