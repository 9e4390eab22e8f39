// Package trace walks packets and names through the twin and answers "can
// A reach B, and if not, exactly where and why", across both operating
// systems, from the compiled per-node state: the Linux dataplane
// (internal/dataplane/linux: routes, vxlan.calico with its neighbours and
// FDB, kube-proxy's nftables service maps, Calico's policy) and the Windows
// one (internal/dataplane/windows: the HNS network with its
// RemoteSubnetRoutes, endpoints with their OutBoundNAT, PA and ACL policies,
// kube-proxy's load balancers, the firewall rules), plus CoreDNS and the
// stub resolvers (internal/dns), NetworkPolicy semantics (internal/policy)
// and what the workloads answer (internal/imagecatalog). It never decides
// around that state: a hop that is not in it is not taken.
//
// # A trace
//
// Engine.Trace takes a Source (pod, node, or an address outside the
// cluster) and a Target (pod, node, Service, address or DNS name) and
// returns a Result: a list of hops, each with its node, component ("vxlan.calico",
// "nftables ip kube-proxy nat-prerouting → services → service-…",
// "VFP ACL_ENDPOINT_LAYER …", "HNS distributed router", "CoreDNS …"), the
// headers before and after (with the VXLAN outer header when encapsulated)
// and a verdict with its reason. Three legs:
//
//   - dns: the source's resolver (Linux search list and ndots:5; Windows
//     suffixes only for names without a dot), the query's own UDP path to
//     the nameserver (so a NetworkPolicy that blocks DNS shows where), and
//     every query CoreDNS answered;
//   - request: from the source to the destination through each node's
//     hooks in kernel or VFP order;
//   - reply: back from the responder with every translation the request
//     made undone where it was made (conntrack on Linux, the unified flow
//     on Windows).
//
// # Linux nodes
//
// A packet enters the stack from a pod's cali veth, vxlan.calico, the NIC,
// or a local process, and goes through kube-proxy's nat chains (the
// @service-ips and @service-nodeports maps: ServiceDNAT, ServicePorts),
// the routing decision (Node.RouteTo), the filter hooks (kube-proxy's
// cluster-ips-check; Calico's per-workload chains with Node.PolicyAllows:
// the source pod's egress when it came from a veth, the destination pod's
// ingress when it leaves through one), POSTROUTING (kube-proxy's
// masquerade mark, Calico's natOutgoing) and the output device:
// vxlan.calico encapsulates through the route's gateway → static neighbour
// → FDB entry → peer node address, UDP 4789, VNI 4096, inner MTU 1450.
// Traffic from a node to its own pods is not policed (kubelet probes).
//
// # Windows nodes
//
// A packet leaving a Windows pod passes the HNS distributed router when it
// leaves the pod's subnet, then the VFP layers of the pod's port in the
// order the unified flow composes them: load balancing (kube-proxy's HNS
// load balancers, LB_DSR or SLB_LB_LAYER), the ACL layer (the Switch ACLs
// Felix programmed, first match by priority), SLB_NAT_LAYER (OutBoundNAT
// for destinations outside the service and pod CIDRs), then
// VNET_ENCAP_LAYER (a kube-proxy remote endpoint's PA, or the
// RemoteSubnetRoute for the block). Seed 001 draws the ACL layer before
// load balancing; the twin matches the ACL against the load-balanced
// destination (Kubernetes' post-DNAT semantics, as on Linux) and lists
// the load balancing hop first — which address VFP's ACL layer compares
// for a VIP is not confirmed upstream. A VXLAN datagram arriving at a
// Windows node passes the host firewall (the Cluster kind's rules, then
// HNS's OverlayTraffic4789UDP), VFP's decapsulation and the destination
// port's inbound ACL.
//
// Where the HNS ACLs and Kubernetes semantics disagree the ACLs decide
// (they are what the dataplane enforces) and the reason says why: Calico
// on Windows skips rules with negative matches (an ipBlock's except),
// named ports, ICMP type matches, IPv6 and empty selectors, and ACLReport
// names the skipped rules.
//
// Windows limitations are outcomes with their reason: a Windows host
// cannot reach ClusterIPs; a NodePort is not reachable from the Windows
// node itself; an ordinary Windows pod cannot use hostNetwork;
// externalTrafficPolicy Local works only with DSR; a load balancer with
// more than 64 backends is a warning (the WS2019 VFP limit); dotted short
// names do not resolve; there is no IPv6; ICMP through OutBoundNAT (below).
//
// # TTL
//
// Linux starts at 64 and Windows at 128. Every routing step decrements by
// one, and the twin has exactly two kinds: a Linux node forwarding a packet
// (ip_forward: pod to pod, pod to elsewhere, VXLAN to pod — not packets a
// node sends or receives itself), and the HNS distributed router routing a
// packet out of a Windows pod's subnet (the pod sends to its gateway, the
// DrPort). Packets entering a Windows pod's subnet from VXLAN are switched,
// not routed, and keep their TTL. The node network's gateway counts one
// step for traffic leaving or entering the cluster. So a Linux pod pinging
// 172.21.41.6 sees 126 (128, the DR, the Linux node), the Linux node
// itself 127 (128, the DR), and a Windows pod pinging 172.21.172.4 sees 63
// (64, the Linux node) — seed 000's numbers.
//
// # Which backend
//
// kube-proxy's nftables DNAT picks a backend with numgen random, VFP per
// flow; neither is reproducible. The twin picks candidate
// FNV-1a("client|VIP|port|proto") mod N, stable for a client like
// ClientIP affinity, and lists every candidate in Result.Translations.
//
// # ICMP through OutBoundNAT
//
// Kubernetes documents that ICMP from a Windows pod leaving through
// OutBoundNAT may not come back. Seed 000 saw it come back on Windows
// Server 2025 (build 26100), so there it is a warning; on earlier builds
// the reply is dropped where OutBoundNAT would translate it back, and the
// trace fails there with the reason. TCP works on every build.
//
// # Outside the cluster
//
// The Internet is not modeled. A destination beyond the gateway, or a host
// of the node network that is no node, is assumed to answer
// (Result.Assumed); an Internet host's reply starts at TTL 64 eight routers
// away (a stand-in). From outside, only node addresses are reachable: the
// node network does not route the pod or service networks.
//
// # Round-trip times
//
// Times are a deterministic model, not measurements: fixed small costs per
// hop (a stack 0.020 ms, a Linux routing step 0.030, a VFP layer 0.015, a
// node-network crossing with VXLAN work 0.110, the Internet 4.5 each way,
// so that 1.1.1.1 answers in 9 ms as in seed 000), summed over both legs;
// ping adds a fixed jitter per sequence number (0, 0.084, 0.042, 0.063 ms)
// and, for the first packet of a new VFP flow leaving a Windows pod
// through VXLAN, 13 ms of flow setup (seed 000's first reply took 13 ms,
// the second <1 ms).
//
// The client tools that walk the engine (ping, curl, wget, nslookup) are
// internal/console's.
package trace
