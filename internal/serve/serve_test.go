package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// labServer is a server of the built-in lab, built once for the tests
// that only read it.
var labServer = sync.OnceValues(func() (*Server, error) {
	s := New(Options{Read: readLab, Now: fixedNow})
	return s, s.Rebuild(context.Background())
})

func readLab(context.Context) (*model.Snapshot, error) {
	return load.Load(load.Options{Lab: true, DropRaw: true})
}

func fixedNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

func lab(t testing.TB) *Server {
	t.Helper()
	s, err := labServer()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends one request to h and returns the status, the content type
// and the body.
func do(h http.Handler, method, target, body string) (int, string, string) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, r))
	return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
}

// doWarn is do with the Warning headers, a line each.
func doWarn(h http.Handler, method, target, body string) (int, string, string, string) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, r))
	var warn string
	for _, w := range rec.Header().Values("Warning") {
		warn += "Warning: " + w + "\n"
	}
	return rec.Code, rec.Header().Get("Content-Type"), warn, rec.Body.String()
}

func whatIf(t testing.TB, name string) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "what-if", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Every answer of the lab, as the server writes it: the status, the
// media type and the body.
func TestTheLabsAnswersMatchTheirGoldenFiles(t *testing.T) {
	h := lab(t).Handler()
	cases := []struct {
		name, method, target, body string
	}{
		{"a Windows pod reaches a Linux Service by name", "GET", "/api/v1/trace?src=deploy/aspnetapp&dst=hello.demo&namespace=win-demo&port=80", ""},
		{"a ping from a Windows pod to a Linux pod", "GET", "/api/v1/trace?src=deploy/aspnetapp&dst=172.21.172.4&namespace=win-demo&proto=icmp", ""},
		{"a trace from a pod that does not exist is not found", "GET", "/api/v1/trace?src=pod/nope&dst=hello.demo", ""},
		{"a trace without a destination is refused", "GET", "/api/v1/trace?src=pod/nope", ""},
		{"a port that is not a number is refused", "GET", "/api/v1/trace?src=deploy/hello&dst=svc/win-demo/aspnetapp&namespace=demo&port=eighty", ""},
		{"a port out of range is refused", "GET", "/api/v1/trace?src=deploy/hello&dst=svc/win-demo/aspnetapp&namespace=demo&port=70000", ""},
		{"an unknown protocol is refused", "GET", "/api/v1/trace?src=deploy/hello&dst=svc/win-demo/aspnetapp&namespace=demo&proto=sctp", ""},
		{"an unknown parameter is refused", "GET", "/api/v1/trace?src=deploy/hello&dst=svc/win-demo/aspnetapp&ns=demo", ""},
		{"a single parameter given twice is refused", "GET", "/api/v1/trace?src=deploy/hello&src=deploy/hello&dst=svc/win-demo/aspnetapp", ""},
		{"a bad source form is refused", "GET", "/api/v1/trace?src=replicaset/x&dst=hello.demo", ""},
		{"who reaches the Windows namespace", "GET", "/api/v1/reach?allNamespaces=true&to=ns/win-demo", ""},
		{"a reach filter that does not parse is refused", "GET", "/api/v1/reach?from=a%3D%3Db%3Dc", ""},
		{"a node as a reach destination is refused", "GET", "/api/v1/reach?to=node/k8s-lab-win-1", ""},
		{"a port with icmp is refused", "GET", "/api/v1/reach?port=80&proto=icmp", ""},
		{"a boolean that is not one is refused", "GET", "/api/v1/reach?allNamespaces=yes", ""},
		{"the lab's check", "GET", "/api/v1/check", ""},
		{"one rule of check expecting Windows", "GET", "/api/v1/check?rule=HYB003&expectWindows=true", ""},
		{"an unknown rule is refused", "GET", "/api/v1/check?rule=HYB999", ""},
		{"the pods of a namespace", "GET", "/api/v1/get/pods?namespace=win-demo", ""},
		{"the IPAM blocks", "GET", "/api/v1/get/ipamblocks", ""},
		{"one node by name", "GET", "/api/v1/get/nodes/k8s-lab-win-1", ""},
		{"pods by label across namespaces", "GET", "/api/v1/get/po?allNamespaces=true&selector=app%3Dhello", ""},
		{"a pod that does not exist is not found", "GET", "/api/v1/get/pods/nope?namespace=demo", ""},
		{"an unknown kind is not found", "GET", "/api/v1/get/widgets", ""},
		{"a node parameter on a Kubernetes kind is refused", "GET", "/api/v1/get/pods?node=k8s-lab-win-1", ""},
		{"a bad label selector is refused", "GET", "/api/v1/get/pods?selector=a%3D%3D%3Db", ""},
		{"a Linux node's routes", "POST", "/api/v1/exec", `{"target": "node/k8s-lab-node-2", "command": ["ip", "route"]}`},
		{"the Windows node's load balancers", "POST", "/api/v1/exec", `{"target": "node/k8s-lab-win-1", "command": ["hnsdiag", "list", "loadbalancers"]}`},
		{"exec on a node that does not exist is not found", "POST", "/api/v1/exec", `{"target": "node/nope", "command": ["ip", "route"]}`},
		{"exec without a command is refused", "POST", "/api/v1/exec", `{"target": "node/k8s-lab-node-2"}`},
		{"exec with a body that is not JSON is refused", "POST", "/api/v1/exec", `ip route`},
		{"exec with an unknown field is refused", "POST", "/api/v1/exec", `{"target": "node/k8s-lab-node-2", "argv": ["ip"]}`},
		{"exec of a command that is not emulated answers its failure", "POST", "/api/v1/exec", `{"target": "node/k8s-lab-node-2", "command": ["tcpdump", "-i", "any"]}`},
		{"exec with a bad target is refused", "POST", "/api/v1/exec", `{"target": "k8s-lab-node-2", "command": ["ip", "route"]}`},
		{"the lab without strict affinity", "POST", "/api/v1/diff?noReach=true", whatIf(t, "no-strict-affinity.yaml")},
		{"a diff without a what-if is refused", "POST", "/api/v1/diff", ""},
		{"a what-if that is not YAML is refused", "POST", "/api/v1/diff", "kind: [\n"},
		{"a what-if object the API server would refuse is refused", "POST", "/api/v1/diff", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Not_A_Name\n"},
		{"an unknown field of a what-if is a warning", "POST", "/api/v1/diff?noReach=true", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\nspec:\n  bogus: 1\n"},
		{"health", "GET", "/healthz", ""},
		{"readiness", "GET", "/readyz", ""},
		{"a path that does not exist is not found", "GET", "/api/v1/nothing", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ctype, warnings, body := doWarn(h, tc.method, tc.target, tc.body)
			if status >= 500 {
				t.Errorf("status %d: %s", status, body)
			}
			if status >= 400 {
				var e struct {
					Error string `json:"error"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" || strings.Contains(e.Error, "\n") {
					t.Errorf("an error answer must be {\"error\": one line}, got %q", body)
				}
			}
			name := strings.ReplaceAll(tc.name, " ", "-") + ".golden"
			golden.Check(t, filepath.Join("testdata", name), fmt.Sprintf("%s %s\n%d %s\n%s\n%s", tc.method, tc.target, status, ctype, warnings, body))
		})
	}
}

func TestStatusesOfTheAnswers(t *testing.T) {
	h := lab(t).Handler()
	cases := []struct {
		name, method, target, body string
		want                       int
	}{
		{"a delivered trace is 200", "GET", "/api/v1/trace?src=deploy/aspnetapp&dst=hello.demo&namespace=win-demo&port=80", "", 200},
		{"exec on an unknown node is 404", "POST", "/api/v1/exec", `{"target": "node/nope", "command": ["ip", "route"]}`, 404},
		{"exec in an unknown pod is 404", "POST", "/api/v1/exec", `{"target": "pod/nope", "command": ["ip", "route"]}`, 404},
		{"a trace to an unknown Service is 404", "GET", "/api/v1/trace?src=deploy/hello&dst=svc/nope&namespace=demo", "", 404},
		{"a bad request is 400", "GET", "/api/v1/trace", "", 400},
		{"the wrong method is 405", "POST", "/api/v1/trace", "", 405},
		{"the OpenAPI document is 200", "GET", "/openapi.json", "", 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, _, body := do(h, tc.method, tc.target, tc.body); got != tc.want {
				t.Errorf("status %d, want %d: %s", got, tc.want, body)
			}
		})
	}
}

func TestBeforeTheFirstBuildTheServerIsNotReady(t *testing.T) {
	s := New(Options{Read: readLab})
	h := s.Handler()
	if got, _, _ := do(h, "GET", "/readyz", ""); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz: %d, want 503", got)
	}
	if got, _, _ := do(h, "GET", "/api/v1/get/pods", ""); got != http.StatusServiceUnavailable {
		t.Errorf("/api/v1/get/pods: %d, want 503", got)
	}
	if got, _, _ := do(h, "GET", "/healthz", ""); got != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", got)
	}
}

// The timestamps and durations vary; everything else is the lab's.
var rebuildTimes = regexp.MustCompile(`(?m)^(kubectl_hybrid_last_rebuild_duration_seconds) .*$`)

func TestTheMetricsOfTheLab(t *testing.T) {
	status, ctype, body := do(lab(t).Handler(), "GET", "/metrics", "")
	if status != 200 || ctype != promType {
		t.Fatalf("status %d, %s", status, ctype)
	}
	body = rebuildTimes.ReplaceAllString(body, "$1 DURATION")
	golden.Check(t, filepath.Join("testdata", "metrics.golden"), body)
}

func TestAFailedRebuildKeepsThePreviousTwin(t *testing.T) {
	fail := false
	s := New(Options{Read: func(ctx context.Context) (*model.Snapshot, error) {
		if fail {
			return nil, fmt.Errorf("the input went away")
		}
		return readLab(ctx)
	}})
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := s.Rebuild(context.Background()); err == nil {
		t.Fatal("the rebuild did not fail")
	}
	h := s.Handler()
	if got, _, body := do(h, "GET", "/api/v1/get/nodes/k8s-lab-win-1", ""); got != 200 {
		t.Errorf("the previous twin does not answer: %d %s", got, body)
	}
	if _, _, body := do(h, "GET", "/readyz", ""); !strings.Contains(body, "the input went away") {
		t.Errorf("/readyz does not say the rebuild failed: %q", body)
	}
	if _, _, body := do(h, "GET", "/metrics", ""); !strings.Contains(body, "kubectl_hybrid_rebuild_failures_total 1\n") ||
		!strings.Contains(body, "kubectl_hybrid_last_rebuild_failed 1\n") {
		t.Errorf("the metrics do not count the failure:\n%s", body)
	}
}

// A bug met while rebuilding (a panic) is a failed rebuild: the server
// keeps answering from the previous twin, says why in /readyz and logs
// the stack, and the next rebuild reads the input again.
func TestARebuildThatPanicsKeepsThePreviousTwin(t *testing.T) {
	var log bytes.Buffer
	reads, crash := 0, false
	s := New(Options{Log: &log, Read: func(ctx context.Context) (*model.Snapshot, error) {
		reads++
		if crash {
			var m map[string]int
			m["the input"] = 1 // a nil map: a bug's panic
		}
		return readLab(ctx)
	}})
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	crash = true
	err := s.Rebuild(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "internal error: assignment to entry in nil map") {
		t.Fatalf("the rebuild's error is %v, want the panic as an internal error", err)
	}
	h := s.Handler()
	if got, _, body := do(h, "GET", "/api/v1/get/nodes/k8s-lab-win-1", ""); got != 200 {
		t.Errorf("the previous twin does not answer: %d %s", got, body)
	}
	if _, _, body := do(h, "GET", "/readyz", ""); !strings.Contains(body, "internal error: assignment to entry in nil map") {
		t.Errorf("/readyz does not say the rebuild failed: %q", body)
	}
	if !strings.Contains(log.String(), "rebuild panicked: assignment to entry in nil map") || !strings.Contains(log.String(), "goroutine ") {
		t.Errorf("the log has no panic with its stack:\n%s", log.String())
	}
	crash = false
	if err := s.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reads != 3 {
		t.Errorf("the input was read %d times, want 3: the update after the panic reads it again", reads)
	}
}

// A panic in the watch of the input ends the server with an internal
// error, as the watch's own failure would, not with the process.
func TestAWatchThatPanicsEndsTheServerWithAnError(t *testing.T) {
	s := New(Options{Read: readLab, Watch: func(ctx context.Context, changed func(), ready func()) error {
		panic("the watch broke")
	}})
	err := s.Start(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "internal error: the watch broke") {
		t.Fatalf("Start returned %v, want the panic as an internal error", err)
	}
}

// A file changed under a running server is in its answers after the
// debounce, and the twin is swapped whole.
func TestAChangedFileIsServedAfterTheRebuild(t *testing.T) {
	dir := t.TempDir()
	ns := func(name string) string {
		return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "\n"
	}
	file := filepath.Join(dir, "extra.yaml")
	if err := os.WriteFile(file, []byte(ns("before")), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{
		Read: func(context.Context) (*model.Snapshot, error) {
			return load.Load(load.Options{Lab: true, Filenames: []string{dir}, DropRaw: true})
		},
		Watch: func(ctx context.Context, changed, ready func()) error {
			return PollFiles(ctx, []string{dir}, 20*time.Millisecond, changed, ready)
		},
		Debounce: 20 * time.Millisecond,
		Log:      os.Stderr,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if got, _, _ := do(h, "GET", "/api/v1/get/namespaces/before", ""); got != 200 {
		t.Fatalf("namespace before: %d", got)
	}
	// A later modification time even on a coarse clock.
	if err := os.WriteFile(file, []byte(ns("after")), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _, _ := do(h, "GET", "/api/v1/get/namespaces/after", "")
		if got == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new namespace is not served after 20s (status %d)", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, _, _ := do(h, "GET", "/api/v1/get/namespaces/before", ""); got != 404 {
		t.Errorf("the old namespace is still served: %d", got)
	}
}

func TestChangesInABurstMakeOneRebuild(t *testing.T) {
	var mu sync.Mutex
	reads := 0
	s := New(Options{Debounce: 100 * time.Millisecond, Read: func(ctx context.Context) (*model.Snapshot, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		return readLab(ctx)
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		s.Changed()
		time.Sleep(5 * time.Millisecond)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.rebuilds.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if reads != 2 {
		t.Errorf("%d reads, want 2: the first build and one rebuild for the burst", reads)
	}
}

func TestTheCommittedOpenAPIDocumentIsTheCodes(t *testing.T) {
	var b bytes.Buffer
	if err := OpenAPI(&b, "v1"); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, r := range Routes() {
		if paths[r.Pattern] == nil {
			t.Errorf("%s is not documented", r.Pattern)
		}
	}
	golden.Check(t, filepath.Join("..", "..", "docs", "openapi.json"), b.String())
}

// Every route that the handler serves is in the document, and every
// documented parameter is accepted.
func TestEveryDocumentedParameterIsAccepted(t *testing.T) {
	h := lab(t).Handler()
	for _, r := range Routes() {
		for _, p := range r.Params {
			if p.In != "query" || r.Method != http.MethodGet {
				continue
			}
			target := strings.NewReplacer("{kind}", "pods", "{name}", "nope").Replace(r.Pattern) + "?" + p.Name + "="
			_, _, body := do(h, r.Method, target, "")
			if strings.Contains(body, "unknown parameter") {
				t.Errorf("%s refuses its documented parameter %s: %s", r.Pattern, p.Name, body)
			}
		}
	}
}

func FuzzQueriesNeverFailTheServer(f *testing.F) {
	for _, seed := range []string{
		"/api/v1/trace?src=deploy/aspnetapp&dst=hello.demo&namespace=win-demo",
		"/api/v1/trace?src=node/k8s-lab-win-1&dst=10.102.98.171&port=80",
		"/api/v1/get/pods?selector=app",
		"/api/v1/reach?from=ns/demo&to=svc/win-demo/aspnetapp&port=80",
	} {
		f.Add(seed)
	}
	h := lab(f).Handler()
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n#") {
			return
		}
		if strings.HasPrefix(target, "/api/v1/reach") || strings.HasPrefix(target, "/metrics") || strings.HasPrefix(target, "/api/v1/check") {
			return // heavy; the table tests cover them
		}
		req, err := http.NewRequest("GET", "http://x"+target, nil)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("GET %s: %d %s", target, rec.Code, rec.Body.String())
		}
	})
}

// Requests answered while the twin is rebuilt and swapped get the same
// answers as before: each comes from one whole twin (run with -race).
func TestAnswersDuringRebuildsAreWhole(t *testing.T) {
	s := New(Options{Read: readLab, Now: fixedNow})
	if err := s.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	targets := []struct{ method, target, body string }{
		{"GET", "/api/v1/trace?src=deploy/aspnetapp&dst=hello.demo&namespace=win-demo&port=80", ""},
		{"GET", "/api/v1/get/pods?allNamespaces=true", ""},
		{"POST", "/api/v1/exec", `{"target": "node/k8s-lab-win-1", "command": ["hnsdiag", "list", "loadbalancers"]}`},
		{"GET", "/metrics", ""},
	}
	want := make([]string, len(targets))
	for i, tg := range targets {
		_, _, want[i] = do(h, tg.method, tg.target, tg.body)
	}
	want[3] = rebuildTimes.ReplaceAllString(want[3], "$1 X")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			if err := s.Rebuild(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}()
	var wg sync.WaitGroup
	for i, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_, _, got := do(h, tg.method, tg.target, tg.body)
				if i == 3 {
					// The rebuild counter and time move on; the rest must not.
					got = rebuildTimes.ReplaceAllString(got, "$1 X")
					got = regexp.MustCompile(`(?m)^kubectl_hybrid_(rebuilds_total|last_rebuild_timestamp_seconds) .*$`).ReplaceAllString(got, "")
					w := regexp.MustCompile(`(?m)^kubectl_hybrid_(rebuilds_total|last_rebuild_timestamp_seconds) .*$`).ReplaceAllString(want[3], "")
					if got != w {
						t.Errorf("/metrics changed during a rebuild:\n%s", golden.Diff(w, got))
						return
					}
					continue
				}
				if got != want[i] {
					t.Errorf("%s changed during a rebuild:\n%s", tg.target, golden.Diff(want[i], got))
					return
				}
			}
		}()
	}
	wg.Wait()
}
