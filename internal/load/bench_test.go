package load

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// writePod writes a pod as kubectl get -o yaml prints one; first prefixes its
// first line and indent the others (for list items).
func writePod(b *bytes.Buffer, i int, first, indent string) {
	lines := []string{
		"apiVersion: v1",
		"kind: Pod",
		"metadata:",
		fmt.Sprintf("  name: web-%d", i),
		"  namespace: demo",
		"  labels:",
		"    app: web",
		"  ownerReferences:",
		"  - apiVersion: apps/v1",
		"    kind: ReplicaSet",
		"    name: web-55fb8f8684",
		"    controller: true",
		"spec:",
		fmt.Sprintf("  nodeName: node-%d", i%100),
		"  containers:",
		"  - name: web",
		"    image: nginx:1.29",
		"    ports:",
		"    - containerPort: 80",
		"      protocol: TCP",
		"    resources:",
		"      requests:",
		"        cpu: 100m",
		"        memory: 64Mi",
		"status:",
		"  phase: Running",
		fmt.Sprintf("  podIP: 10.%d.%d.%d", i>>16&255, i>>8&255, i&255),
	}
	for j, l := range lines {
		if j == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(indent)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

func pods(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		b.WriteString("---\n")
		writePod(&b, i, "", "")
	}
	return b.Bytes()
}

func BenchmarkDecode10000Pods(b *testing.B) {
	text := pods(10_000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := Decode(bytes.NewReader(text), "pods.yaml", func(*model.Object) error { n++; return nil })
		if err != nil || n != 10_000 {
			b.Fatalf("%d objects, %v", n, err)
		}
	}
}

func BenchmarkDecode10000PodList(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < 10_000; i++ {
		writePod(&buf, i, "- ", "  ")
	}
	text := buf.Bytes()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := Decode(bytes.NewReader(text), "pods.yaml", func(*model.Object) error { n++; return nil })
		if err != nil || n != 10_000 {
			b.Fatalf("%d objects, %v", n, err)
		}
	}
}

// BenchmarkDecodeBlank decodes 32 MiB that hold no object: spaces on one
// line, empty lines, and "---" lines. Blank text never reaches the YAML
// parser and is not kept, so B/op stays near the reader's buffers whatever
// the size.
func BenchmarkDecodeBlank(b *testing.B) {
	const size = 32 << 20
	for _, in := range []struct {
		name string
		line string
	}{
		{"spaces", " "},
		{"newlines", "\n"},
		{"separators", "---\n"},
		{"indented-blank-lines", "    \r\n"},
	} {
		text := bytes.Repeat([]byte(in.line), size/len(in.line))
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				err := Decode(bytes.NewReader(text), "blank.yaml", func(*model.Object) error {
					b.Fatal("an object from blank text")
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
