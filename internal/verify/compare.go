package verify

import (
	"fmt"
	"sort"
)

// Change is how an item differs.
type Change string

const (
	// Missing: the twin expects it, the node lacks it.
	Missing Change = "missing"
	// Extra: the node holds it, the twin does not expect it.
	Extra Change = "extra"
	// Changed: both hold it, with different values (or the same values
	// under a different identity, such as an FDB entry whose MAC changed).
	Changed Change = "changed"
)

// Discrepancy is one difference between a node and the twin.
type Discrepancy struct {
	Node     string `json:"node"`
	Command  string `json:"command"`
	File     string `json:"file,omitempty"`
	Kind     string `json:"kind"`
	Change   Change `json:"change"`
	Expected *Item  `json:"expected,omitempty"`
	Actual   *Item  `json:"actual,omitempty"`
	Producer string `json:"producer"`
	// Children counts the items of a missing or extra parent (a set's
	// elements, an endpoint's policies) that are folded into it.
	Children int     `json:"children,omitempty"`
	Causes   []Cause `json:"causes"`
}

// Compare returns the differences between the twin's items and the
// node's, sorted by kind and key. Items repeated under one key (two load
// balancers with the same VIP and backends) are counted, not merged.
func Compare(node, command string, expected, actual []Item) []Discrepancy {
	exp, act := index(expected), index(actual)
	var missing, extra []Item
	var out []Discrepancy
	// Map order is fine here: out is sorted at the end by kind and key,
	// which are unique, and missing and extra are sorted before pairing.
	for k, e := range exp {
		a, ok := act[k]
		switch {
		case !ok:
			missing = append(missing, e)
		case a.Value != e.Value:
			e, a := e, a
			out = append(out, newDiscrepancy(node, command, Changed, &e, &a))
		}
	}
	for k, a := range act {
		if _, ok := exp[k]; !ok {
			extra = append(extra, a)
		}
	}
	byKey(missing)
	byKey(extra)
	// A missing and an extra item of one kind with the same value are one
	// item whose identity changed (a neighbour's MAC, an FDB entry's MAC);
	// so are the only missing and the only extra item of a group (the one
	// rule of a chain that changed).
	usedM, usedX := make([]bool, len(missing)), make([]bool, len(extra))
	pair := func(i, j int) {
		usedM[i], usedX[j] = true, true
		m, x := missing[i], extra[j]
		out = append(out, newDiscrepancy(node, command, Changed, &m, &x))
	}
	for i, m := range missing {
		for j, x := range extra {
			if !usedX[j] && x.Kind == m.Kind && x.Value == m.Value && m.Value != "" {
				pair(i, j)
				break
			}
		}
	}
	groupCount := func(items []Item, used []bool, kind, group string) (int, int) {
		n, at := 0, -1
		for i, it := range items {
			if !used[i] && it.Kind == kind && it.Group == group {
				n, at = n+1, i
			}
		}
		return n, at
	}
	for i, m := range missing {
		if usedM[i] || m.Group == "" {
			continue
		}
		nm, _ := groupCount(missing, usedM, m.Kind, m.Group)
		nx, j := groupCount(extra, usedX, m.Kind, m.Group)
		if nm == 1 && nx == 1 {
			pair(i, j)
		}
	}
	// Children of a missing or extra parent are counted in it.
	gone := map[string]int{}
	for i, m := range missing {
		if !usedM[i] {
			gone[parentRef(m.Kind, m.Key)] = -1
		}
	}
	for j, x := range extra {
		if !usedX[j] {
			gone[parentRef(x.Kind, x.Key)] = -1
		}
	}
	folded := func(it Item) bool {
		if _, ok := gone[it.Parent]; ok && it.Parent != "" {
			gone[it.Parent]--
			return true
		}
		return false
	}
	var keptM, keptX []Item
	for i, m := range missing {
		if !usedM[i] && !folded(m) {
			keptM = append(keptM, m)
		}
	}
	for j, x := range extra {
		if !usedX[j] && !folded(x) {
			keptX = append(keptX, x)
		}
	}
	for _, m := range keptM {
		m := m
		d := newDiscrepancy(node, command, Missing, &m, nil)
		d.Children = -1 - gone[parentRef(m.Kind, m.Key)]
		out = append(out, d)
	}
	for _, x := range keptX {
		x := x
		d := newDiscrepancy(node, command, Extra, nil, &x)
		d.Children = -1 - gone[parentRef(x.Kind, x.Key)]
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].item(), out[j].item()
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Key < b.Key
	})
	return out
}

func (d Discrepancy) item() *Item {
	if d.Expected != nil {
		return d.Expected
	}
	return d.Actual
}

func newDiscrepancy(node, command string, ch Change, exp, act *Item) Discrepancy {
	it := exp
	if it == nil {
		it = act
	}
	producer := it.Producer
	if producer == "" && act != nil {
		producer = act.Producer
	}
	return Discrepancy{
		Node: node, Command: command, Kind: it.Kind, Change: ch,
		Expected: exp, Actual: act, Producer: producer,
		Causes: CausesFor(it.Kind, ch, producer),
	}
}

// index keys items by kind and key; a repeated key gets " #2", " #3"…
// numbered by value, so the order the tool printed them in never matters.
func index(items []Item) map[string]Item {
	m := make(map[string]Item, len(items))
	var dup map[string][]Item
	for _, it := range items {
		k := it.Kind + "\x00" + it.Key
		prev, ok := m[k]
		if !ok {
			m[k] = it
			continue
		}
		if dup == nil {
			dup = map[string][]Item{}
		}
		if dup[k] == nil {
			dup[k] = []Item{prev}
		}
		dup[k] = append(dup[k], it)
	}
	for k, group := range dup {
		sort.SliceStable(group, func(i, j int) bool { return group[i].Value < group[j].Value })
		m[k] = group[0]
		for i, it := range group[1:] {
			it.Key = fmt.Sprintf("%s #%d", it.Key, i+2)
			m[it.Kind+"\x00"+it.Key] = it
		}
	}
	return m
}

// byKey sorts items by kind and key (their index keys are unique).
func byKey(items []Item) {
	sort.Slice(items, func(i, j int) bool {
		if items[i].Kind != items[j].Kind {
			return items[i].Kind < items[j].Kind
		}
		return items[i].Key < items[j].Key
	})
}
