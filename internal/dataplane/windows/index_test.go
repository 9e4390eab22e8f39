package windows

import (
	"fmt"
	"math/rand"
	"net/netip"
	"slices"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
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

// TestSelectMembersIsTheScan compares the indexed, cached IP set members
// with the scan over every workload they replace.
func TestSelectMembersIsTheScan(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	f := &felix{nsLabels: map[string]map[string]string{}}
	nss := []string{"a", "b", "c", "d"}
	for _, ns := range nss {
		f.nsLabels[ns] = map[string]string{labelName: ns, "team": []string{"x", "y"}[r.Intn(2)]}
	}
	for i := 0; i < 400; i++ {
		ns := nss[r.Intn(len(nss))]
		f.weps = append(f.weps, wep{ip: fmt.Sprintf("10.0.%d.%d", i/256, i%256), ns: ns, sa: []string{"default", "robot"}[r.Intn(2)],
			labels: map[string]string{labelNamespace: ns, "app": fmt.Sprint(r.Intn(5)), "tier": []string{"web", "api"}[r.Intn(2)]}})
	}
	f.wepsByNS, f.nsMatches, f.members = map[string][]int{}, map[string]map[string]bool{}, map[memberKey][]string{}
	for i, w := range f.weps {
		f.wepsByNS[w.ns] = append(f.wepsByNS[w.ns], i)
	}
	sels := []string{"", "all()", "app == '1'", "tier == 'web' && app in { '2', '3' }", "has(app)"}
	nsSels := []string{"", "all()", "team == 'x'", "projectcalico.org/name == 'c'"}
	for k := 0; k < 500; k++ {
		ps := &polSet{ns: []string{"", "a", "b"}[r.Intn(3)]}
		e := centity{selector: sels[r.Intn(len(sels))], nsSelector: nsSels[r.Intn(len(nsSels))]}
		if r.Intn(3) == 0 {
			e.saNames = []string{"robot"}
		}
		sel := mustSel(e.selector)
		var nsSel selector.Selector
		if e.nsSelector != "" {
			nsSel = mustSel(e.nsSelector)
		}
		var want []string
		for _, w := range f.weps {
			switch {
			case nsSel != nil:
				if !nsSel.Evaluate(f.nsLabels[w.ns]) {
					continue
				}
			case ps.ns != "":
				if w.ns != ps.ns {
					continue
				}
			}
			if !sel.Evaluate(w.labels) || len(e.saNames) > 0 && !containsStr(e.saNames, w.sa) {
				continue
			}
			want = append(want, w.ip+"/32")
		}
		if got := f.selectMembers(ps, e, sel, nsSel); !slices.Equal(got, want) {
			t.Fatalf("policy ns %q, %+v: %v, want %v", ps.ns, e, got, want)
		}
	}
}
