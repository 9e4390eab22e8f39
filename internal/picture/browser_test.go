package picture

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The browser test opens the report in a real headless Chromium. It runs
// when KH_CHROMIUM names the browser (.ci/run installs Debian's chromium
// and sets KH_CHROMIUM=/usr/bin/chromium); the page, the DOM Chromium
// built from it, its log and a screenshot are kept in $KH_ARTEFACTS/report
// when KH_ARTEFACTS is set, else in the test's temporary directory.

// chromium is the browser to run, or a skip.
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KH_CHROMIUM")
	if bin == "" {
		t.Skip("KH_CHROMIUM is not set: the report is not opened in a browser (install Debian's chromium and set KH_CHROMIUM=/usr/bin/chromium, as .ci/run does)")
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Fatalf("KH_CHROMIUM=%s: %v", bin, err)
	}
	return bin
}

// artefacts is where the test keeps what the browser made.
func artefacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("KH_ARTEFACTS"); base != "" {
		dir = filepath.Join(base, "report")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runChromium runs headless Chromium on a file with the given flags and
// returns its stdout and its log (stderr).
func runChromium(t *testing.T, bin, file string, flags ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, flags...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// consoleLines are the page's console messages in Chromium's log: script
// errors ("Uncaught …"), Content-Security-Policy violations (a blocked
// fetch), console.error calls. The report has no script, so any is a
// fault.
func consoleLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// attr is a value as Chromium serializes it in an attribute.
func attr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\u00a0", "&nbsp;").Replace(s)
}

// TestTheConsoleCheckCatchesAScriptErrorAndABlockedFetch holds the
// console check itself to a page that has both: if Chromium stopped
// logging console messages, the report's test would pass on nothing.
func TestTheConsoleCheckCatchesAScriptErrorAndABlockedFetch(t *testing.T) {
	bin := chromium(t)
	bad := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'"></head>` +
		`<body><img src="http://127.0.0.1:9/x.png"><script>undefinedFunction();</script></body></html>`
	if err := os.WriteFile(bad, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log := runChromium(t, bin, bad, "--dump-dom")
	lines := strings.Join(consoleLines(log), "\n")
	for _, want := range []string{"Uncaught ReferenceError", "Content Security Policy"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the console check did not see %q in Chromium's log:\n%s", want, log)
		}
	}
}

// TestTheReportOpensInABrowserWithEveryNodeAndFinding opens each case's
// page in headless Chromium: the DOM it builds holds every node (in the
// topology picture and the node table), every finding, every trace and
// the three pictures; the page logs nothing to the console (no script
// error, no fetch its policy blocked); and a screenshot of it is kept.
func TestTheReportOpensInABrowserWithEveryNodeAndFinding(t *testing.T) {
	bin := chromium(t)
	dir := artefacts(t)
	for _, tc := range twinCases {
		t.Run(tc.name, func(t *testing.T) {
			r := reportOf(t, tc)
			page, err := HTML(r, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			file, err := filepath.Abs(filepath.Join(dir, tc.name+".html"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, page, 0o644); err != nil {
				t.Fatal(err)
			}
			dom, log := runChromium(t, bin, file, "--dump-dom")
			_ = os.WriteFile(filepath.Join(dir, tc.name+".dom.html"), []byte(dom), 0o644)
			_ = os.WriteFile(filepath.Join(dir, tc.name+".chromium.log"), []byte(log), 0o644)
			if lines := consoleLines(log); len(lines) > 0 {
				t.Errorf("the page logged to the console:\n%s", strings.Join(lines, "\n"))
			}
			if !strings.Contains(dom, "<h1>Hybrid cluster report</h1>") {
				t.Fatalf("Chromium's DOM is not the report:\n%.2000s", dom)
			}
			var missing []string
			for _, n := range r.Topology.Nodes {
				for _, want := range []string{
					fmt.Sprintf(`data-kind="node" data-name="%s"`, attr(n.Name)),
					fmt.Sprintf(`<tr data-node="%s">`, attr(n.Name)),
				} {
					if !strings.Contains(dom, want) {
						missing = append(missing, want)
					}
				}
			}
			for _, f := range r.Findings {
				want := fmt.Sprintf(`data-rule="%s" data-object="%s"`, attr(f.RuleID), attr(f.Object))
				if !strings.Contains(dom, want) {
					missing = append(missing, want)
				}
			}
			for _, p := range []string{"topology", "reach", "trace"} {
				if want := fmt.Sprintf(`data-picture="%s"`, p); !strings.Contains(dom, want) {
					missing = append(missing, want)
				}
			}
			if len(missing) > 0 {
				t.Errorf("Chromium's DOM lacks:\n%s", strings.Join(missing, "\n"))
			}
			if got := strings.Count(dom, `<tr class="finding `); got != len(r.Findings) {
				t.Errorf("%d finding rows in the DOM, want %d", got, len(r.Findings))
			}
			if got := strings.Count(dom, `<li class="trace"`); got != len(r.Traces) {
				t.Errorf("%d traces in the DOM, want %d", got, len(r.Traces))
			}

			shot := filepath.Join(dir, tc.name+".png")
			_ = os.Remove(shot)
			runChromium(t, bin, file, "--hide-scrollbars", "--window-size=1400,2400", "--screenshot="+shot)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("the screenshot %s: %v", shot, err)
			}
			if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 2400 {
				t.Errorf("the screenshot is %v, want 1400×2400", b)
			}
			// A blank page (nothing rendered) is one colour.
			colours := map[[4]uint32]bool{}
			for y := 0; y < img.Bounds().Dy() && len(colours) < 8; y += 7 {
				for x := 0; x < img.Bounds().Dx() && len(colours) < 8; x += 7 {
					r, g, b, a := img.At(x, y).RGBA()
					colours[[4]uint32{r, g, b, a}] = true
				}
			}
			if len(colours) < 8 {
				t.Errorf("the screenshot has %d colours: nothing was drawn", len(colours))
			}
			t.Logf("page, DOM, Chromium's log and screenshot: %s", filepath.Join(dir, tc.name+".*"))
		})
	}
}

// TestEveryDOTGraphIsReadByGraphviz runs Graphviz's dot on every view of
// the golden cases and of the hostile report (.ci/run installs graphviz
// with chromium); a syntax error or a warning fails.
func TestEveryDOTGraphIsReadByGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not installed: the DOT output is not drawn (apt-get install graphviz, as .ci/run does)")
	}
	reports := map[string]*Report{"hostile": hostileReport()}
	for _, tc := range twinCases {
		reports[tc.name] = reportOf(t, tc)
	}
	for name, r := range reports {
		for _, v := range Views {
			graph, err := DOT(r, v)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			cmd := exec.CommandContext(ctx, dot, "-Tsvg")
			cmd.Stdin = bytes.NewReader(graph)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err = cmd.Run()
			cancel()
			if err != nil || errOut.Len() > 0 {
				t.Errorf("%s %s: dot: %v\n%s", name, v, err, errOut.String())
				continue
			}
			if !strings.Contains(out.String(), "<svg") {
				t.Errorf("%s %s: dot drew no SVG", name, v)
			}
		}
	}
}
