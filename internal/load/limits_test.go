package load

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// zeros is a stream that never ends, as /dev/zero or `yes` on stdin.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// repeat is a stream that never ends, of one line over and over.
type repeat struct {
	line string
	off  int
}

func (r *repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.line[r.off]
		r.off = (r.off + 1) % len(r.line)
	}
	return len(p), nil
}

const namespaceDoc = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"

func TestInputOverTheCapIsRefused(t *testing.T) {
	big := strings.Repeat("# filler\n", 200) + namespaceDoc
	tests := []struct {
		name  string
		in    io.Reader
		limit int64
		want  string
	}{
		{
			name:  "an endless stream of zero bytes stops at the cap",
			in:    zeros{},
			limit: 1 << 10,
			want:  "<stdin>: input larger than 1 KiB (--max-input-bytes)",
		},
		{
			name:  "an endless stream of blank lines stops at the cap",
			in:    &repeat{line: "\n"},
			limit: 1 << 10,
			want:  "<stdin>: input larger than 1 KiB (--max-input-bytes)",
		},
		{
			name:  "an endless stream of separators stops at the cap",
			in:    &repeat{line: "---\n"},
			limit: 1 << 10,
			want:  "<stdin>: input larger than 1 KiB (--max-input-bytes)",
		},
		{
			name:  "an endless JSON stream stops at the cap",
			in:    &repeat{line: `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}`},
			limit: 1 << 10,
			want:  "<stdin>: input larger than 1 KiB (--max-input-bytes)",
		},
		{
			name:  "YAML one byte over the cap is refused, not read in part",
			in:    strings.NewReader(big),
			limit: int64(len(big)) - 1,
			want:  fmt.Sprintf("<stdin>: input larger than %d bytes (--max-input-bytes)", len(big)-1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: []string{"-"}, Stdin: tt.in, Limits: Limits{Input: tt.limit}})
			if err == nil || err.Error() != tt.want || !IsBadInput(err) {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestInputOfExactlyTheCapIsRead(t *testing.T) {
	for _, text := range []string{namespaceDoc, `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}`} {
		s, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), Limits: Limits{Input: int64(len(text))}})
		if err != nil || len(s.Objects) != 1 {
			t.Fatalf("%q at a cap of its size: %v", text, err)
		}
	}
}

func TestAFileOverTheCapIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ns.yaml")
	if err := os.WriteFile(path, []byte(namespaceDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(Options{Filenames: []string{path}, Limits: Limits{Input: 10}})
	if want := path + ": input larger than 10 bytes (--max-input-bytes)"; err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

// podList writes a List of n pods, block style (as kubectl prints it) or as
// JSON.
func podList(n int, jsonList bool) string {
	var b strings.Builder
	if jsonList {
		b.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
		for i := range n {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p` + string(rune('a'+i)) + `", "namespace": "demo"}}`)
		}
		b.WriteString("]}\n")
		return b.String()
	}
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
		b.WriteString("- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p" + string(rune('a'+i)) + "\n    namespace: demo\n")
	}
	return b.String()
}

func TestAnObjectOverTheDocumentCapIsRefused(t *testing.T) {
	// 300 bytes of data in lines shorter than the cap.
	var data string
	for _, k := range "abc" {
		data += "    " + string(k) + ": " + strings.Repeat("x", 93) + "\n"
	}
	bigData := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n" + data
	bigItem := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: small\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: big\n  data:\n" + data
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "a YAML document over the cap names its first line",
			in:   namespaceDoc + "---\n\n\n" + bigData,
			want: "<stdin>:8 (document 2): document larger than 256 bytes (--max-document-bytes); a larger List is read item by item when its items are block-style YAML, as kubectl prints them",
		},
		{
			name: "a line over the cap stops the read where it starts",
			in:   namespaceDoc + "---\nkind: ConfigMap\ndata: {a: " + strings.Repeat("x", 300) + "}\n",
			want: "<stdin>:7: a line larger than 256 bytes (--max-document-bytes)",
		},
		{
			name: "a JSON value over the cap",
			in:   `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "` + strings.Repeat("x", 300) + `"}}`,
			want: "<stdin>:1 (document 1): JSON value larger than 256 bytes (--max-document-bytes)",
		},
		{
			name: "an item of a YAML List over the cap names the item",
			in:   bigItem,
			want: "<stdin>:8 (document 1): List: items[1]: item larger than 256 bytes (--max-document-bytes)",
		},
		{
			name: "an item of a JSON List over the cap names the item",
			in:   `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},` + "\n" + `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "` + strings.Repeat("x", 300) + `"}}]}`,
			want: "<stdin>:2 (document 1): List: items[1]: item larger than 256 bytes (--max-document-bytes)",
		},
		{
			name: "a flow-style List over the cap cannot be read item by item",
			in:   "apiVersion: v1\nkind: List\nitems: [\n" + strings.Repeat("  {apiVersion: v1, kind: Namespace, metadata: {name: x}},\n", 5) + "]\n",
			want: "<stdin>:1 (document 1): document larger than 256 bytes (--max-document-bytes); a larger List is read item by item when its items are block-style YAML, as kubectl prints them",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.in), Limits: Limits{Document: 256}})
			if err == nil || err.Error() != tt.want || !IsBadInput(err) {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestAListOverTheDocumentCapWithSmallItemsIsRead(t *testing.T) {
	for _, jsonList := range []bool{false, true} {
		text := podList(20, jsonList)
		if len(text) <= 256 {
			t.Fatalf("the list is %d bytes, not over the cap", len(text))
		}
		s, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), Limits: Limits{Document: 256}})
		if err != nil || len(s.Objects) != 20 {
			t.Fatalf("json %v: %v", jsonList, err)
		}
	}
}

