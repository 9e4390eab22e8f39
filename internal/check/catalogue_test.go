package check

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

func TestTheRegistryRejectsMalformedAndDuplicateRules(t *testing.T) {
	ok := func(id, name string) rule.Rule {
		return rule.Rule{ID: id, Name: name, Title: "t", Severity: rule.Warning, Check: func(*rule.Context) []rule.Finding { return nil }}
	}
	cases := []struct {
		name  string
		rules []rule.Rule
		want  string
	}{
		{"two rules with distinct IDs and names register", []rule.Rule{ok("HYB901", "a"), ok("HYB902", "b")}, ""},
		{"a second rule with the same ID is refused", []rule.Rule{ok("HYB901", "a"), ok("HYB901", "b")}, "duplicate ID"},
		{"a second rule with the same name is refused", []rule.Rule{ok("HYB901", "a"), ok("HYB902", "a")}, "duplicate name"},
		{"an ID that is not HYB and three digits is refused", []rule.Rule{ok("HYB1", "a")}, "three digits"},
		{"a name that is not kebab-case is refused", []rule.Rule{ok("HYB901", "Not_Kebab")}, "kebab-case"},
		{"a rule without a Check function is refused", []rule.Rule{{ID: "HYB901", Name: "a", Title: "t", Severity: rule.Error}}, "no Check"},
		{"a rule with an unknown severity is refused", []rule.Rule{{ID: "HYB901", Name: "a", Title: "t", Severity: "fatal", Check: ok("HYB901", "a").Check}}, "severity"},
		{"a rule needing a kind it examines registers", []rule.Rule{needing(ok("HYB901", "a"), []string{rule.KindNode}, rule.Need{rule.KindNode})}, ""},
		{"a rule needing a kind it does not examine is refused", []rule.Rule{needing(ok("HYB901", "a"), []string{"Pod"}, rule.Need{rule.KindNode})}, "does not list it in Examines"},
		{"a rule needing a kind no need can test is refused", []rule.Rule{needing(ok("HYB901", "a"), []string{"Pod"}, rule.Need{"Pod"})}, "not a kind a rule may need"},
		{"a rule with an empty need is refused", []rule.Rule{needing(ok("HYB901", "a"), []string{"Pod"}, rule.Need{})}, "empty need"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := rule.NewRegistry(tc.rules...)
			if tc.want == "" {
				if err != nil || len(reg.Rules()) != len(tc.rules) {
					t.Fatalf("NewRegistry = %v, %v", reg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewRegistry error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func needing(r rule.Rule, examines []string, needs ...rule.Need) rule.Rule {
	r.Examines, r.Needs = examines, needs
	return r
}

// TestARuleFindsNothingWhereItsNeedsAreUnmet: a rule is reported as not
// run when the input lacks what it needs, so a need must be a condition
// of every finding. Every rule runs, needs ignored, on each example alone
// and layered on the lab; where it finds something, its needs are met.
func TestARuleFindsNothingWhereItsNeedsAreUnmet(t *testing.T) {
	reg, _ := Default()
	type input struct {
		lab   bool
		files []string
	}
	inputs := []input{
		{false, []string{filepath.Join("..", "..", "examples", "main-cluster")}},
		{false, []string{filepath.Join("..", "..", "examples", "plain")}},
		{false, []string{filepath.Join("..", "..", "examples", "bad-pod.yaml")}},
	}
	for _, r := range reg.Rules() {
		if ex, err := findExample(r.ID, "fail"); err == nil {
			inputs = append(inputs, input{false, ex.files}, input{true, ex.files})
		}
	}
	// Inputs that hold one alternative of a need and not the others.
	dir := t.TempDir()
	for name, text := range map[string]string{
		"pool-without-installation.yaml": "apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata: {name: p}\nspec: {cidr: 10.0.0.0/16, ipipMode: Always}\n",
		"init-without-cluster-configuration.yaml": "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nlocalAPIEndpoint: {advertiseAddress: 192.168.1.10}\n---\n" +
			"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata: {name: default}\nspec: {serviceCIDRs: [10.0.0.0/16]}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{false, []string{path}})
	}
	checked := 0
	for _, in := range inputs {
		files, lab := in.files, in.lab
		// Some examples only make sense on the lab (a Cluster kind naming
		// its InitConfiguration): alone they are bad input, skipped.
		if c, err := tryBuild(lab, files...); err == nil {
			x := rule.NewContext(c, true, nil)
			for _, r := range reg.Rules() {
				if len(r.Needs) == 0 || len(r.Check(x)) == 0 {
					continue
				}
				checked++
				if why, _ := rule.WhyNotRun(r, x, false, false, nil); why != "" {
					t.Errorf("%s finds something in %v (lab %v), yet its needs are unmet: %s", r.ID, files, lab, why)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d rule runs with needs found something: the test proves little", checked)
	}
}

func TestTheBuiltInCatalogueIsConsistent(t *testing.T) {
	reg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Rules()); n < 40 {
		t.Errorf("the catalogue has %d rules, want at least 40", n)
	}
}

// TestEveryRuleIsSelfDescribing keeps the catalogue whole: each rule says
// what it examines, why it matters, how to fix it and where the facts come
// from, and has a failing and a passing example.
func TestEveryRuleIsSelfDescribing(t *testing.T) {
	reg, _ := Default()
	url := regexp.MustCompile(`^https://`)
	for _, r := range reg.Rules() {
		t.Run(r.ID, func(t *testing.T) {
			if len(r.Description) < 80 {
				t.Errorf("description too short: %q", r.Description)
			}
			if r.Remediation == "" {
				t.Error("no remediation")
			}
			if len(r.Examines) == 0 {
				t.Error("examines no kind")
			}
			if len(r.References) == 0 {
				t.Error("no references")
			}
			hasURL := false
			for _, ref := range r.References {
				if ref.Title == "" {
					t.Error("a reference without a title")
				}
				if ref.URL != "" {
					hasURL = true
					if !url.MatchString(ref.URL) {
						t.Errorf("reference URL %q is not https", ref.URL)
					}
				}
			}
			if !hasURL {
				t.Error("no reference with a URL (Kubernetes or Calico documentation, upstream code)")
			}
			for _, kind := range []string{"fail", "pass"} {
				if _, err := findExample(r.ID, kind); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestEveryTestdataDirectoryBelongsToARule(t *testing.T) {
	reg, _ := Default()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "golden" {
			continue
		}
		if _, ok := reg.Lookup(e.Name()); !ok {
			t.Errorf("testdata/%s names no rule", e.Name())
		}
	}
}

func TestDocsChecksMdIsGeneratedFromTheCatalogue(t *testing.T) {
	reg, _ := Default()
	var b bytes.Buffer
	if err := WriteRules(&b, reg.Rules(), ListMarkdown); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "checks.md")
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate: kubectl-hybrid check --list-rules -o markdown > docs/checks.md, or go test ./internal/check -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("docs/checks.md is stale; regenerate it with kubectl-hybrid check --list-rules -o markdown > docs/checks.md%s", firstDiff(string(want), b.String()))
	}
	for _, r := range reg.Rules() {
		if !strings.Contains(string(want), "\n## "+r.ID+" "+r.Name+"\n") {
			t.Errorf("docs/checks.md has no section for %s", r.ID)
		}
	}
}

func TestTheRuleListFormats(t *testing.T) {
	reg, _ := Default()
	for _, format := range []string{ListText, ListJSON, ListMarkdown} {
		var b bytes.Buffer
		if err := WriteRules(&b, reg.Rules(), format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !strings.Contains(b.String(), "HYB001") {
			t.Errorf("%s list does not name HYB001", format)
		}
	}
	if err := WriteRules(&bytes.Buffer{}, reg.Rules(), "yaml"); err == nil {
		t.Error("an unknown list format is accepted")
	}
}

func TestRuleSelectionByIDAndName(t *testing.T) {
	reg, _ := Default()
	cases := []struct {
		name       string
		only, skip []string
		want       []string
		wantErr    bool
	}{
		{"only one rule by ID", []string{"HYB003"}, nil, []string{"HYB003"}, false},
		{"only one rule by name", []string{"strict-affinity"}, nil, []string{"HYB003"}, false},
		{"skipping a rule leaves the others", nil, []string{"HYB003"}, nil, false},
		{"an unknown rule is an error", []string{"HYB999"}, nil, nil, true},
		{"an unknown skip is an error", nil, []string{"nope"}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := selectRules(reg, tc.only, tc.skip)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, r.ID)
			}
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("rules = %v, want %v", got, tc.want)
			}
			for _, s := range tc.skip {
				if slices.Contains(got, s) {
					t.Errorf("skipped rule %s ran", s)
				}
			}
		})
	}
}
