package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/docscmd"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func renderDocs() []byte {
	var buf bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &buf, ErrOut: &buf}
	docscmd.WriteDocs(&buf, NewRootCmd(streams))
	return buf.Bytes()
}

// docs/commands.md is generated from the command tree; this keeps it current.
func TestTheCommandReferenceIsGeneratedFromTheBinary(t *testing.T) {
	got := renderDocs()
	path := filepath.Join("..", "..", "docs", "commands.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("docs/commands.md is stale: run go run ./cmd/kubectl-hybrid docs > docs/commands.md\n%s", lineDiff(string(want), string(got)))
	}
}

func TestTheCommandReferenceIsTheSameWhateverTheHomeDirectory(t *testing.T) {
	for _, home := range []string{"/root", "/home/someone", t.TempDir()} {
		t.Run(home, func(t *testing.T) {
			t.Setenv("HOME", home)
			got := string(renderDocs())
			if strings.Contains(got, home+"/") {
				t.Errorf("the reference names the home directory %s", home)
			}
			if !strings.Contains(got, `(default "$HOME/.kube/cache")`) {
				t.Errorf("the reference does not show --cache-dir's default as $HOME/.kube/cache")
			}
		})
	}
}

func TestRenderingTheReferenceLeavesTheRealDefaultsInPlace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var buf bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &buf, ErrOut: &buf}
	root := NewRootCmd(streams)
	docscmd.WriteDocs(&buf, root)
	get, _, err := root.Find([]string{"get"})
	if err != nil {
		t.Fatal(err)
	}
	f := get.Flags().Lookup("cache-dir")
	if f == nil {
		t.Fatal("get has no --cache-dir flag")
	}
	if want := filepath.Join(home, ".kube", "cache"); f.DefValue != want {
		t.Errorf("after rendering, --cache-dir's default is %q, want %q", f.DefValue, want)
	}
}
