package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

func TestAMatrixWithNothingSelectedSaysWhichFlagsChooseTheCells(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer, *reach.Matrix) error
	}{
		{"the text matrix", func(b *bytes.Buffer, m *reach.Matrix) error { return WriteText(b, m) }},
		{"the summary", func(b *bytes.Buffer, m *reach.Matrix) error { return WriteSummary(b, m) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, &reach.Matrix{Sources: []reach.Source{{Kind: "pods", Label: "demo/hello"}}}); err != nil {
				t.Fatal(err)
			}
			want := "No sources or no destinations selected (1 source, 0 destinations): -n and -A choose the namespaces, --from and --to filter them.\n"
			if b.String() != want {
				t.Errorf("got %q\nwant %q", b.String(), want)
			}
		})
	}
}

func TestJSONOfAnEmptyMatrixIsAnEmptyListAndCSVItsHeader(t *testing.T) {
	var j, c bytes.Buffer
	if err := WriteJSON(&j, &reach.Matrix{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&c, &reach.Matrix{}); err != nil {
		t.Fatal(err)
	}
	if j.String() != "[]\n" || strings.TrimSpace(c.String()) != "from,to,port,proto,verdict,reason,hop" {
		t.Errorf("json %q, csv %q", j.String(), c.String())
	}
}
