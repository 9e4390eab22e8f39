package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
)

// panicking is the command tree with a command that panics, in its own
// goroutine or in a worker goroutine it starts the way reach does.
func panicking(streams genericiooptions.IOStreams) *cobra.Command {
	root := NewRootCmd(streams)
	root.AddCommand(&cobra.Command{
		Use: "boom",
		RunE: func(*cobra.Command, []string) error {
			var m map[string]int
			m["x"] = 1 // a nil map: a runtime error, as a real bug would be
			return nil
		},
	}, &cobra.Command{
		Use: "boom-in-a-worker",
		RunE: func(*cobra.Command, []string) error {
			var g crash.Group
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer g.Recover()
				panic("a worker failed\nwith a second line")
			}()
			<-done
			g.Repanic()
			return nil
		},
	})
	return root
}

func TestAPanicEndsWithExitThreeAndOneLineAskingForABugReport(t *testing.T) {
	cases := []struct {
		name       string
		args       []string
		wantLine   string
		wantStack  bool
		stackFrame string
	}{
		{"a panic in the command", []string{"boom"},
			"error: internal error: assignment to entry in nil map; please report this bug with the command line and its input (-v=1 prints the stack)", false, ""},
		{"a panic in a worker goroutine", []string{"boom-in-a-worker"},
			"error: internal error: a worker failed; please report this bug with the command line and its input (-v=1 prints the stack)", false, ""},
		{"a panic with -v=1 prints the stack first", []string{"boom", "-v=1"},
			"error: internal error: assignment to entry in nil map; please report this bug with the command line and its input (-v=1 prints the stack)", true, "root_test.go"},
		{"a worker's panic with --v=2 prints the worker's stack", []string{"boom-in-a-worker", "--v=2"},
			"error: internal error: a worker failed; please report this bug with the command line and its input (-v=1 prints the stack)", true, "root_test.go"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
			code := executeCmd(panicking(streams), streams, tc.args)
			if code != ExitInternal {
				t.Errorf("exit code %d, want %d", code, ExitInternal)
			}
			lines := strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != tc.wantLine {
				t.Errorf("last line of stderr:\n%s\nwant:\n%s", last, tc.wantLine)
			}
			if !tc.wantStack && len(lines) != 1 {
				t.Errorf("stderr has %d lines, want one:\n%s", len(lines), errOut.String())
			}
			if tc.wantStack && !strings.Contains(errOut.String(), "goroutine ") {
				t.Errorf("stderr has no stack:\n%s", errOut.String())
			}
			if tc.stackFrame != "" && !strings.Contains(errOut.String(), tc.stackFrame) {
				t.Errorf("the stack does not name %s, where the panic happened:\n%s", tc.stackFrame, errOut.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout should be empty, got %q", out.String())
			}
		})
	}
}
