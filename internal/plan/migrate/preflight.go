package migrate

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// Preflight finding IDs.
const (
	MigVXLANPort   = "MIG001"
	MigBGPPort     = "MIG002"
	MigIPBlock     = "MIG003"
	MigBGPLost     = "MIG004"
	MigBorrowed    = "MIG005"
	MigMTU         = "MIG006"
	MigPoolEdit    = "MIG007"
	MigWindowsNode = "MIG008"
	MigIPIP        = "MIG009"
)

func has(steps []Step, id string) bool {
	for _, s := range steps {
		if s.ID == id {
			return true
		}
	}
	return false
}

// preflight reads the cluster for what the steps will run into; final is
// the migrated twin.
func preflight(c *model.Cluster, snap *model.Snapshot, in *operator.Installation, steps []Step, final *model.Cluster, finalCheck *check.Report) []plan.Finding {
	out := []plan.Finding{}
	encap, bgp := has(steps, StepEncapsulation), has(steps, StepBGP)
	if encap || bgp || has(steps, StepWindowsDataplane) {
		out = append(out, vxlanPort(finalCheck)...)
	}
	if bgp {
		out = append(out, plan.Finding{ID: MigBGPPort, Severity: "info", Object: "Installation default",
			Message: "TCP 179 (BGP) between the nodes is no longer needed once BGP is off; close it after the BGP step if it was opened for Calico"})
		out = append(out, bgpLost(c, snap)...)
	}
	if encap {
		out = append(out, ipBlocks(c, final)...)
		out = append(out, mtu(c, in)...)
		for _, p := range linux.IPIPPools(c) {
			out = append(out, plan.Finding{ID: MigIPIP, Severity: "info", Object: "IPPool " + p,
				Message: "the pool carries traffic between nodes over IPIP: the encapsulation step replaces BIRD's tunl0 routes with Felix's vxlan.calico routes, so node to node the traffic moves from IP protocol 4 to VXLAN UDP 4789 (see MIG001); connections between nodes may drop while the routes are replaced"})
		}
		for _, p := range linux.FelixRoutedIPIPPools(c) {
			out = append(out, plan.Finding{ID: MigIPIP, Severity: "warning", Object: "IPPool " + p,
				Message: "Felix programs the pool's routes (FelixConfiguration programClusterRoutes), which the twin does not model: the encapsulation step's changes leave out the tunl0 routes it withdraws, and the twin's reachability before the step does not see them"})
		}
	}
	if has(steps, StepStrictAffinity) {
		out = append(out, borrowed(c)...)
	}
	out = append(out, poolEdits(c, snap)...)
	for _, n := range c.Nodes {
		if n.Labels[corev1.LabelOSStable] == "windows" {
			out = append(out, plan.Finding{ID: MigWindowsNode, Severity: "warning", Object: "Node " + n.Name,
				Message: fmt.Sprintf("Windows node %s is already in the cluster: the point of no return is passed, and a rollback would cut it off", n.Name)})
		}
	}
	return out
}

// vxlanPort: with VXLAN Always every packet between pods of two nodes is
// UDP 4789 between the nodes; check's HYB060 on the migrated twin names the
// firewall rules that block it.
func vxlanPort(rep *check.Report) []plan.Finding {
	out := []plan.Finding{{ID: MigVXLANPort, Severity: "warning", Object: "Cluster",
		Message: "UDP 4789 must be open between all nodes, including the future Windows nodes' addresses: after the encapsulation step all pod traffic between nodes is VXLAN; the twin checks only the firewall rules the input states (Cluster spec.network.firewall)"}}
	for _, f := range rep.Findings {
		if f.RuleID == "HYB060" {
			out = append(out, plan.Finding{ID: MigVXLANPort, Severity: "error", Blocking: true, Object: f.Object.String(), Message: f.Message, WayOut: f.Remediation})
		}
	}
	return out
}

