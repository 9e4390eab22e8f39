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
	out := &model.Snapshot{Objects: append([]*model.Object(nil), base.Objects...), Network: base.Network}
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

// Decode reads a plan's own YAML document(s) as the loader would read a file.
func Decode(name, body string) ([]*model.Object, error) {
	objs, err := load.DecodeDocuments(strings.NewReader(body), "plan:"+name)
	if err != nil {
		return nil, fmt.Errorf("the plan's own %s does not load: %w", name, err)
	}
	return objs, nil
}
