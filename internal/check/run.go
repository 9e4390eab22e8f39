package check

import (
	"fmt"
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Options select the rules and say what the cluster plans.
type Options struct {
	// ExpectWindows: Windows nodes are planned even if none exists yet, so
	// readiness blockers are errors.
	ExpectWindows bool
	// Only runs just these rules (IDs or names); empty runs all.
	Only []string
	// Skip leaves these rules out (IDs or names).
	Skip []string
	// Kubeconfigs are checked by the kubeconfig rules.
	Kubeconfigs []*rule.Kubeconfig
	// Registry is the catalogue; nil means Default().
	Registry *rule.Registry
	// Unread are the kinds the input could not give (a live read refused
	// or not served them): the rules that examine one do not run.
	Unread []model.UnreadKind
	// KubeconfigsOnly: no cluster was given, only kubeconfig files; the
	// rules that read the cluster do not run, and that is not a fault.
	KubeconfigsOnly bool
}

// UnknownRuleError is an --rule or --skip value that names no rule.
type UnknownRuleError struct{ Name string }

func (e *UnknownRuleError) Error() string {
	return fmt.Sprintf("unknown rule %q: kubectl-hybrid check --list-rules lists them", e.Name)
}

// Report is the outcome of a run.
type Report struct {
	// Rules are the rules that ran, by ID.
	Rules []*rule.Rule
	// NotRun are the selected rules that did not run, grouped by cause.
	NotRun []rule.NotRun
	// NoCluster: a cluster was expected, but the input holds no object of
	// a kind the twin models (an empty directory, a server that served
	// nothing).
	NoCluster bool
	// Unread are the kinds the input could not give that a selected rule
	// examines.
	Unread []model.UnreadKind
	// Findings, most severe first, then by rule ID and object.
	Findings []rule.Finding
	// Suppressed are findings the skip-checks annotation silenced.
	Suppressed []rule.Finding
	// WindowsPlanned: the cluster has or plans Windows nodes.
	WindowsPlanned bool
	// Fallback is where SARIF places findings that have no location of
	// their own: the Cluster kind, else the first input file.
	Fallback model.Origin
}

// Count returns the number of (unsuppressed) findings of a severity.
func (r *Report) Count(s rule.Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Incomplete reports whether the run could not judge what it was asked
// to: the input holds no cluster, or a kind a selected rule examines could
// not be read. Rules left out because the input lacks what they need (no
// Installation in a directory of manifests) do not make a run incomplete.
func (r *Report) Incomplete() bool { return r.NoCluster || len(r.Unread) > 0 }

// NotRunCount is the number of selected rules that did not run.
func (r *Report) NotRunCount() int {
	n := 0
	for _, g := range r.NotRun {
		n += len(g.Rules)
	}
	return n
}

// Fails reports whether any finding is at least as severe as failOn; an
// empty failOn (--fail-on never) never fails.
func (r *Report) Fails(failOn rule.Severity) bool {
	if failOn == "" {
		return false
	}
	for _, f := range r.Findings {
		if f.Severity.AtLeast(failOn) {
			return true
		}
	}
	return false
}

// Rule returns the rule of a finding.
func (r *Report) Rule(id string) *rule.Rule {
	for _, rl := range r.Rules {
		if rl.ID == id {
			return rl
		}
	}
	return nil
}

// Run checks the cluster.
func Run(c *model.Cluster, opts Options) (*Report, error) {
	reg := opts.Registry
	if reg == nil {
		var err error
		if reg, err = Default(); err != nil {
			return nil, err
		}
	}
	rules, err := selectRules(reg, opts.Only, opts.Skip)
	if err != nil {
		return nil, err
	}
	x := rule.NewContext(c, opts.ExpectWindows, opts.Kubeconfigs)
	rep := &Report{WindowsPlanned: x.WindowsPlanned(), Fallback: x.FallbackOrigin()}
	rep.NoCluster = !opts.KubeconfigsOnly && !rule.HoldsCluster(c)
	unread := map[string]model.UnreadKind{}
	for _, u := range opts.Unread {
		unread[u.String()] = u
	}
	examined := map[string]bool{}
	for _, rl := range rules {
		for _, k := range rl.Examines {
			examined[k] = true
		}
	}
	for _, u := range opts.Unread {
		if examined[u.String()] {
			rep.Unread = append(rep.Unread, u)
		}
	}
	for _, rl := range rules {
		if why, fault := rule.WhyNotRun(rl, x, rep.NoCluster, opts.KubeconfigsOnly, unread); why != "" {
			rep.NotRun = rule.AddNotRun(rep.NotRun, why, fault, rl)
			continue
		}
		rep.Rules = append(rep.Rules, rl)
		findings, err := runRule(rl, x)
		if err != nil {
			return nil, err
		}
		for _, f := range findings {
			f.RuleID = rl.ID
			if f.Severity == "" {
				f.Severity = rl.Severity
				if rl.Blocker && !rep.WindowsPlanned {
					f.Severity = rule.Warning
				}
			}
			if f.Remediation == "" {
				f.Remediation = rl.Remediation
			}
			chain := x.Locate(&f)
			if x.Suppressed(rl, f.Object, chain) {
				rep.Suppressed = append(rep.Suppressed, f)
				continue
			}
			rep.Findings = append(rep.Findings, f)
		}
	}
	sortFindings(rep.Findings)
	sortFindings(rep.Suppressed)
	return rep, nil
}

// runRule runs one rule's Check, turning a panic into an error that names
// the rule: a bug in one rule must not look like a verdict.
func runRule(rl *rule.Rule, x *rule.Context) (out []rule.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rule %s (%s) failed: %v", rl.ID, rl.Name, r)
		}
	}()
	return rl.Check(x), nil
}

func selectRules(reg *rule.Registry, only, skip []string) ([]*rule.Rule, error) {
	want := map[string]bool{}
	for _, n := range only {
		r, ok := reg.Lookup(n)
		if !ok {
			return nil, &UnknownRuleError{Name: n}
		}
		want[r.ID] = true
	}
	drop := map[string]bool{}
	for _, n := range skip {
		r, ok := reg.Lookup(n)
		if !ok {
			return nil, &UnknownRuleError{Name: n}
		}
		drop[r.ID] = true
	}
	var out []*rule.Rule
	for _, r := range reg.Rules() {
		if (len(want) == 0 || want[r.ID]) && !drop[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

func sortFindings(fs []rule.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Object != b.Object {
			return rule.KeyLess(a.Object, b.Object)
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Message < b.Message
	})
}
