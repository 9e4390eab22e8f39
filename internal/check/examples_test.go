package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// TestEveryRuleFiresOnItsFailingExampleAndNotOnItsPassingOne layers each
// rule's examples on the lab, as `check --lab -f testdata/<ID>/fail.yaml`
// does, and runs that rule alone.
func TestEveryRuleFiresOnItsFailingExampleAndNotOnItsPassingOne(t *testing.T) {
	reg, _ := Default()
	for _, r := range reg.Rules() {
		t.Run(r.ID+" "+r.Name, func(t *testing.T) {
			for _, kind := range []string{"fail", "pass"} {
				ex, err := findExample(r.ID, kind)
				if err != nil {
					t.Fatal(err)
				}
				c := build(t, true, ex.files...)
				rep := mustRun(t, c, Options{Only: []string{r.ID}, Kubeconfigs: readKubeconfigs(t, ex.kubeconfigs)})
				all := append(append([]rule.Finding{}, rep.Findings...), rep.Suppressed...)
				switch {
				case kind == "fail" && len(all) == 0:
					t.Errorf("%s does not fire on %v", r.ID, ex.files)
				case kind == "pass" && len(all) > 0:
					t.Errorf("%s fires on its passing example %v:%s", r.ID, ex.files, describe(all))
				}
				for _, f := range all {
					if f.Message == "" || f.Object.Kind == "" {
						t.Errorf("%s: a finding without a message or an object: %+v", r.ID, f)
					}
				}
			}
		})
	}
}

func TestTheLabIsClean(t *testing.T) {
	rep := mustRun(t, build(t, true), Options{})
	if len(rep.Findings)+len(rep.Suppressed) > 0 {
		t.Errorf("rules fire on the bare lab:%s", describe(append(rep.Findings, rep.Suppressed...)))
	}
	if !rep.WindowsPlanned {
		t.Error("the lab has a Windows node, but Windows is not counted as planned")
	}
}

// TestTheMainClusterHasExactlyTheBlockersOfSeed001 checks
// examples/main-cluster against the migration of seed 001: VXLAN Always
// instead of VXLANCrossSubnet, BGP off, strictAffinity on, then
// windowsDataplane: HNS, serviceCIDRs and the kubernetes-services-endpoint
// ConfigMap.
func TestTheMainClusterHasExactlyTheBlockersOfSeed001(t *testing.T) {
	c := build(t, false, filepath.Join("..", "..", "examples", "main-cluster"))
	want := []string{"HYB001", "HYB002", "HYB003", "HYB004", "HYB005", "HYB007"}
	cases := []struct {
		name          string
		expectWindows bool
		severity      rule.Severity
		fails         bool
	}{
		{"with Windows nodes expected the blockers are errors", true, rule.Error, true},
		{"without Windows nodes expected the same blockers are warnings", false, rule.Warning, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := mustRun(t, c, Options{ExpectWindows: tc.expectWindows})
			if got := ids(rep.Findings); !slices.Equal(got, want) {
				t.Fatalf("findings %v, want %v:%s", got, want, describe(rep.Findings))
			}
			for _, f := range rep.Findings {
				if f.Severity != tc.severity {
					t.Errorf("%s is %s, want %s", f.RuleID, f.Severity, tc.severity)
				}
			}
			if rep.Fails(rule.Error) != tc.fails {
				t.Errorf("Fails(error) = %v, want %v", rep.Fails(rule.Error), tc.fails)
			}
			if rep.Fails("") {
				t.Error("--fail-on never fails")
			}
		})
	}
	rep := mustRun(t, c, Options{ExpectWindows: true})
	js := render(t, func(b *bytes.Buffer) error { return WriteJSON(b, rep) })
	for _, s := range []string{"VXLANCrossSubnet", "spec.calicoNetwork.bgp", "strictAffinity", "kubernetes-services-endpoint"} {
		if !strings.Contains(js, s) {
			t.Errorf("the JSON report does not name %s", s)
		}
	}
}

