// Package expect reads an expected reachability matrix (a saved
// `reach -o json` run, or a hand-written list of cells) and compares a
// computed matrix (internal/reach) with it, as a connectivity test does.
package expect

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// Expectation is one cell an expected matrix asserts: the shape of a cell
// in `reach -o json` (reason and hop are read and ignored), so a saved run
// is an expectation. Port 0 and an empty proto match any.
type Expectation struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Port    int    `json:"port,omitempty"`
	Proto   string `json:"proto,omitempty"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Hop     string `json:"hop,omitempty"`
}

// Parse reads an expected matrix: a YAML or JSON list of
// cells. name is the file, for messages.
func Parse(name string, data []byte) ([]Expectation, error) {
	var exps []Expectation
	if err := yaml.UnmarshalStrict(data, &exps); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, e := range exps {
		where := fmt.Sprintf("%s: item %d", name, i+1)
		if e.From == "" || e.To == "" {
			return nil, fmt.Errorf("%s: from and to are required", where)
		}
		switch e.Verdict {
		case "allowed", "denied", "partial", "n/a":
		default:
			return nil, fmt.Errorf("%s: verdict %q: use allowed, denied, partial or n/a", where, e.Verdict)
		}
		if e.Port < 0 || e.Port > 65535 {
			return nil, fmt.Errorf("%s: port %d: out of range", where, e.Port)
		}
		if e.Proto != "" && e.Proto != "tcp" && e.Proto != "udp" && e.Proto != "icmp" {
			return nil, fmt.Errorf("%s: proto %q: use tcp, udp or icmp", where, e.Proto)
		}
	}
	return exps, nil
}

// Difference is an expectation the matrix does not meet.
type Difference struct {
	Expectation
	// Got is the matrix's verdict for each matching cell ("" when no cell
	// matches), and Why the reason of the first that differs.
	Got []string
	Why string
}

func (d Difference) String() string {
	cell := d.From + " → " + d.To
	if d.Port != 0 {
		cell += fmt.Sprintf(":%d", d.Port)
	}
	if d.Proto != "" {
		cell += "/" + d.Proto
	}
	if len(d.Got) == 0 {
		return fmt.Sprintf("%s: expected %s, but the matrix has no such cell", cell, d.Verdict)
	}
	s := fmt.Sprintf("%s: expected %s, got %s", cell, d.Verdict, strings.Join(d.Got, ", "))
	if d.Why != "" {
		s += " (" + d.Why + ")"
	}
	return s
}

// Compare checks every expectation against the matrix: each cell it
// matches must have its verdict, and it must match one.
func Compare(m *reach.Matrix, exps []Expectation) []Difference {
	type got struct {
		verdicts []string
		why      string
		bad      bool
	}
	results := make([]got, len(exps))
	byPair := map[[2]string][]int{}
	for i, e := range exps {
		k := [2]string{e.From, e.To}
		byPair[k] = append(byPair[k], i)
	}
	_ = m.Entries(func(en reach.Entry) error {
		for _, i := range byPair[[2]string{en.From, en.To}] {
			e := exps[i]
			if e.Port != 0 && e.Port != en.Port || e.Proto != "" && e.Proto != en.Proto {
				continue
			}
			r := &results[i]
			if !slices.Contains(r.verdicts, en.Verdict) {
				r.verdicts = append(r.verdicts, en.Verdict)
			}
			if en.Verdict != e.Verdict && !r.bad {
				r.bad = true
				r.why = en.Reason
				if en.Hop != "" {
					r.why = en.Hop + ": " + en.Reason
				}
			}
		}
		return nil
	})
	var out []Difference
	for i, r := range results {
		if len(r.verdicts) == 0 || r.bad {
			out = append(out, Difference{Expectation: exps[i], Got: r.verdicts, Why: r.why})
		}
	}
	return out
}
