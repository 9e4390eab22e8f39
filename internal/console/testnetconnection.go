package console

import (
	"net/netip"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/hosttools"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// testNetConnection runs Test-NetConnection on a Windows node: the name
// resolves through the node's resolver as ping and curl.exe do
// (trace.Engine.Lookup, the DNS model's view from the node), and the TCP
// connection or echo walks the twin's trace from the node.
func testNetConnection(tw Twin, name string, vSwitch bool, argv []string) (Output, error) {
	e, err := tw.Engine()
	if err != nil {
		return Output{}, err
	}
	src, err := e.ParseSource("node/"+name, "")
	if err != nil {
		return Output{}, &NotFoundError{Msg: err.Error()}
	}
	t := tracer{e}
	p := hosttools.Prober{
		Resolve: func(host string) (netip.Addr, bool, error) {
			l := e.Lookup(src, host)
			if !l.OK && l.Outcome == trace.NotModeled {
				return netip.Addr{}, false, notModeled("%s", l.Reason)
			}
			return l.Addr, l.OK, nil
		},
		Reach: func(a netip.Addr, port int) (hosttools.Probe, error) {
			proto := trace.TCP
			if port == 0 {
				proto = trace.ICMP
			}
			r := t.traceTo(src, a, proto, port)
			if r.Outcome == trace.NotModeled {
				return hosttools.Probe{}, notModeled("%s", r.Reason)
			}
			pr := hosttools.Probe{Delivered: r.Delivered, Assumed: r.Assumed}
			if proto == trace.ICMP {
				pr.Delivered = r.Delivered && r.ReplyTTL > 0
				pr.RTTMillis = pingTimes(r, 1)[0]
			}
			return pr, nil
		},
	}
	r, err := hosttools.TestNetConnection(tw.Cluster(), name, vSwitch, argv, p)
	return Output{Stdout: r.Stdout, Stderr: r.Stderr, Code: r.Code}, err
}