func TestOutputsMatchTheirGoldenFiles(t *testing.T) {
	labCluster := build(t, true)
	dir, err := filepath.Abs(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	// Run from the repository root so that files are named as CI names them.
	t.Chdir(filepath.Join("..", ".."))
	main := build(t, false, "examples/main-cluster")
	skipped := build(t, true, "internal/check/testdata/HYB056/fail.yaml")
	cases := []struct {
		name string
		rep  *Report
	}{
		{"lab", mustRun(t, labCluster, Options{})},
		{"main-cluster", mustRun(t, main, Options{ExpectWindows: true})},
		{"no-cluster", mustRun(t, emptyCluster(t), Options{ExpectWindows: true})},
		{"lab-installation-unread", mustRun(t, labCluster, Options{Unread: []model.UnreadKind{installationForbidden}})},
		{"policy-rule-skipped-on-windows", mustRun(t, skipped, Options{Only: []string{"HYB056"}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			goldenFile(t, dir, tc.name+".txt", render(t, func(b *bytes.Buffer) error { return WriteText(b, tc.rep) }))
			goldenFile(t, dir, tc.name+".json", render(t, func(b *bytes.Buffer) error { return WriteJSON(b, tc.rep) }))
			goldenFile(t, dir, tc.name+".sarif", render(t, func(b *bytes.Buffer) error {
				return WriteSARIF(b, tc.rep, SARIFOptions{ToolVersion: "v0.0.0-test"})
			}))
			goldenFile(t, dir, tc.name+".junit.xml", render(t, func(b *bytes.Buffer) error { return WriteJUnit(b, tc.rep) }))
		})
	}
}

// TestTheJUnitReportIsWellFormedAndCountsItsCases decodes the XML back.
func TestTheJUnitReportIsWellFormedAndCountsItsCases(t *testing.T) {
	rep := mustRun(t, build(t, false, "../../examples/main-cluster"), Options{ExpectWindows: true})
	var b bytes.Buffer
	if err := WriteJUnit(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	s := doc.Suites[0]
	failures, skipped := 0, 0
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures++
		}
		if c.Skipped != nil {
			skipped++
		}
	}
	if s.Tests != len(s.Cases) || s.Failures != failures || s.Skipped != skipped || failures != len(rep.Findings) {
		t.Errorf("suite says %d tests, %d failures, %d skipped; has %d cases, %d failures (%d findings), %d skipped",
			s.Tests, s.Failures, s.Skipped, len(s.Cases), failures, len(rep.Findings), skipped)
	}
	if failures == 0 {
		t.Error("the main cluster's report has findings; the JUnit report has no failure")
	}
}

// TestTheSARIFLogHasWhatCodeScanningReads checks the fields GitHub code
// scanning requires of rules and results.
func TestTheSARIFLogHasWhatCodeScanningReads(t *testing.T) {
	c := build(t, true, filepath.Join("testdata", "HYB007", "fail.yaml"), filepath.Join("testdata", "HYB045", "fail.yaml"))
	rep := mustRun(t, c, Options{})
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID                   string            `json:"id"`
						Name                 string            `json:"name"`
						ShortDescription     map[string]string `json:"shortDescription"`
						FullDescription      map[string]string `json:"fullDescription"`
						Help                 map[string]string `json:"help"`
						HelpURI              string            `json:"helpUri"`
						DefaultConfiguration map[string]string `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string            `json:"ruleId"`
				Level     string            `json:"level"`
				Message   map[string]string `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	out := render(t, func(b *bytes.Buffer) error { return WriteSARIF(b, rep, SARIFOptions{ToolVersion: "v1"}) })
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q, %d runs", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	for _, r := range run.Tool.Driver.Rules {
		if r.ID == "" || r.Name == "" || r.ShortDescription["text"] == "" || r.FullDescription["text"] == "" ||
			r.Help["text"] == "" || r.HelpURI == "" || r.DefaultConfiguration["level"] == "" {
			t.Errorf("rule %s lacks a field code scanning reads: %+v", r.ID, r)
		}
	}
	if len(run.Results) < 2 {
		t.Fatalf("%d results, want the two examples' findings", len(run.Results))
	}
	for _, res := range run.Results {
		if res.RuleID == "" || res.Level == "" || res.Message["text"] == "" {
			t.Errorf("result lacks ruleId, level or message: %+v", res)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" || res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("result %s has no usable location (code scanning rejects those): %+v", res.RuleID, res.Locations)
		}
	}
	byRule := map[string]string{}
	for _, res := range run.Results {
		byRule[res.RuleID] = res.Locations[0].PhysicalLocation.ArtifactLocation.URI
	}
	// The missing ConfigMap is derived: it points at the Installation it
	// derives from, in the lab.
	if got := byRule["HYB007"]; got != "testdata/HYB007/fail.yaml" {
		t.Errorf("HYB007 located at %q", got)
	}
	if got := byRule["HYB045"]; got != "testdata/HYB045/fail.yaml" {
		t.Errorf("HYB045 located at %q", got)
	}
}