func TestBlankLinesAroundADocumentDoNotCountTowardsTheCap(t *testing.T) {
	blank := strings.Repeat("   \n", 100)
	text := blank + namespaceDoc + blank + "---\n" + blank + namespaceDoc[:len(namespaceDoc)-2] + "y\n" + blank
	s, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), Limits: Limits{Document: int64(len(namespaceDoc))}})
	if err != nil || len(s.Objects) != 2 {
		t.Fatalf("%v", err)
	}
}

// TestBlankLinesKeepLinesAndDocuments checks that blank text held back from
// the parser, or dropped, leaves every object's line, document and value as
// they are without it: runs of blank lines and of separators are inserted,
// short (kept exactly) and long (counted only), around and inside documents.
func TestBlankLinesKeepLinesAndDocuments(t *testing.T) {
	// Each part is a line; blank runs go between the parts.
	parts := []string{
		"apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: a", "data:",
		"  text: |", "    one", "", "    two", "  kept: |+", "    three", "", "", "---",
		"---", "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: b", "data:", "  x: y",
	}
	base := strings.Join(parts, "\n") + "\n"
	want, err := DecodeDocuments(strings.NewReader(base), "f.yaml")
	if err != nil || len(want) != 2 {
		t.Fatalf("base: %v", err)
	}
	tests := []struct {
		name  string
		run   string // inserted as whole lines
		n     int
		after []int // indices of parts the run follows; -1 is the start
	}{
		{name: "a few blank lines before the first document", run: " \r\n", n: 3, after: []int{-1}},
		{name: "many blank lines before the first document", run: "\n", n: 100_000, after: []int{-1}},
		{name: "a few blank lines inside a block scalar", run: "\n", n: 3, after: []int{6}},
		{name: "many blank lines between two keys", run: "\n", n: 100_000, after: []int{3}},
		{name: "many indented blank lines between two keys", run: "      \n", n: 20_000, after: []int{3}},
		{name: "many separators between the documents", run: "---\n", n: 50_000, after: []int{13}},
		{name: "separators and blank lines mixed", run: "\n---\n  \n", n: 30_000, after: []int{-1, 14}},
		{name: "many blank lines at the end", run: "\n", n: 100_000, after: []int{20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			insert := strings.Repeat(tt.run, tt.n)
			lines := strings.Count(insert, "\n")
			docs := strings.Count(insert, "---")
			shiftAfter := map[int]bool{}
			for _, a := range tt.after {
				shiftAfter[a] = true
			}
			if shiftAfter[-1] {
				b.WriteString(insert)
			}
			for i, p := range parts {
				b.WriteString(p)
				b.WriteByte('\n')
				if shiftAfter[i] {
					b.WriteString(insert)
				}
			}
			got, err := DecodeDocuments(strings.NewReader(b.String()), "f.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d objects, want %d", len(got), len(want))
			}
			for i := range want {
				w := want[i].Origin
				// Lines and documents inserted before the object's start move it.
				for _, a := range tt.after {
					start := 0
					if i == 1 {
						start = 15
					}
					if a < start {
						w.Line += lines
						w.Doc += docs
						if a == -1 && docs > 0 {
							w.Doc-- // the first "---" of a stream opens its first document
						}
					}
				}
				if got[i].Origin != w {
					t.Errorf("object %d at %v, want %v", i, got[i].Origin, w)
				}
				if tt.after[0] != 6 && !reflect.DeepEqual(got[i].Raw, want[i].Raw) {
					t.Errorf("object %d\n got %v\nwant %v", i, got[i].Raw, want[i].Raw)
				}
			}
			cm := got[0].Typed.(*corev1.ConfigMap)
			if tt.after[0] == 6 {
				if want := "one\n\n\n\n\ntwo\n"; cm.Data["text"] != want {
					t.Errorf("text %q, want %q", cm.Data["text"], want)
				}
			} else if cm.Data["kept"] != "three\n\n\n" {
				t.Errorf("kept %q: a |+ scalar keeps its blank lines", cm.Data["kept"])
			}
		})
	}
}

