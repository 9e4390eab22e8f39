// Package serve keeps one built twin warm and answers the questions the
// commands answer over HTTP: the JSON of trace, reach, check, get, exec
// and diff (the same code paths as the commands' -o json), Prometheus
// metrics, and health. The twin is rebuilt in the background when its
// input changes and swapped in whole, so that every answer comes from one
// build: a live cluster's watch delivers each changed object, which
// patches the snapshot read last; files with new modification times are
// read again.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Options say where the twin comes from and how to answer.
type Options struct {
	// Read reads the input afresh: the files, the lab or the live
	// cluster, as the commands read it.
	Read func(ctx context.Context) (*model.Snapshot, error)
	// Watch, when set, calls changed each time the input may have
	// changed, until ctx ends; it calls ready once it sees every change
	// from then on, and the first read waits for that. Its error ends the
	// server (Server.WatchErr).
	Watch func(ctx context.Context, changed func(), ready func()) error
	// Follow, for an input whose changes come object by object (a live
	// cluster's watch), takes Watch's place: it calls changed with each
	// changed object, and ready as Watch does. The server patches the
	// snapshot it read last with the changes instead of reading again.
	Follow func(ctx context.Context, changed func(Change), ready func()) error
	// Rank orders the units of different kinds as Read orders them (see
	// Change); nil keeps them in the order read, new ones last.
	Rank func(unit string) int
	// Debounce is how long a rebuild waits for more changes after one
	// (default 500ms): a rollout changes many pods at once.
	Debounce time.Duration
	// Namespace is the namespace of get and reach when a request names
	// none (the kubeconfig context's, or "default").
	Namespace string
	// Load are the validation and limits a posted what-if is read with:
	// the input's.
	Validation load.Validation
	Limits     load.Limits
	// ExtraKinds are the kinds get serves besides report.Kinds() (the
	// compiled dataplane's, from the warm plane), for one node or all
	// when node is empty.
	ExtraKinds func(p *plane.Plane, node string) []report.Kind
	// Status maps an error of a code path shared with the commands to an
	// HTTP status; ok false leaves it to the handler.
	Status func(err error) (status int, ok bool)
	// Log receives a line per rebuild and per failure (none when nil).
	Log io.Writer
	// Now is the clock of get's AGE columns and of the metrics.
	Now func() time.Time
}

// Server is the warm twin and its HTTP handler.
type Server struct {
	opts Options
	cur  atomic.Pointer[twin]

	// heavy serializes the answers that build or compute a lot (reach,
	// diff, check with options): two at once would only double the
	// memory and share the cores.
	heavy sync.Mutex

	rebuilds, failures atomic.Int64
	lastErr            atomic.Pointer[string]
	kick               chan struct{}
	watchErr           chan error
	// reread says a change came without its object (Changed): the next
	// build reads the input again.
	reread atomic.Bool

	// building serializes the builds; read is the input as read and
	// patched since (Follow only), nil until the first read.
	building sync.Mutex
	read     *units
	// pending are the changes not built yet, the last of each unit.
	pendingMu sync.Mutex
	pending   map[string]Change
}

// twin is one build and everything made from it; it is never changed
// after it is swapped in, but for what is made on first use.
type twin struct {
	snap    *model.Snapshot // as read: what-ifs layer on it
	c       *model.Cluster
	p       *plane.Plane
	e       *trace.Engine
	console console.Twin
	built   time.Time
	took    time.Duration

	checkOnce sync.Once
	check     *check.Report
	checkErr  error
}

