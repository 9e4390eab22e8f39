package check

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Output formats of a report.
const (
	OutputText  = "text"
	OutputJSON  = "json"
	OutputSARIF = "sarif"
)

// labPrefix starts the Origin.File of lab objects; the lab's files live in
// examples/lab of the repository.
const (
	labPrefix = "lab:"
	labDir    = "examples/lab/"
)

// displayFile is the file name as findings show it: lab objects by their
// path in the repository.
func displayFile(file string) string {
	if strings.HasPrefix(file, labPrefix) {
		return labDir + strings.TrimPrefix(file, labPrefix)
	}
	return filepath.ToSlash(file)
}

func locationString(o model.Origin) string {
	if o.File == "" {
		return ""
	}
	s := displayFile(o.File)
	if o.Line > 0 {
		s += fmt.Sprintf(":%d", o.Line)
	}
	return s
}

// WriteText prints the findings grouped by severity, then a summary line.
func WriteText(w io.Writer, r *Report) error {
	groups := []struct {
		sev   rule.Severity
		title string
	}{{rule.Error, "Errors"}, {rule.Warning, "Warnings"}, {rule.Info, "Info"}}
	if r.NoCluster {
		fmt.Fprintf(w, "%s\n\n", noClusterText)
	}
	for _, g := range groups {
		n := r.Count(g.sev)
		if n == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d)\n", g.title, n)
		for _, f := range r.Findings {
			if f.Severity != g.sev {
				continue
			}
			writeTextFinding(w, r, f)
		}
		fmt.Fprintln(w)
	}
	switch {
	case len(r.Findings) > 0:
	case len(r.Rules) == 0:
		fmt.Fprintln(w, "No rule ran.")
	default:
		fmt.Fprintln(w, "No findings.")
	}
	if len(r.Findings) == 0 {
		if len(r.NotRun) > 0 {
			fmt.Fprintln(w)
		}
	}
	if len(r.NotRun) > 0 {
		fmt.Fprintf(w, "Not run (%d)\n", r.NotRunCount())
		for _, g := range r.NotRun {
			fmt.Fprintf(w, "  %s\n    %s\n", g.Cause, rule.ListNames(rule.RuleIDs(g.Rules), 12))
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, summaryLine(r))
	return err
}

// noClusterText heads a report whose input holds no cluster.
const noClusterText = "The input holds no cluster: it has no object of a kind the twin models, so no rule could judge it."

func writeTextFinding(w io.Writer, r *Report, f rule.Finding) {
	title := ""
	if rule := r.Rule(f.RuleID); rule != nil {
		title = rule.Title
	}
	fmt.Fprintf(w, "  %s  %s\n", f.RuleID, title)
	obj := rule.ObjectString(f.Object)
	if f.Field != "" {
		obj += "  " + f.Field
	}
	fmt.Fprintf(w, "    %s\n", obj)
	fmt.Fprintf(w, "    %s\n", indent(f.Message, "    "))
	switch loc := locationString(f.Location); {
	case loc == "":
		fmt.Fprintln(w, "    at: derived (in no input file)")
	case f.Source != nil && f.Location != f.OwnOrigin:
		fmt.Fprintf(w, "    at: %s (derived from %s)\n", loc, rule.ObjectString(*f.Source))
	default:
		fmt.Fprintf(w, "    at: %s\n", loc)
	}
	if f.Remediation != "" {
		fmt.Fprintf(w, "    fix: %s\n", indent(f.Remediation, "         "))
	}
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

func summaryLine(r *Report) string {
	windows := "no Windows nodes planned"
	if r.WindowsPlanned {
		windows = "Windows nodes present or planned"
	}
	rules := rule.Plural(len(r.Rules), "rule")
	if n := r.NotRunCount(); n > 0 {
		rules += fmt.Sprintf(" (%d not run)", n)
	}
	s := fmt.Sprintf("%s, %s, %d info (%d suppressed) from %s; %s",
		rule.Plural(r.Count(rule.Error), "error"), rule.Plural(r.Count(rule.Warning), "warning"), r.Count(rule.Info),
		len(r.Suppressed), rules, windows)
	if r.Incomplete() {
		s += "; incomplete"
	}
	return s
}

// jsonObject is a finding's object.
type jsonObject struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

type jsonLocation struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Doc  int    `json:"document,omitempty"`
}

type jsonFinding struct {
	ID          string           `json:"id"`
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Severity    rule.Severity    `json:"severity"`
	Object      jsonObject       `json:"object"`
	Field       string           `json:"field,omitempty"`
	Message     string           `json:"message"`
	Remediation string           `json:"remediation,omitempty"`
	References  []rule.Reference `json:"references,omitempty"`
	Location    *jsonLocation    `json:"location,omitempty"`
	DerivedFrom *jsonObject      `json:"derivedFrom,omitempty"`
}

