package picture

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// aTrace is one trace as the report command's --trace gives it.
type aTrace struct {
	src, dst, ns string
	proto        trace.Proto
	port         int
}

// twinCase is an input the golden tests draw.
type twinCase struct {
	name, input string
	opts        load.Options
	traces      []aTrace
}

var twinCases = []twinCase{
	{
		name: "lab", input: "--lab", opts: load.Options{Lab: true},
		traces: []aTrace{
			{src: "deploy/demo/hello", dst: "svc/win-demo/aspnetapp", ns: "default", proto: trace.TCP},
			// A short name from a Windows pod: the DNS client does not
			// append the search suffixes, so it is not resolved.
			{src: "deploy/aspnetapp", dst: "hello.demo", ns: "win-demo", proto: trace.TCP, port: 80},
		},
	},
	{
		name: "main-cluster", input: "-f examples/main-cluster",
		opts: load.Options{Filenames: []string{filepath.Join("..", "..", "examples", "main-cluster")}},
		traces: []aTrace{
			{src: "node/k8s-node-1", dst: "svc/kube-system/kube-dns", ns: "default", proto: trace.UDP, port: 53},
		},
	},
}

var built sync.Map // case name → *Report

// reportOf builds a case's twin and gathers its report once per test
// binary.
func reportOf(t testing.TB, tc twinCase) *Report {
	t.Helper()
	if r, ok := built.Load(tc.name); ok {
		return r.(*Report)
	}
	r, err := buildReport(tc)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	built.Store(tc.name, r)
	return r
}

func buildReport(tc twinCase) (*Report, error) {
	tc.opts.DropRaw = true
	s, err := load.Load(tc.opts)
	if err != nil {
		return nil, err
	}
	c, err := engine.Build(s)
	if err != nil {
		return nil, err
	}
	reg, err := check.Default()
	if err != nil {
		return nil, err
	}
	rep, err := check.Run(c, check.Options{Registry: reg})
	if err != nil {
		return nil, err
	}
	e, err := trace.New(c)
	if err != nil {
		return nil, err
	}
	m, err := reach.Compute(e, reach.Options{AllNamespaces: true, Nodes: true})
	if err != nil {
		return nil, err
	}
	var traces []*trace.Result
	for _, tr := range tc.traces {
		src, err := e.ParseSource(tr.src, tr.ns)
		if err != nil {
			return nil, err
		}
		dst, err := e.ParseTarget(tr.dst, tr.ns)
		if err != nil {
			return nil, err
		}
		port := tr.port
		if port == 0 {
			port = e.DefaultPort(dst, tr.proto)
		}
		traces = append(traces, e.Trace(src, dst, tr.proto, port))
	}
	return FromTwin(c, rep, m, traces), nil
}

// TestEveryPictureMatchesItsGoldenFile draws the lab and
// examples/main-cluster as the page, as SVG and as DOT of each view.
func TestEveryPictureMatchesItsGoldenFile(t *testing.T) {
	for _, tc := range twinCases {
		t.Run(tc.name, func(t *testing.T) {
			r := reportOf(t, tc)
			page, err := HTML(r, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.name, "report.html"), string(page))
			for _, v := range Views {
				svg, err := SVG(r, v)
				if err != nil {
					t.Fatalf("%s: %v", v, err)
				}
				golden.Check(t, filepath.Join("testdata", tc.name, string(v)+".svg"), string(svg))
				dot, err := DOT(r, v)
				if err != nil {
					t.Fatalf("%s: %v", v, err)
				}
				golden.Check(t, filepath.Join("testdata", tc.name, string(v)+".dot"), string(dot))
			}
		})
	}
}

// TestEveryStandaloneSVGIsWellFormedXML: a viewer that is not a browser
// (an image tool, an XML parser) reads the SVG strictly.
func TestEveryStandaloneSVGIsWellFormedXML(t *testing.T) {
	for _, tc := range twinCases {
		r := reportOf(t, tc)
		for _, v := range Views {
			svg, err := SVG(r, v)
			if err != nil {
				t.Fatal(err)
			}
			if err := wellFormed(svg); err != nil {
				t.Errorf("%s %s: %v", tc.name, v, err)
			}
		}
	}
}

func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestTheSameTwinGivesTheSameBytes builds each case's twin a second time:
// nothing in the output may depend on map order, the clock or the run.
func TestTheSameTwinGivesTheSameBytes(t *testing.T) {
	for _, tc := range twinCases {
		first := reportOf(t, tc)
		second, err := buildReport(tc)
		if err != nil {
			t.Fatal(err)
		}
		a, err := HTML(first, tc.input)
		if err != nil {
			t.Fatal(err)
		}
		b, err := HTML(second, tc.input)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two builds of the same input give different pages:\n%s", tc.name, golden.Diff(string(a), string(b)))
		}
	}
}

// TestThePageFetchesNothing: no element of the page loads anything — no
// src, no stylesheet link, no url() in the style — and its
// Content-Security-Policy forbids whatever would.
func TestThePageFetchesNothing(t *testing.T) {
	for _, tc := range twinCases {
		page, err := HTML(reportOf(t, tc), tc.input)
		if err != nil {
			t.Fatal(err)
		}
		s := string(page)
		for _, bad := range []string{" src=", "<link", "url(", "@import", "<script", "<iframe", "<object", "<embed", "<img"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s: the page holds %q", tc.name, bad)
			}
		}
		if !strings.Contains(s, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
			t.Errorf("%s: the page has no Content-Security-Policy forbidding fetches", tc.name)
		}
		if n := strings.Count(s, "<svg "); n < 2 {
			t.Errorf("%s: %d inline SVG pictures, want the topology and the heat map at least", tc.name, n)
		}
	}
}
