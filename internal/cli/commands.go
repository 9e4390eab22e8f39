package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/describecmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/plancmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/servecmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/serve"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

// newInput is the input options of a command in its own package.
func newInput() cmdutil.Input { return &InputOptions{} }

// newPlanInput is the input options of a plan command.
func newPlanInput() plancmd.Input { return &InputOptions{} }

// describeKinds is what describe shares with get: the kinds besides
// report's, their completion and the clock.
func describeKinds() describecmd.Kinds {
	return describecmd.Kinds{
		Extra:    extraKinds,
		Known:    joinKnown,
		Complete: completeResourceTypes,
		Clock:    func() time.Time { return clock() },
	}
}

// newServeInput is the input options of serve.
func newServeInput() servecmd.Input { return &InputOptions{} }

// serveBase is what serve's server takes from the other commands' code
// paths: get's dataplane kinds, the status of their errors, the clock.
func serveBase() serve.Options {
	return serve.Options{
		ExtraKinds: func(p *plane.Plane, node string) []report.Kind {
			// The warm plane: its nodes stay compiled between requests.
			dp := &dataplane{cluster: p.Cluster, node: node}
			dp.planeOnce.Do(func() { dp.pl = p })
			return dataplaneKindsOf(dp)
		},
		Status: serveStatus,
		Now:    func() time.Time { return clock() },
	}
}

// serveStatus gives the errors of the commands' own code paths (get's
// dataplane kinds) the status their exit code means.
func serveStatus(err error) (int, bool) {
	var ee *exitError
	if !errors.As(err, &ee) {
		return 0, false
	}
	switch ee.code {
	case ExitNegative:
		return http.StatusNotFound, true
	case ExitBadInput:
		return http.StatusBadRequest, true
	}
	return http.StatusInternalServerError, true
}

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

// Files are the -f arguments.
func (o *InputOptions) Files() []string { return o.Filenames }

// ReadOptions are --validate and the read limits, after Validate.
func (o *InputOptions) ReadOptions() (load.Validation, load.Limits) {
	return o.validation, o.Limits.load()
}

// RESTConfig is the live cluster's client configuration.
func (o *InputOptions) RESTConfig() (*rest.Config, error) { return o.Kube.ToRESTConfig() }

// PlanInput reads the input for a plan command and builds its twin. The
// snapshot is kept (Build, not BuildOwned): the plans layer their files on
// its objects and derive their twins from it. Like check's, it holds the
// modeled kinds as typed objects only (load.Options.DropRaw): the plans
// read no generic copy, which would hold as much memory again for the
// collector to walk. apiServer is the live cluster's address, if any.
func (in *InputOptions) PlanInput(streams genericiooptions.IOStreams) (plan.Input, string, error) {
	snap, err := in.Snapshot(streams, true)
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