func TestSeverities(t *testing.T) {
	c := build(t, false, filepath.Join("..", "..", "examples", "main-cluster"))
	cases := []struct {
		name   string
		failOn rule.Severity
		expect bool
		fails  bool
	}{
		{"warnings fail a run with --fail-on warning", rule.Warning, false, true},
		{"warnings do not fail a run with --fail-on error", rule.Error, false, false},
		{"errors fail a run with --fail-on error", rule.Error, true, true},
		{"nothing fails a run with --fail-on never", "", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := mustRun(t, c, Options{ExpectWindows: tc.expect})
			if got := rep.Fails(tc.failOn); got != tc.fails {
				t.Errorf("Fails(%q) = %v, want %v", tc.failOn, got, tc.fails)
			}
		})
	}
	for _, s := range []string{"error", "warning", "info"} {
		if _, err := rule.ParseSeverity(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := rule.ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity accepts fatal")
	}
}

func TestTheSkipAnnotationSuppressesFindings(t *testing.T) {
	cases := []struct {
		name       string
		annotation string
		suppressed bool
	}{
		{"the rule's ID suppresses it", "HYB045", true},
		{"the rule's name suppresses it", "linux-daemonset-on-windows", true},
		{"one of several IDs suppresses it", "HYB046, HYB045", true},
		{"a star suppresses every rule", "*", true},
		{"another rule's ID does not", "HYB046", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, true, filepath.Join("testdata", "HYB045", "fail.yaml"))
			for _, ds := range c.DaemonSets {
				if ds.Name == "node-exporter" {
					ds.Annotations = map[string]string{rule.SkipAnnotation: tc.annotation}
				}
			}
			rep := mustRun(t, c, Options{Only: []string{"HYB045"}})
			if got := len(rep.Suppressed) == 1 && len(rep.Findings) == 0; got != tc.suppressed {
				t.Errorf("suppressed = %v, want %v (findings %v, suppressed %v)", got, tc.suppressed, ids(rep.Findings), ids(rep.Suppressed))
			}
		})
	}
}

func TestTheSkipAnnotationOnTheSourceCoversDerivedObjects(t *testing.T) {
	c := build(t, true, filepath.Join("testdata", "HYB007", "fail.yaml"))
	rep := mustRun(t, c, Options{Only: []string{"HYB007"}})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %v", ids(rep.Findings))
	}
	// The ConfigMap is observed in this example; annotate it.
	for _, cm := range c.ConfigMaps {
		if cm.Name == "kubernetes-services-endpoint" {
			cm.Annotations = map[string]string{rule.SkipAnnotation: "HYB007"}
		}
	}
	rep = mustRun(t, c, Options{Only: []string{"HYB007"}})
	if len(rep.Findings) != 0 || len(rep.Suppressed) != 1 {
		t.Errorf("findings %v, suppressed %v", ids(rep.Findings), ids(rep.Suppressed))
	}
	// A derived object's findings are suppressed through the Installation.
	main := build(t, false, filepath.Join("..", "..", "examples", "main-cluster"))
	main.Installation.Annotations = map[string]string{rule.SkipAnnotation: "HYB007"}
	rep = mustRun(t, main, Options{Only: []string{"HYB007"}})
	if len(rep.Findings) != 0 || len(rep.Suppressed) != 1 {
		t.Errorf("main cluster: findings %v, suppressed %v", ids(rep.Findings), ids(rep.Suppressed))
	}
}

func TestBlockersAreErrorsOnlyWhenWindowsIsPlanned(t *testing.T) {
	c := build(t, false, filepath.Join("..", "..", "examples", "main-cluster"))
	for _, expect := range []bool{false, true} {
		rep := mustRun(t, c, Options{Only: []string{"HYB003"}, ExpectWindows: expect})
		want := rule.Warning
		if expect {
			want = rule.Error
		}
		if len(rep.Findings) != 1 || rep.Findings[0].Severity != want {
			t.Errorf("expect-windows=%v: %v", expect, describe(rep.Findings))
		}
	}
}

func TestKubeconfigParsing(t *testing.T) {
	cases := []struct {
		name    string
		data    string
		wantErr bool
		ctx     string
	}{
		{"an empty file is an empty config", "", false, ""},
		{"a kubeadm admin.conf parses", "apiVersion: v1\nkind: Config\nclusters:\n- name: kubernetes\n  cluster: {server: https://a:6443}\ncontexts:\n- name: kubernetes-admin@kubernetes\n  context: {cluster: kubernetes, user: kubernetes-admin}\n", false, "kubernetes-admin@kubernetes"},
		{"garbage is an error", "clusters: [", true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kc, err := rule.ParseKubeconfig("f", []byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if tc.ctx != "" {
				if _, ok := kc.Config.Contexts[tc.ctx]; !ok {
					t.Errorf("no context %s", tc.ctx)
				}
				if kc.Lines["contexts/"+tc.ctx] == 0 {
					t.Errorf("no line for context %s: %v", tc.ctx, kc.Lines)
				}
			}
		})
	}
}

