package windows

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"
)

// The VFP model. What upstream material confirms:
//   - vSwitch ports: the external port (friendly name "ExternalPort"), the
//     host vNIC's port ("Container NIC xxxxxxxx") and one port per pod whose
//     port name is the pod's HNS endpoint ID (vfpctrl /list-vmswitch-port
//     output quoted in princepereira/Commands Commands-VFP.md; Rancher's RKE2
//     notes run `vfpctrl /port <endpoint id>`);
//   - ACL_ENDPOINT_LAYER with groups ACL_ENDPOINT_GROUP_IPV4_IN/OUT holding
//     one rule per HNS Switch ACL, friendly name = the ACL's Id, priority =
//     the ACL's (RKE2 notes; Azure NPM debug scripts);
//   - the layer names SLB_NAT_LAYER, SLB_DECAP_LAYER_STATEFUL,
//     VNET_ENCAP_LAYER, VNET_PA_ROUTE_LAYER (microsoft/SdnDiagnostics
//     Get-VfpPortRule), LB_DSR with groups LB_DSR_IPv4_IN/OUT and rules
//     LB_DSR_<node IP>_<VIP>_<internal port>_<external port>, SLB_LB_LAYER
//     (Commands-VFP.md).
//
// Not confirmed: which of those layers an HNS container port carries, their
// priorities and their rules' exact contents. The twin places them in the
// packet order described in seed 001 (ACL, then load balancing and NAT, then
// routing and encapsulation), numbers priorities in that order, and marks
// such layers Confirmed=false; vfpctrl's emulation says so on stderr.

// vfp builds the node's VFP ports.
func (nb *nodeBuild) vfp() {
	out := nb.out
	sw := hnsID(nb.n.Name + "/vswitch")
	swName := externalNetwork
	out.ports = append(out.ports,
		&VFPPort{Name: strings.ToUpper(hnsID(nb.n.Name + "/vfp/external")), FriendlyName: "ExternalPort", SwitchName: strings.ToUpper(sw), SwitchFriendlyName: swName, PortID: 1},
		&VFPPort{Name: strings.ToUpper(hnsID(nb.n.Name + "/vfp/host")), FriendlyName: "Container NIC " + hnsID(nb.n.Name + "/vfp/host-nic")[:8], SwitchName: strings.ToUpper(sw), SwitchFriendlyName: swName, PortID: 2},
	)
	if nb.calico == nil {
		return
	}
	// The load-balancing, decapsulation and encapsulation layers are the
	// same on every pod port; they are built once and shared.
	shared := []*VFPLayer{
		nb.lbLayer(true),
		nb.lbLayer(false),
		nil, // the endpoint's own NAT layer
		{Name: "SLB_DECAP_LAYER_STATEFUL", Flags: "Stateful", Groups: []*VFPGroup{{Name: "SLB_GROUP_DECAP_IPv4_IN", Direction: "IN", Priority: 1}}},
		nb.encapLayer(),
	}
	for i, l := range shared {
		if l != nil {
			l.Priority = i + 2
		}
	}
	for i, ep := range nb.podEPs {
		layers := append([]*VFPLayer{nb.aclLayer(ep)}, shared...)
		layers[0].Priority = 1
		nat := nb.natLayer(ep)
		nat.Priority = 4
		layers[3] = nat
		out.ports = append(out.ports, &VFPPort{
			Name: ep.ID, FriendlyName: strings.ToUpper(ep.ID), SwitchName: strings.ToUpper(sw), SwitchFriendlyName: swName,
			PortID: 3 + i, EndpointID: ep.ID, Layers: layers,
		})
	}
}

// aclLayer mirrors the endpoint's Switch ACLs; Host ACLs are WFP rules, not
// VFP ones.
func (nb *nodeBuild) aclLayer(ep *Endpoint) *VFPLayer {
	in := &VFPGroup{Name: "ACL_ENDPOINT_GROUP_IPV4_IN", Direction: "IN", Priority: 1}
	out := &VFPGroup{Name: "ACL_ENDPOINT_GROUP_IPV4_OUT", Direction: "OUT", Priority: 1}
	for i, p := range ep.Policies {
		if p.ACL == nil || p.ACL.RuleType != "Switch" {
			continue
		}
		a := p.ACL
		r := &VFPRule{
			Name:         strings.ToUpper(hnsID(fmt.Sprintf("%s/acl/%d", ep.ID, i))),
			FriendlyName: a.ID,
			Priority:     a.Priority,
			Type:         strings.ToLower(a.Action),
			Flags:        "8195 terminating stateful",
		}
		if a.Action == "Block" {
			r.Type = "block"
		}
		src, dst, sp, dp := a.RemoteAddresses, a.LocalAddresses, a.RemotePorts, a.LocalPorts
		g := in
		if a.Direction == "Out" {
			src, dst, sp, dp = a.LocalAddresses, a.RemoteAddresses, a.LocalPorts, a.RemotePorts
			g = out
		}
		if a.Protocol != policysets.ProtocolAny {
			r.Conditions = append(r.Conditions, VFPCondition{"Protocols", strconv.Itoa(a.Protocol)})
		}
		for _, c := range []VFPCondition{{"Source IP", trimHost(src)}, {"Destination IP", trimHost(dst)}, {"Source ports", sp}, {"Destination ports", dp}} {
			if c.Value != "" {
				r.Conditions = append(r.Conditions, c)
			}
		}
		g.Rules = append(g.Rules, r)
	}
	return &VFPLayer{Name: "ACL_ENDPOINT_LAYER", Flags: "Stateful", Groups: []*VFPGroup{in, out}, Confirmed: true}
}

