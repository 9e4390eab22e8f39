package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apiServer serves, on loopback, the paths given (discovery documents and
// lists) and 404 for everything else, as a cluster without those APIs.
func apiServer(t *testing.T, paths map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := paths[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "config")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: " + srv.URL + "}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// nodesOnly serves one Linux node and no other API.
var nodesOnly = map[string]string{
	"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"nodes","namespaced":false,"kind":"Node","verbs":["get","list","watch"]}]}`,
	"/api/v1/nodes": `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"linux-1",` +
		`"labels":{"kubernetes.io/os":"linux"}},"status":{"conditions":[{"type":"Ready","status":"True"}]}}]}`,
}

func TestCheckNeverPassesOnWhatItCouldNotRead(t *testing.T) {
	empty := filepath.Join("testdata", "empty")
	cases := []struct {
		name     string
		paths    map[string]string // nil: no server, files only
		args     []string
		code     int
		stdout   []string
		stderrIn string
	}{
		{"an empty directory holds no cluster", nil, []string{"-f", empty}, ExitIncomplete,
			[]string{"The input holds no cluster", "the input holds no cluster\n    HYB001"}, "error: check incomplete: the input holds no cluster"},
		{"an empty directory with Windows expected still holds no cluster", nil, []string{"-f", empty, "--expect-windows"}, ExitIncomplete,
			[]string{"No rule ran."}, "error: check incomplete"},
		{"a server that answers 404 to every request served no cluster", map[string]string{}, nil, ExitIncomplete,
			[]string{"The input holds no cluster"}, "error: check incomplete: the input holds no cluster"},
		{"a server that serves only nodes leaves the other rules unrun", nodesOnly, nil, ExitIncomplete,
			[]string{"Installation.operator.tigera.io was not read: the server does not serve it (no such API or CRD)\n    HYB001", "Pod was not read"},
			"rules did not run because the cluster did not give Namespace, Pod,"},
		{"rules that read only what the server gave judge it", nodesOnly, []string{"--rule", "HYB020,HYB024"}, ExitOK,
			[]string{"No findings.", "from 2 rules;"}, "Warning: not read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"check"}, tc.args...)
			if tc.paths != nil {
				args = append(args, "--kubeconfig", apiServer(t, tc.paths))
			}
			out, errOut, code := run(t, "", args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if !strings.Contains(errOut, tc.stderrIn) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderrIn, errOut)
			}
		})
	}
}
