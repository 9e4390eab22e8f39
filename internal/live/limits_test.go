package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// fakeAPIServer serves, on loopback, the discovery of v1 with pods alone
// and hands the list requests for pods to pods; every other group is not
// served (404).
func fakeAPIServer(t *testing.T, pods http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(&metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"list"}}},
		})
	})
	mux.HandleFunc("/api/v1/pods", pods)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// podPage is a PodList page with n pods from first on and a continue token.
func podPage(first, n int, next string) []byte {
	var items []string
	for i := first; i < first+n; i++ {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"p-%d","namespace":"default"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, i))
	}
	return fmt.Appendf(nil, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":%q},"items":[%s]}`, next, strings.Join(items, ","))
}

func TestReadStopsAtItsLimits(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		pods http.HandlerFunc
		// check is given the error; it names what is wrong with it.
		want string
		is   func(error) bool
	}{
		{
			name: "a server that never answers a list fails after the request timeout",
			opts: Options{RequestTimeout: 200 * time.Millisecond},
			pods: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			want: "no answer within 200ms (--request-timeout)",
			is:   func(err error) bool { var ue *UnreachableError; return errors.As(err, &ue) },
		},
		{
			name: "a server that stalls in the middle of a page fails after the request timeout",
			opts: Options{RequestTimeout: 200 * time.Millisecond},
			pods: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(podPage(0, 3, "")[:50])
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			want: "no answer within 200ms (--request-timeout)",
			is:   func(err error) bool { var ue *UnreachableError; return errors.As(err, &ue) },
		},
		{
			name: "a server that gives the same continue token again is stopped",
			pods: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(podPage(0, 2, "same-token"))
			},
			want: `reading pods from the cluster at URL: the server gave the continue token "same-token" again, after 4 objects of kind Pod; its pages would never end`,
			is:   func(err error) bool { var le *LimitError; return errors.As(err, &le) },
		},
		{
			name: "a server whose continue tokens go round in a cycle is stopped",
			pods: func(w http.ResponseWriter, r *http.Request) {
				next := map[string]string{"": "a", "a": "b", "b": "c", "c": "a"}[r.URL.Query().Get("continue")]
				w.Header().Set("Content-Type", "application/json")
				w.Write(podPage(0, 1, next))
			},
			want: `reading pods from the cluster at URL: the server gave the continue token "a" again, after 4 objects of kind Pod; its pages would never end`,
			is:   func(err error) bool { var le *LimitError; return errors.As(err, &le) },
		},
		{
			name: "a server whose pages never end is stopped at the read timeout",
			opts: Options{ReadTimeout: 300 * time.Millisecond},
			pods: func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(20 * time.Millisecond)
				var n int
				fmt.Sscanf(r.URL.Query().Get("continue"), "page-%d", &n)
				w.Header().Set("Content-Type", "application/json")
				w.Write(podPage(n, 1, fmt.Sprintf("page-%d", n+1)))
			},
			want: "reading the cluster at URL: not done after 300ms (--read-timeout)",
			is:   func(err error) bool { var le *LimitError; return errors.As(err, &le) },
		},
		{
			name: "a page over the size cap is refused (streamed, no length given)",
			opts: Options{MaxPageBytes: 1 << 10},
			pods: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				page := podPage(0, 20, "")
				w.Write(page[:100])
				w.(http.Flusher).Flush()
				w.Write(page[100:])
			},
			want: "reading pods from the cluster at URL: a response larger than 1 KiB (--max-input-bytes)",
			is:   func(err error) bool { var le *LimitError; return errors.As(err, &le) },
		},
		{
			name: "a page over the size cap is refused (its length given)",
			opts: Options{MaxPageBytes: 1 << 10},
			pods: func(w http.ResponseWriter, r *http.Request) {
				page := podPage(0, 20, "")
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(page)))
				w.Write(page)
			},
			want: "reading pods from the cluster at URL: a response larger than 1 KiB (--max-input-bytes)",
			is:   func(err error) bool { var le *LimitError; return errors.As(err, &le) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeAPIServer(t, tt.pods)
			start := time.Now()
			_, err := Read(context.Background(), &rest.Config{Host: srv.URL}, tt.opts)
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			t.Logf("error: %v", err)
			want := strings.ReplaceAll(tt.want, "URL", srv.URL)
			if err == nil || !strings.Contains(err.Error(), want) || !tt.is(err) {
				t.Fatalf("error\n got: %T %v\nwant: %s", err, err, want)
			}
		})
	}
}

func TestReadWithinItsLimitsReadsEveryPage(t *testing.T) {
	srv := fakeAPIServer(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Query().Get("continue"), "page-%d", &n)
		next := ""
		if n < 4 {
			next = fmt.Sprintf("page-%d", n+1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(podPage(n*2, 2, next))
	})
	snap, err := Read(context.Background(), &rest.Config{Host: srv.URL},
		Options{PageSize: 2, RequestTimeout: time.Second, ReadTimeout: 10 * time.Second, MaxPageBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Objects) != 10 {
		t.Errorf("%d objects, want the 10 pods of 5 pages", len(snap.Objects))
	}
}

func TestTheDefaultRequestTimeoutAppliesOnlyWithoutOne(t *testing.T) {
	// The user's --request-timeout (rest.Config.Timeout) wins over Options.
	srv := fakeAPIServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, err := Read(context.Background(), &rest.Config{Host: srv.URL, Timeout: 150 * time.Millisecond}, Options{RequestTimeout: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "no answer within 150ms (--request-timeout)") {
		t.Fatalf("error %v", err)
	}
}
