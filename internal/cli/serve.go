package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/serve"
)

// ServeOptions is `kubectl-hybrid serve`: build the twin once, keep it
// warm and answer over HTTP.
type ServeOptions struct {
	Input    InputOptions
	Listen   string
	Debounce time.Duration
	Poll     time.Duration

	streams genericiooptions.IOStreams
}

// NewCmdServe builds the serve command.
func NewCmdServe(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ServeOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "serve [-f FILE|DIR | --lab] [--listen 127.0.0.1:8080]",
		Short: "Keep the twin built and answer trace, reach, check, get, exec and diff over HTTP",
		Long: `Build the twin once and answer over HTTP from the warm twin, until
interrupted (SIGINT or SIGTERM):

  GET  /api/v1/trace?src=SRC&dst=DST[&namespace=NS&port=N&proto=P]
  GET  /api/v1/reach[?namespace=NS&allNamespaces=true&from=SEL&to=SEL&port=N&proto=P&nodes=true]
  GET  /api/v1/check[?rule=ID&skip=ID&expectWindows=true]
  GET  /api/v1/get/KIND[/NAME][?namespace=NS&allNamespaces=true&selector=L&fieldSelector=F&node=NODE]
  POST /api/v1/exec    {"target": "node/NAME", "namespace": "NS", "command": ["ip", "route"]}
  POST /api/v1/diff[?nodes=true&noReach=true]   a what-if as YAML in the body
  GET  /metrics  /healthz  /readyz  /openapi.json

Each answer is the JSON the command prints with -o json. A bad request is
a 400 with {"error": "…"}, an object that does not exist a 404.
/openapi.json (and docs/openapi.json) describes every path.

The twin follows its input: a live cluster (the kubeconfig, or the
in-cluster ServiceAccount, see deploy/serve.yaml) is watched — every kind
the twin reads, with the watch verb deploy/rbac.yaml grants — and files
(-f) are polled for changes. After a change settles (--debounce) the input
is read again and the twin rebuilt in the background; the new twin
replaces the old at once, so an answer never mixes two. A rebuild that
fails keeps the previous twin (/readyz says so). --lab alone never changes.

/metrics (Prometheus text format) has the findings of check by rule and
severity, the nodes by OS and readiness, the IPAM blocks' addresses
(allocated, reserved, free), and the time and duration of the last rebuild.

Exit status: 0 when stopped, 2 bad input, 3 when the cluster cannot be
read or the address cannot be listened on.`,
		Example: `  # The lab, on loopback
  kubectl-hybrid serve --lab --listen 127.0.0.1:8080

  # Files, rebuilt when they change
  kubectl-hybrid serve -f examples/main-cluster --listen 127.0.0.1:8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return o.Run(ctx)
		},
	}
	o.Input.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "127.0.0.1:8080", "Address to listen on (HOST:PORT); 0.0.0.0:8080 in a Pod")
	f.DurationVar(&o.Debounce, "debounce", 500*time.Millisecond, "How long a rebuild waits after a change for more changes")
	f.DurationVar(&o.Poll, "poll", time.Second, "How often -f files are checked for changes")
	return cmd
}

// Validate checks the flags.
func (o *ServeOptions) Validate() error {
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return usageError("--listen %q: give HOST:PORT, e.g. 127.0.0.1:8080", o.Listen)
	}
	if o.Debounce < 0 || o.Poll <= 0 {
		return usageError("--debounce and --poll: give positive durations")
	}
	for _, f := range o.Input.Filenames {
		if f == "-" {
			return usageError("-f -: serve reads its input again on every change, and stdin cannot be read twice; give files")
		}
	}
	return o.Input.Validate()
}

// Server makes the server of the input, not built yet.
func (o *ServeOptions) Server() (*serve.Server, error) {
	ns := "default"
	if o.Input.Live() {
		ns = kubeNamespace(o.Input.Kube)
	}
	opts := serve.Options{
		Read: func(context.Context) (*model.Snapshot, error) {
			snap, err := o.Input.Snapshot(o.streams, true)
			if err != nil {
				return nil, err
			}
			for _, w := range snap.Warnings {
				fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", w)
			}
			return snap, nil
		},
		Debounce:   o.Debounce,
		Namespace:  ns,
		Validation: o.Input.validation,
		Limits:     o.Input.Limits.load(),
		ExtraKinds: func(p *plane.Plane, node string) []report.Kind {
			// The warm plane: its nodes stay compiled between requests.
			dp := &dataplane{cluster: p.Cluster, node: node}
			dp.planeOnce.Do(func() { dp.pl = p })
			return dataplaneKindsOf(dp)
		},
		Status: serveStatus,
		Log:    o.streams.ErrOut,
		Now:    clock,
	}
	switch {
	case o.Input.Live():
		opts.Watch = func(ctx context.Context, changed, ready func()) error {
			cfg, err := o.Input.Kube.ToRESTConfig()
			if err != nil {
				return &exitError{code: ExitBadInput, err: fmt.Errorf("kubeconfig: %w", err)}
			}
			return live.Watch(ctx, cfg, func(string) { changed() }, ready)
		}
	case len(o.Input.Filenames) > 0:
		opts.Watch = func(ctx context.Context, changed, ready func()) error {
			return serve.PollFiles(ctx, o.Input.Filenames, o.Poll, changed, ready)
		}
	}
	return serve.New(opts), nil
}

// Run builds the twin, listens and serves until ctx ends.
func (o *ServeOptions) Run(ctx context.Context) error {
	s, err := o.Server()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &exitError{code: ExitInternal, err: fmt.Errorf("--listen: %w", err)}
	}
	defer l.Close()
	if err := s.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "Serving the twin on http://%s (/openapi.json lists the API)\n", l.Addr())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, l) }()
	select {
	case err := <-s.WatchErr():
		cancel()
		<-errc
		if err != nil {
			return &exitError{code: ExitInternal, err: fmt.Errorf("watching the input: %w", err)}
		}
		return nil
	case err := <-errc:
		return err
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
