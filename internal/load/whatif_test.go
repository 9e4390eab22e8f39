package load

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// whatIfFiles writes each document to a file of its own in a temporary
// directory and returns their paths in order.
func whatIfFiles(t *testing.T, docs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for i, d := range docs {
		p := filepath.Join(dir, string(rune('a'+i))+".yaml")
		if err := os.WriteFile(p, []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

const svcHello = `apiVersion: v1
kind: Service
metadata: {name: hello, namespace: demo}
spec:
  ports: [{port: 80}]
`

const deleteHello = `apiVersion: v1
kind: Service
metadata:
  name: hello
  namespace: demo
  annotations: {hybrid.kubectl-hybrid.io/delete: "true"}
`

const drainNode1 = `apiVersion: v1
kind: Node
metadata:
  name: node-1
  annotations: {hybrid.kubectl-hybrid.io/action: drain}
`

func keys(objs []*model.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Key.String())
	}
	return out
}

func TestWhatIfMarkers(t *testing.T) {
	tests := []struct {
		name        string
		docs        []string
		wantObjects []string
		wantActions []string
	}{
		{
			name:        "a delete marker removes the object an earlier file gave and is not added itself",
			docs:        []string{svcHello, deleteHello},
			wantObjects: nil,
		},
		{
			name:        "an object given again after its deletion is added anew",
			docs:        []string{svcHello, deleteHello, svcHello},
			wantObjects: []string{"Service demo/hello"},
		},
		{
			name:        "an action marker is kept for the engine and is no object of the cluster",
			docs:        []string{svcHello, drainNode1},
			wantObjects: []string{"Service demo/hello"},
			wantActions: []string{"Node node-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := load(t, Options{Filenames: whatIfFiles(t, tt.docs...)})
			if got := keys(s.Objects); !reflect.DeepEqual(got, tt.wantObjects) {
				t.Errorf("objects %q, want %q", got, tt.wantObjects)
			}
			if got := keys(s.Actions); !reflect.DeepEqual(got, tt.wantActions) {
				t.Errorf("actions %q, want %q", got, tt.wantActions)
			}
		})
	}
}

func TestBadWhatIfMarkersAreRefusedWithTheirFileAndLine(t *testing.T) {
	tests := []struct {
		name string
		docs []string
		want string // the message after "FILE:LINE (document N): "
	}{
		{
			name: "a deletion with nothing earlier to delete",
			docs: []string{deleteHello},
			want: `Service demo/hello: hybrid.kubectl-hybrid.io/delete: no earlier input (the lab, an earlier -f, diff's base) gives this object; objects the twin derives cannot be deleted (their controller would make them again)`,
		},
		{
			name: "a deletion whose value is not true",
			docs: []string{svcHello, `apiVersion: v1
kind: Service
metadata: {name: hello, namespace: demo, annotations: {hybrid.kubectl-hybrid.io/delete: "yes"}}
`},
			want: `Service demo/hello: hybrid.kubectl-hybrid.io/delete "yes": the only value is "true"`,
		},
		{
			name: "an action the twin does not know",
			docs: []string{`apiVersion: v1
kind: Node
metadata: {name: node-1, annotations: {hybrid.kubectl-hybrid.io/action: reboot}}
`},
			want: `Node node-1: hybrid.kubectl-hybrid.io/action "reboot": use one of approve, cordon, deny, drain, restart, taint, uncordon`,
		},
		{
			name: "an action on a kind it does not apply to",
			docs: []string{`apiVersion: v1
kind: Service
metadata: {name: hello, namespace: demo, annotations: {hybrid.kubectl-hybrid.io/action: drain}}
`},
			want: `Service demo/hello: hybrid.kubectl-hybrid.io/action "drain" applies to Node, not to a Service`,
		},
		{
			name: "an object that both deletes and acts",
			docs: []string{`apiVersion: v1
kind: Node
metadata:
  name: node-1
  annotations: {hybrid.kubectl-hybrid.io/action: cordon, hybrid.kubectl-hybrid.io/delete: "true"}
`},
			want: `Node node-1: hybrid.kubectl-hybrid.io/delete and hybrid.kubectl-hybrid.io/action: an object either deletes or acts, not both`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := whatIfFiles(t, tt.docs...)
			_, err := Load(Options{Filenames: files})
			last := files[len(files)-1]
			want := last + ":1 (document 1): " + tt.want
			if err == nil || err.Error() != want || !IsBadInput(err) {
				t.Fatalf("error\n got: %v\nwant: %s", err, want)
			}
		})
	}
}

func TestFilesLayeredOnABaseSnapshotLeaveTheBaseAsItWas(t *testing.T) {
	files := whatIfFiles(t, svcHello, deleteHello, drainNode1)
	base := load(t, Options{Filenames: files[:1]})
	base.Warnings = []string{"from the base"}
	next := load(t, Options{Base: base, Filenames: files[1:]})
	if got := keys(base.Objects); !reflect.DeepEqual(got, []string{"Service demo/hello"}) {
		t.Errorf("the base's objects became %q", got)
	}
	if len(next.Objects) != 0 || len(next.Actions) != 1 {
		t.Errorf("layered: objects %q, actions %q; want none and the drain", keys(next.Objects), keys(next.Actions))
	}
	if !reflect.DeepEqual(next.Warnings, []string{"from the base"}) {
		t.Errorf("warnings %q, want the base's", next.Warnings)
	}
}
