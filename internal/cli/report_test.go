package cli

import (
	"strings"
	"testing"
)

func TestReportWritesEachFormatAndRefusesBadInputWithExitTwo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		prefix string // stdout starts with it (exit 0)
		has    string // stdout or stderr holds it
	}{
		{"the page of the lab with a trace", []string{"report", "--lab", "--trace", "-n demo deploy/hello svc/win-demo/aspnetapp"}, 0,
			"<!DOCTYPE html>", `<li class="trace" data-outcome="delivered">`},
		{"an undelivered trace is drawn, not a failure", []string{"report", "--lab", "--trace", "-n win-demo deploy/aspnetapp hello.demo --port 80"}, 0,
			"<!DOCTYPE html>", `data-outcome="unresolved"`},
		{"the topology alone as SVG", []string{"report", "--lab", "-o", "svg"}, 0, `<?xml version="1.0" encoding="UTF-8"?>`, `data-picture="topology"`},
		{"the reach heat map as SVG", []string{"report", "--lab", "-o", "svg", "--view", "reach"}, 0, "<?xml", `data-picture="reach"`},
		{"the topology as DOT", []string{"report", "--lab", "-o", "dot"}, 0, "graph topology {", `"node/k8s-lab-win-1"`},
		{"a trace as DOT", []string{"report", "--lab", "-o", "dot", "--view", "trace", "--trace", "node/k8s-lab-node-1 svc/kube-system/kube-dns --proto udp --port 53"}, 0,
			"digraph traces {", `"cluster_trace_1"`},
		{"--view with the page is a usage error", []string{"report", "--lab", "--view", "reach"}, 2, "", "--view goes with -o svg or -o dot"},
		{"an unknown view", []string{"report", "--lab", "-o", "svg", "--view", "cells"}, 2, "", `--view "cells": use topology, reach or trace`},
		{"the trace view without a trace", []string{"report", "--lab", "-o", "dot", "--view", "trace"}, 2, "", "give the trace to draw with --trace"},
		{"an unknown format", []string{"report", "--lab", "-o", "png"}, 2, "", `--output "png": use html, svg or dot`},
		{"a trace with one end", []string{"report", "--lab", "--trace", "pod/x"}, 2, "", "give SRC and DST"},
		{"a trace with a bad protocol", []string{"report", "--lab", "--trace", "pod/x pod/y --proto sctp"}, 2, "", `--proto "sctp"`},
		{"a trace with an unknown flag", []string{"report", "--lab", "--trace", "pod/x pod/y --ttl 3"}, 2, "", "unknown flag: --ttl"},
		{"a trace naming no pod", []string{"report", "--lab", "--trace", "pod/nope svc/kubernetes"}, 2, "", `pods "nope" not found`},
		{"arguments are refused", []string{"report", "--lab", "extra"}, 2, "", "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%.500s%s", code, tc.code, out, errOut)
			}
			if !strings.HasPrefix(out, tc.prefix) {
				t.Errorf("stdout starts %.80q, want %q", out, tc.prefix)
			}
			if !strings.Contains(out+errOut, tc.has) {
				t.Errorf("output lacks %q:\n%.500s\n%s", tc.has, out, errOut)
			}
		})
	}
}