func TestLongBlankTextWithCarriageReturnsBeforeContentIsRefused(t *testing.T) {
	text := "\n\n" + strings.Repeat(" \r", 100_000) + "apiVersion: v1\n"
	_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text)})
	if want := "<stdin>:3: more than 64 KiB of spaces and carriage returns before the line's content"; err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

func TestLongSpacesBeforeContentAreGivenBack(t *testing.T) {
	// A flow mapping may start far to the right.
	text := "\n" + strings.Repeat(" ", 100_000) + "{apiVersion: v1, kind: Namespace, metadata: {name: x}}\n"
	objs, err := DecodeDocuments(strings.NewReader(text), "f.yaml")
	if err != nil || len(objs) != 1 || objs[0].Origin.Line != 2 {
		t.Fatalf("%v %v", err, objs)
	}
}

func TestBlankInputHoldsNoMemory(t *testing.T) {
	// What 8 MiB of blank text costs beyond the reader's own 64 KiB buffer.
	for _, line := range []string{" ", "\n", "---\n", "  \r\n"} {
		text := bytes.Repeat([]byte(line), (8<<20)/len(line))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := Decode(bytes.NewReader(text), "f.yaml", func(*model.Object) error { return nil }); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 512<<10 {
			t.Errorf("%q×%d: %d bytes allocated", line, len(text)/len(line), n)
		}
	}
}

func TestALineLongerThanTheDocumentCapStopsTheRead(t *testing.T) {
	// No object may hold it, so the reader stops before buffering on: an
	// endless line of zero bytes costs the cap, not --max-input-bytes.
	_, err := Load(Options{Filenames: []string{"-"}, Stdin: io.MultiReader(strings.NewReader("\n\n"), zeros{}), Limits: Limits{Document: 1 << 20}})
	if want := "<stdin>:3: a line larger than 1 MiB (--max-document-bytes)"; err == nil || err.Error() != want {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

func TestBlankTextInsideAnObjectCountsTowardsTheCap(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "blank lines between two keys",
			in:   "apiVersion: v1\n" + strings.Repeat("\n", 2000) + "kind: Namespace\nmetadata:\n  name: x\n",
			want: "<stdin>:2002: the blank lines before this line larger than 1 KiB (--max-document-bytes)",
		},
		{
			name: "spaces in front of a line's content",
			in:   "\n" + strings.Repeat(" ", 100_000) + "{apiVersion: v1, kind: Namespace, metadata: {name: x}}\n",
			want: "<stdin>:2: a line larger than 1 KiB (--max-document-bytes)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.in), Limits: Limits{Document: 1 << 10}})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestBlankLinesEndingADocumentAreKeptUpTo64KiB(t *testing.T) {
	// A |+ block scalar keeps the blank lines that end it; beyond 64 KiB of
	// them the reader drops them rather than hold them, before "---" as at
	// the end of the stream.
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  kept: |+\n    x\n"
	for _, tt := range []struct {
		name   string
		blanks int
		end    string
		want   string
	}{
		{"a few before a separator are kept", 3, "---\n", "x\n\n\n\n"},
		{"a few at the end are kept", 3, "", "x\n\n\n\n"},
		{"many before a separator are dropped", 100_000, "---\n", "x\n"},
		{"many at the end are dropped", 100_000, "", "x\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := DecodeDocuments(strings.NewReader(doc+strings.Repeat("\n", tt.blanks)+tt.end), "f.yaml")
			if err != nil || len(objs) != 1 {
				t.Fatalf("%v %d", err, len(objs))
			}
			if got := objs[0].Typed.(*corev1.ConfigMap).Data["kept"]; got != tt.want {
				t.Errorf("kept %q, want %q", rawdoc.Clip(got), tt.want)
			}
		})
	}
}
