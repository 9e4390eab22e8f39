package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadLimitsAreFlagsWithClearMessages(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+strings.Repeat("a", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string // stderr
	}{
		{
			name: "-f /dev/zero is refused at once",
			args: []string{"get", "pods", "-f", "/dev/zero"},
			code: ExitBadInput,
			want: "error: /dev/zero: not a regular file but a character device; -f takes a regular file, a directory or - for stdin\n",
		},
		{
			name:  "stdin over --max-input-bytes is refused",
			stdin: strings.Repeat("\n", 2000) + "apiVersion: v1\n",
			args:  []string{"get", "pods", "-f", "-", "--max-input-bytes", "1Ki"},
			code:  ExitBadInput,
			want:  "error: <stdin>: input larger than 1 KiB (--max-input-bytes)\n",
		},
		{
			name: "a document over --max-document-bytes is refused",
			args: []string{"get", "ns", "-f", big, "--max-document-bytes", "64"},
			code: ExitBadInput,
			want: "error: " + big + ":1 (document 1): document larger than 64 bytes (--max-document-bytes); a larger List is read item by item when its items are block-style YAML, as kubectl prints them\n",
		},
		{
			name: "the same document is read under a larger cap",
			args: []string{"get", "ns", "-f", big, "--max-document-bytes", "1Ki", "-o", "name"},
			code: 0,
		},
		{
			name: "a size that is no quantity is a usage error",
			args: []string{"get", "pods", "-f", big, "--max-input-bytes", "lots"},
			code: ExitBadInput,
			want: `error: invalid argument "lots" for "--max-input-bytes" flag: "lots" is not a size: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'` + "\n",
		},
		{
			name: "a size of zero is a usage error",
			args: []string{"get", "pods", "-f", big, "--max-document-bytes", "0"},
			code: ExitBadInput,
			want: `error: invalid argument "0" for "--max-document-bytes" flag: "0" is not a positive whole number of bytes` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.stdin, tt.args...)
			if code != tt.code || errOut != tt.want {
				t.Fatalf("exit %d, stderr %q\nwant exit %d, stderr %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

func TestALiveReadThatDoesNotEndExitsThree(t *testing.T) {
	// Discovery of v1 serves pods alone; their pages give one continue
	// token after another for ever.
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"v1","resources":[{"name":"pods","singularName":"","namespaced":true,"kind":"Pod","verbs":["list"]}]}`)
	})
	page := 0
	mux.HandleFunc("/api/v1/pods", func(w http.ResponseWriter, r *http.Request) {
		page++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"page-%d"},"items":[]}`, page)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "--read-timeout stops pages that never end",
			args: []string{"get", "pods", "-A", "--server", srv.URL, "--read-timeout", "300ms"},
			want: "error: reading the cluster at " + srv.URL + ": not done after 300ms (--read-timeout)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, "", tt.args...)
			if code != ExitInternal || errOut != tt.want {
				t.Fatalf("exit %d, stderr %q\nwant exit %d, stderr %q", code, errOut, ExitInternal, tt.want)
			}
		})
	}
}
