package hosttools

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Probe is what the twin's trace says of one connection attempt from the
// node: whether a TCP connection or an ICMP echo gets an answer. The
// console fills it from internal/trace, which hosttools does not walk
// itself.
type Probe struct {
	// Delivered: the connection (or echo) was answered.
	Delivered bool
	// RTTMillis is the twin's round-trip model for the first packet.
	RTTMillis float64
	// Assumed: the answer rests on the trace's assumption that a host
	// outside the cluster answers.
	Assumed bool
}

// Prober resolves names through the node's resolver and walks probes.
type Prober struct {
	// Resolve is the node's name resolution; ok is false when the name
	// has no address.
	Resolve func(host string) (addr netip.Addr, ok bool, err error)
	// Reach walks one probe: port 0 is an ICMP echo.
	Reach func(addr netip.Addr, port int) (Probe, error)
}

// IsTestNetConnection reports whether a command line is the
// NetTCPIP module's Test-NetConnection (or its alias tnc).
func IsTestNetConnection(argv []string) bool {
	words, _, ok := splitLine(argv)
	if !ok || len(words) == 0 {
		return false
	}
	w := strings.ToLower(words[0])
	return w == "test-netconnection" || w == "tnc"
}

// parseTestNetConnection reads [-ComputerName] HOST [-Port N]; parameter
// names may be shortened to an unambiguous prefix, as PowerShell allows
// (-Computer, -Port; -CommonTCPPort is not modelled).
func parseTestNetConnection(words []string) (host string, port int, bad string) {
	for i := 1; i < len(words); i++ {
		a := words[i]
		if !strings.HasPrefix(a, "-") {
			if host != "" {
				return "", 0, "a second positional argument " + a
			}
			host = a
			continue
		}
		p := strings.ToLower(strings.TrimPrefix(a, "-"))
		if i+1 >= len(words) {
			return "", 0, "parameter " + a + " without a value"
		}
		v := words[i+1]
		i++
		switch {
		case strings.HasPrefix("computername", p) && len(p) >= 2:
			host = v
		case strings.HasPrefix("port", p) && len(p) >= 1:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return "", 0, "cannot bind -Port " + v + ": a port number 1-65535 is needed"
			}
			port = n
		default:
			return "", 0, "parameter " + a + " is not emulated"
		}
	}
	if host == "" {
		// Without a computer name the cmdlet tests internetbeacon.msedge.net,
		// a host outside any model.
		return "", 0, "Test-NetConnection without -ComputerName (it probes internetbeacon.msedge.net)"
	}
	return host, port, ""
}

// TestNetConnection is Test-NetConnection HOST [-Port N] on a Windows
// node, printed as PowerShell's default view of the result object
// (NetConnectionResults, the NetTCPIP module's Test-NetConnection.psm1):
// a failed TCP test is followed by a ping, whose result is then shown
// too, and each failure is a WARNING line before the object. The cmdlet
// itself succeeds, so the exit code is 0 even when the test fails.
// vSwitch says HNS has moved the host's address to "vEthernet (<NIC>)".
func TestNetConnection(c *model.Cluster, node string, vSwitch bool, argv []string, probe Prober) (Result, error) {
	words, filter, ok := splitLine(argv)
	if !ok || filter != "" {
		return Result{Stderr: "kubectl-hybrid: Test-NetConnection in a pipeline is not emulated\n", Code: 1}, nil
	}
	host, port, bad := parseTestNetConnection(words)
	if bad != "" {
		return Result{Stderr: "kubectl-hybrid: Test-NetConnection: " + bad + "\n", Code: 1}, nil
	}
	_, hi := nodeAndHost(c, node)
	alias := hi.nic
	if vSwitch {
		alias = "vEthernet (" + hi.nic + ")"
	}
	note := "kubectl-hybrid: InterfaceAlias and SourceAddress are the host adapter's; the reachability is the twin's trace from the node"
	var warn strings.Builder
	var out []field
	a, resolved, err := probe.Resolve(host)
	if err != nil {
		return Result{}, err
	}
	if !resolved {
		// The cmdlet warns and returns an object with no address.
		fmt.Fprintf(&warn, "WARNING: Name resolution of %s failed\n", host)
		out = []field{{"ComputerName", host}, {"RemoteAddress", ""}, {"InterfaceAlias", ""}, {"SourceAddress", ""}, {"PingSucceeded", "False"}}
		return Result{Stdout: warn.String() + formatList(out), Stderr: note + "\n"}, nil
	}
	out = append(out, field{"ComputerName", host}, field{"RemoteAddress", a.String()})
	if port > 0 {
		out = append(out, field{"RemotePort", strconv.Itoa(port)})
	}
	out = append(out, field{"InterfaceAlias", alias}, field{"SourceAddress", hi.addr})
	tcpOK := false
	assumed := false
	if port > 0 {
		t, err := probe.Reach(a, port)
		if err != nil {
			return Result{}, err
		}
		tcpOK, assumed = t.Delivered, t.Assumed
		if !tcpOK {
			fmt.Fprintf(&warn, "WARNING: TCP connect to (%s : %d) failed\n", a, port)
		}
	}
	if port == 0 || !tcpOK {
		p, err := probe.Reach(a, 0)
		if err != nil {
			return Result{}, err
		}
		assumed = assumed || p.Assumed
		if p.Delivered {
			rtt := int(math.Floor(p.RTTMillis))
			out = append(out, field{"PingSucceeded", "True"}, field{"PingReplyDetails (RTT)", fmt.Sprintf("%d ms", rtt)})
			note += "; the RTT is the twin's round-trip model (simulated)"
		} else {
			fmt.Fprintf(&warn, "WARNING: Ping to %s failed with status: TimedOut\n", a)
			out = append(out, field{"PingSucceeded", "False"}, field{"PingReplyDetails (RTT)", "0 ms"})
		}
	}
	if port > 0 {
		out = append(out, field{"TcpTestSucceeded", psBool(tcpOK)})
	}
	if assumed {
		note += "; " + a.String() + " is outside the cluster and is assumed to answer"
	}
	return Result{Stdout: warn.String() + formatList(out), Stderr: note + "\n"}, nil
}

// psBool is how PowerShell prints a boolean.
func psBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

type field struct{ k, v string }

// formatList is PowerShell's list view: a blank line, "Name : Value" with
// the names padded to the longest, and a blank line after.
func formatList(fields []field) string {
	w := 0
	for _, f := range fields {
		w = max(w, len(f.k))
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "%-*s : %s\n", w, f.k, f.v)
	}
	b.WriteString("\n\n")
	return b.String()
}
