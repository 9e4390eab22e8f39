package windows

import (
	"strings"
	"testing"
)

// Shapes real Windows nodes print, as compared with their output.
func TestWindowsCommandsPrintTheShapesRealNodesPrint(t *testing.T) {
	n := lab(t)
	tests := []struct {
		name   string
		cmd    string
		check  func(out string) bool
		expect string
	}{
		{"Get-HnsPolicyList prints a list of ten properties per policy list", "Get-HnsPolicyList", func(out string) bool {
			first := strings.SplitN(strings.TrimLeft(out, "\n"), "\n\n", 2)[0]
			var keys []string
			for _, l := range strings.Split(first, "\n") {
				if k, _, ok := strings.Cut(l, " :"); ok {
					keys = append(keys, strings.TrimSpace(k))
				}
			}
			return strings.Join(keys, ",") == "ActivityId,AdditionalParams,Health,ID,IsApplied,Policies,References,Resources,State,Version"
		}, "the properties ActivityId … Version in HNS's order, one per line"},
		{"the Calico HNS network has no adapter name", "Get-HnsNetwork | Where-Object Name -eq Calico | ConvertTo-Json", func(out string) bool {
			return strings.Contains(out, `"Name":  "Calico"`) && !strings.Contains(out, "NetworkAdapterName")
		}, "the Calico network without NetworkAdapterName"},
		{"the External network keeps the adapter it is bound to", "Get-HnsNetwork | Where-Object Name -eq External | ConvertTo-Json", func(out string) bool {
			return strings.Contains(out, `"NetworkAdapterName":  "`)
		}, "the External network with NetworkAdapterName"},
		{"hnsdiag list all lists networks, endpoints, namespaces and load balancers", "hnsdiag list all", func(out string) bool {
			iNet, iEp, iNs, iLB := strings.Index(out, "Network "), strings.Index(out, "Endpoint "), strings.Index(out, "Namespace "), strings.Index(out, "Load Balancer ")
			return iNet >= 0 && iNet < iEp && iEp < iNs && iNs < iLB
		}, "every kind, in that order"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := psExec(n, []string{tt.cmd})
			if code != 0 || !tt.check(out) {
				t.Errorf("%s: exit %d, stderr %q; want %s, got:\n%s", tt.cmd, code, errOut, tt.expect, out)
			}
		})
	}
}
