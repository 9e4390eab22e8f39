package windows

import (
	"fmt"
	"strconv"
	"strings"
)

// Rows for `kubectl-hybrid get hnsnetworks|hnsendpoints|loadbalancers --node
// NAME`: one typed row per object, with the table's columns (Columns and
// Cells) and JSON tags for -o json.

// NetworkRow is one HNS network.
type NetworkRow struct {
	Node               string                 `json:"node"`
	Name               string                 `json:"name"`
	ID                 string                 `json:"id"`
	Type               string                 `json:"type"`
	Subnet             string                 `json:"subnet"`
	Gateway            string                 `json:"gateway"`
	VSID               int                    `json:"vsid"`
	ManagementIP       string                 `json:"managementIP"`
	DrMacAddress       string                 `json:"drMacAddress,omitempty"`
	RemoteSubnetRoutes []RemoteSubnetRouteRow `json:"remoteSubnetRoutes,omitempty"`
	CreatedBy          string                 `json:"createdBy"`
}

// RemoteSubnetRouteRow is one RemoteSubnetRoute policy of a network.
type RemoteSubnetRouteRow struct {
	DestinationPrefix           string `json:"destinationPrefix"`
	ProviderAddress             string `json:"providerAddress"`
	DistributedRouterMacAddress string `json:"distributedRouterMacAddress"`
	IsolationID                 int    `json:"isolationId"`
	Node                        string `json:"node"`
}

// NetworkColumns are the table's headers.
var NetworkColumns = []string{"NAME", "TYPE", "SUBNET", "GATEWAY", "VSID", "MANAGEMENT-IP", "DR-MAC", "REMOTE-SUBNETS", "CREATED-BY"}

// Cells are the row's table cells, in NetworkColumns order.
func (r NetworkRow) Cells() []string {
	return []string{r.Name, r.Type, r.Subnet, r.Gateway, strconv.Itoa(r.VSID), r.ManagementIP, dash(r.DrMacAddress), strconv.Itoa(len(r.RemoteSubnetRoutes)), r.CreatedBy}
}

// NetworkRows lists the node's HNS networks.
func (n *Node) NetworkRows() []NetworkRow {
	var out []NetworkRow
	for _, nw := range n.Networks() {
		r := NetworkRow{Node: n.Name, Name: nw.Name, ID: nw.ID, Type: nw.Type, ManagementIP: nw.ManagementIP, DrMacAddress: nw.DrMacAddress, CreatedBy: nw.CreatedBy}
		if len(nw.Subnets) > 0 {
			r.Subnet, r.Gateway, r.VSID = nw.Subnets[0].AddressPrefix, nw.Subnets[0].GatewayAddress, nw.Subnets[0].VSID
		}
		for _, p := range nw.Policies {
			if p.Type == PolicyRemoteSubnetRoute {
				r.RemoteSubnetRoutes = append(r.RemoteSubnetRoutes, RemoteSubnetRouteRow{p.DestinationPrefix, p.ProviderAddress, p.DistributedRouterMacAddress, p.IsolationID, p.Node})
			}
		}
		out = append(out, r)
	}
	return out
}

// EndpointRow is one HNS endpoint.
type EndpointRow struct {
	Node            string `json:"node"`
	Name            string `json:"name,omitempty"`
	ID              string `json:"id"`
	Network         string `json:"network"`
	IPAddress       string `json:"ipAddress"`
	MacAddress      string `json:"macAddress"`
	Remote          bool   `json:"isRemoteEndpoint"`
	Kind            string `json:"kind"`
	Owner           string `json:"owner"`
	Pod             string `json:"pod,omitempty"`
	ProviderAddress string `json:"providerAddress,omitempty"`
	// Policies counts the endpoint's policies by type, in order of first
	// appearance ("OutBoundNAT:2 ROUTE:1 PA:1 ACL:7").
	Policies string `json:"policies"`
	// ACLs is the number of HNS ACL rules Felix programs on the endpoint.
	ACLs      int         `json:"acls"`
	ACLReport []ACLSource `json:"aclReport,omitempty"`
}

// EndpointColumns are the table's headers.
var EndpointColumns = []string{"IP", "MAC", "REMOTE", "KIND", "OWNER", "POD", "PA", "POLICIES", "NAME"}

