package reach

import "testing"

// A worker's cache of path knowledge is direct-mapped: keys a row asks
// for one after the other (a pair's same-node and cross-node paths, one
// port over TCP and UDP, a pod and a node source) must mostly take
// different slots, or they evict each other on every cell.
func TestPathKeysThatDifferInOneFieldMostlyTakeDifferentSlots(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other func(k pathKey) pathKey
	}{
		{"the same node or another", func(k pathKey) pathKey { k.rel = relSame; return k }},
		{"TCP or UDP", func(k pathKey) pathKey { k.proto = 17; return k }},
		{"a pod or a node source", func(k pathKey) pathKey { k.kind = kindNode; return k }},
		{"the next port", func(k pathKey) pathKey { k.port++; return k }},
		{"the next source", func(k pathKey) pathKey { k.src++; return k }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same, all := 0, 0
			for src := int32(0); src < 40; src++ {
				for dst := int32(0); dst < 40; dst++ {
					for _, port := range []int32{0, 53, 80, 443, 8080} {
						k := pathKey{kind: kindPods, src: src, dst: dst, rel: relCross, proto: 6, port: port}
						all++
						if k.slot() == tc.other(k).slot() {
							same++
						}
					}
				}
			}
			if same*20 > all {
				t.Errorf("%d of %d keys share a slot with the other, want under 5%%", same, all)
			}
		})
	}
}