// bgpLost: BGP off ends every session, so routes learnt by routers and
// advertised service addresses go (BGPConfiguration serviceClusterIPs,
// serviceExternalIPs; BGPPeer resources).
func bgpLost(c *model.Cluster, snap *model.Snapshot) []plan.Finding {
	var out []plan.Finding
	for _, bc := range c.BGPConfigs {
		var ranges []string
		for _, b := range bc.Spec.ServiceClusterIPs {
			ranges = append(ranges, b.CIDR)
		}
		for _, b := range bc.Spec.ServiceExternalIPs {
			ranges = append(ranges, b.CIDR)
		}
		if len(ranges) > 0 {
			out = append(out, plan.Finding{ID: MigBGPLost, Severity: "warning", Object: "BGPConfiguration " + bc.Name,
				Message: fmt.Sprintf("service addresses advertised over BGP (%s) are no longer advertised once BGP is off; clients outside the cluster lose their routes to them", strings.Join(ranges, ", ")),
				WayOut:  "route these ranges to the nodes another way (static routes, a load balancer) before the BGP step"})
		}
	}
	for _, o := range snap.Objects {
		if o.GVK.Kind == "BGPPeer" {
			out = append(out, plan.Finding{ID: MigBGPLost, Severity: "warning", Object: "BGPPeer " + o.Key.Name,
				Message: fmt.Sprintf("BGP peering %s ends once BGP is off: the peer no longer learns the pod blocks", o.Key.Name),
				WayOut:  "give the router static routes to the pod network, or keep the cluster on BGP (then no Windows node with VXLAN)"})
		}
	}
	if len(out) == 0 {
		out = append(out, plan.Finding{ID: MigBGPLost, Severity: "info", Object: "Installation default",
			Message: "the input shows no BGPPeer and no advertised service range: only the node-to-node mesh ends, whose routes Felix programs itself"})
	}
	return out
}

// ipBlocks: a host-network process reaching a pod on another node leaves
// through vxlan.calico with the node's tunnel address as source
// (felix/dataplane/linux/vxlan_mgr.go sets it on the device), so ipBlock
// rules naming node addresses must name the tunnel addresses too.
func ipBlocks(c, final *model.Cluster) []plan.Finding {
	type nodeAddr struct {
		name   string
		addr   netip.Addr
		tunnel string
	}
	var nodes []nodeAddr
	for _, n := range final.Nodes {
		for _, a := range n.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				nodes = append(nodes, nodeAddr{n.Name, ip, n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]})
			}
		}
	}
	var out []plan.Finding
	for _, np := range c.NetworkPolicies {
		seen := map[string]bool{}
		var hit []string
		check := func(cidr string) {
			p, err := netip.ParsePrefix(cidr)
			if err != nil {
				return
			}
			for _, n := range nodes {
				if p.Contains(n.addr) && !seen[n.name] {
					seen[n.name] = true
					t := n.tunnel
					if t == "" {
						t = "<no tunnel address>"
					}
					hit = append(hit, fmt.Sprintf("%s %s → add %s/32", n.name, n.addr, t))
				}
			}
		}
		for _, r := range np.Spec.Ingress {
			for _, f := range r.From {
				if f.IPBlock != nil {
					check(f.IPBlock.CIDR)
				}
			}
		}
		if len(hit) > 0 {
			out = append(out, plan.Finding{ID: MigIPBlock, Severity: "warning", Object: "NetworkPolicy " + np.Namespace + "/" + np.Name,
				Message: "an ingress ipBlock names node addresses: host-network traffic to pods on other nodes will come from the nodes' tunnel addresses instead (" + strings.Join(hit, "; ") + ")",
				WayOut:  "add the tunnel addresses to the ipBlock before the encapsulation step"})
		}
	}
	return out
}

// mtu: the pod MTU is the NIC's less the encapsulation's overhead (VXLAN
// 50, IP-in-IP 20; felix/dataplane/linux/mtu.go); pods keep the MTU their
// interface was made with until they restart.
func mtu(c *model.Cluster, in *operator.Installation) []plan.Finding {
	nic := 0
	for _, h := range c.Hosts {
		if h.NIC.MTU > 0 && (nic == 0 || int(h.NIC.MTU) < nic) {
			nic = int(h.NIC.MTU)
		}
	}
	if nic == 0 {
		return []plan.Finding{{ID: MigMTU, Severity: "info", Object: "Installation default",
			Message: "the input states no NIC MTU: the pods' MTU after the migration is the node NIC's MTU less 50 (VXLAN), unless the Installation sets calicoNetwork.mtu"}}
	}
	before := 0
	for _, p := range effectivePools(c, in) {
		before = max(before, overhead(p.Encapsulation))
	}
	if cn := in.Spec.CalicoNetwork; cn != nil && cn.MTU != nil {
		if int(*cn.MTU) > nic-50 {
			return []plan.Finding{{ID: MigMTU, Severity: "error", Blocking: true, Object: "Installation default",
				Message: fmt.Sprintf("calicoNetwork.mtu %d leaves no room for VXLAN's 50 bytes on a %d-byte NIC", *cn.MTU, nic),
				WayOut:  fmt.Sprintf("set calicoNetwork.mtu to %d or less, or remove it", nic-50)}}
		}
		return []plan.Finding{{ID: MigMTU, Severity: "info", Object: "Installation default",
			Message: fmt.Sprintf("calicoNetwork.mtu %d fits VXLAN on a %d-byte NIC", *cn.MTU, nic)}}
	}
	if before == 50 {
		return []plan.Finding{{ID: MigMTU, Severity: "info", Object: "Installation default",
			Message: fmt.Sprintf("the pods' MTU stays %d: Calico already reserved VXLAN's 50 bytes of the %d-byte NIC", nic-50, nic)}}
	}
	return []plan.Finding{{ID: MigMTU, Severity: "warning", Object: "Installation default",
		Message: fmt.Sprintf("the pods' MTU goes from %d to %d (VXLAN's 50 bytes of the %d-byte NIC); running pods keep %d until they restart, and their large packets between nodes are fragmented or dropped", nic-before, nic-50, nic, nic-before),
		WayOut:  "restart the workloads after the encapsulation step"}}
}