// Cells are the row's table cells, in EndpointColumns order.
func (r EndpointRow) Cells() []string {
	return []string{r.IPAddress, r.MacAddress, strconv.FormatBool(r.Remote), r.Kind, r.Owner, dash(r.Pod), dash(r.ProviderAddress), r.Policies, dash(r.Name)}
}

// EndpointRows lists the node's HNS endpoints in HNS order.
func (n *Node) EndpointRows() []EndpointRow {
	var out []EndpointRow
	for _, ep := range n.Endpoints() {
		r := EndpointRow{
			Node: n.Name, Name: ep.Name, ID: ep.ID, Network: ep.VirtualNetworkName, IPAddress: ep.IPAddress, MacAddress: ep.MacAddress,
			Remote: ep.IsRemoteEndpoint, Kind: ep.Kind, Owner: ep.Owner, Pod: ep.Pod, ACLs: ep.ACLCount, ACLReport: ep.ACLReport,
		}
		var order []string
		count := map[string]int{}
		for _, p := range ep.Policies {
			if count[p.Type] == 0 {
				order = append(order, p.Type)
			}
			count[p.Type]++
			if p.Type == PolicyPA {
				r.ProviderAddress = p.PA
			}
		}
		parts := make([]string, len(order))
		for i, t := range order {
			parts[i] = fmt.Sprintf("%s:%d", t, count[t])
		}
		r.Policies = strings.Join(parts, " ")
		out = append(out, r)
	}
	return out
}

// LoadBalancerRow is one HNS load balancer.
type LoadBalancerRow struct {
	Node         string   `json:"node"`
	ID           string   `json:"id"`
	Service      string   `json:"service"`
	Port         string   `json:"port"`
	Kind         string   `json:"kind"`
	Protocol     string   `json:"protocol"`
	VIP          string   `json:"vip,omitempty"`
	ExternalPort int      `json:"externalPort"`
	InternalPort int      `json:"internalPort"`
	SourceVIP    string   `json:"sourceVIP"`
	DSR          bool     `json:"dsr"`
	Flags        int      `json:"flags"`
	PortFlags    int      `json:"portMappingFlags"`
	Distribution string   `json:"distribution"`
	Backends     []string `json:"backends"`
	EndpointIDs  []string `json:"endpointIDs"`
	Warnings     []string `json:"warnings,omitempty"`
}

// LoadBalancerColumns are the table's headers.
var LoadBalancerColumns = []string{"SERVICE", "PORT", "KIND", "PROTOCOL", "VIP", "PORTS", "SOURCE-VIP", "DSR", "DISTRIBUTION", "BACKENDS"}

// Cells are the row's table cells, in LoadBalancerColumns order.
func (r LoadBalancerRow) Cells() []string {
	b := strings.Join(r.Backends, ",")
	if len(r.Warnings) > 0 {
		b += " (!)"
	}
	return []string{r.Service, r.Port, r.Kind, r.Protocol, dash(r.VIP), fmt.Sprintf("%d->%d", r.ExternalPort, r.InternalPort), r.SourceVIP, strconv.FormatBool(r.DSR), r.Distribution, b}
}

// LoadBalancerRows lists the node's load balancers in creation order.
func (n *Node) LoadBalancerRows() []LoadBalancerRow {
	var out []LoadBalancerRow
	for _, lb := range n.LoadBalancers() {
		r := LoadBalancerRow{
			Node: n.Name, ID: lb.ID, Service: lb.Service, Port: lb.PortName, Kind: lb.Kind, Protocol: protocolName(lb.Protocol),
			ExternalPort: lb.ExternalPort, InternalPort: lb.InternalPort, SourceVIP: lb.SourceVIP, DSR: lb.DSR(),
			Flags: lb.Flags, PortFlags: lb.PortMappingFlags, Distribution: "None",
			Backends: lb.Backends, EndpointIDs: lb.EndpointIDs, Warnings: lb.Warnings,
		}
		if len(lb.FrontendVIPs) > 0 {
			r.VIP = lb.FrontendVIPs[0]
		}
		if lb.DistributionType == DistributionSourceIP {
			r.Distribution = "SourceIP"
		}
		out = append(out, r)
	}
	return out
}

func protocolName(p int) string {
	switch p {
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	case 132:
		return "SCTP"
	}
	return strconv.Itoa(p)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