// lbLayer holds the node's load balancers: DSR ones in LB_DSR, the others
// in SLB_LB_LAYER, one rule per load balancer matching its VIP and port.
func (nb *nodeBuild) lbLayer(dsr bool) *VFPLayer {
	name, group := "SLB_LB_LAYER", "SLB_GROUP_LB_IPv4_OUT"
	if dsr {
		name, group = "LB_DSR", "LB_DSR_IPv4_OUT"
	}
	g := &VFPGroup{Name: group, Direction: "OUT", Priority: 1}
	for _, lb := range nb.out.lbs {
		if lb.DSR() != dsr {
			continue
		}
		vip := "*"
		if len(lb.FrontendVIPs) > 0 {
			vip = lb.FrontendVIPs[0]
		}
		r := &VFPRule{
			Name:     fmt.Sprintf("%s_%s_%s_%d_%d", name, nb.out.Address, vip, lb.InternalPort, lb.ExternalPort),
			Priority: 500, Type: "lbnat", Flags: "3 terminating",
		}
		if dsr {
			r.Name = fmt.Sprintf("LB_DSR_%s_%s_%d_%d", nb.out.Address, vip, lb.InternalPort, lb.ExternalPort)
		}
		r.FriendlyName = r.Name
		if vip != "*" {
			r.Conditions = append(r.Conditions, VFPCondition{"Destination IP", vip})
		}
		r.Conditions = append(r.Conditions, VFPCondition{"Protocols", strconv.Itoa(lb.Protocol)}, VFPCondition{"Destination ports", strconv.Itoa(lb.ExternalPort)})
		port := ":" + strconv.Itoa(lb.InternalPort)
		if len(lb.Backends) > 0 {
			r.Data = make([]string, 0, len(lb.Backends))
		}
		for _, b := range lb.Backends {
			r.Data = append(r.Data, b+port)
		}
		g.Rules = append(g.Rules, r)
	}
	return &VFPLayer{Name: name, Flags: "Stateful", Groups: []*VFPGroup{g}}
}

// natLayer is the endpoint's OutBoundNAT: SNAT to the node address for
// everything but the exceptions, and the loopback-DSR NAT to itself.
func (nb *nodeBuild) natLayer(ep *Endpoint) *VFPLayer {
	g := &VFPGroup{Name: "SLB_GROUP_NAT_IPv4_OUT", Direction: "OUT", Priority: 1}
	for _, p := range ep.Policies {
		if p.Type != PolicyOutBoundNAT {
			continue
		}
		switch {
		case len(p.ExceptionList) > 0:
			for _, e := range p.ExceptionList {
				g.Rules = append(g.Rules, &VFPRule{Name: "OUTBOUNDNAT_EXCEPTION_" + e, FriendlyName: "OUTBOUNDNAT_EXCEPTION_" + e, Priority: 100, Type: "allow", Flags: "terminating",
					Conditions: []VFPCondition{{"Destination IP", e}}})
			}
			g.Rules = append(g.Rules, &VFPRule{Name: "OUTBOUNDNAT", FriendlyName: "OUTBOUNDNAT", Priority: 200, Type: "nat", Flags: "terminating stateful",
				Data: []string{"Source IP -> " + nb.out.Address}})
		case len(p.Destinations) > 0:
			g.Rules = append(g.Rules, &VFPRule{Name: "OUTBOUNDNAT_LOOPBACK_DSR", FriendlyName: "OUTBOUNDNAT_LOOPBACK_DSR", Priority: 50, Type: "nat", Flags: "terminating stateful",
				Conditions: []VFPCondition{{"Destination IP", strings.Join(p.Destinations, ",")}}})
		}
	}
	return &VFPLayer{Name: "SLB_NAT_LAYER", Flags: "Stateful", Groups: []*VFPGroup{g}}
}

// encapLayer encapsulates traffic to remote subnets and remote endpoints
// toward their provider address with the network's VSID.
func (nb *nodeBuild) encapLayer() *VFPLayer {
	g := &VFPGroup{Name: "VNET_ENCAP_GROUP_IPv4_OUT", Direction: "OUT", Priority: 1}
	vsid := nb.calico.Subnets[0].VSID
	for _, p := range nb.calico.Policies {
		if p.Type != PolicyRemoteSubnetRoute {
			continue
		}
		g.Rules = append(g.Rules, &VFPRule{
			Name: "ENCAP_" + p.DestinationPrefix, FriendlyName: "ENCAP_" + p.DestinationPrefix, Priority: 100, Type: "encap", Flags: "terminating",
			Conditions: []VFPCondition{{"Destination IP", p.DestinationPrefix}},
			Data:       []string{fmt.Sprintf("{PA=%s, VSID=%d, DR MAC=%s}", p.ProviderAddress, vsid, p.DistributedRouterMacAddress)},
		})
	}
	return &VFPLayer{Name: "VNET_ENCAP_LAYER", Flags: "Stateless", Groups: []*VFPGroup{g}}
}

// trimHost writes "a.b.c.d/32" as VFP prints single addresses.
func trimHost(s string) string {
	if !strings.Contains(s, "/32") {
		return s // nothing to trim (and no split and join per ACL)
	}
	var b strings.Builder
	b.Grow(len(s))
	for first := true; ; first = false {
		p, rest, more := strings.Cut(s, ",")
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(strings.TrimSuffix(p, "/32"))
		if !more {
			break
		}
		s = rest
	}
	return b.String()
}
