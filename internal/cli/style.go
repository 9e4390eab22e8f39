package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/display"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// outStyle and errStyle are how stdout and stderr look: Execute reads them
// from the process's streams; anything else (tests, buffers) is plain.
var outStyle, errStyle = display.Plain, display.Plain

// detectStyles reads the styles of the process's own streams before
// Execute wraps them; other writers keep the style set (plain, or a
// test's).
func detectStyles(out, errOut io.Writer) {
	if _, ok := out.(*os.File); ok {
		outStyle = display.Detect(out, os.Getenv)
	}
	if _, ok := errOut.(*os.File); ok {
		errStyle = display.Detect(errOut, os.Getenv)
	}
}

// writeStyled renders text through the escaping writer, lets transform
// add what the escaping would spoil (colour), cuts it to the terminal's
// width when fit, and writes it to out as it is.
func writeStyled(out io.Writer, fit bool, render func(io.Writer) error, transform func([]byte) []byte) error {
	var buf bytes.Buffer
	tw := textsafe.NewWriter(&buf)
	err := render(tw)
	if ferr := tw.Flush(); err == nil {
		err = ferr
	}
	text := buf.Bytes()
	if transform != nil {
		text = transform(text)
	}
	if fit {
		text = outStyle.Fit(text)
	}
	if _, werr := textsafe.Raw(out).Write(text); err == nil {
		err = werr
	}
	return err
}

// colorCheck paints check's text report: section titles and rule IDs in
// their severity's colour.
func colorCheck(text []byte) []byte {
	if !outStyle.Color {
		return text
	}
	colors := map[string]string{"Errors": display.Red, "Warnings": display.Yellow, "Info": display.Cyan}
	current := ""
	lines := strings.SplitAfter(string(text), "\n")
	for i, l := range lines {
		title, _, _ := strings.Cut(l, " (")
		if c, ok := colors[title]; ok && !strings.HasPrefix(l, " ") {
			current = c
			lines[i] = outStyle.Paint(display.Bold+";"+c, strings.TrimSuffix(l, "\n")) + "\n"
			continue
		}
		if current != "" && strings.HasPrefix(l, "  HYB") {
			id := strings.Fields(l)[0]
			lines[i] = strings.Replace(l, id, outStyle.Paint(current, id), 1)
		}
	}
	return []byte(strings.Join(lines, ""))
}

// startProgress says on stderr what a step that takes longer than a
// second is doing, with the seconds so far, when stderr is a terminal; the
// returned stop clears the line.
func startProgress(errOut io.Writer, what string) (stop func()) {
	if !errStyle.Terminal {
		return func() {}
	}
	raw := textsafe.Raw(errOut)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown {
					fmt.Fprint(raw, "\r\x1b[K")
				}
				return
			case <-tick.C:
				shown = true
				fmt.Fprintf(raw, "\r\x1b[K%s… %ds", what, int(time.Since(start).Seconds()))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
