package windows

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// adapters are the host's network adapters after Calico set up the node
// (seed 000, Get-NetAdapter): the physical NIC; the host vNIC HNS creates
// when the first network's vSwitch takes the NIC, named after it and with
// its MAC; the Calico network's distributed router port (DrPort, its VTEP);
// one container adapter per pod, named after the pod's HNS endpoint.
//
// Windows numbers adapters with the same description "#2", "#3"… in the
// order they are created, reusing freed numbers; the DrPort adapter is the
// first container adapter. The twin numbers pod adapters in pod creation
// order (address order in the block, see pods), which gives the lab's
// observed "#3" for 172.21.41.6. Get-NetAdapter's listing order is not
// documented; the twin lists the host adapters, then the pods' in kubectl's
// order (namespace, name), as the lab's transcript shows them.
func (nb *nodeBuild) adapters() {
	out := nb.out
	mac := windowsMAC(out.HostMAC, true)
	desc := "Microsoft Hyper-V Network Adapter"
	if !strings.HasPrefix(mac, "00-15-5D") {
		desc = "Network Adapter"
		out.Notes = append(out.Notes, "the host NIC's description is not observed; only Hyper-V guests (MAC 00-15-5D-…) get the real one")
	}
	out.Adapters = append(out.Adapters,
		&Adapter{Name: nb.nicName, InterfaceDescription: desc, MacAddress: mac, Status: "Up"},
		&Adapter{Name: "vEthernet (" + nb.nicName + ")", InterfaceDescription: "Hyper-V Virtual Ethernet Adapter", MacAddress: mac, Status: "Up"})
	if nb.calico == nil {
		return
	}
	dr := ""
	if nb.h != nil {
		dr = nb.h.Observed.DrPortName
	}
	if dr == "" {
		dr = strings.ToUpper(hnsID(nb.n.Name + "/drport"))
		out.Notes = append(out.Notes, fmt.Sprintf("the DrPort adapter's GUID is not observed (hosts[].observed.drPortName); %s is a stand-in", dr))
	}
	out.Adapters = append(out.Adapters, &Adapter{
		Name: "vEthernet (DrPort " + dr + ")", InterfaceDescription: "Hyper-V Virtual Ethernet Container Adapter",
		MacAddress: nb.calico.DrMacAddress, Status: "Up",
	})
	pods := make([]*Adapter, 0, len(nb.podEPs))
	names := map[*Adapter]string{}
	for i, ep := range nb.podEPs {
		a := &Adapter{
			Name:                 "vEthernet (" + ep.Name + ")",
			InterfaceDescription: fmt.Sprintf("Hyper-V Virtual Ethernet Container Adapter #%d", i+2),
			MacAddress:           strings.ToUpper(ep.MacAddress),
			Status:               "Up",
		}
		pods = append(pods, a)
		names[a] = ep.Pod
	}
	sort.SliceStable(pods, func(i, j int) bool { return names[pods[i]] < names[pods[j]] })
	out.Adapters = append(out.Adapters, pods...)
}

// overlayFirewallRule is the inbound VXLAN rule HNS adds with the first
// Overlay network (seed 000: OverlayTraffic4789UDP, "Overlay Traffic 4789
// UDP"; 4789 is the only VXLAN port Windows supports).
func overlayFirewallRule() *FirewallRule {
	return &FirewallRule{
		Name: "OverlayTraffic4789UDP", DisplayName: "Overlay Traffic 4789 UDP", Enabled: true,
		Direction: "Inbound", Action: "Allow", Protocol: "UDP", LocalPorts: []int32{4789},
		Source: "HNS, with the first Overlay network",
	}
}

// firewall adds the Cluster kind's firewall rules that apply to the host.
func (nb *nodeBuild) firewall() {
	for _, r := range nb.cx.c.Network.Firewall {
		if len(r.Hosts) > 0 && !slices.Contains(r.Hosts, nb.n.Name) {
			continue
		}
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("%s-%v", strings.ToLower(r.Protocol), r.Ports)
		}
		action := r.Action
		if action == "" {
			action = "Allow"
		}
		nb.out.FirewallRules = append(nb.out.FirewallRules, &FirewallRule{
			Name: name, DisplayName: name, Enabled: true, Direction: "Inbound", Action: action,
			Protocol: r.Protocol, LocalPorts: r.Ports, Source: "Cluster spec.network.firewall",
		})
	}
}
