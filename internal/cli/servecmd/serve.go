// Package servecmd is `kubectl-hybrid serve`: the warm twin over HTTP.
package servecmd

import (
	"context"
	"fmt"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"k8s.io/client-go/rest"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/live"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/serve"
)

// Input is the input flags serve builds its twin from, read again on
// every change; the root command's input options implement it.
type Input interface {
	cmdutil.Input
	Live() bool
	// Files are the -f arguments.
	Files() []string
	// Snapshot reads the input; dropRaw drops the raw objects.
	Snapshot(streams genericiooptions.IOStreams, dropRaw bool) (*model.Snapshot, error)
	// ReadOptions are --validate and the read limits, after Validate.
	ReadOptions() (load.Validation, load.Limits)
	// RESTConfig is the live cluster's client configuration.
	RESTConfig() (*rest.Config, error)
}

// ServeOptions is `kubectl-hybrid serve`: build the twin once, keep it
// warm and answer over HTTP.
type ServeOptions struct {
	Input    Input
	Listen   string
	Debounce time.Duration
	Poll     time.Duration

	// base holds what the root gives the server from the other commands'
	// code paths: get's dataplane kinds, their errors' status, the clock.
	base    serve.Options
	streams genericiooptions.IOStreams
}

// NewServeOptions is serve's options before its flags are parsed.
func NewServeOptions(streams genericiooptions.IOStreams, in Input, base serve.Options) *ServeOptions {
	return &ServeOptions{Input: in, base: base, streams: streams}
}

// NewCmdServe builds the serve command.
func NewCmdServe(streams genericiooptions.IOStreams, in Input, base serve.Options) *cobra.Command {
	o := NewServeOptions(streams, in, base)
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
the twin reads, with the watch verb deploy/rbac.yaml grants — and each
changed object patches the snapshot read at the start; files (-f) are
polled for changes and read again. After a change settles (--debounce) the
twin is rebuilt in the background; the new twin replaces the old at once,
so an answer never mixes two. A rebuild that fails keeps the previous twin
(/readyz says so). --lab alone never changes.

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
		return cmdutil.UsageError("--listen %q: give HOST:PORT, e.g. 127.0.0.1:8080", o.Listen)
	}
	if o.Debounce < 0 || o.Poll <= 0 {
		return cmdutil.UsageError("--debounce and --poll: give positive durations")
	}
	for _, f := range o.Input.Files() {
		if f == "-" {
			return cmdutil.UsageError("-f -: serve reads its input again on every change, and stdin cannot be read twice; give files")
		}
	}
	return o.Input.Validate()
}

// Server makes the server of the input, not built yet.
func (o *ServeOptions) Server() (*serve.Server, error) {
	ns := o.Input.DefaultNamespace()
	if ns == "" {
		ns = "default"
	}
	validation, limits := o.Input.ReadOptions()
	opts := o.base
	opts.Read = func(context.Context) (*model.Snapshot, error) {
		snap, err := o.Input.Snapshot(o.streams, true)
		if err != nil {
			return nil, err
		}
		for _, w := range snap.Warnings {
			fmt.Fprintf(o.streams.ErrOut, "Warning: %s\n", w)
		}
		return snap, nil
	}
	opts.Debounce = o.Debounce
	opts.Namespace = ns
	opts.Validation = validation
	opts.Limits = limits
	opts.Log = o.streams.ErrOut
	switch {
	case o.Input.Live():
		opts.Follow = func(ctx context.Context, changed func(serve.Change), ready func()) error {
			cfg, err := o.Input.RESTConfig()
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: fmt.Errorf("kubeconfig: %w", err)}
			}
			return live.Watch(ctx, cfg, func(u live.Update) {
				changed(serve.Change{Unit: u.Unit, Objects: u.Objects, Warnings: u.Warnings, Err: u.Err})
			}, ready)
		}
		opts.Rank = live.Rank
	case len(o.Input.Files()) > 0:
		opts.Watch = func(ctx context.Context, changed, ready func()) error {
			return serve.PollFiles(ctx, o.Input.Files(), o.Poll, changed, ready)
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
		return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("--listen: %w", err)}
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
			return &cmdutil.ExitError{Code: cmdutil.ExitInternal, Err: fmt.Errorf("watching the input: %w", err)}
		}
		return nil
	case err := <-errc:
		return err
	}
}
