package cli

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/verifycmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

// BenchmarkVerifyAThousandNodes verifies the outputs of a generated
// cluster of 1,000 nodes (100 Windows) against the twin: the actual folder
// is the twin's own answers, written as collect writes them, so the run
// parses and compares everything and finds nothing. Issue 17 asks for
// under a minute.
//
//	go test ./internal/cli -run '^$' -bench VerifyAThousandNodes -benchtime 1x
func BenchmarkVerifyAThousandNodes(b *testing.B) {
	gen := b.TempDir()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := Execute(streams, []string{"gen", "--nodes", verifyBenchNodes, "--windows-nodes", verifyBenchWindows, "--pods", "3000", "--output-dir", gen}); code != 0 {
		b.Fatalf("gen: exit %d: %s", code, errOut.String())
	}
	in := InputOptions{Filenames: []string{gen}, Validation: "warn"}
	c, err := in.Build(streams)
	if err != nil {
		b.Fatal(err)
	}
	twin := verifycmd.NewTwinShell(c)
	actual := b.TempDir()
	for _, n := range c.Nodes {
		_, win := twin.Node(n.Name)
		for _, cmd := range verify.Commands {
			if cmd.Windows != win || !cmd.Emulated {
				continue
			}
			text, err := twin.Answer(n.Name, cmd.Typed)
			if err != nil {
				b.Fatalf("%s: %s: %v", n.Name, cmd.Typed, err)
			}
			if err := verify.WriteOutput(actual, n.Name, cmd, text); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	start := processCPU()
	for i := 0; i < b.N; i++ {
		out.Reset()
		errOut.Reset()
		if code := Execute(streams, []string{"verify", "--actual", actual, "-f", gen}); code != 0 {
			b.Fatalf("verify: exit %d: %s", code, tail(out.String()+errOut.String()))
		}
	}
	b.ReportMetric(float64((processCPU()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// The size can be lowered for profiling: KH_BENCH_NODES=200 (a tenth of
// them Windows).
var verifyBenchNodes, verifyBenchWindows = func() (string, string) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("KH_BENCH_NODES")); err == nil && v > 10 {
		n = v
	}
	return strconv.Itoa(n), strconv.Itoa(n / 10)
}()

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}
