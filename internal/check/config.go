package check

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

// Config is a check configuration file, as .kube-linter.yaml is for
// kube-linter: which rules run, their severities, the fail threshold and
// suppressions that live beside the pipeline rather than on the objects.
//
//	rules:
//	  include: [HYB001, strict-affinity]   # only these (as --rule)
//	  exclude: [HYB016]                    # not these (as --skip)
//	severities:
//	  HYB016: error                        # a rule's findings at another severity
//	failOn: warning                        # as --fail-on, unless the flag is given
//	suppressions:
//	  - rule: HYB020
//	    object: Node/k8s-lab-win-1         # KIND[.GROUP]/[NAMESPACE/]NAME; empty: every object
//	    reason: tainted by the join script
type Config struct {
	Rules struct {
		Include []string `json:"include,omitempty"`
		Exclude []string `json:"exclude,omitempty"`
	} `json:"rules,omitempty"`
	Severities   map[string]rule.Severity `json:"severities,omitempty"`
	FailOn       string                   `json:"failOn,omitempty"`
	Suppressions []Suppression            `json:"suppressions,omitempty"`
}

// Suppression silences a rule's findings on one object, or on all.
type Suppression struct {
	Rule   string `json:"rule"`
	Object string `json:"object,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ParseConfig reads a configuration file strictly: an unknown field, an
// unknown rule or severity is an error naming the file.
func ParseConfig(name string, data []byte, reg *rule.Registry) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	known := func(where, id string) (string, error) {
		r, ok := reg.Lookup(id)
		if !ok {
			return "", fmt.Errorf("%s: %s: unknown rule %q", name, where, id)
		}
		return r.ID, nil
	}
	for i, id := range c.Rules.Include {
		if _, err := known("rules.include", id); err != nil {
			return nil, err
		}
		c.Rules.Include[i] = id
	}
	for _, id := range c.Rules.Exclude {
		if _, err := known("rules.exclude", id); err != nil {
			return nil, err
		}
	}
	sev := map[string]rule.Severity{}
	for id, s := range c.Severities {
		rid, err := known("severities", id)
		if err != nil {
			return nil, err
		}
		if _, err := rule.ParseSeverity(string(s)); err != nil {
			return nil, fmt.Errorf("%s: severities.%s: %w", name, id, err)
		}
		sev[rid] = s
	}
	c.Severities = sev
	if c.FailOn != "" && c.FailOn != "never" {
		if _, err := rule.ParseSeverity(c.FailOn); err != nil {
			return nil, fmt.Errorf("%s: failOn: %w (or never)", name, err)
		}
	}
	for i, s := range c.Suppressions {
		rid, err := known(fmt.Sprintf("suppressions[%d].rule", i), s.Rule)
		if err != nil {
			return nil, err
		}
		c.Suppressions[i].Rule = rid
	}
	return &c, nil
}

// Apply sets the configured severities on the report's findings and moves
// the suppressed ones to Suppressed, keeping the findings' order.
func (c *Config) Apply(r *Report) {
	var kept []rule.Finding
	for _, f := range r.Findings {
		if s, ok := c.Severities[f.RuleID]; ok {
			f.Severity = s
		}
		if c.suppresses(f) {
			r.Suppressed = append(r.Suppressed, f)
			continue
		}
		kept = append(kept, f)
	}
	sortFindings(kept)
	r.Findings = kept
}

func (c *Config) suppresses(f rule.Finding) bool {
	for _, s := range c.Suppressions {
		if s.Rule != f.RuleID {
			continue
		}
		if s.Object == "" || s.Object == rule.ObjectString(f.Object) || s.Object == objectRef(f) {
			return true
		}
	}
	return false
}

// objectRef is the finding's object as KIND[.GROUP]/[NAMESPACE/]NAME.
func objectRef(f rule.Finding) string {
	k := f.Object
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	if k.Namespace != "" {
		return kind + "/" + k.Namespace + "/" + k.Name
	}
	return kind + "/" + k.Name
}
