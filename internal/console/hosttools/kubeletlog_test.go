package hosttools

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestKubeletLogTailShowsWhatTheEngineDerived(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	x509 := "k8s-lab-win-1: the kubelet's requests fail: Get \"https://api:6443/api/v1/nodes/k8s-lab-win-1?timeout=10s\": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time X is before Y"
	failing := &model.Cluster{Notes: []model.Note{{Object: model.Key{Kind: "Node", Name: "k8s-lab-win-1"}, Message: x509}}}
	healthy := &model.Cluster{}
	running := []host.Service{{Name: hybrid.ServiceKubelet, Status: hybrid.ServiceRunning}}
	stopped := []host.Service{{Name: hybrid.ServiceKubelet, Status: hybrid.ServiceStopped}}
	const log = `C:\var\log\kubelet\kubelet.err.log`
	for _, tc := range []struct {
		name     string
		c        *model.Cluster
		services []host.Service
		args     []string
		lines    int
		last     string
		exit     int
		wantNote string
	}{
		{"a healthy kubelet logs its startup", healthy, running, []string{log, "-Tail", "10"}, 3, `"Successfully registered node" node="k8s-lab-win-1"`, 0, "simulated"},
		{"a failing kubelet ends in the status loop's give-up", failing, running, []string{log, "-Tail", "4"}, 4, `err="update node status exceeds retry count"`, 0, "requests to the API server fail"},
		{"the retries carry the engine's x509 error", failing, running, []string{"-Path", log, "-Tail", "2"}, 2, `err="update node status exceeds retry count"`, 0, ""},
		{"a stopped kubelet's lines are not modelled", healthy, stopped, []string{log, "-Tail", "5"}, 0, "", 0, "stopped"},
		{"the out log is empty", healthy, running, []string{`C:\var\log\kubelet\kubelet.out.log`, "-Tail", "5"}, 0, "", 0, "empty"},
		{"a bad tail is a binding error", healthy, running, []string{log, "-Tail", "x"}, 0, "", 1, "Cannot bind parameter 'Tail'"},
		{"another file is not emulated", healthy, running, []string{`C:\k\config`}, 0, "", 1, "not emulated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &host.Host{Node: "k8s-lab-win-1", OS: hybrid.OSWindows, Services: tc.services}
			r := getContent(tc.c, h, tc.args, now)
			if r.Code != tc.exit {
				t.Fatalf("exit %d, want %d: %s", r.Code, tc.exit, r.Stderr)
			}
			got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			if r.Stdout == "" {
				got = nil
			}
			if len(got) != tc.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(got), tc.lines, r.Stdout)
			}
			if tc.last != "" && !strings.HasSuffix(got[len(got)-1], tc.last) {
				t.Errorf("last line %q, want it to end %q", got[len(got)-1], tc.last)
			}
			if tc.c == failing && tc.lines > 1 && !strings.Contains(got[len(got)-2], `x509: certificate has expired or is not yet valid`) {
				t.Errorf("the retry line lacks the engine's error: %q", got[len(got)-2])
			}
			if !strings.Contains(r.Stderr, tc.wantNote) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.wantNote)
			}
		})
	}
}
