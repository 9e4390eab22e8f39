package migrate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// oneEncoding is the plan as one json.Encoder writes it, the form
// WriteJSON streams.
func oneEncoding(t *testing.T, m *Plan) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTheStreamedJSONIsOneEncodingsBytes(t *testing.T) {
	lines := diff.Lines{Added: []string{"10.0.0.0/26 via 10.0.0.0 dev vxlan.calico onlink"}, Removed: []string{"10.0.0.0/26 via 192.168.0.2 dev ens18 proto 80 onlink"}}
	nodes := []diff.NodeDiff{{Node: "n1", OS: "linux", Change: diff.Changed, Routes: lines}, {Node: "n<2>&", OS: "linux", Change: diff.Changed, Routes: lines}}
	tests := []struct {
		name string
		plan func(t *testing.T) *Plan
	}{
		{"the main cluster's migration", func(t *testing.T) *Plan { return migrate(t, Request{}, mainCluster) }},
		{"a generated cluster's migration", func(t *testing.T) *Plan {
			snap := beforeMigration(t, 20)
			c, err := engine.Build(snap)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Compute(plan.Input{Cluster: c, Snapshot: snap}, Request{})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{"a plan with no step", func(t *testing.T) *Plan { return &Plan{Target: "t", Steps: []Step{}} }},
		{"a plan whose steps are nil", func(t *testing.T) *Plan { return &Plan{Target: "t"} }},
		{"nodes whose lines need escaping or are empty", func(t *testing.T) *Plan {
			odd := []diff.NodeDiff{
				{Node: "q\"b\\s", OS: "windows", Change: diff.Added, Felix: diff.Lines{Added: []string{"c \"x\"", "t\th", "<&>", "ü\u2028", "bad\xff", ""}}},
				{Node: "empty", Change: diff.Removed, Routes: diff.Lines{Added: []string{}}, RulesReordered: []string{"cali-INPUT"}},
			}
			return &Plan{Steps: []Step{{ID: "a", Changes: &diff.Result{Nodes: odd}}}}
		}},
		{"a step whose changes are only nodes", func(t *testing.T) *Plan {
			return &Plan{Steps: []Step{{ID: "a", Changes: &diff.Result{Nodes: nodes}}}}
		}},
		{"steps with and without nodes, changes nil, HTML characters", func(t *testing.T) *Plan {
			return &Plan{Target: "<&>", Steps: []Step{
				{ID: "a", Changes: &diff.Result{Nodes: nodes, Objects: []diff.ObjectChange{{Change: diff.Changed}}}},
				{ID: "b"},
				{ID: "c", Changes: &diff.Result{Reach: &diff.ReachDiff{}}},
				{ID: "d", Changes: &diff.Result{Nodes: nodes[:1], Reach: &diff.ReachDiff{Notes: []string{"x"}}}, Verify: []plan.Check{{Command: "ip route"}}},
			}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.plan(t)
			var got bytes.Buffer
			if err := WriteJSON(&got, m); err != nil {
				t.Fatal(err)
			}
			if want := oneEncoding(t, m); got.String() != want {
				t.Errorf("the streamed JSON differs from one encoding:\n got: %s\nwant: %s", got.String(), want)
			}
		})
	}
}