type jsonSummary struct {
	Errors         int  `json:"errors"`
	Warnings       int  `json:"warnings"`
	Info           int  `json:"info"`
	Suppressed     int  `json:"suppressed"`
	Rules          int  `json:"rules"`
	NotRun         int  `json:"notRun"`
	WindowsPlanned bool `json:"windowsPlanned"`
	// Complete is false when the input holds no cluster or a kind a rule
	// examines could not be read.
	Complete  bool `json:"complete"`
	NoCluster bool `json:"noCluster"`
}

type jsonNotRun struct {
	Cause string   `json:"cause"`
	Fault bool     `json:"fault"`
	Rules []string `json:"rules"`
}

type jsonUnread struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

type jsonReport struct {
	Findings   []jsonFinding `json:"findings"`
	Suppressed []jsonFinding `json:"suppressed"`
	NotRun     []jsonNotRun  `json:"notRun"`
	Unread     []jsonUnread  `json:"unread"`
	Summary    jsonSummary   `json:"summary"`
}

func toJSONObject(k model.Key) jsonObject {
	return jsonObject{Group: k.Group, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}

func toJSONFinding(r *Report, f rule.Finding) jsonFinding {
	jf := jsonFinding{ID: f.RuleID, Severity: f.Severity, Object: toJSONObject(f.Object), Field: f.Field,
		Message: f.Message, Remediation: f.Remediation}
	if rule := r.Rule(f.RuleID); rule != nil {
		jf.Name, jf.Title, jf.References = rule.Name, rule.Title, rule.References
	}
	if f.Location.File != "" {
		jf.Location = &jsonLocation{File: displayFile(f.Location.File), Line: f.Location.Line, Doc: f.Location.Doc}
	}
	if f.Source != nil && f.Location != f.OwnOrigin {
		o := toJSONObject(*f.Source)
		jf.DerivedFrom = &o
	}
	return jf
}

// WriteJSON prints the report as one JSON object: findings, suppressed
// findings and a summary.
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{Findings: []jsonFinding{}, Suppressed: []jsonFinding{}, NotRun: []jsonNotRun{}, Unread: []jsonUnread{}}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, toJSONFinding(r, f))
	}
	for _, f := range r.Suppressed {
		out.Suppressed = append(out.Suppressed, toJSONFinding(r, f))
	}
	for _, g := range r.NotRun {
		out.NotRun = append(out.NotRun, jsonNotRun{Cause: g.Cause, Fault: g.Fault, Rules: rule.RuleIDs(g.Rules)})
	}
	for _, u := range r.Unread {
		out.Unread = append(out.Unread, jsonUnread{Kind: u.String(), Reason: u.Reason})
	}
	out.Summary = jsonSummary{Errors: r.Count(rule.Error), Warnings: r.Count(rule.Warning), Info: r.Count(rule.Info),
		Suppressed: len(r.Suppressed), Rules: len(r.Rules), NotRun: r.NotRunCount(), WindowsPlanned: r.WindowsPlanned,
		Complete: !r.Incomplete(), NoCluster: r.NoCluster}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// SARIF 2.1.0, the subset GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

// sarifInvocation says whether the run judged all it was asked to; its
// notifications name the rules that did not run and why.
type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level      string              `json:"level"`
	Message    sarifText           `json:"message"`
	Properties sarifNotRunProperty `json:"properties"`
}

type sarifNotRunProperty struct {
	Rules []string `json:"rules"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Tags []string `json:"tags,omitempty"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifText      `json:"shortDescription"`
	FullDescription      sarifText      `json:"fullDescription"`
	Help                 sarifHelp      `json:"help"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           sarifRuleProps `json:"properties"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
}

// SARIFOptions are the tool's identity in the log.
type SARIFOptions struct {
	ToolVersion string
}

const informationURI = "https://github.com/kubectl-hybrid/kubectl-hybrid"

func sarifLevel(s rule.Severity) string {
	switch s {
	case rule.Error:
		return "error"
	case rule.Warning:
		return "warning"
	}
	return "note"
}

// sarifURI turns a file name into an artifact URI: a path relative to where
// the tool ran (the repository root in CI), lab files by their path in the
// repository, absolute paths as file:// URIs.
func sarifURI(file string) string {
	f := displayFile(file)
	if filepath.IsAbs(file) {
		return "file://" + filepath.ToSlash(file)
	}
	return strings.TrimPrefix(f, "./")
}

