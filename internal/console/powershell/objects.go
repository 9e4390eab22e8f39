package powershell

import (
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// The objects the HNS PowerShell module returns are HNS's V1 JSON read by
// ConvertFrom-Json, so their properties are HNS's JSON fields in HNS's
// order. The twin emits the fields it derives, in the order observed output
// shows them (seed 000; a Get-HnsEndpoint listing in Rancher's RKE2 Windows
// notes: ID, Name, …, State, VirtualNetwork, VirtualNetworkName, Policies,
// MacAddress, IPAddress, PrefixLength, GatewayAddress, DNSServerList,
// DNSSuffix, Namespace, EncapOverhead); endpoint and network policies come
// back with their fields sorted by name, subnet policies as the CNI plugin
// wrote them ({"Type":"VSID","VSID":4096}). Internal bookkeeping fields
// (Version, Resources, Health, AdditionalParams, IPSubnetId, MacPools,
// SharedContainers, …) are left out.

const (
	typePSCustomObject = "System.Management.Automation.PSCustomObject"
	typeGroupInfo      = "Microsoft.PowerShell.Commands.GroupInfo"
	typeNetAdapter     = "Microsoft.Management.Infrastructure.CimInstance#ROOT/StandardCimv2/MSFT_NetAdapter"
	typeFirewallRule   = "Microsoft.Management.Infrastructure.CimInstance#root/StandardCimv2/MSFT_NetFirewallRule"
)

func (n node) networkObjs() []any {
	out := make([]any, 0, len(n.Networks()))
	for _, nw := range n.Networks() {
		o := newObj(typePSCustomObject)
		if nw.DrMacAddress != "" {
			o.set("DrMacAddress", nw.DrMacAddress)
		}
		o.set("ID", nw.ID)
		o.set("IPv6", false)
		o.set("ManagementIP", nw.ManagementIP)
		o.set("Name", nw.Name)
		if nw.NetworkAdapterName != "" {
			o.set("NetworkAdapterName", nw.NetworkAdapterName)
		}
		pols := []any{}
		for _, p := range nw.Policies {
			po := newObj(typePSCustomObject)
			if p.Type == windows.PolicyRemoteSubnetRoute {
				po.set("DestinationPrefix", p.DestinationPrefix)
				po.set("DistributedRouterMacAddress", p.DistributedRouterMacAddress)
				po.set("IsolationId", p.IsolationID)
				po.set("ProviderAddress", p.ProviderAddress)
			}
			po.set("Type", p.Type)
			pols = append(pols, po)
		}
		o.set("Policies", pols)
		o.set("State", 1)
		subs := []any{}
		for _, s := range nw.Subnets {
			vsid := newObj(typePSCustomObject).set("Type", "VSID").set("VSID", s.VSID)
			subs = append(subs, newObj(typePSCustomObject).
				set("AddressPrefix", s.AddressPrefix).
				set("GatewayAddress", s.GatewayAddress).
				set("Policies", []any{vsid}))
		}
		o.set("Subnets", subs)
		total := 0
		for _, ep := range n.Endpoints() {
			if ep.VirtualNetwork == nw.ID {
				total++
			}
		}
		o.set("TotalEndpoints", total)
		o.set("Type", nw.Type)
		out = append(out, o)
	}
	return out
}

func (n node) endpointObjs() []any {
	out := make([]any, 0, len(n.Endpoints()))
	for _, ep := range n.Endpoints() {
		o := newObj(typePSCustomObject)
		o.set("ID", ep.ID)
		if ep.Name != "" {
			o.set("Name", ep.Name)
		}
		o.set("State", ep.State)
		o.set("VirtualNetwork", ep.VirtualNetwork)
		o.set("VirtualNetworkName", ep.VirtualNetworkName)
		pols := make([]any, 0, len(ep.Policies))
		for _, p := range ep.Policies {
			pols = append(pols, policyObj(p))
		}
		o.set("Policies", pols)
		o.set("MacAddress", ep.MacAddress)
		o.set("IPAddress", ep.IPAddress)
		if ep.PrefixLength > 0 {
			o.set("PrefixLength", ep.PrefixLength)
		}
		if ep.GatewayAddress != "" {
			o.set("GatewayAddress", ep.GatewayAddress)
		}
		if ep.IsRemoteEndpoint {
			o.set("IsRemoteEndpoint", true)
		}
		if ep.DNSServerList != "" {
			o.set("DNSServerList", ep.DNSServerList)
		}
		if ep.DNSSuffix != "" {
			o.set("DNSSuffix", ep.DNSSuffix)
		}
		if ep.NamespaceID != "" {
			o.set("Namespace", newObj(typePSCustomObject).set("ID", ep.NamespaceID))
		}
		if ep.EncapOverhead > 0 {
			o.set("EncapOverhead", ep.EncapOverhead)
		}
		out = append(out, o)
	}
	return out
}

// policyObj is an endpoint policy in HNS's V1 view, fields sorted by name.
func policyObj(p windows.EndpointPolicy) *psObj {
	o := newObj(typePSCustomObject)
	switch p.Type {
	case windows.PolicyOutBoundNAT:
		if len(p.Destinations) > 0 {
			o.set("Destinations", strs(p.Destinations))
		}
		if len(p.ExceptionList) > 0 {
			o.set("ExceptionList", strs(p.ExceptionList))
		}
	case windows.PolicyRoute:
		o.set("DestinationPrefix", p.DestinationPrefix)
		o.set("NeedEncap", p.NeedEncap)
	case windows.PolicyPA:
		o.set("PA", p.PA)
	case windows.PolicyACL:
		a := p.ACL
		o.set("Action", a.Action)
		o.set("Direction", a.Direction)
		if a.ID != "" {
			o.set("Id", a.ID)
		}
		o.set("InternalPort", 0)
		o.set("LocalAddresses", a.LocalAddresses)
		o.set("LocalPort", 0)
		if a.LocalPorts != "" {
			o.set("LocalPorts", a.LocalPorts)
		}
		o.set("Priority", a.Priority)
		o.set("Protocol", a.Protocol)
		o.set("RemoteAddresses", a.RemoteAddresses)
		o.set("RemotePort", 0)
		if a.RemotePorts != "" {
			o.set("RemotePorts", a.RemotePorts)
		}
		o.set("RuleType", a.RuleType)
		o.set("Scope", 0)
		o.set("ServiceName", "")
	}
	o.set("Type", p.Type)
	return o
}

// namespaceObjs are HNS namespaces in the V2 (hcn.HostComputeNamespace) shape.
func (n node) namespaceObjs() []any {
	out := make([]any, 0, len(n.Namespaces))
	for _, ns := range n.Namespaces {
		res := []any{}
		for _, id := range ns.EndpointIDs {
			res = append(res, newObj(typePSCustomObject).set("Type", "Endpoint").set("Data", newObj(typePSCustomObject).set("ID", id)))
		}
		out = append(out, newObj(typePSCustomObject).
			set("ID", ns.ID).
			set("NamespaceId", ns.NamespaceID).
			set("Type", ns.Type).
			set("Resources", res).
			set("SchemaVersion", newObj(typePSCustomObject).set("Major", 2).set("Minor", 0)))
	}
	return out
}

// policyListObjs are the load balancers as HNS's V1 API shows them: a
// policy list with one ELB policy and references to the backend endpoints
// (hcsshim internal/hns/hnspolicylist.go PolicyList, ELBPolicy), with the
// fields HNS adds to every policy list it returns, in its order:
// ActivityId, AdditionalParams, Health, ID, IsApplied, Policies,
// References, Resources, State, Version. Ten properties make PowerShell
// print a list per policy list, not a table. The bookkeeping values are
// stand-ins (simulated): ActivityId is derived from the list's ID where HNS
// draws a GUID; Health says no error; IsApplied False and State 2 are what
// HNS reports for a kube-proxy load balancer in use; Resources holds only
// its ID and state (the allocators are not modelled); Version is HNS's
// API version as a 64-bit number (major<<32 | minor), which depends on the
// Windows build and is given as 0 because the twin does not know it.
func (n node) policyListObjs() []any {
	out := make([]any, 0, len(n.LoadBalancers()))
	for _, lb := range n.LoadBalancers() {
		elb := newObj(typePSCustomObject)
		elb.set("ExternalPort", lb.ExternalPort)
		elb.set("InternalPort", lb.InternalPort)
		if lb.DSR() {
			elb.set("IsDSR", true)
		}
		elb.set("Protocol", lb.Protocol)
		elb.set("SourceVIP", lb.SourceVIP)
		elb.set("Type", "ELB")
		if len(lb.FrontendVIPs) > 0 {
			elb.set("VIPs", strs(lb.FrontendVIPs))
		}
		refs := make([]any, len(lb.EndpointIDs))
		for i, id := range lb.EndpointIDs {
			refs[i] = "/endpoints/" + id
		}
		activity := windows.HNSID(lb.ID + "/activity")
		out = append(out, newObj(typePSCustomObject).
			set("ActivityId", activity).
			set("AdditionalParams", "").
			set("Health", newObj(typePSCustomObject).set("LastErrorCode", 0)).
			set("ID", lb.ID).
			set("IsApplied", false).
			set("Policies", []any{elb}).
			set("References", refs).
			set("Resources", newObj(typePSCustomObject).set("ID", activity).set("State", 1)).
			set("State", 2).
			set("Version", 0))
	}
	return out
}

func (n node) adapterObjs() []any {
	out := make([]any, 0, len(n.Adapters))
	for _, a := range n.Adapters {
		out = append(out, newObj(typeNetAdapter).
			set("Name", a.Name).
			set("InterfaceDescription", a.InterfaceDescription).
			set("Status", a.Status).
			set("MacAddress", a.MacAddress))
	}
	return out
}

func (n node) firewallObjs() []any {
	out := make([]any, 0, len(n.FirewallRules))
	for _, r := range n.FirewallRules {
		enabled := "False"
		if r.Enabled {
			enabled = "True"
		}
		out = append(out, newObj(typeFirewallRule).
			set("Name", r.Name).
			set("DisplayName", r.DisplayName).
			set("Enabled", psEnum(enabled)).
			set("Profile", psEnum("Any")).
			set("Direction", psEnum(r.Direction)).
			set("Action", psEnum(r.Action)).
			set("PrimaryStatus", psEnum("OK")))
	}
	return out
}

func strs(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// canonicalName is a cmdlet's proper name for error messages.
func canonicalName(name string) string {
	if c, ok := canonical[strings.ToLower(name)]; ok {
		return c
	}
	return name
}
