package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/servecmd"
)

// serveLab builds serve's server of the lab as the command does.
func serveLab(t *testing.T, files ...string) http.Handler {
	t.Helper()
	saved := clock
	clock = func() time.Time { return seedNow }
	t.Cleanup(func() { clock = saved })
	var errOut bytes.Buffer
	o := servecmd.NewServeOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut},
		&InputOptions{Lab: true, Filenames: files, Validation: "warn"}, serveBase())
	o.Listen, o.Poll = "127.0.0.1:0", time.Second
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := o.Server()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := s.Start(ctx); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	return s.Handler()
}

// Each answer of the server is byte for byte what the command prints
// with -o json on the same input.
func TestServeAnswersAsTheCommandsDo(t *testing.T) {
	h := serveLab(t)
	whatIf, err := filepath.Abs("../../examples/what-if/no-strict-affinity.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(whatIf)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		args   []string
		method string
		target string
		body   string
		status int
	}{
		{"a trace by name", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "hello.demo", "--port", "80", "-o", "json"}, "GET",
			"/api/v1/trace?namespace=win-demo&src=deploy/aspnetapp&dst=hello.demo&port=80", "", 200},
		{"a trace that is not delivered", []string{"trace", "node/k8s-lab-win-1", "10.102.98.171", "--port", "81", "-o", "json"}, "GET",
			"/api/v1/trace?src=node/k8s-lab-win-1&dst=10.102.98.171&port=81", "", 200},
		{"a ping", []string{"trace", "-n", "win-demo", "deploy/aspnetapp", "172.21.172.4", "--proto", "icmp", "-o", "json"}, "GET",
			"/api/v1/trace?namespace=win-demo&src=deploy/aspnetapp&dst=172.21.172.4&proto=icmp", "", 200},
		{"check", []string{"check", "-o", "json"}, "GET", "/api/v1/check", "", 200},
		{"check of one rule expecting Windows", []string{"check", "-o", "json", "--rule", "HYB003,HYB010", "--expect-windows"}, "GET",
			"/api/v1/check?rule=HYB003,HYB010&expectWindows=true", "", 200},
		{"get pods in every namespace", []string{"get", "pods", "-A", "-o", "json"}, "GET", "/api/v1/get/pods?allNamespaces=true", "", 200},
		{"get a node", []string{"get", "node", "k8s-lab-win-1", "-o", "json"}, "GET", "/api/v1/get/node/k8s-lab-win-1", "", 200},
		{"get ipamblocks", []string{"get", "ipamblocks", "-o", "json"}, "GET", "/api/v1/get/ipamblocks", "", 200},
		{"get the Windows node's HNS endpoints", []string{"get", "hnsendpoints", "--node", "k8s-lab-win-1", "-o", "json"}, "GET",
			"/api/v1/get/hnsendpoints?node=k8s-lab-win-1", "", 200},
		{"get routes", []string{"get", "routes", "-o", "json"}, "GET", "/api/v1/get/routes", "", 200},
		{"get pods by label and field", []string{"get", "pods", "-A", "-l", "app=hello", "--field-selector", "spec.nodeName=k8s-lab-node-2", "-o", "json"}, "GET",
			"/api/v1/get/pods?allNamespaces=true&selector=" + url.QueryEscape("app=hello") + "&fieldSelector=" + url.QueryEscape("spec.nodeName=k8s-lab-node-2"), "", 200},
		{"reach of every namespace", []string{"reach", "-A", "-o", "json"}, "GET", "/api/v1/reach?allNamespaces=true", "", 200},
		{"reach to the Windows namespace from nodes on port 80", []string{"reach", "-A", "--to", "ns/win-demo", "--nodes", "--port", "80", "-o", "json"}, "GET",
			"/api/v1/reach?allNamespaces=true&to=ns/win-demo&nodes=true&port=80", "", 200},
		{"diff against a what-if", []string{"diff", "--what-if", whatIf, "-o", "json"}, "POST", "/api/v1/diff", string(body), 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, stderr, code := run(t, "", append(tc.args, "--lab")...)
			if code > 1 || want == "" {
				t.Fatalf("the command exits %d with no answer: %s", code, stderr)
			}
			rec := httptest.NewRecorder()
			var req *http.Request
			if tc.body != "" {
				req = httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			} else {
				req = httptest.NewRequest(tc.method, tc.target, nil)
			}
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body.String())
			}
			if got := rec.Body.String(); got != want {
				t.Errorf("the answer is not the command's -o json:\n%s", lineDiff(want, got))
			}
		})
	}
}

// The dataplane kinds' errors carry the command's exit codes: a node that
// does not exist is a 404, a Linux node's HNS endpoints a 400.
func TestServeAnswersTheDataplaneKindsErrorsWithTheCommandsCodes(t *testing.T) {
	h := serveLab(t)
	cases := []struct {
		name, target string
		want         int
	}{
		{"a node that does not exist is not found", "/api/v1/get/hnsendpoints?node=nope", 404},
		{"a Linux node has no HNS endpoints", "/api/v1/get/hnsendpoints?node=k8s-lab-node-1", 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", tc.target, nil))
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.want, rec.Body.String())
			}
		})
	}
}

func TestServeRefusesStdinAndABadAddress(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"stdin cannot be read twice", []string{"serve", "-f", "-"}, "stdin cannot be read twice"},
		{"an address without a port", []string{"serve", "--lab", "--listen", "localhost"}, "--listen \"localhost\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, want 2 with one line saying %q: %q", code, tc.want, stderr)
			}
		})
	}
}
