package plan

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Layer is base with objs added or replacing theirs by key, the way a later
// -f file stacks on an earlier one. base is not changed; the node network
// stated on the command line carries over.
func Layer(base *model.Snapshot, objs ...*model.Object) *model.Snapshot {
	out := &model.Snapshot{Objects: make([]*model.Object, len(base.Objects), len(base.Objects)+len(objs)), Network: base.Network}
	copy(out.Objects, base.Objects)
	if len(objs) > layerScan {
		index := make(map[model.Key]int, len(out.Objects))
		for i, o := range out.Objects {
			index[o.Key] = i
		}
		for _, o := range objs {
			if i, ok := index[o.Key]; ok {
				out.Objects[i] = o
				continue
			}
			index[o.Key] = len(out.Objects)
			out.Objects = append(out.Objects, o)
		}
		return out
	}
	// A plan's step layers a few objects on a cluster of tens of
	// thousands: one pass comparing keys finds theirs for less than
	// indexing every key. at is the last base object of each one's key.
	at := make([]int, len(objs))
	for j := range at {
		at[j] = -1
	}
	for i, o := range base.Objects {
		for j, n := range objs {
			if o.Key == n.Key {
				at[j] = i
			}
		}
	}
	for j, o := range objs {
		i := at[j]
		for k := len(base.Objects); i < 0 && k < len(out.Objects); k++ {
			if out.Objects[k].Key == o.Key { // added by an earlier one of objs
				i = k
			}
		}
		if i >= 0 {
			out.Objects[i] = o
			continue
		}
		out.Objects = append(out.Objects, o)
	}
	return out
}

// layerScan is the most objects Layer finds by comparing keys.
const layerScan = 16

// Decode reads a plan's own YAML document(s) as the loader would read a file.
func Decode(name, body string) ([]*model.Object, error) {
	objs, err := load.DecodeDocuments(strings.NewReader(body), "plan:"+name)
	if err != nil {
		return nil, fmt.Errorf("the plan's own %s does not load: %w", name, err)
	}
	return objs, nil
}
