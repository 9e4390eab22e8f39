package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

var (
	pingProbe = Probe{Proto: trace.ICMP, FromNS: "kh-pod.demo.a", From: "pod/demo/a", To: "pod/demo/b", Addr: "172.21.0.2"}
	svcProbe  = Probe{Proto: trace.TCP, FromNS: "kh-pod.demo.a", From: "pod/demo/a", To: "svc/demo/s", Addr: "10.96.0.5", Port: 80}
	dnsProbe  = Probe{Proto: trace.UDP, DNS: true, FromNS: "kh-pod.demo.a", From: "pod/demo/a", To: "s.demo.svc.cluster.local", Name: "s.demo.svc.cluster.local", Server: "10.96.0.10"}
)

func translated(pods ...string) []trace.Translation {
	t := trace.Translation{}
	for _, p := range pods {
		t.Candidates = append(t.Candidates, trace.Backend{Pod: p})
	}
	return []trace.Translation{t}
}

func TestCompare(t *testing.T) {
	win := map[string]bool{"win-1": true}
	for _, tc := range []struct {
		name        string
		p           Probe
		real        Real
		tw          trace.Result
		agree, skip bool
		why         string
	}{
		{"a ping both deliver with the same ttl agrees", pingProbe,
			Real{Delivered: true, Outcome: OutDelivered, TTL: 62}, trace.Result{Outcome: trace.Delivered, Delivered: true, ReplyTTL: 62}, true, false, ""},
		{"a ping whose reply ttl differs disagrees", pingProbe,
			Real{Delivered: true, Outcome: OutDelivered, TTL: 63}, trace.Result{Outcome: trace.Delivered, Delivered: true, ReplyTTL: 62}, false, false, "reply ttl real 63, trace 62"},
		{"a ping lost on the kernel that trace delivers disagrees", pingProbe,
			Real{Outcome: OutTimeout}, trace.Result{Outcome: trace.Delivered, Delivered: true, Reason: "r"}, false, false, "real timeout, trace delivered"},
		{"refused on the kernel and rejected by trace agree: neither delivers", svcProbe,
			Real{Outcome: OutRefused}, trace.Result{Outcome: trace.Rejected}, true, false, ""},
		{"a Service answered by one of trace's candidates agrees", svcProbe,
			Real{Delivered: true, Outcome: OutDelivered, Answerer: "pod demo/b2"}, trace.Result{Outcome: trace.Delivered, Delivered: true, Translations: translated("demo/b1", "demo/b2")}, true, false, ""},
		{"a Service answered by a pod trace does not pick from disagrees", svcProbe,
			Real{Delivered: true, Outcome: OutDelivered, Answerer: "pod demo/x"}, trace.Result{Outcome: trace.Delivered, Delivered: true, Translations: translated("demo/b1")}, false, false, "answered by pod demo/x, trace has pod demo/b1"},
		{"a drop decided on a Windows node is not compared", svcProbe,
			Real{Delivered: true, Outcome: OutDelivered}, trace.Result{Outcome: trace.Dropped, AtNode: "win-1", AtComp: "VFP"}, true, true, ""},
		{"a drop decided on a Linux node is compared", svcProbe,
			Real{Delivered: true, Outcome: OutDelivered}, trace.Result{Outcome: trace.Dropped, AtNode: "linux-1"}, false, false, "real delivered, trace dropped"},
		{"what trace cannot say is not compared", pingProbe,
			Real{Outcome: OutTimeout}, trace.Result{Outcome: trace.NotModeled}, true, true, ""},
		{"a DNS answer with trace's address agrees", dnsProbe,
			Real{Delivered: true, Outcome: OutDelivered, Addrs: []string{"10.96.0.5"}}, trace.Result{Resolved: "10.96.0.5"}, true, false, ""},
		{"a DNS answer that is lost disagrees with a resolving trace", dnsProbe,
			Real{Outcome: OutTimeout}, trace.Result{Resolved: "10.96.0.5"}, false, false, "the real answer is none, trace resolves 10.96.0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw := tc.tw
			r := Compare(tc.p, tc.real, &tw, win)
			if r.Agree != tc.agree || (r.Skipped != "") != tc.skip || !strings.Contains(r.Why, tc.why) {
				t.Errorf("got agree %v skipped %q why %q; want agree %v skipped %v why containing %q", r.Agree, r.Skipped, r.Why, tc.agree, tc.skip, tc.why)
			}
		})
	}
}

func TestResultsPrintDisagreementsSkipsAndTheCount(t *testing.T) {
	win := map[string]bool{"win-1": true}
	rs := []Result{
		Compare(pingProbe, Real{Delivered: true, Outcome: OutDelivered, TTL: 62}, &trace.Result{Outcome: trace.Delivered, Delivered: true, ReplyTTL: 62}, win),
		Compare(pingProbe, Real{Delivered: true, Outcome: OutDelivered, TTL: 63}, &trace.Result{Outcome: trace.Delivered, Delivered: true, ReplyTTL: 62}, win),
		Compare(svcProbe, Real{Delivered: true, Outcome: OutDelivered, Answerer: "pod demo/b1"}, &trace.Result{Outcome: trace.Dropped, AtNode: "win-1", AtComp: "VFP ACL", Reason: "denied"}, win),
	}
	var b strings.Builder
	if err := WriteResults(&b, rs, false); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/results.txt", b.String())
}

// A panic while sending a probe reaches the caller of the probes, after
// the workers end, however many of them panic: the command reports it
// instead of the process dying, and no worker waits forever.
func TestAPanicWhileSendingAProbeIsRaisedInTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name  string
		panic func(i int) bool
	}{
		{"one probe of many panics", func(i int) bool { return i == 17 }},
		{"every probe panics", func(int) bool { return true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := make([]Probe, 100)
			for i := range ps {
				ps[i] = Probe{Port: i}
			}
			run := func(p Probe) Real {
				if tc.panic(p.Port) {
					panic(fmt.Sprintf("probe %d broke", p.Port))
				}
				return Real{Delivered: true}
			}
			got := func() (v any) {
				defer func() { v = recover() }()
				runProbes(context.Background(), ps, nil, run, nil)
				return nil
			}()
			p, ok := got.(*crash.Panic)
			if !ok {
				t.Fatalf("the caller recovered %#v, want a *crash.Panic", got)
			}
			if !strings.HasPrefix(fmt.Sprint(p.Value), "probe ") || !strings.Contains(string(p.Stack), "runProbes") {
				t.Errorf("the panic is %v with stack\n%s\nwant a probe's, raised in a worker", p.Value, p.Stack)
			}
		})
	}
}
