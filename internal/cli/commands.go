package cli

import (
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
)

// newInput is the input options of a command in its own package.
func newInput() cmdutil.Input { return &InputOptions{} }

// labInput is the built-in lab with the what-if files layered on it.
func labInput(filenames []string) cmdutil.Input {
	return &InputOptions{Lab: true, Filenames: filenames}
}

// Source says what the twin is built from, as report's page names it.
func (o *InputOptions) Source() string {
	var parts []string
	if o.Lab {
		parts = append(parts, "--lab")
	}
	for _, f := range o.Filenames {
		parts = append(parts, "-f "+f)
	}
	if len(parts) == 0 {
		return "the cluster of the current kubeconfig context"
	}
	return strings.Join(parts, " ")
}
