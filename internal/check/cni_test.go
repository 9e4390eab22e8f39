package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A disabled pool still routes its blocks; a removed one does not.
func TestPodAddressesOutsidePoolsAreFlaggedOnlyWhenNoPoolCoversThem(t *testing.T) {
	const noPools = `apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: default}
spec:
  serviceCIDRs: [10.96.0.0/12]
  calicoNetwork: {bgp: Disabled, linuxDataplane: Nftables, windowsDataplane: HNS, ipPools: []}
`
	const disabled = `---
apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: old-pool}
spec: {cidr: 172.21.0.0/16, blockSize: 26, vxlanMode: Always, natOutgoing: true, nodeSelector: all(), disabled: true}
`
	tests := []struct {
		name      string
		input     string
		wantCount int
		wantText  string
	}{
		{"the only pool removed flags every pod address and says new pods fail", noPools, 8, "no configured Calico pools for node"},
		{"the only pool disabled flags nothing: its blocks are still routed", noPools + disabled, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "what-if.yaml")
			if err := os.WriteFile(f, []byte(tt.input), 0o600); err != nil {
				t.Fatal(err)
			}
			rep := mustRun(t, build(t, true, f), Options{Only: []string{"HYB074"}})
			if len(rep.Findings) != tt.wantCount {
				t.Fatalf("%d findings, want %d:%s", len(rep.Findings), tt.wantCount, describe(rep.Findings))
			}
			for _, fd := range rep.Findings {
				if !strings.Contains(fd.Message, tt.wantText) {
					t.Errorf("finding %q lacks %q", fd.Message, tt.wantText)
				}
			}
		})
	}
}
