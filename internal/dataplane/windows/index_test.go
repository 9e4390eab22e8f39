package windows

import (
	"fmt"
	"math/rand"
	"net/netip"
	"testing"
)

// TestRouteIndexFindsWhatTheScanFinds compares routeIndex.lookup with the
// scan it replaces (the last route containing the address or with it as
// PA, among the routes of other nodes than the one asking) on random
// routes: overlapping prefixes of several lengths, unmasked ones, shared
// provider addresses, several blocks per node.
func TestRouteIndexFindsWhatTheScanFinds(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		var ri routeIndex
		for i := r.Intn(30); i > 0; i-- {
			a := netip.AddrFrom4([4]byte{10, byte(r.Intn(2)), byte(r.Intn(4)), byte(r.Intn(256))})
			bits := []int{16, 24, 26, 28, 32}[r.Intn(5)]
			p := netip.PrefixFrom(a, bits)
			if r.Intn(3) > 0 {
				p = p.Masked()
			}
			ri.add(route{prefix: p, pa: fmt.Sprintf("192.168.0.%d", r.Intn(8)), node: fmt.Sprintf("n%d", r.Intn(6))})
		}
		for k := 0; k < 300; k++ {
			ip := netip.AddrFrom4([4]byte{10, byte(r.Intn(2)), byte(r.Intn(4)), byte(r.Intn(256))}).String()
			if k%10 == 0 {
				ip = fmt.Sprintf("192.168.0.%d", r.Intn(8))
			}
			if k%50 == 0 {
				ip = "not-an-address"
			}
			skip := ""
			if k%2 == 1 {
				skip = fmt.Sprintf("n%d", r.Intn(6))
			}
			want := -1
			if a, err := netip.ParseAddr(ip); err == nil {
				for i, rt := range ri.all {
					if rt.node != skip && (rt.prefix.Contains(a) || ip == rt.pa) {
						want = i
					}
				}
			}
			if got := ri.lookup(ip, skip); got != want {
				t.Fatalf("seed %d: lookup(%s, %q) = %d, want %d (routes %v)", seed, ip, skip, got, want, ri.all)
			}
		}
	}
}
