package hosttools

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestTestNetConnectionReadsItsParameters(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		host string
		port int
		bad  bool
	}{
		{"a positional host and a port", "Test-NetConnection api.example.com -Port 6443", "api.example.com", 6443, false},
		{"a named computer and a shortened port", "tnc -ComputerName api.example.com -P 443", "api.example.com", 443, false},
		{"a host alone pings", "Test-NetConnection 10.0.0.1", "10.0.0.1", 0, false},
		{"no host is refused", "Test-NetConnection", "", 0, true},
		{"a port out of range is refused", "Test-NetConnection h -Port 0", "", 0, true},
		{"a port without a value is refused", "Test-NetConnection h -Port", "", 0, true},
		{"an unknown parameter is refused", "Test-NetConnection h -CommonTCPPort HTTP", "", 0, true},
		{"two hosts are refused", "Test-NetConnection a b", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, port, bad := parseTestNetConnection(fields(tc.line))
			if (bad != "") != tc.bad || host != tc.host || port != tc.port {
				t.Fatalf("got %q %d %q, want %q %d bad=%v", host, port, bad, tc.host, tc.port, tc.bad)
			}
		})
	}
}

func TestTestNetConnectionShowsWhatTheProbesFound(t *testing.T) {
	addr := netip.MustParseAddr("192.0.2.10")
	for _, tc := range []struct {
		name             string
		line             string
		resolves         bool
		tcp, icmp        bool
		want, wantAbsent []string
	}{
		{"an open port shows only the TCP test", "Test-NetConnection h -Port 443", true, true, true,
			[]string{"RemotePort       : 443", "TcpTestSucceeded : True"}, []string{"PingSucceeded", "WARNING"}},
		{"a closed port falls back to a ping", "Test-NetConnection h -Port 443", true, false, true,
			[]string{"WARNING: TCP connect to (192.0.2.10 : 443) failed", "PingSucceeded          : True", "TcpTestSucceeded       : False"}, nil},
		{"an unanswered ping warns", "Test-NetConnection h", true, false, false,
			[]string{"WARNING: Ping to 192.0.2.10 failed with status: TimedOut", "PingSucceeded          : False"}, []string{"TcpTestSucceeded"}},
		{"a name without an address warns", "Test-NetConnection h -Port 443", false, false, false,
			[]string{"WARNING: Name resolution of h failed", "PingSucceeded  : False"}, []string{"192.0.2.10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Prober{
				Resolve: func(string) (netip.Addr, bool, error) { return addr, tc.resolves, nil },
				Reach: func(_ netip.Addr, port int) (Probe, error) {
					if port == 0 {
						return Probe{Delivered: tc.icmp, RTTMillis: 1.4}, nil
					}
					return Probe{Delivered: tc.tcp}, nil
				},
			}
			r, err := TestNetConnection(&model.Cluster{}, "n", false, fields(tc.line), p)
			if err != nil || r.Code != 0 {
				t.Fatalf("%v, exit %d", err, r.Code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout, w) {
					t.Errorf("missing %q in\n%s", w, r.Stdout)
				}
			}
			for _, w := range tc.wantAbsent {
				if strings.Contains(r.Stdout, w) {
					t.Errorf("unexpected %q in\n%s", w, r.Stdout)
				}
			}
		})
	}
}
