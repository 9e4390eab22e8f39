package trace

import (
	"strings"
	"testing"
)

// Seed 000, "Проверка: Windows-под, Service, DNS и связность": the TTLs it
// shows and explains come out of where routing decrements happen.
func TestTTLsOfTheSeedComeFromTheRoutingSteps(t *testing.T) {
	e := lab(t)
	for _, tc := range []struct {
		name      string
		src, dst  string
		ns        string
		wantReply int
		wantSteps []string // components that decrement the reply's TTL
	}{
		{name: "a Linux pod pinging aspnetapp sees 126: Windows starts at 128, the HNS gateway and the Linux node's kernel route the reply",
			src: "pod/check", dst: "172.21.41.6", ns: "default", wantReply: 126,
			wantSteps: []string{"HNS distributed router", "kernel routing (ip_forward)"}},
		{name: "the Linux node itself pinging aspnetapp sees 127: only the HNS gateway routes the reply",
			src: "node/k8s-lab-node-1", dst: "172.21.41.6", wantReply: 127,
			wantSteps: []string{"HNS distributed router"}},
		{name: "aspnetapp pinging hello sees 63: Linux starts at 64 and its node's kernel forwards the reply into the overlay",
			src: "deploy/aspnetapp", dst: "172.21.172.4", ns: "win-demo", wantReply: 63,
			wantSteps: []string{"kernel routing (ip_forward)"}},
		{name: "a Linux pod pinging a Linux pod on another node sees 62: both kernels forward",
			src: "pod/check", dst: "172.21.211.25", ns: "default", wantReply: 62,
			wantSteps: []string{"kernel routing (ip_forward)", "kernel routing (ip_forward)"}},
		{name: "a Windows pod pinging a Windows pod of the same node sees 128: they share a subnet, nothing routes",
			src: "pod/aspnetapp-769559d8ff-dkp9z", dst: "172.21.41.5", ns: "win-demo", wantReply: 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, ICMP, 0)
			if !r.Delivered {
				t.Fatalf("not delivered: %s\n%s", r.Reason, textOf(r))
			}
			if r.ReplyTTL != tc.wantReply {
				t.Errorf("reply ttl %d, want %d\n%s", r.ReplyTTL, tc.wantReply, textOf(r))
			}
			var steps []string
			for _, h := range r.Hops {
				if h.Leg == LegReply && h.After != nil && h.After.TTL < h.Before.TTL {
					c := h.Component
					if i := strings.Index(c, " (gateway"); i > 0 {
						c = c[:i]
					}
					steps = append(steps, c)
				}
			}
			if strings.Join(steps, "|") != strings.Join(tc.wantSteps, "|") {
				t.Errorf("decrementing steps %q, want %q", steps, tc.wantSteps)
			}
		})
	}
}
