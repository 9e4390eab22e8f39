package diff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// compareReach computes both twins' reach matrices and reports the cells
// whose verdict changes. Classes need not match between the twins (a new
// policy splits a class): rows are matched through the pods (and nodes)
// both hold, columns through the pods at a port and the Service ports, and
// each pair of (before row, after row) × (before column, after column)
// that some pod pair falls into is compared once.
func compareReach(before, after *Twin, opt reach.Options) (*ReachDiff, error) {
	ma, err := before.reachMatrix(opt)
	if err != nil {
		return nil, fmt.Errorf("the before twin's reach: %w", err)
	}
	mb, err := after.reachMatrix(opt)
	if err != nil {
		return nil, fmt.Errorf("the after twin's reach: %w", err)
	}
	srcs, onlyA, onlyB := match(sourceKeys(ma), sourceKeys(mb))
	dsts, donlyA, donlyB := match(destKeys(ma), destKeys(mb))
	rd := &ReachDiff{}
	for _, s := range srcs {
		for _, d := range dsts {
			ca, cb := ma.At(s.a, d.a), mb.At(s.b, d.b)
			// Only the verdict counts: reasons name classes, whose labels
			// change when a class splits. They are read only for the
			// cells that change.
			if ca.Verdict == cb.Verdict {
				continue
			}
			va, vb := verdict(ma, ca), verdict(mb, cb)
			src, dst := &mb.Sources[s.b], &mb.Destinations[d.b]
			ch := ReachChange{From: src.Label, To: dst.Label, Port: dst.Port, Proto: string(dst.Proto),
				Before: va, After: vb, Effect: Altered}
			if src.Kind == "pods" {
				ch.FromPods = s.keys
			}
			if dst.Kind == "pods" {
				for _, k := range d.keys {
					pod, _, _ := strings.Cut(k, " ")
					ch.ToPods = append(ch.ToPods, pod)
				}
			}
			switch {
			case vb.Verdict == reach.Allowed.String():
				ch.Effect = Gained
			case va.Verdict == reach.Allowed.String():
				ch.Effect = Lost
			}
			rd.Changes = append(rd.Changes, ch)
		}
	}
	sort.Slice(rd.Changes, func(i, j int) bool {
		a, b := rd.Changes[i], rd.Changes[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		if a.Proto != b.Proto {
			return a.Proto < b.Proto
		}
		return strings.Join(a.FromPods, ",")+"|"+strings.Join(a.ToPods, ",") < strings.Join(b.FromPods, ",")+"|"+strings.Join(b.ToPods, ",")
	})
	if onlyA+onlyB > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("sources only one twin has are not compared: %d only before, %d only after", onlyA, onlyB))
	}
	if donlyA+donlyB > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("destinations only one twin has are not compared: %d only before, %d only after", donlyA, donlyB))
	}
	return rd, nil
}

func verdict(m *reach.Matrix, c reach.Cell) Verdict {
	v := Verdict{Verdict: c.Verdict.String()}
	v.Reason, v.Hop = m.Why(c)
	return v
}

// sourceKeys maps each pod ("namespace/name") and node ("node/NAME") to
// its row.
func sourceKeys(m *reach.Matrix) map[string]int {
	out := map[string]int{}
	for i, s := range m.Sources {
		if s.Kind == "node" {
			out[s.Label] = i
			continue
		}
		for _, p := range s.Pods {
			out[s.Namespace+"/"+p] = i
		}
	}
	return out
}

// destKeys maps each pod at a port ("namespace/name port/proto") and each
// Service port ("svc/namespace/name port/proto") to its column.
func destKeys(m *reach.Matrix) map[string]int {
	out := map[string]int{}
	for j, d := range m.Destinations {
		at := " " + strconv.Itoa(d.Port) + "/" + string(d.Proto)
		if d.Kind == "service" {
			out["svc/"+d.Namespace+"/"+d.Name+at] = j
			continue
		}
		for _, p := range d.Pods {
			out[d.Namespace+"/"+p+at] = j
		}
	}
	return out
}

// matched is a row (or column) of each matrix and the keys that fall into
// both, sorted.
type matched struct {
	a, b int
	keys []string
}

// match groups the keys both sides hold by their (before, after) index
// pair, in the order of each group's first key; it also counts the keys
// only one side holds.
func match(a, b map[string]int) (out []matched, onlyA, onlyB int) {
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
