package reportcmd

import "testing"

// FuzzReportTraceSpec: any --trace is read or refused with a message,
// never a panic; what is read names both ends and a port in range.
func FuzzReportTraceSpec(f *testing.F) {
	for _, s := range []string{"pod/a pod/b", "-n demo deploy/hello svc/win-demo/aspnetapp --port 80 --proto udp", "x", "--port -1 a b", "a b c", "--proto=icmp a b", "-- a b", "--help"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := parseTraceSpec(s)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("%q: an empty message", s)
			}
			return
		}
		if spec.src == "" || spec.dst == "" || spec.port < 0 || spec.port > 65535 || spec.proto == "" {
			t.Errorf("%q read as %+v", s, spec)
		}
	})
}
