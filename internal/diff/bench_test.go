package diff

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// BenchmarkCompare measures a comparison on a generated cluster (set
// HYBRID_DIFF_BENCH_INPUT to a directory `kubectl-hybrid gen --output-dir`
// wrote, e.g. --nodes 1000 --windows-nodes 100 --pods 30000 --services 2000
// --policies 400 --namespaces 100 --observed-ips --plain-nodes), against
// what-ifs of the kinds a migration plan's steps make, and reports each
// stage beside one check.Run of the base twin.
func BenchmarkCompare(b *testing.B) {
	dir := os.Getenv("HYBRID_DIFF_BENCH_INPUT")
	if dir == "" {
		b.Skip("HYBRID_DIFF_BENCH_INPUT is not set")
	}
	whatIfs := map[string]string{
		// IPAM settings: no pod moves, no route changes.
		"ipam-config": "apiVersion: projectcalico.org/v3\nkind: IPAMConfiguration\nmetadata: {name: default}\nspec: {strictAffinity: true, maxBlocksPerHost: 20}\n",
		// Encapsulation through the Installation: every route changes.
		"encapsulation": "apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec:\n  calicoNetwork:\n    bgp: Disabled\n    linuxDataplane: Nftables\n    windowsDataplane: HNS\n    ipPools:\n    - {name: default-ipv4-ippool, cidr: 10.128.0.0/14, encapsulation: VXLANCrossSubnet, natOutgoing: Enabled, nodeSelector: all(), blockSize: 26}\n  serviceCIDRs: [10.96.0.0/12]\n",
	}
	base := snapshotOf(b, load.Options{Filenames: []string{dir}, DropRaw: true})
	before, err := engine.Build(base)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := check.Run(before, check.Options{}); err != nil {
		b.Fatal(err)
	}
	checkTime := time.Since(start)
	for name, doc := range whatIfs {
		b.Run(name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), name+".yaml")
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				b.Fatal(err)
			}
			next := snapshotOf(b, load.Options{Base: base, Filenames: []string{p}, DropRaw: true})
			after, err := engine.Build(next)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				ta, tb := NewTwin(before), NewTwin(after)
				t0 := time.Now()
				da, db := ta.digest(), tb.digest()
				same := da.all == db.all
				t1 := time.Now()
				objs := compareObjects(da, db)
				t2 := time.Now()
				if !same {
					if _, err := ta.Engine(); err != nil {
						b.Fatal(err)
					}
					if _, err := tb.Engine(); err != nil {
						b.Fatal(err)
					}
				}
				t3 := time.Now()
				if !same {
					if _, err := compareNodes(ta, tb, changedParts(da, db), true, false); err != nil {
						b.Fatal(err)
					}
				}
				t4 := time.Now()
				// HYBRID_DIFF_BENCH_REACH=0 leaves reach out (a CrossSubnet
				// twin's matrix takes minutes at 100 nodes).
				if !same && os.Getenv("HYBRID_DIFF_BENCH_REACH") != "0" {
					if _, err := compareReach(ta, tb, reach.Options{AllNamespaces: true}); err != nil {
						b.Fatal(err)
					}
				}
				t5 := time.Now()
				b.ReportMetric(float64(len(objs)), "objects-changed")
				b.ReportMetric(t1.Sub(t0).Seconds()*1e3, "digests-ms")
				b.ReportMetric(t2.Sub(t1).Seconds()*1e3, "objects-ms")
				b.ReportMetric(t3.Sub(t2).Seconds()*1e3, "engines-ms")
				b.ReportMetric(t4.Sub(t3).Seconds()*1e3, "nodes-ms")
				b.ReportMetric(t5.Sub(t4).Seconds()*1e3, "reach-ms")
				b.ReportMetric(checkTime.Seconds()*1e3, "check-ms")
			}
		})
	}
}

func snapshotOf(b *testing.B, o load.Options) *model.Snapshot {
	b.Helper()
	s, err := load.Load(o)
	if err != nil {
		b.Fatal(err)
	}
	return s
}
