package check

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

// OutputJUnit is the JUnit XML report CI systems (GitLab, Jenkins, Azure
// Pipelines) show as test results.
const OutputJUnit = "junit"

// The JUnit XML schema as CI systems read it
// (https://github.com/testmoapp/junitxml): one suite, a test case per rule
// that ran and found nothing, per finding, and per rule that did not run.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit prints the report as JUnit XML: each finding a failed test
// case of its rule (type: its severity), each rule without findings a
// passed one, each rule that did not run a skipped one with the cause.
// Suppressed findings are left out, as the text output leaves them.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{Name: "kubectl-hybrid check"}
	found := map[string]bool{}
	for _, f := range r.Findings {
		found[f.RuleID] = true
	}
	for _, rl := range r.Rules {
		if found[rl.ID] {
			for _, f := range r.Findings {
				if f.RuleID != rl.ID {
					continue
				}
				text := f.Message
				if loc := locationString(f.Location); loc != "" {
					text += "\nat: " + loc
				}
				if f.Remediation != "" {
					text += "\nfix: " + f.Remediation
				}
				suite.Cases = append(suite.Cases, junitCase{
					Classname: rl.ID + " " + rl.Name,
					Name:      rule.ObjectString(f.Object),
					Failure:   &junitFailure{Message: rl.Title, Type: string(f.Severity), Text: text},
				})
				suite.Failures++
			}
			continue
		}
		suite.Cases = append(suite.Cases, junitCase{Classname: rl.ID + " " + rl.Name, Name: rl.Title})
	}
	for _, g := range r.NotRun {
		for _, rl := range g.Rules {
			suite.Cases = append(suite.Cases, junitCase{Classname: rl.ID + " " + rl.Name, Name: rl.Title, Skipped: &junitSkipped{Message: g.Cause}})
			suite.Skipped++
		}
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: suite.Name, Tests: suite.Tests, Failures: suite.Failures, Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encoding JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
