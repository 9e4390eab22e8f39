package cli

import (
	"fmt"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/plancmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newInput is the input options of a command in its own package.
func newInput() cmdutil.Input { return &InputOptions{} }

// newPlanInput is the input options of a plan command.
func newPlanInput() plancmd.Input { return &InputOptions{} }

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

// DefaultNamespace is the kubeconfig context's namespace when live, else "".
func (o *InputOptions) DefaultNamespace() string {
	if o.Live() {
		return kubeNamespace(o.Kube)
	}
	return ""
}

// PlanInput reads the input for a plan command and builds its twin. The
// snapshot is kept (Build, not BuildOwned): the plans layer their files on
// the raw objects. apiServer is the live cluster's address, if any.
func (in *InputOptions) PlanInput(streams genericiooptions.IOStreams) (plan.Input, string, error) {
	snap, err := in.Snapshot(streams, false)
	if err != nil {
		return plan.Input{}, "", err
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
	}
	c, err := engine.Build(snap)
	if err != nil {
		return plan.Input{}, "", err
	}
	reportRejections(streams.ErrOut, c)
	reportAssumptions(streams.ErrOut, c)
	apiServer := ""
	if in.Live() {
		if cfg, err := in.Kube.ToRESTConfig(); err == nil {
			apiServer = cfg.Host
		}
	}
	return plan.Input{Cluster: c, Snapshot: snap}, apiServer, nil
}
