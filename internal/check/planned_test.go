package check

import (
	"os"
	"path/filepath"
	"testing"
)

// calicoNetwork.windowsDataplane: HNS exists only to serve Windows nodes,
// so it plans them even before one joins.
func TestAnInstallationWithTheHNSDataplanePlansWindowsNodes(t *testing.T) {
	const node = `apiVersion: v1
kind: Node
metadata:
  name: cp-01
  labels: {kubernetes.io/os: linux, kubernetes.io/hostname: cp-01}
status:
  addresses: [{type: InternalIP, address: 10.0.0.10}]
`
	tests := []struct {
		name      string
		dataplane string
		want      bool
	}{
		{"windowsDataplane HNS plans Windows nodes", "HNS", true},
		{"windowsDataplane Disabled plans none", "Disabled", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := `apiVersion: operator.tigera.io/v1
kind: Installation
metadata: {name: default}
spec:
  calicoNetwork:
    windowsDataplane: ` + tt.dataplane + "\n"
			dir := t.TempDir()
			for name, text := range map[string]string{"node.yaml": node, "installation.yaml": inst} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			rep := mustRun(t, build(t, false, dir), Options{})
			if rep.WindowsPlanned != tt.want {
				t.Errorf("WindowsPlanned = %v, want %v", rep.WindowsPlanned, tt.want)
			}
		})
	}
}
