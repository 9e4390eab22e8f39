package noderules

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Host firewalls and the network between hosts, from the Cluster kind.
func FirewallRules() []rule.Rule {
	return []rule.Rule{ruleVXLANBlocked, ruleKubeletBlocked, ruleAPIBlocked}
}

// blockedFlow is traffic from some hosts to one host that a firewall rule
// blocks.
type blockedFlow struct {
	dst  string
	rule int
	srcs []string
}

func ruleApplies(r hybrid.FirewallRule, dst, proto string, port int32) bool {
	if !strings.EqualFold(r.Protocol, proto) {
		return false
	}
	if len(r.Hosts) > 0 {
		found := false
		for _, h := range r.Hosts {
			if h == dst {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	if len(r.Ports) > 0 {
		found := false
		for _, p := range r.Ports {
			if p == port {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// blockedFlows evaluates the Cluster kind's firewall (first match wins,
// unmatched traffic is allowed) for proto/port from every source host to
// every destination host. Destinations with the same applicable rules are
// evaluated once, so the cost is sources × rules per distinct rule set, not
// sources × destinations.
func blockedFlows(x *rule.Context, proto string, port int32, srcs, dsts []hybrid.Host) []blockedFlow {
	rules := x.Cluster.Network.Firewall
	if len(rules) == 0 {
		return nil
	}
	type verdicts map[int][]string
	cache := map[string]verdicts{}
	var out []blockedFlow
	for _, dst := range dsts {
		var applicable []int
		for i, r := range rules {
			if ruleApplies(r, dst.Name, proto, port) {
				applicable = append(applicable, i)
			}
		}
		if len(applicable) == 0 {
			continue
		}
		sig := fmt.Sprint(applicable)
		v, ok := cache[sig]
		if !ok {
			v = verdicts{}
			for _, src := range srcs {
				a, err := netip.ParseAddr(src.Address)
				if err != nil {
					continue
				}
				for _, i := range applicable {
					if rules[i].MatchesSource(a) {
						if strings.EqualFold(rules[i].Action, "Block") {
							v[i] = append(v[i], src.Name)
						}
						break
					}
				}
			}
			cache[sig] = v
		}
		idx := make([]int, 0, len(v))
		for i := range v {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			var names []string
			for _, s := range v[i] {
				if s != dst.Name {
					names = append(names, s)
				}
			}
			if len(names) > 0 {
				out = append(out, blockedFlow{dst: dst.Name, rule: i, srcs: names})
			}
		}
	}
	return out
}

// withoutWindowsPeers drops Windows sources from flows to a Windows host:
// VXLAN between two Windows hosts is HYB072's.
func withoutWindowsPeers(x *rule.Context, flows []blockedFlow) []blockedFlow {
	isWin := func(name string) bool { h := x.Host(name); return h != nil && h.OS == hybrid.OSWindows }
	out := flows[:0]
	for _, f := range flows {
		if isWin(f.dst) {
			var srcs []string
			for _, s := range f.srcs {
				if !isWin(s) {
					srcs = append(srcs, s)
				}
			}
			f.srcs = srcs
		}
		if len(f.srcs) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// controlPlaneHosts are the hosts whose nodes carry the control-plane label.
func controlPlaneHosts(x *rule.Context) []hybrid.Host {
	var out []hybrid.Host
	for _, h := range x.Cluster.Hosts {
		if n := x.Node(h.Name); n != nil {
			if _, ok := n.Labels[wellknown.LabelControlPlane]; ok {
				out = append(out, h)
			}
		}
	}
	return out
}

func ruleName(r hybrid.FirewallRule, i int) string {
	if r.Name != "" {
		return fmt.Sprintf("%q", r.Name)
	}
	return fmt.Sprintf("#%d", i)
}

func flowFindings(x *rule.Context, flows []blockedFlow, what string, sev rule.Severity, fix func(blockedFlow) string) []rule.Finding {
	var out []rule.Finding
	key := x.ClusterKindKey()
	if key == nil {
		key = &model.Key{Group: hybrid.Group, Kind: "Cluster"}
	}
	for _, f := range flows {
		r := x.Cluster.Network.Firewall[f.rule]
		out = append(out, rule.Finding{Object: *key, Field: fmt.Sprintf("spec.network.firewall[%d]", f.rule), Severity: sev,
			Message: fmt.Sprintf("%s from %s to %s is blocked by firewall rule %s",
				what, rule.ListNames(f.srcs, 3), f.dst, ruleName(r, f.rule)),
			Remediation: fix(f)})
	}
	return out
}

func allowRule(proto string, port int32, from string) string {
	return fmt.Sprintf("an Allow rule before it: {protocol: %s, ports: [%d], from: [%s], action: Allow}", proto, port, from)
}

var ruleVXLANBlocked = rule.Rule{
	ID: "HYB060", Name: "vxlan-port-blocked", Severity: rule.Error, Blocker: true,
	Title:    "UDP 4789 (VXLAN) is blocked between hosts",
	Examines: []string{"Cluster.hybrid.kubectl-hybrid.io", "IPPool.projectcalico.org"},
	Description: `With VXLAN every packet between pods of different nodes is a UDP datagram to port 4789 of the
other node, in both directions and between Linux nodes too once the pool is VXLAN Always. A
filter on any host or between them drops pod traffic across nodes; on Windows HNS adds the
inbound rule OverlayTraffic4789UDP itself when Calico creates the overlay network, but an
explicit block, or a firewall between the virtual machines, still wins. Error when the pool
encapsulates always or Windows nodes are planned, warning otherwise.`,
	Remediation: `Allow UDP 4789 between all node addresses (ufw allow from 192.168.10.0/24 to any port 4789 proto udp; New-NetFirewallRule -Protocol UDP -LocalPort 4789 -RemoteAddress <node network> -Action Allow), and in the hypervisor's firewall`,
	References:  []rule.Reference{rule.RefMigration, rule.RefFirewall, rule.RefWindowsTroubleshoot, rule.CalicoRequirements},
	Check: func(x *rule.Context) []rule.Finding {
		if len(rule.VXLANPools(x)) == 0 && !x.WindowsPlanned() {
			return nil
		}
		sev := rule.Severity("")
		if rule.VXLANAlways(x) {
			sev = rule.Error
		}
		hosts := x.Cluster.Hosts
		from := x.Cluster.Network.CIDR
		return flowFindings(x, withoutWindowsPeers(x, blockedFlows(x, "UDP", 4789, hosts, hosts)), "UDP 4789 (VXLAN)", sev, func(f blockedFlow) string {
			return allowRule("UDP", 4789, from) + " for " + f.dst
		})
	},
}

var ruleKubeletBlocked = rule.Rule{
	ID: "HYB061", Name: "kubelet-port-blocked", Severity: rule.Warning,
	Title:    "TCP 10250 (kubelet API) is blocked from the control plane",
	Examines: []string{"Cluster.hybrid.kubectl-hybrid.io", "Node"},
	Description: `kube-apiserver connects to each kubelet on TCP 10250 for kubectl logs, exec, port-forward and
metrics. On Windows, Defender Firewall is on by default; PrepareNode.ps1 opens 10250 (to
everyone; narrowing it to the node network is safer). A block shows up as time-outs of logs and
exec on that node's pods.`,
	Remediation: `Allow TCP 10250 from the control plane: Set-NetFirewallRule -Name kubelet -RemoteAddress <node network> (Windows), ufw allow from <node network> to any port 10250 proto tcp (Linux)`,
	References:  []rule.Reference{rule.RefFirewall, rule.RefWindowsTroubleshoot, rule.K8sPorts},
	Check: func(x *rule.Context) []rule.Finding {
		from := x.Cluster.Network.CIDR
		return flowFindings(x, blockedFlows(x, "TCP", 10250, controlPlaneHosts(x), x.Cluster.Hosts), "TCP 10250 (kubelet)", "", func(f blockedFlow) string {
			return allowRule("TCP", 10250, from) + " for " + f.dst
		})
	},
}

var ruleAPIBlocked = rule.Rule{
	ID: "HYB062", Name: "api-port-blocked", Severity: rule.Error,
	Title:    "The API server port is blocked from a host",
	Examines: []string{"Cluster.hybrid.kubectl-hybrid.io", "InitConfiguration.kubeadm.k8s.io", "Node"},
	Description: `Every node's kubelet, and Calico on Windows through kubernetes-services-endpoint, connect to
the API server's port on the control plane (6443 by default). A block makes kubeadm join hang and
nodes go NotReady or Unknown.`,
	Remediation: `Allow TCP 6443 from the node network to the control-plane hosts`,
	References:  []rule.Reference{rule.RefServicesEndpoint, rule.RefWindowsTroubleshoot, rule.K8sPorts},
	Check: func(x *rule.Context) []rule.Finding {
		_, port := rule.APIEndpoint(x.Cluster)
		p := int32(6443)
		fmt.Sscan(port, &p)
		from := x.Cluster.Network.CIDR
		return flowFindings(x, blockedFlows(x, "TCP", p, x.Cluster.Hosts, controlPlaneHosts(x)), fmt.Sprintf("TCP %d (API server)", p), "", func(f blockedFlow) string {
			return allowRule("TCP", p, from) + " for " + f.dst
		})
	},
}
