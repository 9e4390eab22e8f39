package hosttools

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestW32tmReportsThePeerAndTheNodesClock(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	named := &model.Cluster{}
	named.Network.Gateway = "10.0.0.1"
	named.Network.DNS = []hybrid.DNSRecord{{Name: "ntp.example.net", Address: "10.0.0.1"}}
	for _, tc := range []struct {
		name     string
		c        *model.Cluster
		offset   time.Duration
		args     string
		want     []string
		wantNote string
		wantExit int
	}{
		{"the gateway's name is the peer in client mode", named, 0, "/query /status",
			[]string{"Source: ntp.example.net,0x8", "ReferenceId: 0x0A000001 (source IP:  10.0.0.1)", "Last Successful Sync Time: 12/1/2026 11:52:32 AM"}, "simulated: Leap Indicator", 0},
		{"without a named gateway the source is Windows' default", &model.Cluster{}, 0, "/query /source",
			[]string{"time.windows.com,0x9"}, "Windows' default for a workgroup machine", 0},
		{"a clock ahead shifts the sync time", named, 2 * time.Hour, "/query /status",
			[]string{"Last Successful Sync Time: 12/1/2026 1:52:00 PM"}, "runs 2h0m0s off", 0},
		{"a clock days off is beyond W32Time's correction", named, -72 * time.Hour, "/query /status",
			[]string{"Last Successful Sync Time: 11/28/2026 11:54:40 AM"}, "does not step a clock more than 48h off", 0},
		{"other queries are refused", named, 0, "/resync", nil, "are emulated", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w32tm(tc.c, &host.Host{OS: hybrid.OSWindows, ClockOffset: tc.offset}, strings.Fields(tc.args), now)
			if r.Code != tc.wantExit {
				t.Fatalf("exit %d, want %d", r.Code, tc.wantExit)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("missing %q in\n%s", w, r.Stdout)
				}
			}
			if !strings.Contains(r.Stderr, tc.wantNote) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.wantNote)
			}
		})
	}
}
