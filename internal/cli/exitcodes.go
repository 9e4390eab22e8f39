package cli

import (
	"fmt"
	"strings"
)

// commandExit is what one exit code means for one command.
type commandExit struct {
	Command string
	// Negative is what exit 1 answers ("" when the command never exits 1).
	Negative string
	// Incomplete is what exit 4 answers ("" when never).
	Incomplete string
	// Passthrough: the exit code is the emulated command's own, as
	// kubectl exec passes it on.
	Passthrough bool
}

// exitTable is every command's exit codes; the README's table is
// rendered from it (TestTheReadmeHoldsTheExitCodeTable). 0, 2 and 3 mean
// the same for every command: success, bad input or usage, a live cluster
// or tool failure.
var exitTable = []commandExit{
	{Command: "get", Negative: "a named object (or --node) does not exist"},
	{Command: "describe", Negative: "a named object does not exist"},
	{Command: "exec", Negative: "the node, pod or deployment does not exist", Passthrough: true},
	{Command: "logs", Negative: "the pod does not exist, its container has not started or has no logs the twin models, or its node's kubelet has no serving certificate"},
	{Command: "trace", Negative: "the connection is not delivered, or the source or destination does not exist"},
	{Command: "reach", Negative: "--expect: the matrix differs from the expected one"},
	{Command: "check", Negative: "a finding reaches --fail-on", Incomplete: "no finding reaches --fail-on, but the input holds no cluster or a kind a selected rule examines could not be read"},
	{Command: "lab", Negative: "--verify: a verification command did not answer as expected"},
	{Command: "plan join-windows", Negative: "blocking findings, or the predicted cluster has errors"},
	{Command: "plan migrate", Negative: "a preflight finding blocks, the migrated twin does not pass check --expect-windows, or the input has no Installation"},
	{Command: "diff", Negative: "the two twins differ"},
	{Command: "verify", Negative: "the nodes' outputs differ from the twin's answers"},
	{Command: "collect", Negative: "a node did not answer in time, failed, or does not exist (the other nodes' outputs are written)"},
	{Command: "report"},
	{Command: "sandbox up"},
	{Command: "sandbox test", Negative: "a real probe in the sandbox disagrees with trace"},
	{Command: "sandbox down"},
	{Command: "dump"},
	{Command: "serve"},
	{Command: "gen"},
	{Command: "version"},
	{Command: "completion"},
}

// exitAllowed says whether a command documents the exit code.
func exitAllowed(command string, code int) bool {
	for _, e := range exitTable {
		if e.Command != command {
			continue
		}
		switch code {
		case ExitOK, ExitBadInput, ExitInternal:
			return true
		case ExitNegative:
			return e.Negative != "" || e.Passthrough
		case ExitIncomplete:
			return e.Incomplete != "" || e.Passthrough
		}
		return e.Passthrough
	}
	return false
}

// exitTableMarkdown renders the table for the README.
func exitTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| command | 1 | 4 |\n|---|---|---|\n")
	for _, e := range exitTable {
		one, four := e.Negative, e.Incomplete
		if e.Passthrough {
			one = "the command's own exit code, as kubectl exec passes it on; also: " + one
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", e.Command, orDash(one), orDash(four))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