// WriteSARIF prints the report as a SARIF 2.1.0 log that GitHub code
// scanning accepts. Every rule that ran is listed in tool.driver.rules.
// Every result has a location, because code scanning rejects results
// without one: the object's origin, else the origin of the object it
// derives from, else the report's fallback (the Cluster kind, or the first
// input file). Suppressed findings are included with an inSource
// suppression.
func WriteSARIF(w io.Writer, r *Report, opts SARIFOptions) error {
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "kubectl-hybrid", InformationURI: informationURI,
			Version: opts.ToolVersion, Rules: []sarifRule{}}},
		Results: []sarifResult{},
	}
	index := map[string]int{}
	for i, rule := range r.Rules {
		index[rule.ID] = i
		level := rule.Severity
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 rule.Name,
			ShortDescription:     sarifText{Text: rule.Title},
			FullDescription:      sarifText{Text: unwrap(rule.Description)},
			Help:                 sarifHelp{Text: ruleHelpText(rule), Markdown: ruleHelpMarkdown(rule)},
			HelpURI:              rule.HelpURI(),
			DefaultConfiguration: sarifConfig{Level: sarifLevel(level)},
			Properties:           sarifRuleProps{Tags: ruleTags(rule)},
		})
	}
	inv := sarifInvocation{ExecutionSuccessful: !r.Incomplete()}
	if r.NoCluster {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
			Message: sarifText{Text: noClusterText}, Properties: sarifNotRunProperty{Rules: []string{}}})
	}
	for _, g := range r.NotRun {
		level := "note"
		if g.Fault {
			level = "error"
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: level,
			Message:    sarifText{Text: fmt.Sprintf("%s: %s not run", g.Cause, rule.Plural(len(g.Rules), "rule"))},
			Properties: sarifNotRunProperty{Rules: rule.RuleIDs(g.Rules)}})
	}
	run.Invocations = []sarifInvocation{inv}
	add := func(f rule.Finding, suppressed bool) {
		loc := f.Location
		if loc.File == "" || loc.File == "<stdin>" {
			loc = r.Fallback
		}
		res := sarifResult{
			RuleID:              f.RuleID,
			RuleIndex:           index[f.RuleID],
			Level:               sarifLevel(f.Severity),
			Message:             sarifText{Text: sarifMessage(f)},
			Locations:           []sarifLocation{},
			PartialFingerprints: map[string]string{"kubectlHybridFinding/v1": fingerprint(f)},
		}
		if loc.File != "" && loc.File != "<stdin>" {
			pl := sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(loc.File)}}
			line := loc.Line
			if line < 1 {
				line = 1
			}
			pl.Region = &sarifRegion{StartLine: line}
			res.Locations = append(res.Locations, sarifLocation{PhysicalLocation: pl})
		}
		if suppressed {
			res.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: rule.SkipAnnotation}}
		}
		run.Results = append(run.Results, res)
	}
	for _, f := range r.Findings {
		add(f, false)
	}
	for _, f := range r.Suppressed {
		add(f, true)
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

func sarifMessage(f rule.Finding) string {
	var b strings.Builder
	b.WriteString(rule.ObjectString(f.Object))
	if f.Field != "" {
		b.WriteString(" " + f.Field)
	}
	b.WriteString(": " + f.Message)
	if f.Remediation != "" {
		b.WriteString("\nFix: " + f.Remediation)
	}
	return b.String()
}

// fingerprint identifies a finding across runs independently of line
// numbers: rule, object and field.
func fingerprint(f rule.Finding) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{f.RuleID, f.Object.Group, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Field}, "\x00")))
	return hex.EncodeToString(sum[:16])
}

func ruleTags(r *rule.Rule) []string {
	tags := []string{"kubernetes", "windows"}
	if r.Blocker {
		tags = append(tags, "windows-readiness")
	}
	return tags
}

// unwrap joins the hard-wrapped lines of a description into one paragraph.
func unwrap(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func ruleHelpText(r *rule.Rule) string {
	var b strings.Builder
	b.WriteString(unwrap(r.Description))
	if r.Remediation != "" {
		b.WriteString("\n\nRemediation: " + r.Remediation)
	}
	for _, ref := range r.References {
		b.WriteString("\n- " + ref.Title)
		if ref.URL != "" {
			b.WriteString(": " + ref.URL)
		}
	}
	return b.String()
}

func ruleHelpMarkdown(r *rule.Rule) string {
	var b strings.Builder
	b.WriteString(r.Description)
	if r.Remediation != "" {
		b.WriteString("\n\n**Remediation**\n\n" + markdownBlock(r.Remediation))
	}
	if len(r.References) > 0 {
		b.WriteString("\n\n**References**\n")
		for _, ref := range r.References {
			b.WriteString("\n- " + markdownRef(ref))
		}
	}
	return b.String()
}

func markdownRef(ref rule.Reference) string {
	if ref.URL == "" {
		return ref.Title
	}
	return fmt.Sprintf("[%s](%s)", ref.Title, ref.URL)
}

// markdownBlock shows a remediation that is a command or a manifest as a
// code block, prose as it is.
func markdownBlock(s string) string {
	if strings.HasPrefix(s, "kubectl ") || strings.HasPrefix(s, "curl ") || strings.Contains(s, "\n") {
		return "```\n" + strings.TrimRight(s, "\n") + "\n```"
	}
	return s
}
