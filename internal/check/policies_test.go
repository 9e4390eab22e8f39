package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

func TestPolicyRulesSkippedOnWindowsAreFoundWhereTheyMatter(t *testing.T) {
	const np = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: p, namespace: %NS%}\nspec:\n  podSelector: {}\n"
	const gnp = "apiVersion: projectcalico.org/v3\nkind: GlobalNetworkPolicy\nmetadata: {name: g}\nspec:\n  selector: all()\n"
	cases := []struct {
		name     string
		lab      bool
		manifest string
		severity rule.Severity // "" when nothing is found
		message  string
	}{
		{"a named port on the Windows pods' namespace is an error", true,
			strings.ReplaceAll(np, "%NS%", "win-demo") + "  ingress: [{ports: [{port: http}]}]\n", rule.Error, "uses a named port"},
		{"a named port on Linux pods only is programmed", true,
			strings.ReplaceAll(np, "%NS%", "demo") + "  ingress: [{ports: [{port: http}]}]\n", "", ""},
		{"an egress rule of an ingress-only policy does not apply", true,
			strings.ReplaceAll(np, "%NS%", "win-demo") + "  policyTypes: [Ingress]\n  egress: [{ports: [{port: http}]}]\n", "", ""},
		{"an ipBlock's except is a negative match", true,
			strings.ReplaceAll(np, "%NS%", "win-demo") + "  policyTypes: [Egress]\n  egress: [{to: [{ipBlock: {cidr: 0.0.0.0/0, except: [10.0.0.0/8]}}]}]\n",
			rule.Error, "spec.egress[0] (allow) uses a negative match"},
		{"an IPv6 rule changes no verdict on Windows and is info", true,
			gnp + "  ingress: [{action: Allow, ipVersion: 6}]\n", rule.Info, "uses ipVersion 6"},
		{"an ICMP type is skipped", true,
			gnp + "  ingress: [{action: Allow, protocol: ICMP, icmp: {type: 8}}]\n", rule.Error, "uses an ICMP type or code"},
		{"a global policy whose namespace selector leaves out the Windows pods is no concern", true,
			gnp + "  namespaceSelector: projectcalico.org/name == 'demo'\n  ingress: [{action: Allow, protocol: ICMP, icmp: {type: 8}}]\n", "", ""},
		{"a Windows workload not yet scheduled is selected too", false,
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n" +
				"    metadata: {labels: {app: web}}\n    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n      containers: [{name: web, image: mcr.microsoft.com/windows/servercore:ltsc2022}]\n---\n" +
				strings.ReplaceAll(np, "%NS%", "shop") + "  ingress: [{ports: [{port: http}]}]\n", rule.Error, "Deployment shop/web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(path, []byte(tc.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := mustRun(t, build(t, tc.lab, path), Options{Only: []string{"HYB056"}})
			if tc.severity == "" {
				if len(rep.Findings) != 0 {
					t.Errorf("findings on a rule Windows programs or that selects no Windows pod:%s", describe(rep.Findings))
				}
				return
			}
			if len(rep.Findings) != 1 {
				t.Fatalf("want one finding, got:%s", describe(rep.Findings))
			}
			if f := rep.Findings[0]; f.Severity != tc.severity || !strings.Contains(f.Message, tc.message) {
				t.Errorf("finding %s %q, want %s containing %q", f.Severity, f.Message, tc.severity, tc.message)
			}
		})
	}
}
