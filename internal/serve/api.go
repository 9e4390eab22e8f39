package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/query"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/output"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// stdinName is what the loader calls stdin, where the what-if comes from.
const stdinName = "<stdin>"

// MaxBodyBytes bounds a request's body (a what-if, an exec).
const MaxBodyBytes = 8 << 20

// Handler is the server's HTTP handler: the routes of Routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range Routes() {
		h := s.handlers()[r.ID]
		mux.Handle(r.Method+" "+r.Pattern, s.guard(h))
	}
	// Anything else: one JSON message rather than the mux's text.
	mux.Handle("/", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		for _, rt := range Routes() {
			if rt.matches(r.URL.Path) {
				w.Header().Set("Allow", rt.Method)
				return &httpError{status: http.StatusMethodNotAllowed, msg: fmt.Sprintf("%s takes %s, not %s", rt.Pattern, rt.Method, r.Method)}
			}
		}
		return &httpError{status: http.StatusNotFound, msg: fmt.Sprintf("no such path: %s %s (see /openapi.json)", r.Method, r.URL.Path)}
	}))
	return mux
}

// httpError is an answer that is an error: its status and one line.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// handlerFunc answers a request or returns an error, written by guard.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// guard writes a handler's error as {"error": "…"} with its status and
// turns a panic into a 500: a bug must not take the server down.
func (s *Server) guard(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					what, _, _ := strings.Cut(fmt.Sprint(crash.Recovered(v).Value), "\n")
					err = &httpError{status: http.StatusInternalServerError, msg: "internal error: " + what + "; please report this bug with the request"}
				}
			}()
			err = h(w, r)
		}()
		if err == nil {
			return
		}
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		writeError(w, he.status, he.msg)
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// classify gives err the status the options map it to, else fallback.
func (s *Server) classify(err error, fallback int) error {
	if err == nil {
		return nil
	}
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	if s.opts.Status != nil {
		if st, ok := s.opts.Status(err); ok {
			return &httpError{status: st, msg: err.Error()}
		}
	}
	var pe *query.ParamError
	var tnf *trace.NotFoundError
	var cnf *console.NotFoundError
	var rnf *report.NotFoundError
	var uk *report.UnknownResourceError
	var le *load.Error
	var be *engine.Error
	var lr *load.Refusals
	var ur *check.UnknownRuleError
	switch {
	case errors.As(err, &pe):
		return &httpError{status: http.StatusBadRequest, msg: pe.Param + " " + pe.Msg}
	case errors.As(err, &tnf), errors.As(err, &cnf), errors.As(err, &rnf), errors.As(err, &uk):
		return &httpError{status: http.StatusNotFound, msg: oneLine(err.Error())}
	case errors.As(err, &le), errors.As(err, &be), errors.As(err, &lr), errors.As(err, &ur):
		return &httpError{status: http.StatusBadRequest, msg: oneLine(err.Error())}
	}
	return &httpError{status: fallback, msg: oneLine(err.Error())}
}

// oneLine joins a message of several lines (a loader's refusals) with
// "; ", without the "error: " the command line's messages start with.
func oneLine(s string) string {
	s = strings.TrimPrefix(s, "error: ")
	return strings.Join(strings.Split(strings.TrimRight(s, "\n"), "\n"), "; ")
}

// current is the twin in service; before the first build there is none.
func (s *Server) current() (*twin, error) {
	t := s.cur.Load()
	if t == nil {
		return nil, &httpError{status: http.StatusServiceUnavailable, msg: "the twin is not built yet"}
	}
	return t, nil
}

// params reads a request's query against the route's declared
// parameters: an undeclared one, or a repeated single one, is refused.
type params struct {
	r     *http.Request
	route Route
	err   error
}

func (s *Server) params(r *http.Request, id string) (*params, error) {
	rt := routeByID(id)
	q := r.URL.Query()
	for name, vals := range q {
		p, ok := rt.param(name)
		if !ok || p.In != "query" {
			return nil, badRequest("unknown parameter %q; %s takes %s", name, rt.Pattern, rt.queryNames())
		}
		if !p.Repeated && len(vals) > 1 {
			return nil, badRequest("parameter %q given %d times; give it once", name, len(vals))
		}
	}
	return &params{r: r, route: rt}, nil
}

func (p *params) str(name string) string { return p.r.URL.Query().Get(name) }

func (p *params) list(name string) []string { return p.r.URL.Query()[name] }

func (p *params) required(name string) string {
	v := p.str(name)
	if v == "" && p.err == nil {
		p.err = badRequest("parameter %q is required", name)
	}
	return v
}

func (p *params) boolean(name string) bool {
	v := p.str(name)
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil && p.err == nil {
		p.err = badRequest("parameter %q: %q is not true or false", name, v)
	}
	return b
}

