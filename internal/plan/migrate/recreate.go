package migrate

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
)

// StepWindowsRecreate follows a step whose changes Windows nodes apply only
// to endpoints created afterwards or to a re-created HNS network.
const StepWindowsRecreate = "windows-recreate"

// windowsFollowUp is the step that applies st's deferred changes on the
// Windows nodes, node by node; false when st has none. The twin does not
// model the interval before it: its Windows nodes show the state after it.
func windowsFollowUp(st *Step) (Step, bool) {
	if st.Changes == nil || len(st.Changes.Deferred) == 0 {
		return Step{}, false
	}
	network := false
	var fields, applies []string
	nodes := map[string]bool{}
	var order []string
	for _, d := range st.Changes.Deferred {
		fields = append(fields, fmt.Sprintf("%s %s", d.Object, d.Field))
		applies = append(applies, d.Applies)
		if len(d.Procedure) == len(diff.ProcedureNetwork) {
			network = true
		}
		for _, n := range d.Nodes {
			if !nodes[n] {
				nodes[n] = true
				order = append(order, n)
			}
		}
	}
	proc, title := diff.ProcedurePods, "Re-create the pods of each Windows node"
	disruption := "each Windows node's pods move while it is drained"
	if network {
		proc, title = diff.ProcedureNetwork, "Delete and re-create the Calico HNS network on each Windows node"
		disruption = "each Windows node is drained and has no pod networking from Remove-HnsNetwork until calico-node-windows re-creates the network"
	}
	var cmds []string
	for _, n := range order {
		cmds = append(cmds, "# "+n)
		for _, p := range proc {
			cmds = append(cmds, strings.ReplaceAll(p, "<node>", n))
		}
	}
	return Step{
		ID: StepWindowsRecreate, Title: title + " (after " + st.ID + ")", Commands: cmds, Disruption: disruption,
		Why: fmt.Sprintf("%s changed, which applies to %s. %s",
			strings.Join(fields, ", "), strings.Join(applies, "; "), modelled(network)),
	}, true
}

// modelled says what the previous step's changes show of the interval.
func modelled(network bool) string {
	if network {
		return "Not modelled: the twin shows the Windows nodes with the new network settings from the previous step on (simulated); on the nodes that holds only after this step"
	}
	return "Modelled in the previous step's node changes: existing Windows endpoints keep their OutBoundNAT until this step re-creates their pods; its reachability shows the state after this step (simulated)"
}

// withWindowsFollowUps inserts after each step the Windows step its
// deferred changes need.
func withWindowsFollowUps(steps []Step) []Step {
	var out []Step
	for i := range steps {
		out = append(out, steps[i])
		if f, ok := windowsFollowUp(&steps[i]); ok {
			out = append(out, f)
		}
	}
	return out
}
