package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
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
	Kubeconfigs []*Kubeconfig
	// Registry is the catalogue; nil means Default().
	Registry *Registry
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
	Rules []*Rule
	// NotRun are the selected rules that did not run, grouped by cause.
	NotRun []NotRun
	// NoCluster: a cluster was expected, but the input holds no object of
	// a kind the twin models (an empty directory, a server that served
	// nothing).
	NoCluster bool
	// Unread are the kinds the input could not give that a selected rule
	// examines.
	Unread []model.UnreadKind
	// Findings, most severe first, then by rule ID and object.
	Findings []Finding
	// Suppressed are findings the skip-checks annotation silenced.
	Suppressed []Finding
	// WindowsPlanned: the cluster has or plans Windows nodes.
	WindowsPlanned bool
	// Fallback is where SARIF places findings that have no location of
	// their own: the Cluster kind, else the first input file.
	Fallback model.Origin
}

// Count returns the number of (unsuppressed) findings of a severity.
func (r *Report) Count(s Severity) int {
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
func (r *Report) Fails(failOn Severity) bool {
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
func (r *Report) Rule(id string) *Rule {
	for _, rule := range r.Rules {
		if rule.ID == id {
			return rule
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
	x := NewContext(c, opts.ExpectWindows, opts.Kubeconfigs)
	rep := &Report{WindowsPlanned: x.WindowsPlanned(), Fallback: x.fallbackOrigin()}
	rep.NoCluster = !opts.KubeconfigsOnly && !holdsCluster(c)
	unread := map[string]model.UnreadKind{}
	for _, u := range opts.Unread {
		unread[u.String()] = u
	}
	examined := map[string]bool{}
	for _, rule := range rules {
		for _, k := range rule.Examines {
			examined[k] = true
		}
	}
	for _, u := range opts.Unread {
		if examined[u.String()] {
			rep.Unread = append(rep.Unread, u)
		}
	}
	for _, rule := range rules {
		if why, fault := whyNotRun(rule, x, rep.NoCluster, opts.KubeconfigsOnly, unread); why != "" {
			rep.NotRun = addNotRun(rep.NotRun, why, fault, rule)
			continue
		}
		rep.Rules = append(rep.Rules, rule)
		findings, err := runRule(rule, x)
		if err != nil {
			return nil, err
		}
		for _, f := range findings {
			f.RuleID = rule.ID
			if f.Severity == "" {
				f.Severity = rule.Severity
				if rule.Blocker && !rep.WindowsPlanned {
					f.Severity = Warning
				}
			}
			if f.Remediation == "" {
				f.Remediation = rule.Remediation
			}
			chain := x.locate(&f)
			if x.suppressed(rule, f.Object, chain) {
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
func runRule(rule *Rule, x *Context) (out []Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rule %s (%s) failed: %v", rule.ID, rule.Name, r)
		}
	}()
	return rule.Check(x), nil
}

func selectRules(reg *Registry, only, skip []string) ([]*Rule, error) {
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
	var out []*Rule
	for _, r := range reg.Rules() {
		if (len(want) == 0 || want[r.ID]) && !drop[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity != b.Severity {
			return a.Severity.rank() > b.Severity.rank()
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Object != b.Object {
			return keyLess(a.Object, b.Object)
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Message < b.Message
	})
}

// locate fills in the finding's Source (when the rule left it out) and
// Location, and returns the chain of objects the finding's object derives
// from.
func (x *Context) locate(f *Finding) []model.Key {
	if f.Source == nil {
		f.Source = x.inferSource(f.Object)
	}
	var chain []model.Key
	origins := x.Cluster.Origins
	if o, ok := origins[f.Object]; ok {
		f.Location, f.ownOrigin = o, o
	}
	src := f.Source
	for hops := 0; src != nil && hops < 4; hops++ {
		chain = append(chain, *src)
		if o, ok := origins[*src]; ok && f.Location.File == "" {
			f.Location = o
		}
		src = x.inferSource(*src)
	}
	return chain
}

func (x *Context) suppressed(rule *Rule, obj model.Key, chain []model.Key) bool {
	skips := x.idx().skips
	if len(skips) == 0 {
		return false
	}
	for _, k := range append([]model.Key{obj}, chain...) {
		if s := skips[k]; s != nil && (s[rule.ID] || s[rule.Name] || s["*"]) {
			return true
		}
	}
	return false
}

// fallbackOrigin is the Cluster kind's origin, else the first input file's
// first line.
func (x *Context) fallbackOrigin() model.Origin {
	if k := x.clusterKindKey(); k != nil {
		return x.Cluster.Origins[*k]
	}
	var best model.Origin
	for _, o := range x.Cluster.Origins {
		if o.File == "" || o.File == "<stdin>" {
			continue
		}
		if best.File == "" || originLess(o, best) {
			best = o
		}
	}
	if best.File != "" {
		best = model.Origin{File: best.File, Doc: 1, Line: 1}
	}
	return best
}

// Keys of the objects findings most often point at.
func installationKey(c *model.Cluster) *model.Key {
	if c.Installation == nil {
		return nil
	}
	return &model.Key{Group: "operator.tigera.io", Kind: "Installation", Name: c.Installation.Name}
}

func (x *Context) clusterKindKey() *model.Key {
	if k, ok := x.observedOfKind(hybrid.Group, "Cluster"); ok {
		return &k
	}
	return nil
}

func (x *Context) kubeadmClusterKey() *model.Key {
	if k, ok := x.observedOfKind("kubeadm.k8s.io", "ClusterConfiguration"); ok {
		return &k
	}
	if k, ok := x.observedOfKind("kubeadm.k8s.io", "InitConfiguration"); ok {
		return &k
	}
	return nil
}

// inferSource is the object a derived object comes from: the Installation
// for what the operator renders, kubeadm's configuration for its add-ons,
// the owning controller for a ReplicaSet, the Cluster kind for nodes.
func (x *Context) inferSource(k model.Key) *model.Key {
	c := x.Cluster
	switch {
	case k.Group == "operator.tigera.io" && k.Kind == "Installation":
		return nil
	case k.Group == "projectcalico.org" && k.Kind != "NetworkPolicy" && k.Kind != "GlobalNetworkPolicy",
		k.Group == "operator.tigera.io" && k.Kind == "TigeraStatus",
		k.Namespace == "calico-system",
		k.Kind == "Namespace" && k.Name == "calico-system":
		return installationKey(c)
	case k.Group == "apps" && k.Kind == "ReplicaSet":
		for _, rs := range c.ReplicaSets {
			if rs.Namespace == k.Namespace && rs.Name == k.Name {
				if kind, name := controllerOf(rs); kind == "Deployment" {
					return &model.Key{Group: "apps", Kind: "Deployment", Namespace: k.Namespace, Name: name}
				}
			}
		}
	case k.Namespace == "kube-system" && (k.Name == "kube-proxy" || k.Name == "coredns" || k.Name == "kube-dns"),
		k.Namespace == "default" && k.Name == "kubernetes" && k.Kind == "Service":
		return x.kubeadmClusterKey()
	case k.Group == "" && k.Kind == "Node", k.Group == "certificates.k8s.io":
		return x.clusterKindKey()
	case k.Group == "" && k.Kind == "Pod":
		if w := x.workloadOfPod(k); w != nil && w.Key != k {
			key := w.Key
			return &key
		}
	}
	return nil
}

// workloadOfPod finds the workload a pod belongs to; the pod index is built
// on first use, for the few findings that name a pod.
func (x *Context) workloadOfPod(k model.Key) *workload {
	ix := x.idx()
	if ix.podWorkload == nil {
		ix.podWorkload = map[model.Key]*workload{}
		for _, w := range ix.workloads {
			for _, p := range w.Pods {
				ix.podWorkload[model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}] = w
			}
		}
	}
	return ix.podWorkload[k]
}

// plural makes "1 pod", "2 pods".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// listNames joins up to max names, then "and N more".
func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
