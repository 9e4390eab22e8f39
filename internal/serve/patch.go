package serve

import (
	"cmp"
	"slices"
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A Change is what one object of the input is now, as a watch delivers
// it (live.Update): the server patches the snapshot it read last with it
// instead of reading the whole input again.
type Change struct {
	// Unit names the object: the Origin.File its objects share
	// ("live:pod/demo/hello-1"). A kubeadm ConfigMap is one unit with
	// the documents it embeds.
	Unit string
	// Objects are what the loader decodes from it; nil when it was
	// deleted.
	Objects []*model.Object
	// Warnings are the read's warnings about it.
	Warnings []string
	// Err is the loader's refusal of it: while an object is refused the
	// twin is not rebuilt, as a read of the input would fail.
	Err error
}

// units is the snapshot as read and patched since, object by object.
type units struct {
	// rank orders the units of different kinds as the read does; within
	// a rank, units are in their names' byte order.
	rank func(unit string) int
	// ordered is false without a rank: new units go last.
	ordered bool
	list    []*unit // in the snapshot's order
	byID    map[string]*unit
	// refused holds the units the loader refuses, by name.
	refused map[string]error
	// base is the read's snapshot: its warnings, unread kinds, network
	// and actions stay; its objects are list's.
	base  *model.Snapshot
	count int // objects in list
}

type unit struct {
	id   string
	rank int
	objs []*model.Object
}

// unitOf names the unit of an object read: a live object's Origin.File
// (its documents have the same file but a document number), a file
// document's whole Origin.
func unitOf(o *model.Object) (id string, embeds bool) {
	if o.Origin.Doc == 0 && o.Origin.Line == 0 {
		return o.Origin.File, true
	}
	return o.Origin.String(), false
}

// newUnits groups a snapshot's objects into units, in its order.
func newUnits(snap *model.Snapshot, rank func(string) int) *units {
	// The base keeps no objects: a replaced object must not stay reachable.
	base := *snap
	base.Objects = nil
	u := &units{rank: rank, ordered: rank != nil, byID: make(map[string]*unit, len(snap.Objects)), refused: map[string]error{}, base: &base, count: len(snap.Objects)}
	var cur *unit
	for _, o := range snap.Objects {
		if cur != nil && o.Origin.File == cur.id {
			// A document a kubeadm ConfigMap embeds follows the ConfigMap.
			cur.objs = append(cur.objs, o)
			continue
		}
		id, embeds := unitOf(o)
		un := &unit{id: id, rank: u.rankOf(id), objs: []*model.Object{o}}
		u.list = append(u.list, un)
		if _, dup := u.byID[id]; !dup {
			u.byID[id] = un
		}
		cur = nil
		if embeds {
			cur = un
		}
	}
	return u
}

// apply patches the units with one change.
func (u *units) apply(ch Change) {
	delete(u.refused, ch.Unit)
	if ch.Err != nil {
		u.refused[ch.Unit] = ch.Err
		return
	}
	old := u.byID[ch.Unit]
	switch {
	case old != nil && ch.Objects != nil:
		u.count += len(ch.Objects) - len(old.objs)
		old.objs = ch.Objects
	case old != nil:
		i := slices.Index(u.list, old)
		u.list = slices.Delete(u.list, i, i+1)
		delete(u.byID, ch.Unit)
		u.count -= len(old.objs)
	case ch.Objects != nil:
		un := &unit{id: ch.Unit, rank: u.rankOf(ch.Unit), objs: ch.Objects}
		i := len(u.list)
		if u.ordered {
			i = sort.Search(len(u.list), func(i int) bool {
				l := u.list[i]
				return cmp.Or(cmp.Compare(l.rank, un.rank), cmp.Compare(l.id, un.id)) > 0
			})
		}
		u.list = slices.Insert(u.list, i, un)
		u.byID[ch.Unit] = un
		u.count += len(ch.Objects)
	}
}

// snapshot is the patched snapshot, a new value that shares the objects;
// the error is a refused object's (the first by name).
func (u *units) snapshot() (*model.Snapshot, error) {
	if len(u.refused) > 0 {
		ids := make([]string, 0, len(u.refused))
		for id := range u.refused {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return nil, u.refused[ids[0]]
	}
	objs := make([]*model.Object, 0, u.count)
	for _, un := range u.list {
		objs = append(objs, un.objs...)
	}
	next := *u.base
	next.Objects = objs
	return &next, nil
}

func (u *units) rankOf(id string) int {
	if u.rank == nil {
		return 0
	}
	return u.rank(id)
}