func overhead(enc string) int {
	switch enc {
	case "VXLAN", "VXLANCrossSubnet":
		return 50
	case "IPIP", "IPIPCrossSubnet":
		return 20
	}
	return 0
}

// borrowed: a pod whose address lies in a block affine to another node
// borrowed it; strictAffinity leaves it in place but a Windows node's
// block must hold no borrowed address, and such a block is not released
// while the address lives (libcalico-go/lib/ipam/ipam.go).
func borrowed(c *model.Cluster) []plan.Finding {
	type blk struct {
		p    netip.Prefix
		host string
	}
	var blocks []blk
	for _, b := range c.IPAMBlocks {
		p, err := netip.ParsePrefix(b.Spec.CIDR)
		if err != nil || b.Spec.Affinity == nil {
			continue
		}
		blocks = append(blocks, blk{p, strings.TrimPrefix(*b.Spec.Affinity, "host:")})
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].p.Bits() > blocks[j].p.Bits() })
	var out []plan.Finding
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" {
			continue
		}
		a, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			continue
		}
		for _, b := range blocks {
			if b.p.Contains(a) {
				if b.host != p.Spec.NodeName {
					out = append(out, plan.Finding{ID: MigBorrowed, Severity: "warning", Object: "Pod " + p.Namespace + "/" + p.Name,
						Message: fmt.Sprintf("pod %s/%s on %s holds %s, borrowed from %s's block %s; strictAffinity keeps it there until the pod goes", p.Namespace, p.Name, p.Spec.NodeName, a, b.host, b.p),
						WayOut:  "restart the pod after the strictAffinity step so that it takes an address from its own node's block (calicoctl ipam check lists borrowed addresses)"})
				}
				break
			}
		}
	}
	return out
}

// poolEdits: an operator-owned IPPool given in the input that differs from
// what the Installation renders was edited directly; the operator reverts
// it (pool_controller.go), so the plan changes the Installation.
func poolEdits(c *model.Cluster, snap *model.Snapshot) []plan.Finding {
	var out []plan.Finding
	for _, o := range snap.Objects {
		given, ok := o.Typed.(*calico.IPPool)
		if !ok || given.Labels["app.kubernetes.io/managed-by"] != "tigera-operator" {
			continue
		}
		for _, p := range c.IPPools {
			if p.Name != given.Name {
				continue
			}
			var diffs []string
			if mode(given.Spec.VXLANMode) != mode(p.Spec.VXLANMode) {
				diffs = append(diffs, fmt.Sprintf("vxlanMode %s (Installation: %s)", mode(given.Spec.VXLANMode), mode(p.Spec.VXLANMode)))
			}
			if mode(given.Spec.IPIPMode) != mode(p.Spec.IPIPMode) {
				diffs = append(diffs, fmt.Sprintf("ipipMode %s (Installation: %s)", mode(given.Spec.IPIPMode), mode(p.Spec.IPIPMode)))
			}
			if given.Spec.NATOutgoing != p.Spec.NATOutgoing {
				diffs = append(diffs, fmt.Sprintf("natOutgoing %t (Installation: %t)", given.Spec.NATOutgoing, p.Spec.NATOutgoing))
			}
			if len(diffs) > 0 {
				out = append(out, plan.Finding{ID: MigPoolEdit, Severity: "warning", Object: "IPPool " + given.Name,
					Message: fmt.Sprintf("IP pool %s was edited directly (%s); the operator owns it and writes the Installation's version back, so the edit does not last", given.Name, strings.Join(diffs, ", ")),
					WayOut:  "change the pool through the Installation, as these steps do"})
			}
		}
	}
	return out
}

func mode(s string) string {
	if s == "" {
		return "Never"
	}
	return s
}
