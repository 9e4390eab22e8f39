package trace

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

// Read-only views of the compiled state, for analyses that summarise many
// traces (internal/reach) without walking each one.

// LinuxNode is the compiled Linux dataplane of a node, or nil.
func (e *Engine) LinuxNode(name string) *linux.Node {
	if nd := e.nodes[name]; nd != nil {
		return nd.l()
	}
	return nil
}

// WindowsNode is the compiled HNS state of a Windows node, or nil.
func (e *Engine) WindowsNode(name string) *windows.Node {
	if nd := e.nodes[name]; nd != nil {
		return nd.w()
	}
	return nil
}

// ACLVerdict is what the VFP ACL layer of a Windows pod's HNS endpoint
// decides for a new connection: the first matching Switch ACL by priority,
// as the ACL_ENDPOINT_LAYER hop of a trace takes it.
type ACLVerdict struct {
	Allowed bool
	// Rule is the matching ACL ("Block in priority 1001 (policy-…)") or
	// "no ACL of the N matches".
	Rule string
	// HostRule: the match is Felix's allow-host-to-endpoint rule.
	HostRule bool
	// Component is the hop's component without the endpoint's name
	// ("VFP ACL_ENDPOINT_LAYER ACL_ENDPOINT_GROUP_IPV4_IN").
	Component string
	// Skipped lists what Felix did not program on the endpoint for the
	// direction (ACLReport's skipped rules, "source: reasons").
	Skipped []string
}

// EndpointACL evaluates the HNS ACLs of a Windows pod's endpoint for a new
// connection: dir Ingress is peer → the pod's port, Egress the pod → peer's
// port (the client's ephemeral port is unknown and matches any port list,
// as in a trace). ok is false when the pod is no Windows workload with an
// endpoint on its node.
func (e *Engine) EndpointACL(pod *corev1.Pod, dir policy.Direction, peer netip.Addr, proto Proto, port int) (v ACLVerdict, ok bool) {
	if pod == nil {
		return v, false
	}
	nd := e.nodes[pod.Spec.NodeName]
	if nd == nil || !nd.windows {
		return v, false
	}
	a, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil {
		return v, false
	}
	ep := nd.eps()[a]
	if ep == nil || ep.IsRemoteEndpoint || ep.Kind != windows.KindPod {
		return v, false
	}
	d, group := "In", "ACL_ENDPOINT_GROUP_IPV4_IN"
	var acl *windows.ACL
	var n int
	if dir == policy.Egress {
		d, group = "Out", "ACL_ENDPOINT_GROUP_IPV4_OUT"
		acl, n = nd.matchACL(ep, d, a, peer, proto, 0, port)
	} else {
		acl, n = nd.matchACL(ep, d, a, peer, proto, port, 0)
	}
	v.Component = "VFP ACL_ENDPOINT_LAYER " + group
	v.Allowed = acl == nil || acl.Action == "Allow"
	if acl == nil {
		v.Rule = fmt.Sprintf("no ACL of the %d matches", n)
	} else {
		id := acl.ID
		if id == "" {
			id = "end-of-tier"
			if acl.Action == "Allow" {
				id = "allow"
			}
		}
		v.Rule = fmt.Sprintf("%s %s priority %d (%s)", acl.Action, strings.ToLower(acl.Direction), acl.Priority, id)
		v.HostRule = acl.ID == "allow-host-to-endpoint"
	}
	for _, s := range ep.ACLReport {
		if s.Direction == d && s.Skipped > 0 {
			v.Skipped = append(v.Skipped, fmt.Sprintf("%s: %s", s.Source, strings.Join(s.Reasons, "; ")))
		}
	}
	return v, true
}

// Felix is the engine's Felix calculation, which its Linux tables and
// decisions and its Windows ACLs read.
func (e *Engine) Felix() *felix.Calc { return e.felix }

// WindowsCompiler is the engine's compiler of Windows nodes, made on
// first use in a cluster with no Windows node (nil if it cannot be made:
// no node of such a cluster is compiled with it).
func (e *Engine) WindowsCompiler() *windows.Compiler {
	e.winOnce.Do(func() { e.win, _ = e.p.WindowsCompiler() })
	return e.win
}

// Views for the console's client tools, which walk the twin through the
// engine.

// Lookup is what a tool's resolver answers for a host.
type Lookup struct {
	OK      bool
	Addr    netip.Addr
	Outcome Outcome
	Reason  string
	// Timeout is how long the resolver waits before it gives up, in
	// seconds, when the query does not get through (0 otherwise).
	Timeout int
}

// Lookup resolves a host the way the source's resolver does; an address
// needs no lookup.
func (e *Engine) Lookup(src Source, host string) Lookup {
	if a, err := netip.ParseAddr(host); err == nil {
		return Lookup{OK: true, Addr: a}
	}
	r := e.resolve(src, host)
	return Lookup{OK: r.ok, Addr: r.addr, Outcome: r.outcome, Reason: r.reason, Timeout: r.timeout}
}

// PodAt is the pod with an address, or nil.
func (e *Engine) PodAt(a netip.Addr) *corev1.Pod { return e.p.PodByIP(a) }

// NodeOS is a node's operating system (linux for a node the twin lacks).
func (e *Engine) NodeOS(name string) string { return e.nodeOS(e.nodes[name]) }

// DNSSource is the source as the DNS model sees it; ok is false for an
// address outside the cluster.
func (e *Engine) DNSSource(src Source) (dns.Source, bool) { return e.dnsSource(src) }
