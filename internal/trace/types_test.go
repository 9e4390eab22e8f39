package trace

import "testing"

// What a program reads of a trace (reach) is typed: the point that decided
// and why, not the wording of the hop.
func TestATraceSaysWhereAndWhyItStoppedInTypes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policies []string
		src, ns  string
		dst      string
		proto    Proto
		port     int
		drop     DropReason
		at       Point
	}{
		{name: "a delivered trace has no drop reason",
			src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 8080, drop: ReasonNone, at: PointPath},
		{name: "a Linux pod's ingress policy denies at the ingress point",
			policies: []string{helloPortRangeShort}, src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 8080,
			drop: ReasonPolicyDenied, at: PointIngressPolicy},
		{name: "a Windows endpoint's ACLs deny at the ingress point",
			policies: []string{denyAllIngressWinDemo}, src: "pod/check", ns: "default", dst: "172.21.41.6", proto: TCP, port: 8080,
			drop: ReasonPolicyDenied, at: PointIngressPolicy},
		{name: "an egress default-deny denies at the egress point",
			policies: []string{denyEgressDemo, allowDNSDemo}, src: "deploy/hello", ns: "demo", dst: "172.21.41.6", proto: TCP, port: 8080,
			drop: ReasonPolicyDenied, at: PointEgressPolicy},
		{name: "a port nothing listens on is refused at the pod's listener",
			src: "pod/check", ns: "default", dst: "172.21.211.25", proto: TCP, port: 9999, drop: ReasonNoListener, at: PointListener},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := lab(t)
			if len(tc.policies) > 0 {
				e = buildWith(t, tc.policies...)
			}
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, tc.port)
			if r.Drop != tc.drop || r.At != tc.at {
				t.Errorf("drop %s at %s, want %s at %s (%s at %s: %s)", r.Drop, r.At, tc.drop, tc.at, r.Outcome, r.AtComp, r.Reason)
			}
		})
	}
}

func TestEnumsNameThemselves(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"a drop reason", ReasonPolicyDenied.String(), "POLICY_DENIED"},
		{"a point", PointEgressPolicy.String(), "egress-policy"},
		{"a value past the end", DropReason(42).String(), "DropReason(42)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
}