// New makes a server; Start or Rebuild builds its first twin.
func New(opts Options) *Server {
	if opts.Debounce == 0 {
		opts.Debounce = 500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	return &Server{opts: opts, kick: make(chan struct{}, 1), watchErr: make(chan error, 1)}
}

// Rebuild reads the input, builds the twin and swaps it in. On failure
// the previous twin stays.
func (s *Server) Rebuild(ctx context.Context) error {
	return s.rebuild(ctx, true)
}

// Update builds the twin of the snapshot read last, patched with the
// changes Follow delivered since; with nothing read yet it is Rebuild.
func (s *Server) Update(ctx context.Context) error {
	return s.rebuild(ctx, false)
}

func (s *Server) rebuild(ctx context.Context, reread bool) error {
	s.building.Lock()
	defer s.building.Unlock()
	start := time.Now()
	t, err := s.buildRecovered(ctx, reread)
	if err != nil {
		s.failures.Add(1)
		msg := err.Error()
		s.lastErr.Store(&msg)
		s.logf("rebuild failed, still serving the previous twin: %v", err)
		return err
	}
	t.took = time.Since(start)
	t.built = s.opts.Now()
	s.cur.Store(t)
	s.lastErr.Store(nil)
	s.rebuilds.Add(1)
	s.logf("built the twin in %s: %d nodes, %d pods", t.took.Round(time.Millisecond), len(t.c.Nodes), len(t.c.Pods))
	return nil
}

// buildRecovered is build with a panic turned into an error, its stack
// logged: a bug met on one input must not take the server down (as
// guard does for a request). The input as read may be half patched, so
// the next build reads it again.
func (s *Server) buildRecovered(ctx context.Context, reread bool) (t *twin, err error) {
	defer func() {
		if v := recover(); v != nil {
			p := crash.Recovered(v)
			s.read = nil
			s.logf("rebuild panicked: %v\n%s", p.Value, p.Stack)
			err = internalError(p)
		}
	}()
	return s.build(ctx, reread)
}

// internalError is a recovered panic as the server reports it.
func internalError(p *crash.Panic) error {
	what, _, _ := strings.Cut(fmt.Sprint(p.Value), "\n")
	return fmt.Errorf("internal error: %s; please report this bug with the input (the stack is in the server's log)", what)
}

func (s *Server) build(ctx context.Context, reread bool) (*twin, error) {
	if reread || s.read == nil {
		snap, err := s.opts.Read(ctx)
		if err != nil {
			return nil, err
		}
		s.read = newUnits(snap, s.opts.Rank)
	}
	// The changes since, also those that came during the read: applied
	// in order on top of it, they give what a read would give now.
	s.pendingMu.Lock()
	changes := s.pending
	s.pending = nil
	s.pendingMu.Unlock()
	for _, ch := range changes {
		s.read.apply(ch)
	}
	snap, err := s.read.snapshot()
	if err != nil {
		return nil, err
	}
	var prev *model.Cluster
	var prevSnap *model.Snapshot
	var prevPlane *plane.Plane
	if cur := s.cur.Load(); cur != nil {
		prev, prevSnap, prevPlane = cur.c, cur.snap, cur.p
	}
	c, err := derive(prev, prevSnap, snap)
	if err != nil {
		return nil, err
	}
	// The nodes whose inputs did not change keep their dataplanes.
	p, err := plane.Reuse(prevPlane, c)
	if err != nil {
		return nil, err
	}
	e, err := trace.FromPlane(p)
	if err != nil {
		return nil, err
	}
	return &twin{snap: snap, c: c, p: p, e: e, console: console.FromPlane(p)}, nil
}

// derive is the one way the server makes a twin: from the previous twin
// and its snapshot (nil for the first) and the next snapshot, which
// shares with prevSnap the objects that did not change. Its result must
// be Build(next)'s. Build, not BuildOwned: the snapshot stays as read,
// for what-ifs and the next patch.
func derive(prev *model.Cluster, prevSnap, next *model.Snapshot) (*model.Cluster, error) {
	if prev == nil {
		return engine.Build(next)
	}
	return engine.Derive(prev, prevSnap, next)
}

// Follow records a changed object for the next build and asks for it;
// the last change of each object within the debounce interval counts.
func (s *Server) Follow(ch Change) {
	s.pendingMu.Lock()
	if s.pending == nil {
		s.pending = map[string]Change{}
	}
	s.pending[ch.Unit] = ch
	s.pendingMu.Unlock()
	for _, w := range ch.Warnings {
		s.logf("Warning: %s", w)
	}
	s.kickLoop()
}

// Changed asks for a rebuild that reads the input again; changes that
// come within the debounce interval of each other make one.
func (s *Server) Changed() {
	s.reread.Store(true)
	s.kickLoop()
}

func (s *Server) kickLoop() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Start starts following the input, builds the first twin once the
// watch is ready (so that no change after the read is missed), and
// rebuilds on every change from then on. It returns the first build's
// error; a later failure keeps the previous twin and is logged, counted
// and shown by /readyz.
func (s *Server) Start(ctx context.Context) error {
	if s.opts.Watch != nil || s.opts.Follow != nil {
		ready := make(chan struct{})
		var once sync.Once
		go func() {
			isReady := func() { once.Do(func() { close(ready) }) }
			var err error
			defer func() {
				if v := recover(); v != nil {
					p := crash.Recovered(v)
					s.logf("the watch of the input panicked: %v\n%s", p.Value, p.Stack)
					s.watchErr <- internalError(p)
				}
			}()
			if s.opts.Follow != nil {
				err = s.opts.Follow(ctx, s.Follow, isReady)
			} else {
				err = s.opts.Watch(ctx, s.Changed, isReady)
			}
			if err == nil && ctx.Err() == nil {
				err = errors.New("the watch of the input stopped")
			}
			s.watchErr <- err
		}()
		select {
		case <-ready:
		case err := <-s.watchErr:
			if err == nil {
				err = ctx.Err()
			}
			return err
		}
	}
	if err := s.Rebuild(ctx); err != nil {
		return err
	}
	go s.loop(ctx)
	return nil
}

// WatchErr delivers the watch's error (nil when ctx ended) once it
// stops; never without Options.Watch.
func (s *Server) WatchErr() <-chan error { return s.watchErr }

func (s *Server) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		// Wait for the burst to end: each change restarts the wait.
		timer := time.NewTimer(s.opts.Debounce)
	wait:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-s.kick:
				timer.Reset(s.opts.Debounce)
			case <-timer.C:
				break wait
			}
		}
		// Changes that came as objects patch the snapshot; any other
		// reads the input again.
		_ = s.rebuild(ctx, s.reread.Swap(false))
	}
}

// Serve answers on l until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, format+"\n", args...)
	}
}

// report is the default check of t (every rule, the input's unread
// kinds), made once: /metrics and /api/v1/check without options read it.
func (t *twin) report() (*check.Report, error) {
	t.checkOnce.Do(func() {
		t.check, t.checkErr = check.Run(t.c, check.Options{Unread: t.snap.Unread})
	})
	return t.check, t.checkErr
}
