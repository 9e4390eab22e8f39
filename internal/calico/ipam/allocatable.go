package ipam

import (
	"net/netip"
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// Allocatable derives each pool's Allocatable condition the way
// calico-kube-controllers' IP pool controller sets it
// (kube-controllers/pkg/controllers/ippool/pool_controller.go
// reconcileConditions): false for a disabled or terminating pool and for a
// pool whose CIDR overlaps one placed before it (older first, then by
// name), true otherwise. Pools whose CIDR does not parse are left out, as
// the controller skips them. GetEnabledPools then skips every pool whose
// condition is false (lib/clientv3/client.go filterIPPool).
func Allocatable(in []*calico.IPPool) map[string]bool {
	type entry struct {
		pool   *calico.IPPool
		prefix netip.Prefix
		ok     bool
	}
	var pools []entry
	for _, p := range in {
		pr, err := netip.ParsePrefix(p.Spec.CIDR)
		pools = append(pools, entry{pool: p, prefix: pr.Masked(), ok: err == nil})
	}
	sort.SliceStable(pools, func(i, j int) bool {
		a, b := pools[i].pool, pools[j].pool
		ta, tb := a.DeletionTimestamp != nil, b.DeletionTimestamp != nil
		if ta != tb {
			return ta // terminating pools are placed first
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	out := map[string]bool{}
	var placed []netip.Prefix
	for _, e := range pools {
		p := e.pool
		switch {
		case !e.ok:
		case p.Spec.Disabled:
			out[p.Name] = false
		case p.DeletionTimestamp != nil:
			out[p.Name] = false
			placed = append(placed, e.prefix)
		default:
			overlaps := false
			for _, q := range placed {
				if q.Overlaps(e.prefix) {
					overlaps = true
					break
				}
			}
			out[p.Name] = !overlaps
			if !overlaps {
				placed = append(placed, e.prefix)
			}
		}
	}
	return out
}
