package check

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestABadCheckConfigIsRefusedWithItsFileAndField(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, yaml, want string
	}{
		{"an unknown field", "rulez: {}\n", `unknown field "rulez"`},
		{"an unknown rule to include", "rules: {include: [HYB999]}\n", `rules.include: unknown rule "HYB999"`},
		{"an unknown severity", "severities: {HYB001: fatal}\n", `severities.HYB001: unknown severity "fatal"`},
		{"an unknown failOn", "failOn: always\n", `failOn: unknown severity "always"`},
		{"a suppression of an unknown rule", "suppressions: [{rule: nope}]\n", `suppressions[0].rule: unknown rule "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig("c.yaml", []byte(tc.yaml), reg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "c.yaml: ") {
				t.Errorf("error %v, want c.yaml: …%s", err, tc.want)
			}
		})
	}
}

func TestACheckConfigSetsSeveritiesAndSuppressesFindings(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig("c.yaml", []byte(`severities: {strict-affinity: info}
suppressions:
- rule: HYB020
  object: Node/win-1
- rule: HYB007
`), reg)
	if err != nil {
		t.Fatal(err)
	}
	node := func(name string) model.Key { return model.Key{Kind: "Node", Name: name} }
	rep := &Report{Findings: []rule.Finding{
		{RuleID: "HYB003", Severity: rule.Error, Object: model.Key{Kind: "IPAMConfiguration", Group: "projectcalico.org", Name: "default"}},
		{RuleID: "HYB020", Severity: rule.Error, Object: node("win-1")},
		{RuleID: "HYB020", Severity: rule.Error, Object: node("win-2")},
		{RuleID: "HYB007", Severity: rule.Error, Object: model.Key{Kind: "ConfigMap", Namespace: "tigera-operator", Name: "kubernetes-services-endpoint"}},
	}}
	cfg.Apply(rep)
	if len(rep.Findings) != 2 || len(rep.Suppressed) != 2 {
		t.Fatalf("findings %+v, suppressed %+v", rep.Findings, rep.Suppressed)
	}
	if f := rep.Findings[0]; f.RuleID != "HYB020" || f.Object.Name != "win-2" {
		t.Errorf("the error should come first and be win-2's HYB020: %+v", f)
	}
	if f := rep.Findings[1]; f.RuleID != "HYB003" || f.Severity != rule.Info {
		t.Errorf("HYB003 should be info: %+v", f)
	}
}

func FuzzParseConfig(f *testing.F) {
	reg, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("rules: {exclude: [HYB016]}\nseverities: {HYB001: warning}\nfailOn: error\n"))
	f.Add([]byte("suppressions: [{rule: HYB020, object: Node/win-1}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("f.yaml", data, reg)
		if err != nil {
			return
		}
		for id, s := range c.Severities {
			if _, ok := reg.Lookup(id); !ok {
				t.Fatalf("accepted unknown rule %q", id)
			}
			if _, err := rule.ParseSeverity(string(s)); err != nil {
				t.Fatalf("accepted severity %q", s)
			}
		}
	})
}
