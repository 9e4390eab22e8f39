package rule

import (
	"fmt"
	"regexp"
	"sort"
)

// Registry is a catalogue of rules with unique IDs and names.
type Registry struct {
	rules  []*Rule
	byID   map[string]*Rule
	byName map[string]*Rule
}

var (
	idPattern   = regexp.MustCompile(`^HYB[0-9]{3}$`)
	namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// NewRegistry builds a registry from rules, failing on the first rule that
// is malformed or repeats an ID or a name.
func NewRegistry(rules ...Rule) (*Registry, error) {
	r := &Registry{byID: map[string]*Rule{}, byName: map[string]*Rule{}}
	for i := range rules {
		if err := r.Add(rules[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers a copy of rule. It returns an error, never panics, for a
// duplicate ID or name, or a rule without an ID, a name, a title, a
// severity or a Check function.
func (r *Registry) Add(rule Rule) error {
	switch {
	case !idPattern.MatchString(rule.ID):
		return fmt.Errorf("rule %q: the ID must be HYB and three digits", rule.ID)
	case !namePattern.MatchString(rule.Name):
		return fmt.Errorf("rule %s: name %q must be kebab-case", rule.ID, rule.Name)
	case rule.Title == "":
		return fmt.Errorf("rule %s: no title", rule.ID)
	case rule.Severity.Rank() == 0:
		return fmt.Errorf("rule %s: severity %q is not error, warning or info", rule.ID, rule.Severity)
	case rule.Check == nil:
		return fmt.Errorf("rule %s: no Check function", rule.ID)
	}
	if err := checkNeeds(&rule); err != nil {
		return err
	}
	if prev, ok := r.byID[rule.ID]; ok {
		return fmt.Errorf("rule %s (%s): duplicate ID, already used by %s", rule.ID, rule.Name, prev.Name)
	}
	if prev, ok := r.byName[rule.Name]; ok {
		return fmt.Errorf("rule %s: duplicate name %q, already used by %s", rule.ID, rule.Name, prev.ID)
	}
	p := &rule
	r.rules = append(r.rules, p)
	sort.SliceStable(r.rules, func(i, j int) bool { return r.rules[i].ID < r.rules[j].ID })
	r.byID[rule.ID] = p
	r.byName[rule.Name] = p
	return nil
}

// Rules returns the rules ordered by ID.
func (r *Registry) Rules() []*Rule { return append([]*Rule(nil), r.rules...) }

// Lookup finds a rule by ID or name.
func (r *Registry) Lookup(idOrName string) (*Rule, bool) {
	if p, ok := r.byID[idOrName]; ok {
		return p, true
	}
	p, ok := r.byName[idOrName]
	return p, ok
}