func (p *params) integer(name string) int {
	v := p.str(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil && p.err == nil {
		p.err = badRequest("parameter %q: %q is not a whole number", name, v)
	}
	return n
}

// writeJSON buffers the answer so that an error half way is a clean 500.
func writeJSON(w http.ResponseWriter, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(b.Bytes())
	return err
}

func (s *Server) handlers() map[string]handlerFunc {
	return map[string]handlerFunc{
		"healthz": s.healthz, "readyz": s.readyz, "metrics": s.metrics, "openapi": serveOpenAPI,
		"trace": s.trace, "reach": s.reach, "check": s.checkHandler,
		"get": s.get, "getName": s.get, "exec": s.exec, "diff": s.diff,
	}
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	_, err := io.WriteString(w, "ok\n")
	return err
}

// readyz is ready once a twin is built; a failed rebuild since is said
// but does not make it unready: the previous twin still answers.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) error {
	if _, err := s.current(); err != nil {
		return err
	}
	msg := "ok\n"
	if e := s.lastErr.Load(); e != nil {
		msg = "ok (serving the previous twin; the last rebuild failed: " + oneLine(*e) + ")\n"
	}
	_, err := io.WriteString(w, msg)
	return err
}

func (s *Server) trace(w http.ResponseWriter, r *http.Request) error {
	p, err := s.params(r, "trace")
	if err != nil {
		return err
	}
	q := query.Trace{Src: p.required("src"), Dst: p.required("dst"), Namespace: p.str("namespace"), Port: p.integer("port")}
	if p.err != nil {
		return p.err
	}
	if q.Namespace == "" {
		q.Namespace = "default" // trace's -n default
	}
	if q.Proto, err = query.Proto(p.str("proto"), trace.TCP); err != nil {
		return s.classify(err, http.StatusBadRequest)
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	res, err := query.RunTrace(t.e, q)
	if err != nil {
		return s.classify(err, http.StatusBadRequest)
	}
	return writeJSON(w, res.WriteJSON)
}

func (s *Server) reach(w http.ResponseWriter, r *http.Request) error {
	p, err := s.params(r, "reach")
	if err != nil {
		return err
	}
	q := query.Reach{Namespace: p.str("namespace"), AllNamespaces: p.boolean("allNamespaces"),
		From: p.list("from"), To: p.list("to"), Port: p.integer("port"), Proto: p.str("proto"), Nodes: p.boolean("nodes")}
	if p.err != nil {
		return p.err
	}
	if q.Namespace == "" {
		q.Namespace = s.opts.Namespace
	}
	opt, err := query.ReachOptions(q)
	if err != nil {
		return s.classify(err, http.StatusBadRequest)
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	s.heavy.Lock()
	defer s.heavy.Unlock()
	m, err := reach.Compute(t.e, opt)
	if err != nil {
		return s.classify(err, http.StatusBadRequest)
	}
	return writeJSON(w, func(w io.Writer) error { return output.WriteJSON(w, m) })
}

func (s *Server) checkHandler(w http.ResponseWriter, r *http.Request) error {
	p, err := s.params(r, "check")
	if err != nil {
		return err
	}
	opt := check.Options{Only: splitList(p.list("rule")), Skip: splitList(p.list("skip")), ExpectWindows: p.boolean("expectWindows")}
	if p.err != nil {
		return p.err
	}
	reg, err := check.Default()
	if err != nil {
		return err
	}
	for _, names := range [][]string{opt.Only, opt.Skip} {
		for _, n := range names {
			if _, ok := reg.Lookup(n); !ok {
				return badRequest("%v", &check.UnknownRuleError{Name: n})
			}
		}
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	var rep *check.Report
	if len(opt.Only) == 0 && len(opt.Skip) == 0 && !opt.ExpectWindows {
		rep, err = t.report()
	} else {
		opt.Registry, opt.Unread = reg, t.snap.Unread
		s.heavy.Lock()
		rep, err = check.Run(t.c, opt)
		s.heavy.Unlock()
	}
	if err != nil {
		return s.classify(err, http.StatusInternalServerError)
	}
	return writeJSON(w, func(w io.Writer) error { return check.WriteJSON(w, rep) })
}

// splitList reads repeatable, comma-separated values, as --rule takes them.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
	}
	return out
}

// get answers `get KIND [NAME] -o json`: a v1 List, or the object itself
// for a name, as kubectl prints them.
func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	id := "get"
	if r.PathValue("name") != "" {
		id = "getName"
	}
	p, err := s.params(r, id)
	if err != nil {
		return err
	}
	kind := r.PathValue("kind")
	args := []string{kind}
	if name := r.PathValue("name"); name != "" {
		args = append(args, name)
	}
	all := p.boolean("allNamespaces")
	if p.err != nil {
		return p.err
	}
	ns := p.str("namespace")
	if ns == "" {
		ns = s.opts.Namespace
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	node := p.str("node")
	var extra []report.Kind
	if s.opts.ExtraKinds != nil {
		extra = s.opts.ExtraKinds(t.p, node)
	}
	k, err := report.ResolveKind(kind, extra...)
	if err != nil {
		return &httpError{status: http.StatusNotFound, msg: err.Error()}
	}
	supplied := false
	for _, e := range extra {
		supplied = supplied || e.GroupKind() == k.GroupKind()
	}
	if node != "" && !supplied {
		return badRequest("parameter \"node\" applies to the compiled dataplane's kinds only, not %s", k.Resource)
	}
	pf := get.NewGetPrintFlags()
	*pf.OutputFormat = "json"
	printer, err := pf.ToPrinter()
	if err != nil {
		return err
	}
	req := report.Request{Args: args, Namespace: ns, LabelSelector: p.str("selector"), FieldSelector: p.str("fieldSelector"), Extra: extra,
		Options: report.Options{Output: "json", Printer: printer, Raw: true, AllNamespaces: all, Now: s.opts.Now()}}
	var b bytes.Buffer
	if _, err := report.Get(&b, t.c, req); err != nil {
		return s.classify(err, http.StatusBadRequest)
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b.Bytes())
	return err
}

// ExecRequest is the body of POST /api/v1/exec.
type ExecRequest struct {
	// Target is node/NAME, pod/NAME or deploy/NAME.
	Target string `json:"target"`
	// Namespace of a pod or deploy target (default "default").
	Namespace string `json:"namespace,omitempty"`
	// Command is the argv; one element may hold a whole shell line or
	// PowerShell pipeline, as kubectl exec passes it.
	Command []string `json:"command"`
}

// ExecResponse is what the emulated command printed and its exit code.
type ExecResponse struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
	// NotStarted: the container runtime could not start the program;
	// Stderr is kubectl's error.
	NotStarted bool `json:"notStarted,omitempty"`
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.params(r, "exec"); err != nil {
		return err
	}
	var req ExecRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badRequest("the body is not an exec request {\"target\", \"namespace\", \"command\"}: %v", err)
	}
	if req.Namespace == "" {
		req.Namespace = "default"
	}
	target, err := console.ParseTarget(req.Target, req.Namespace)
	if err != nil {
		return badRequest("target: %v", err)
	}
	if len(req.Command) == 0 {
		return badRequest("command: give the command to run, e.g. [\"ip\", \"route\"]")
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	out, err := console.Exec(t.console, target, req.Command)
	if err != nil {
		var nm *console.NotModeledError
		if errors.As(err, &nm) {
			return badRequest("not modeled: %s", nm.Msg)
		}
		return s.classify(err, http.StatusInternalServerError)
	}
	return writeJSON(w, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(ExecResponse{Stdout: out.Stdout, Stderr: out.Stderr, ExitCode: out.Code, NotStarted: out.NotStarted})
	})
}

