package trace

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
)

// The Windows compiler is HNS state's, which only a Windows node has: an
// engine over a cluster without one does not make it (a compiler that
// cannot be made does not fail it), while one with a Windows node fails as
// every walk to that node would.
func TestTheWindowsCompilerIsMadeOnlyForAClusterWithAWindowsNode(t *testing.T) {
	lab := lab(t).Cluster()
	// badPool is the lab with a pool the Windows compiler cannot read.
	badPool := func(linuxOnly bool) *model.Cluster {
		c := *lab
		pool := *lab.IPPools[0]
		pool.Spec.CIDR = "not-a-cidr"
		c.IPPools = append([]*calico.IPPool{&pool}, lab.IPPools[1:]...)
		if linuxOnly {
			c.Nodes = nil
			for _, n := range lab.Nodes {
				if n.Labels[corev1.LabelOSStable] != hybrid.OSWindows {
					c.Nodes = append(c.Nodes, n)
				}
			}
		}
		return &c
	}
	for _, tc := range []struct {
		name    string
		c       *model.Cluster
		wantErr string
	}{
		{"a Linux-only cluster's engine is made without the Windows compiler", badPool(true), ""},
		{"a cluster with a Windows node fails on its Windows compiler", badPool(false), "compiling the Windows dataplane: IPPool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plane.New(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			e, err := FromPlane(p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FromPlane: %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromPlane: %v", err)
			}
			// Its walks still run: pod to pod on the Linux nodes.
			r := traceOf(t, e, "pod/check", "node/k8s-lab-node-1", "default", ICMP, 0)
			if !r.Delivered {
				t.Errorf("check to node 1: %s (%s), want delivered\n%s", r.Outcome, r.Reason, textOf(r))
			}
		})
	}
}
