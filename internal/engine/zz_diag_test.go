package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

func TestZZDiag(t *testing.T) {
	dir := t.TempDir()
	o := gen.Options{Nodes: 8, Namespaces: 2, Pods: 120, Services: 10, Policies: 2, Seed: 1, ObservedIPs: true}
	if _, err := gen.WriteDir(dir, o); err != nil {
		t.Fatal(err)
	}
	snap, _ := load.Load(load.Options{Filenames: []string{dir}})
	w, _ := load.Load(load.Options{Filenames: []string{"../../examples/what-if/no-strict-affinity.yaml"}})
	next := layer(snap, w.Objects...)
	prev, _ := Build(snap)
	d := settle(prev, snap, next)
	d.prev = recall(prev)
	fmt.Println("prev carry", d.prev != nil, d.prev.ref, len(d.prev.daemons))
	c, err := build(next, false, d)
	fmt.Println(err, len(d.kept), d.holds(prev, c))
	for i, ds := range c.DaemonSets {
		if i < len(d.prev.daemons) {
			w := d.prev.daemons[i]
			fmt.Println(ds.Name, w.name, reflect.DeepEqual(&w.spec, &ds.Spec), len(w.pods))
		}
	}
}