// diff compares the twin with the twin of its input and a what-if posted
// as YAML (or JSON) layered on it, as `diff --what-if FILE -o json`.
func (s *Server) diff(w http.ResponseWriter, r *http.Request) error {
	p, err := s.params(r, "diff")
	if err != nil {
		return err
	}
	nodes, noReach := p.boolean("nodes"), p.boolean("noReach")
	if p.err != nil {
		return p.err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		return badRequest("reading the what-if: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("post the what-if as YAML or JSON in the body")
	}
	t, err := s.current()
	if err != nil {
		return err
	}
	s.heavy.Lock()
	defer s.heavy.Unlock()
	after, warnings, err := WhatIf(t.snap, body, s.opts.Validation, s.opts.Limits)
	if err != nil {
		err = s.classify(err, http.StatusBadRequest)
		if he, ok := err.(*httpError); ok {
			he.msg = strings.ReplaceAll(he.msg, stdinName, "what-if")
		}
		return err
	}
	// What the command prints on stderr, as the API server's warnings:
	// RFC 7234 warn-code 299 (https://kubernetes.io/blog/2020/09/03/warnings/).
	for _, m := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(strings.ReplaceAll(m, stdinName, "what-if")))
	}
	res, err := diff.Compare(t.c, after, diff.Options{NoReach: noReach, Reach: &reach.Options{AllNamespaces: true, Nodes: nodes}})
	if err != nil {
		return s.classify(err, http.StatusInternalServerError)
	}
	return writeJSON(w, res.WriteJSON)
}

// WhatIf builds the twin of base with a what-if document stream layered
// on it, as diff --what-if layers a file: objects replace, delete or act
// on base's, which it leaves unchanged. The warnings are the what-if's
// and the objects the API server would warn about or refuse.
func WhatIf(base *model.Snapshot, whatIf []byte, v load.Validation, lim load.Limits) (*model.Cluster, []string, error) {
	next, err := load.Load(load.Options{Base: base, Filenames: []string{"-"}, Stdin: bytes.NewReader(whatIf), DropRaw: true,
		Validation: v, Limits: lim})
	if err != nil {
		return nil, nil, err
	}
	// Build, not BuildOwned: next shares base's objects.
	c, err := engine.Build(next)
	if err != nil {
		return nil, nil, err
	}
	warnings := next.Warnings[len(base.Warnings):]
	for _, r := range c.Warned {
		warnings = append(warnings, r.Message)
	}
	for _, r := range c.Rejected {
		warnings = append(warnings, r.Message)
	}
	return c, warnings, nil
}
