package noderules

import (
	"fmt"
	"net"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
)

// What breaks between Windows nodes: a VTEP the other nodes do not know
// right, and VXLAN blocked between two Windows hosts.
func WindowsPeerRules() []rule.Rule {
	return []rule.Rule{ruleWindowsVTEPNotPublished, ruleWindowsPeersVXLANBlocked}
}

var calicoWindowsVXLAN = rule.Reference{Title: "Calico: Windows dataplane, VTEP MAC recorded by EnsureVXLANTunnelAddr (cni-plugin/pkg/dataplane/windows/dataplane_windows.go)",
	URL: "https://github.com/projectcalico/calico/blob/master/cni-plugin/pkg/dataplane/windows/dataplane_windows.go"}
var felixWindowsVXLAN = rule.Reference{Title: "Calico Felix: Windows VXLAN manager, one RemoteSubnetRoute per remote block with a VTEP (felix/dataplane/windows/vxlan_mgr.go)",
	URL: "https://github.com/projectcalico/calico/blob/master/felix/dataplane/windows/vxlan_mgr.go"}
var windowsFirewallPrecedence = rule.Reference{Title: "Windows Firewall rule actions: block rules take precedence over allow rules ([MS-FASP] FW_RULE_ACTION)",
	URL: "https://learn.microsoft.com/en-us/openspecs/windows_protocols/ms-fasp/702e3c23-c9d8-43db-8380-b4c670dd7f7d"}
var felixVXLANResolver = rule.Reference{Title: "Calico Felix: VXLAN resolver, a node's VTEP MAC or the one derived from its name (felix/calc/vxlan_resolver.go)",
	URL: "https://github.com/projectcalico/calico/blob/master/felix/calc/vxlan_resolver.go"}

var ruleWindowsVTEPNotPublished = rule.Rule{
	ID: "HYB071", Name: "windows-vtep-not-published", Severity: rule.Error,
	Title:    "A Windows node's VTEP MAC is not the DrPort's MAC it published",
	Examines: []string{"Node", "Cluster.hybrid.kubectl-hybrid.io"},
	Needs:    rule.NeedNodes,
	Description: `On Windows the VXLAN tunnel endpoint is the Calico HNS network's distributed router port:
calico-node-windows records the DrPort adapter's MAC as the node's
projectcalico.org/VXLANTunnelMACAddr together with its tunnel address (the block's first
address). Felix on every other node, Linux or Windows, programs its route to the node's block
with that MAC (ARP and FDB entries on vxlan.calico, a RemoteSubnetRoute's
DistributedRouterMacAddress on Windows); without one it falls back to a MAC derived from the
node name, the Linux rule, which no Windows adapter has. The frames then reach the node but
are addressed to a MAC that is not its DrPort's, and pod traffic to the node's block from
every other node, other Windows nodes included, is lost. Fires when a Windows node records a
tunnel address but no VTEP MAC, or a MAC other than the DrPort MAC observed on the host.
The twin's own placeholder MAC (a node joined without an observed MAC) is not a fault: every
view uses it.`,
	Remediation: `Restart calico-node-windows on the node so that it records the DrPort's MAC (Get-NetAdapter shows the "vEthernet (DrPort …)" adapter's MacAddress), or correct hosts[].observed.vxlanTunnelMAC`,
	References:  []rule.Reference{calicoWindowsVXLAN, felixVXLANResolver, felixWindowsVXLAN},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			if n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] == "" || n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] != "" {
				continue
			}
			recorded := n.Annotations[calico.AnnotationVXLANTunnelMACAddr]
			observed := ""
			if h := x.Host(n.Name); h != nil {
				observed = h.Observed.VXLANTunnelMAC
			}
			f := rule.Finding{Object: rule.NodeKey(n.Name), Field: "metadata.annotations[" + calico.AnnotationVXLANTunnelMACAddr + "]"}
			switch {
			case recorded == "":
				f.Message = fmt.Sprintf("Windows node %s records VXLAN tunnel address %s but no VTEP MAC: every other node's Felix routes to its block with the MAC derived from its name, which is not its DrPort's, and pod traffic to the block is lost",
					n.Name, n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr])
			case observed != "" && !sameMAC(recorded, observed):
				f.Message = fmt.Sprintf("Windows node %s records VTEP MAC %s, but its DrPort adapter's MAC is %s (hosts[].observed.vxlanTunnelMAC): the other nodes address its block's frames to a MAC no adapter has",
					n.Name, recorded, observed)
			default:
				continue
			}
			out = append(out, f)
		}
		return out
	},
}

// sameMAC compares two MACs in any of the notations (colons or dashes, any
// case); unparsable ones compare as text.
func sameMAC(a, b string) bool {
	ha, errA := net.ParseMAC(strings.ReplaceAll(a, "-", ":"))
	hb, errB := net.ParseMAC(strings.ReplaceAll(b, "-", ":"))
	if errA != nil || errB != nil {
		return strings.EqualFold(a, b)
	}
	return ha.String() == hb.String()
}

var ruleWindowsPeersVXLANBlocked = rule.Rule{
	ID: "HYB072", Name: "windows-peers-vxlan-blocked", Severity: rule.Error,
	Title:    "UDP 4789 (VXLAN) is blocked between two Windows hosts",
	Examines: []string{"Cluster.hybrid.kubectl-hybrid.io"},
	Description: `Pods on two Windows nodes reach each other only through VXLAN between the hosts: Felix on
each Windows node programs a RemoteSubnetRoute to the other's block with its address as the
provider address, and kube-proxy's remote endpoints for a Service's backends on the other
node carry the same provider address, so VFP encapsulates to UDP 4789 of the other host.
HNS's inbound rule OverlayTraffic4789UDP allows it, but a firewall rule that blocks it from
the other Windows host drops pod-to-pod traffic and every Service connection whose backend
the load balancer picks on the other node (a Service spread over both answers only part of
the time). Linux-to-Windows flows are HYB060's.`,
	Remediation: `Allow UDP 4789 from every Windows node's address on every Windows node (New-NetFirewallRule -Direction Inbound -Protocol UDP -LocalPort 4789 -RemoteAddress <node network> -Action Allow), and in the hypervisor's firewall`,
	References:  []rule.Reference{felixWindowsVXLAN, windowsFirewallPrecedence, rule.CalicoRequirements},
	Check: func(x *rule.Context) []rule.Finding {
		var wins []hybrid.Host
		for _, h := range x.Cluster.Hosts {
			if h.OS == hybrid.OSWindows {
				wins = append(wins, h)
			}
		}
		if len(wins) < 2 {
			return nil
		}
		return flowFindings(x, blockedFlows(x, "UDP", 4789, wins, wins), "UDP 4789 (VXLAN) between Windows nodes", rule.Error, func(f blockedFlow) string {
			// On the host, Windows Defender Firewall lets a block rule win
			// over any allow rule, so the block itself has to go or narrow.
			return fmt.Sprintf("remove firewall rule %s on %s, or narrow its from: to leave out %s (on the host itself an added allow rule is not enough: Windows Defender Firewall lets a block rule win over allow rules)",
				ruleName(x.Cluster.Network.Firewall[f.rule], f.rule), f.dst, rule.ListNames(f.srcs, 3))
		})
	},
}