func TestTheKubeconfigTrapNamesTheSecondFile(t *testing.T) {
	ex, _ := findExample("HYB070", "fail")
	rep := mustRun(t, build(t, true), Options{Only: []string{"HYB070"}, Kubeconfigs: readKubeconfigs(t, ex.kubeconfigs)})
	var fields []string
	for _, f := range rep.Findings {
		fields = append(fields, f.Field)
		if !strings.HasSuffix(f.Location.File, "fail-kubeconfig-2.yaml") || f.Location.Line == 0 {
			t.Errorf("%s located at %v", f.Field, f.Location)
		}
		if strings.Contains(f.Message, "bGFi") {
			t.Errorf("credentials in the message: %s", f.Message)
		}
	}
	want := []string{"clusters[name=kubernetes]", "contexts[name=kubernetes-admin@kubernetes]", "users[name=kubernetes-admin]"}
	slices.Sort(fields)
	if !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

var installationForbidden = model.UnreadKind{Group: "operator.tigera.io", Kind: "Installation",
	Reason: `installations.operator.tigera.io is forbidden: User "ci" cannot list resource "installations" in API group "operator.tigera.io" at the cluster scope`}

// emptyCluster is the twin of an empty input (an empty directory, a server
// that served nothing).
func emptyCluster(t *testing.T) *model.Cluster {
	t.Helper()
	c, err := engine.Build(&model.Snapshot{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRulesThatCannotRunAreListedByCause(t *testing.T) {
	lab := build(t, true)
	pod := build(t, false, filepath.Join("..", "..", "examples", "bad-pod.yaml"))
	serviceAccounts := model.UnreadKind{Kind: "ServiceAccount", Reason: "forbidden"}
	cases := []struct {
		name       string
		c          *model.Cluster
		opts       Options
		incomplete bool
		// cause and the rules it holds (a prefix of them when few are named).
		cause string
		rules []string
	}{
		{"an empty input holds no cluster and no rule judges it", emptyCluster(t), Options{ExpectWindows: true}, true,
			"the input holds no cluster", []string{"HYB001", "HYB002", "HYB003"}},
		{"kubeconfig files alone are not an empty input", emptyCluster(t), Options{KubeconfigsOnly: true}, false,
			"only kubeconfig files were given", []string{"HYB001", "HYB002", "HYB003"}},
		{"an unread Installation stops the rules that examine it", lab, Options{Unread: []model.UnreadKind{installationForbidden}}, true,
			"Installation.operator.tigera.io was not read: " + installationForbidden.Reason, []string{"HYB001", "HYB002", "HYB003", "HYB004"}},
		{"an unread kind no selected rule examines leaves the run complete", lab, Options{Unread: []model.UnreadKind{serviceAccounts}}, false,
			"no kubeconfig files (--kubeconfig-files) in the input", []string{"HYB070"}},
		{"skipping the rules that examine an unread kind leaves the run complete", lab,
			Options{Only: []string{"HYB020", "HYB045"}, Unread: []model.UnreadKind{installationForbidden}}, false, "", nil},
		{"manifests without an Installation leave its rules out without a fault", pod, Options{}, false,
			"no Installation.operator.tigera.io in the input", []string{"HYB002", "HYB004", "HYB005", "HYB006", "HYB007", "HYB008", "HYB014", "HYB015"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := mustRun(t, tc.c, tc.opts)
			if rep.Incomplete() != tc.incomplete {
				t.Errorf("Incomplete() = %v, want %v; not run: %+v", rep.Incomplete(), tc.incomplete, rep.NotRun)
			}
			if tc.cause == "" {
				if len(rep.NotRun) != 0 || len(rep.Rules) != len(tc.opts.Only) {
					t.Errorf("ran %d rules, not run %+v", len(rep.Rules), rep.NotRun)
				}
				return
			}
			var got []string
			var fault bool
			for _, g := range rep.NotRun {
				if g.Cause == tc.cause {
					got, fault = rule.RuleIDs(g.Rules), g.Fault
				}
			}
			if len(got) < len(tc.rules) || !slices.Equal(got[:len(tc.rules)], tc.rules) {
				t.Fatalf("rules not run for %q: %v, want %v first; groups %+v", tc.cause, got, tc.rules, rep.NotRun)
			}
			if fault != tc.incomplete {
				t.Errorf("fault = %v, want %v", fault, tc.incomplete)
			}
			for _, r := range rep.Rules {
				if slices.Contains(got, r.ID) {
					t.Errorf("%s both ran and did not", r.ID)
				}
			}
			if reg, _ := Default(); len(rep.Rules)+rep.NotRunCount() != len(reg.Rules()) && len(tc.opts.Only) == 0 {
				t.Errorf("%d ran and %d did not: every selected rule is one or the other", len(rep.Rules), rep.NotRunCount())
			}
		})
	}
}
