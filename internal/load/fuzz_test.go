package load

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func addSeeds(f *testing.F) {
	for _, pattern := range []string{"testdata/*/*", "testdata/dir/*/*"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < 3; i++ {
		writePod(&b, i, "- ", "  ")
	}
	f.Add(b.Bytes())
	f.Add([]byte("a: &a [*a, *a]\nb: &b [*a, *a]\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  <<: [{a: b}, {c: d}]\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: a, image: b}]}\n"))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"w-"},"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}}`))
}

// FuzzLoad feeds arbitrary bytes to Load as stdin: it must never panic, and
// every error must be a one-line *Error.
func FuzzLoad(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load(Options{Filenames: []string{"-"}, Stdin: bytes.NewReader(data)})
		if err != nil {
			if !IsBadInput(err) {
				t.Fatalf("error is not bad input: %#v", err)
			}
			msgs := []string{err.Error()}
			var r *Refusals
			if errors.As(err, &r) {
				msgs = msgs[:0]
				for _, e := range r.Errors {
					msgs = append(msgs, e.Error())
				}
				msgs = append(msgs, r.Warnings...)
			}
			for _, m := range msgs {
				if strings.ContainsAny(m, "\r\n") {
					t.Fatalf("error is not one line: %q", m)
				}
			}
			return
		}
		for _, o := range s.Objects {
			if o.Raw == nil || o.Origin.Doc < 1 || o.Origin.Line < 1 {
				t.Fatalf("object %s at %s has no raw value or origin", o.Key, o.Origin)
			}
		}
	})
}

// FuzzListSplit checks that splitting a List document into its items before
// parsing gives what parsing it whole gives.
func FuzzListSplit(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		run := func(fastMin int) ([]*model.Object, string) {
			var objs []*model.Object
			val := newValidator(ValidateWarn)
			err := decodeWith(bytes.NewReader(data), "f.yaml", Limits{}, func(o *model.Object) error {
				objs = append(objs, o)
				return nil
			}, fastMin, val)
			if err != nil {
				return nil, err.Error()
			}
			// What validation finds is the same either way too.
			found := append([]string(nil), val.warnings...)
			for _, e := range val.refused {
				found = append(found, e.Error())
			}
			return objs, strings.Join(found, "\n")
		}
		whole, werr := run(len(data) + 1)
		split, serr := run(0)
		if werr != serr {
			t.Fatalf("errors or findings differ:\nwhole: %s\nsplit: %s", werr, serr)
		}
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("objects differ:\nwhole: %q\nsplit: %q", summary(whole), summary(split))
		}
	})
}

// FuzzBlankLines checks that holding blank lines back from the YAML parser
// changes nothing: every chunk between "---" lines given whole to the
// parser, as kubectl's YAML reader splits a stream, gives the same objects
// and errors.
func FuzzBlankLines(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("\n\n  \n---\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: |+\n    x\n\n  \n---\n \t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if isJSON, _ := sniffJSON(bufio.NewReader(bytes.NewReader(data))); isJSON || bytes.HasPrefix(data, utf8BOM) {
			return
		}
		var got []*model.Object
		gerr := decode(bytes.NewReader(data), "f.yaml", func(o *model.Object) error {
			got = append(got, o)
			return nil
		}, fastListMin)
		var want []*model.Object
		d := &decoder{file: "f.yaml", fastMin: fastListMin, keys: map[string]string{}, maxDoc: DefaultMaxDocumentBytes,
			emit: func(o *model.Object) error { want = append(want, o); return nil }}
		var werr error
		lines := bytes.SplitAfter(data, []byte("\n"))
		var chunk []byte
		first, explicit := 1, false
		for i := 0; i <= len(lines) && werr == nil; i++ {
			if i < len(lines) && !isSeparator(lines[i]) {
				chunk = append(chunk, lines[i]...)
				continue
			}
			if i < len(lines) || len(chunk) > 0 {
				werr = d.yamlChunk(chunk, first, explicit)
			}
			chunk, first, explicit = nil, i+2, true
		}
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("errors differ:\n got: %v\nwant: %v", gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("objects differ:\n got: %q\nwant: %q", summary(got), summary(want))
		}
	})
}
