package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// docs/commands.md is generated from the command tree; this keeps it current.
func TestTheCommandReferenceIsGeneratedFromTheBinary(t *testing.T) {
	var buf bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &buf, ErrOut: &buf}
	writeDocs(&buf, NewRootCmd(streams))
	path := filepath.Join("..", "..", "docs", "commands.md")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("docs/commands.md is stale: run go run ./cmd/kubectl-hybrid docs > docs/commands.md\n%s", lineDiff(string(want), buf.String()))
	}
}
